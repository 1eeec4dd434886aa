//! The documentation stays true to the repository: README.md, every page under docs/, and the
//! links of ARCHITECTURE.md, scripts/README.md and bench/README.md. Fast tier: no JDK, no
//! network, no root; it runs the built `inspect` only on pids and files that do not exist.
//!
//! What is checked, outside fenced code blocks and HTML comments:
//!
//! * **Links** (all four kinds of file): every relative `[text](target)` names an existing file or
//!   directory, and every `#anchor` (in-page, or `page.md#anchor`) is the slug of a heading of the
//!   target page, by GitHub's rule: lowercase, every character but letters, digits, `-`, `_` and
//!   spaces dropped, spaces made `-`; the second heading of one slug gets `-1`, the third `-2`.
//!   `http(s)://` and `mailto:` links are not fetched.
//! * **Cited tests** (README and docs/): a test citation is an inline code span of one of these
//!   forms, after brace expansion (`jdk{11,17}_x` is `jdk11_x` and `jdk17_x`), with `*` matching
//!   any run of characters:
//!   - `module::name`, where `module` is the stem of a file in tests/integration/ (so
//!     `threads::jdk17_default_flags_match_jcmd`, but not a Rust path such as
//!     `format::dialect::points`): some `fn name` exists in a `.rs` file under tests/, src/ or
//!     crates/;
//!   - a lowercase identifier with an underscore in a table column whose header starts with
//!     "test" (other than a module's name, which names its file), or any span `test_...`: some `fn name` in those `.rs` files, or some `def name` in
//!     a `.py` file under scripts/ or tests/ (the Windows tests are Python).
//! * **Cited files** (README and docs/): an inline code span that is a path starting with
//!   `scripts/`, `tests/`, `testdata/`, `deploy/`, `crates/`, `src/`, `fuzz/` or `bench/` exists
//!   (the benchmark scripts `bench/bench*.py` among them); for a glob (`*`) or a placeholder
//!   (`<...>`), the directory before it exists.
//! * **README's examples**: every line of README's fenced `sh` blocks that runs `inspect` parses
//!   with today's CLI. Each is run with its pid `4242` replaced by one that cannot exist and its
//!   files by paths that do not exist, so that it fails fast without a JVM; the failure must not
//!   be clap's usage error (status 2 with "Usage:" or "For more information, try '--help'" on
//!   stderr). Those that serve or watch (`serve`, `top`) and are still running after a few seconds
//!   have parsed; they are killed.
//! * **README** is at most 20,000 bytes and keeps the test command CI runs (`scripts/test.sh`,
//!   which `.ci/run` calls) in a fenced block.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` (recursively) whose name ends with `ext`.
fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files_under(&path, ext, out);
            }
        } else if name.ends_with(ext) {
            out.push(path);
        }
    }
}

/// README.md and every page under docs/.
fn doc_pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    files_under(&root().join("docs"), ".md", &mut pages);
    pages.sort();
    assert!(pages.len() > 10, "docs/ has too few pages: {pages:?}");
    pages
}

/// A Markdown file's lines outside fenced code blocks and HTML comments, with their numbers.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    let mut in_comment = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(marker) = &fence {
            if trimmed.starts_with(marker.as_str()) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(trimmed[..3].to_string());
            continue;
        }
        let mut kept = String::new();
        let mut rest = line;
        loop {
            if in_comment {
                match rest.find("-->") {
                    Some(end) => {
                        rest = &rest[end + 3..];
                        in_comment = false;
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(start) => {
                        kept.push_str(&rest[..start]);
                        rest = &rest[start + 4..];
                        in_comment = true;
                    }
                    None => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// The fenced code blocks of a Markdown file: (info string, lines).
fn fenced_blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String, Vec<String>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut current {
            Some((marker, _, lines)) => {
                if trimmed.starts_with(marker.as_str()) {
                    let (_, info, lines) = current.take().unwrap();
                    blocks.push((info, lines));
                } else {
                    lines.push(line.to_string());
                }
            }
            None => {
                if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                    let info = trimmed[3..].trim().to_string();
                    current = Some((trimmed[..3].to_string(), info, Vec::new()));
                }
            }
        }
    }
    blocks
}

/// The inline code spans of a line (single backticks), and the line with them removed.
fn code_spans(line: &str) -> (Vec<String>, String) {
    let mut spans = Vec::new();
    let mut outside = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        outside.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('`') {
            Some(end) => {
                spans.push(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => {
                outside.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    outside.push_str(rest);
    (spans, outside)
}

/// GitHub's anchor of a heading's text.
fn slug(heading: &str) -> String {
    // Links in a heading count by their text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find("](") {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        rest = &rest[open + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings, duplicates numbered as GitHub numbers them.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let title = line[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of a line's Markdown links and images (`[text](target)`), code spans left out.
fn link_targets(line: &str) -> Vec<String> {
    let (_, outside) = code_spans(line);
    let mut out = Vec::new();
    let mut rest = outside.as_str();
    while let Some(open) = rest.find("](") {
        let after = &rest[open + 2..];
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = i;
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(|c| c == '<' || c == '>').to_string());
        rest = &after[end.min(after.len())..];
    }
    out
}

/// Every relative link of README.md, docs/, ARCHITECTURE.md, scripts/README.md and
/// bench/README.md reaches an
/// existing file, and every anchor a heading of its page.
#[test]
fn links_resolve_to_files_and_headings() {
    let mut pages = doc_pages();
    pages.push(root().join("ARCHITECTURE.md"));
    pages.push(root().join("scripts/README.md"));
    pages.push(root().join("bench/README.md"));
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = read(page);
        for (n, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                if target.is_empty()
                    || target.starts_with("http://")
                    || target.starts_with("https://")
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target.as_str(), None),
                };
                let dest = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let at = format!("{}:{n}: {target}", page.display());
                if !dest.exists() {
                    problems.push(format!("{at}: no such file {}", dest.display()));
                    continue;
                }
                if let Some(anchor) = anchor
                    && dest.extension().is_some_and(|e| e == "md")
                    && !anchors(&read(&dest)).contains(anchor)
                {
                    problems.push(format!("{at}: no heading with anchor #{anchor}"));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser broken?"
    );
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// `a{b,c}d` → `abd`, `acd` (several groups, not nested).
fn expand_braces(s: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (s.find('{'), s.find('}')) else {
        return vec![s.to_string()];
    };
    if close < open {
        return vec![s.to_string()];
    }
    let mut out = Vec::new();
    for alt in s[open + 1..close].split(',') {
        out.extend(expand_braces(&format!(
            "{}{alt}{}",
            &s[..open],
            &s[close + 1..]
        )));
    }
    out
}

/// `*` matches any run of characters.
fn glob_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len())
                    .any(|i| name.is_char_boundary(i) && glob_match(tail, &name[i..]))
        }
    }
}

/// Identifiers defined after `keyword` (`fn `, `def `) in every file ending with `ext` under `dirs`.
fn defined_names(dirs: &[&str], ext: &str, keyword: &str) -> BTreeSet<String> {
    let mut files = Vec::new();
    for dir in dirs {
        files_under(&root().join(dir), ext, &mut files);
    }
    let mut names = BTreeSet::new();
    for file in files {
        let text = read(&file);
        let mut rest = text.as_str();
        while let Some(at) = rest.find(keyword) {
            let before_ok = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
            let after = &rest[at + keyword.len()..];
            if before_ok {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.insert(name);
                }
            }
            rest = after;
        }
    }
    names
}

fn is_test_ident(s: &str) -> bool {
    s.contains('_')
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_{},*".contains(c))
}

/// The column indices of a table header row whose cells start with "test".
fn test_columns(row: &str) -> Vec<usize> {
    table_cells(row)
        .iter()
        .enumerate()
        .filter(|(_, c)| c.trim().to_lowercase().starts_with("test"))
        .map(|(i, _)| i)
        .collect()
}

/// A table row's cells (code spans may hold `|`; these tables have none).
fn table_cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row.strip_suffix('|').unwrap_or(row);
    row.split('|').map(str::to_string).collect()
}

/// Every test the docs cite exists in the sources, and every file they cite exists.
#[test]
fn cited_tests_benchmarks_and_files_exist() {
    let modules: HashSet<String> = std::fs::read_dir(root().join("tests/integration"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").map(str::to_string)
        })
        .collect();
    assert!(
        modules.contains("threads"),
        "tests/integration/threads.rs is gone?"
    );
    let rust_fns = defined_names(&["tests", "src", "crates"], ".rs", "fn ");
    let py_defs = defined_names(&["scripts", "tests"], ".py", "def ");
    let path_prefixes = [
        "scripts/",
        "tests/",
        "testdata/",
        "deploy/",
        "crates/",
        "src/",
        "fuzz/",
        "bench/",
    ];

    let mut problems = Vec::new();
    let (mut tests_checked, mut files_checked, mut benches_checked) = (0, 0, 0);
    let mut check_name = |at: &str, cited: &str, python_too: bool, problems: &mut Vec<String>| {
        for name in expand_braces(cited) {
            tests_checked += 1;
            let found = rust_fns.iter().any(|f| glob_match(&name, f))
                || (python_too && py_defs.iter().any(|f| glob_match(&name, f)));
            if !found {
                problems.push(format!(
                    "{at}: test `{name}` (cited as `{cited}`) not found"
                ));
            }
        }
    };

    for page in doc_pages() {
        let text = read(&page);
        let mut columns: Vec<usize> = Vec::new();
        for (n, line) in prose_lines(&text) {
            let at = format!("{}:{n}", page.display());
            let is_row = line.trim_start().starts_with('|');
            if !is_row {
                columns.clear();
            } else if columns.is_empty() {
                columns = test_columns(&line);
                if columns.is_empty() {
                    columns.push(usize::MAX); // a table without a test column
                }
            } else {
                for &col in &columns {
                    let Some(cell) = table_cells(&line).get(col).cloned() else {
                        continue;
                    };
                    for span in code_spans(&cell).0 {
                        // A test module's name (the testing page's table) is a file.
                        if is_test_ident(&span) && !span.contains("::") && !modules.contains(&span)
                        {
                            check_name(&at, &span, true, &mut problems);
                        }
                    }
                }
            }
            for span in code_spans(&line).0 {
                if let Some((module, name)) = span.split_once("::") {
                    if modules.contains(module) && is_test_ident(name) {
                        check_name(&at, name, false, &mut problems);
                    }
                } else if span.starts_with("test_") && is_test_ident(&span) {
                    check_name(&at, &span, true, &mut problems);
                }
                if path_prefixes.iter().any(|p| span.starts_with(p))
                    && !span.contains(' ')
                    && !span.contains('\\')
                {
                    for path in expand_braces(&span) {
                        files_checked += 1;
                        if path.starts_with("bench/bench") {
                            benches_checked += 1;
                        }
                        let cut = path.find(['*', '<']).unwrap_or(path.len());
                        let dir_or_file = if cut < path.len() {
                            &path[..path[..cut].rfind('/').unwrap_or(0)]
                        } else {
                            path.as_str()
                        };
                        if !root().join(dir_or_file).exists() {
                            problems.push(format!("{at}: `{span}`: no such path {dir_or_file}"));
                        }
                    }
                }
            }
        }
    }
    assert!(
        tests_checked > 100,
        "only {tests_checked} test citations found"
    );
    assert!(
        files_checked > 50,
        "only {files_checked} file citations found"
    );
    assert!(
        benches_checked >= 5,
        "only {benches_checked} benchmark scripts cited"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Splits a shell line into words: quotes, a `#` comment, and nothing after `|`, `>`, `;` or `&`.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            }
            '#' if !in_word => break,
            '|' | '>' | '<' | ';' | '&' if !in_word || word.is_empty() => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// A README example's argument, made harmless: the pid `4242` one that cannot exist (above
/// Linux's largest `pid_max`), a file that names `4242`, a saved region or dump, or any absolute
/// path (`inspect links /usr/local/bin` would make links there) a path that does not exist.
fn harmless(arg: &str) -> String {
    if arg == "4242" {
        return "999999999".into();
    }
    let file_like = arg.contains("4242")
        || arg.starts_with('/')
        || [".hsperf", ".bin", ".mdmp", ".dmp"]
            .iter()
            .any(|e| arg.ends_with(e));
    if file_like && !arg.starts_with('-') {
        let base = arg.rsplit('/').next().unwrap();
        return format!("/nonexistent-hsinspect-docs-test/{base}");
    }
    arg.to_string()
}

/// Every `inspect` line of README's shell blocks parses with today's CLI.
#[test]
fn readme_examples_parse_with_todays_cli() {
    let readme = read(&root().join("README.md"));
    let mut examples = Vec::new();
    for (info, lines) in fenced_blocks(&readme) {
        if !matches!(info.as_str(), "sh" | "bash" | "console" | "") {
            continue;
        }
        for line in lines {
            let line = line.trim().trim_start_matches("$ ");
            let words = shell_words(line);
            if words.first().map(String::as_str) == Some("inspect") {
                examples.push((line.to_string(), words));
            }
        }
    }
    assert!(
        examples.len() >= 10,
        "README has {} inspect examples",
        examples.len()
    );

    let mut problems = Vec::new();
    for (line, words) in &examples {
        let args: Vec<String> = words[1..].iter().map(|a| harmless(a)).collect();
        let mut child = Command::new(env!("CARGO_BIN_EXE_inspect"))
            .args(&args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Clap's errors come at once; `serve` and `top` that have parsed keep running.
        let deadline = Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        let usage_error = stderr.contains("For more information, try '--help'")
            || (status.and_then(|s| s.code()) == Some(2) && stderr.contains("Usage:"));
        if usage_error {
            problems.push(format!("`{line}` (run as {args:?}):\n{stderr}"));
        }
    }
    assert!(
        problems.is_empty(),
        "README examples the CLI refuses:\n{}",
        problems.join("\n")
    );
}

/// README is a front door: at most 20,000 bytes, with the test command CI runs.
#[test]
fn readme_is_short_and_keeps_the_test_command() {
    let readme = read(&root().join("README.md"));
    assert!(
        readme.len() <= 20_000,
        "README.md is {} bytes, over 20,000: move detail into docs/",
        readme.len()
    );
    let ci = read(&root().join(".ci/run"));
    assert!(
        ci.lines().any(|l| l.trim() == "scripts/test.sh"),
        ".ci/run no longer runs scripts/test.sh"
    );
    let in_a_block = fenced_blocks(&readme).iter().any(|(_, lines)| {
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("scripts/test.sh"))
    });
    assert!(in_a_block, "README's set-up block lost `scripts/test.sh`");
}

/// The slug rule on headings of the shapes the docs use.
#[test]
fn slugs_follow_githubs_rule() {
    assert_eq!(
        slug("The names your dashboards already query: `--names`"),
        "the-names-your-dashboards-already-query---names"
    );
    assert_eq!(
        slug("`inspect stat`: jstat's views"),
        "inspect-stat-jstats-views"
    );
    let dup = anchors("# A\n\n## B\n\n```\n# not a heading\n```\n## B\n### B\n");
    let expected: HashSet<String> = ["a", "b", "b-1", "b-2"].map(String::from).into();
    assert_eq!(dup, expected);
}
