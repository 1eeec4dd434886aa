//! The expressions in jstat's column definitions: counter names, numbers, `+ - * /` and
//! parentheses, with jstat's rules (`sun/tools/jstat/Parser.java`, `ExpressionResolver.java`,
//! `ExpressionExecuter.java`, `Operator.java`):
//!
//! - `*` and `/` bind tighter than `+` and `-`; all four are left-associative; a unary `-x` is
//!   `0 - x`.
//! - Arithmetic is in `f64`; a counter's `jlong` is converted with `as f64` (Java's
//!   `Long.doubleValue`).
//! - A counter that does not exist is NaN, or 0 when the column is `required`.
//! - Division by zero is NaN (not infinity).
//! - A string counter used in arithmetic is NaN; a lone string counter is the column's text.

use crate::perfdata::{Counter, Value};

use super::StatError;

/// A parsed expression. Counters are referred to by their index in the list of names the parser
/// collected (`parse`), so a sample looks each name up once.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number literal.
    Number(f64),
    /// The counter with this index in the name list.
    Counter(usize),
    /// A binary operation.
    Binary(Box<Expr>, Op, Box<Expr>),
}

/// The four operators (`Operator.java`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`: NaN when the divisor is 0.
    Div,
}

impl Op {
    fn apply(self, l: f64, r: f64) -> f64 {
        match self {
            Op::Add => l + r,
            Op::Sub => l - r,
            Op::Mul => l * r,
            Op::Div if r == 0.0 => f64::NAN,
            Op::Div => l / r,
        }
    }
}

/// The value of an expression on one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub enum Val<'a> {
    /// A number (NaN when a counter is missing or a division by zero happened).
    Number(f64),
    /// The text of a lone string counter.
    Text(&'a str),
}

/// Parses `text`, adding each counter name it mentions to `names` (reusing an index for a name
/// already there).
///
/// # Errors
/// [`StatError::Expression`] for a syntax error.
pub fn parse(text: &str, names: &mut Vec<String>) -> Result<Expr, StatError> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        tokens: &tokens,
        pos: 0,
        names,
        text,
    };
    let e = p.add()?;
    if p.pos != tokens.len() {
        return Err(p.error("unexpected token"));
    }
    Ok(e)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    Number(f64),
    Punct(char),
}

fn tokenize(text: &str) -> Result<Vec<Token>, StatError> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if "+-*/()".contains(c) {
            tokens.push(Token::Punct(c));
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            let mut end = i;
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' || d == '.' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let word = &text[i..end];
            tokens.push(match word.parse::<f64>() {
                Ok(n) if c.is_ascii_digit() || c == '.' => Token::Number(n),
                _ => Token::Name(word.to_owned()),
            });
        } else {
            return Err(StatError::Expression {
                expression: text.to_owned(),
                problem: format!("unexpected character {c:?}"),
            });
        }
    }
    Ok(tokens)
}

struct Parser<'t, 'n> {
    tokens: &'t [Token],
    pos: usize,
    names: &'n mut Vec<String>,
    text: &'t str,
}

impl Parser<'_, '_> {
    fn error(&self, problem: &str) -> StatError {
        StatError::Expression {
            expression: self.text.to_owned(),
            problem: format!("{problem} at token {}", self.pos + 1),
        }
    }

    fn peek_punct(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Token::Punct(c)) => Some(*c),
            _ => None,
        }
    }

    /// `add := mul (('+' | '-') mul)*`
    fn add(&mut self) -> Result<Expr, StatError> {
        let mut left = self.mul()?;
        while let Some(c @ ('+' | '-')) = self.peek_punct() {
            self.pos += 1;
            let op = if c == '+' { Op::Add } else { Op::Sub };
            left = Expr::Binary(Box::new(left), op, Box::new(self.mul()?));
        }
        Ok(left)
    }

    /// `mul := unary (('*' | '/') unary)*`
    fn mul(&mut self) -> Result<Expr, StatError> {
        let mut left = self.unary()?;
        while let Some(c @ ('*' | '/')) = self.peek_punct() {
            self.pos += 1;
            let op = if c == '*' { Op::Mul } else { Op::Div };
            left = Expr::Binary(Box::new(left), op, Box::new(self.unary()?));
        }
        Ok(left)
    }

    /// `unary := ('+' | '-') unary | primary`
    fn unary(&mut self) -> Result<Expr, StatError> {
        match self.peek_punct() {
            Some('+') => {
                self.pos += 1;
                self.unary()
            }
            Some('-') => {
                self.pos += 1;
                let operand = self.unary()?;
                Ok(Expr::Binary(
                    Box::new(Expr::Number(0.0)),
                    Op::Sub,
                    Box::new(operand),
                ))
            }
            _ => self.primary(),
        }
    }

    /// `primary := '(' add ')' | number | counter-name`
    fn primary(&mut self) -> Result<Expr, StatError> {
        let Some(token) = self.tokens.get(self.pos) else {
            return Err(self.error("expression ends early"));
        };
        self.pos += 1;
        match token {
            Token::Number(n) => Ok(Expr::Number(*n)),
            Token::Name(name) => {
                let index = match self.names.iter().position(|n| n == name) {
                    Some(i) => i,
                    None => {
                        self.names.push(name.clone());
                        self.names.len() - 1
                    }
                };
                Ok(Expr::Counter(index))
            }
            Token::Punct('(') => {
                let inner = self.add()?;
                if self.peek_punct() != Some(')') {
                    return Err(self.error("missing ')'"));
                }
                self.pos += 1;
                Ok(inner)
            }
            Token::Punct(_) => {
                self.pos -= 1;
                Err(self.error("expected a number, a counter name or '('"))
            }
        }
    }
}

impl Expr {
    /// Evaluates on the counters bound to the name list (`None`: no such counter). `required`:
    /// a missing counter is 0 rather than NaN.
    pub fn eval<'a>(&self, counters: &[Option<&'a Counter>], required: bool) -> Val<'a> {
        match self {
            Expr::Number(n) => Val::Number(*n),
            Expr::Counter(i) => match counters.get(*i).copied().flatten() {
                Some(Counter {
                    value: Value::Long(v),
                    ..
                }) => Val::Number(*v as f64),
                Some(Counter {
                    value: Value::String(s),
                    ..
                }) => Val::Text(s),
                // Missing, or a type jvmstat would not show: jstat's unresolved symbol.
                _ if required => Val::Number(0.0),
                _ => Val::Number(f64::NAN),
            },
            Expr::Binary(l, op, r) => {
                let number = |v: Val| match v {
                    Val::Number(n) => n,
                    Val::Text(_) => f64::NAN,
                };
                Val::Number(op.apply(
                    number(l.eval(counters, required)),
                    number(r.eval(counters, required)),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perfdata::{Units, Variability};

    fn long(name: &str, v: i64) -> Counter {
        Counter {
            name: name.into(),
            value: Value::Long(v),
            units: Units::None,
            variability: Variability::Variable,
            supported: false,
            offset: None,
        }
    }

    fn eval(text: &str, counters: &[Counter], required: bool) -> Val<'static> {
        let mut names = Vec::new();
        let e = parse(text, &mut names).unwrap();
        let bound: Vec<Option<&Counter>> = names
            .iter()
            .map(|n| counters.iter().find(|c| &c.name == n))
            .collect();
        match e.eval(&bound, required) {
            Val::Number(n) => Val::Number(n),
            Val::Text(t) => Val::Text(Box::leak(t.to_owned().into_boxed_str())),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(eval("1 + 2 * 3", &[], false), Val::Number(7.0));
        assert_eq!(eval("(1 + 2) * 3", &[], false), Val::Number(9.0));
        assert_eq!(eval("8 / 4 / 2", &[], false), Val::Number(1.0));
        assert_eq!(eval("8 - 4 - 2", &[], false), Val::Number(2.0));
        assert_eq!(eval("-2 * 3", &[], false), Val::Number(-6.0));
    }

    #[test]
    fn missing_counters_nan_or_zero_when_required() {
        let cs = [long("a.b", 10)];
        let Val::Number(n) = eval("a.b + c.d", &cs, false) else {
            panic!()
        };
        assert!(n.is_nan());
        assert_eq!(eval("a.b + c.d", &cs, true), Val::Number(10.0));
    }

    #[test]
    fn division_by_zero_is_nan() {
        let Val::Number(n) = eval(
            "(1-((c - u)/c)) * 100",
            &[long("c", 0), long("u", 0)],
            false,
        ) else {
            panic!()
        };
        assert!(n.is_nan());
    }

    #[test]
    fn names_are_shared_and_syntax_errors_reported() {
        let mut names = Vec::new();
        parse("x.y / x.y + z", &mut names).unwrap();
        assert_eq!(names, ["x.y", "z"]);
        assert!(parse("(a + b", &mut names).is_err());
        assert!(parse("a + ", &mut names).is_err());
        assert!(parse("a $ b", &mut names).is_err());
    }
}
