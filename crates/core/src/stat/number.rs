//! Numbers as jstat prints them: `java.text.DecimalFormat` with the patterns `jstat_options`
//! uses (`"0"`, `"0.0"`, `"0.00"`, `"0.000"`), HALF_EVEN rounding, and NaN shown as `-`
//! (`RowClosure.java` sets `DecimalFormatSymbols.setNaN("-")`).
//!
//! DecimalFormat starts from the shortest decimal digits that identify the double (Java's
//! `FloatingDecimal`) and rounds those when the pattern keeps fewer decimals, deciding a tie in
//! the digits by the exact binary value (JDK 8 and later). So: when the shortest digits have no
//! more decimals than the pattern, they are printed padded with zeros (`9.223372036854776E18`
//! prints as `9223372036854776000`, not the exact `9223372036854775808`); otherwise the exact
//! value is rounded half-even, which is what Rust's `{:.N}` does.
//!
//! The decimal separator is `.`, as jstat prints in an English or C locale (DecimalFormat follows
//! the JVM's default locale: in `de_DE` jstat prints `16,67`).

use super::StatError;

/// A `DecimalFormat` pattern of the form `0`, `0.0`, `0.00`, ...: a minimum of one integer digit
/// and exactly `decimals` fraction digits, no grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberFormat {
    /// Fraction digits (the zeros after the point).
    pub decimals: usize,
}

impl NumberFormat {
    /// Parses a pattern.
    ///
    /// # Errors
    /// [`StatError::Format`] for a pattern outside the subset (`#`, grouping, exponents,
    /// percent, literals).
    pub fn parse(pattern: &str) -> Result<Self, StatError> {
        let bad = || StatError::Format(pattern.to_owned());
        let (int, frac) = match pattern.split_once('.') {
            Some((i, f)) => (i, f),
            None => (pattern, ""),
        };
        if int != "0"
            || !frac.bytes().all(|b| b == b'0')
            || (pattern.contains('.') && frac.is_empty())
        {
            return Err(bad());
        }
        Ok(NumberFormat {
            decimals: frac.len(),
        })
    }

    /// Formats `x` as DecimalFormat does with this pattern (NaN as `-`, infinities as `∞`).
    pub fn format(&self, x: f64) -> String {
        if x.is_nan() {
            return "-".to_owned();
        }
        if x.is_infinite() {
            return if x < 0.0 { "-\u{221e}" } else { "\u{221e}" }.to_owned();
        }
        let decimals = self.decimals;
        // The shortest digits: `d.ddddde<exp>`.
        let sci = format!("{:e}", x.abs());
        let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
        let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
        let significant = mantissa.bytes().filter(u8::is_ascii_digit).count() as i32;
        let shortest_decimals = (significant - 1 - exp).max(0) as usize;
        if shortest_decimals <= decimals {
            // `{}` prints the shortest digits in positional notation.
            let mut s = format!("{x}");
            if decimals > 0 {
                if !s.contains('.') {
                    s.push('.');
                }
                let have = s.len() - s.find('.').unwrap() - 1;
                s.extend(std::iter::repeat_n('0', decimals - have));
            }
            s
        } else {
            format!("{x:.decimals$}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(pattern: &str, x: f64) -> String {
        NumberFormat::parse(pattern).unwrap().format(x)
    }

    #[test]
    fn patterns_of_jstat_options() {
        assert_eq!(f("0", 79.0), "79");
        assert_eq!(f("0.0", 1474.5), "1474.5");
        assert_eq!(f("0.0", 6144.0), "6144.0");
        assert_eq!(f("0.00", 16.666666666666664), "16.67");
        assert_eq!(f("0.000", 0.0), "0.000");
        assert_eq!(f("0.00", 0.3), "0.30");
        assert_eq!(f("0.0", f64::NAN), "-");
    }

    #[test]
    fn half_even_on_exact_ties_and_large_values_from_shortest_digits() {
        assert_eq!(f("0", 2.5), "2");
        assert_eq!(f("0", 3.5), "4");
        assert_eq!(f("0.00", 0.125), "0.12");
        assert_eq!(f("0.00", 0.375), "0.38");
        assert_eq!(f("0", 9223372036854775807.0), "9223372036854776000");
        assert_eq!(f("0.0", 1e20), "100000000000000000000.0");
    }

    #[test]
    fn unsupported_patterns_are_refused() {
        for p in ["#", "0.#", "#,##0", "0.0E0", "0%", "00", "0.", ""] {
            assert!(NumberFormat::parse(p).is_err(), "{p}");
        }
    }
}
