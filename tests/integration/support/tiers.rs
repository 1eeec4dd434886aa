//! The tiers' vocabulary: what a test outside the fast tier requires, in cargo's
//! `requires_*` style. A test that plain `cargo test` cannot run is
//! `#[ignore = "requires <what>, <what> (scripts/test.sh)"]`, each `<what>` one of
//! [`REQUIREMENTS`]' words; a test that needs nothing missing but is too slow for the fast tier
//! is `#[ignore = "slow: <why> (scripts/test.sh)"]`, and one that is both says
//! `requires <what>, ...; slow: <why> (scripts/test.sh)`. `scripts/test.sh` sets up every
//! requirement (each word's own script is beside it here) and runs the tier with
//! `--include-ignored`; a test run without what it requires fails saying how to get it.
//! [`ignore_reasons_use_the_vocabulary`] holds every reason in `tests/integration/` to this.

/// Every requirement an ignored test may name, with where it comes from.
pub const REQUIREMENTS: &[(&str, &str)] = &[
    (
        "root",
        "run as root (scripts/test.sh runs the tier as root)",
    ),
    (
        "test users",
        "scripts/setup-test-deps.sh (hsinspect-jvm, hsinspect-other, ...)",
    ),
    (
        "JDK 17",
        "apt-get install openjdk-17-jdk-headless (scripts/setup-test-deps.sh)",
    ),
    (
        "Debian's JDK 17",
        "openjdk-17-jdk-headless as /usr/bin/java (scripts/setup-test-deps.sh)",
    ),
    ("JDK 11", "scripts/fetch-jdks.sh"),
    ("JDK 21", "scripts/fetch-jdks.sh"),
    ("JDK 25", "scripts/fetch-jdks.sh"),
    ("JDK 11 runtime", "scripts/fetch-jdks.sh"),
    ("JDK 21 runtime", "scripts/fetch-jdks.sh"),
    ("JDK 25 runtime", "scripts/fetch-jdks.sh"),
    ("JDK 8 root", "scripts/jdk8-root.sh"),
    ("gdb", "scripts/setup-test-deps.sh"),
    ("binutils", "scripts/setup-test-deps.sh"),
    ("C compiler", "gcc (scripts/setup-test-deps.sh)"),
    ("tmux", "scripts/setup-test-deps.sh"),
    ("curl", "scripts/setup-test-deps.sh"),
    ("openssl", "scripts/setup-test-deps.sh"),
    (
        "promtool",
        "Debian's prometheus (scripts/setup-test-deps.sh)",
    ),
    (
        "Prometheus",
        "Debian's prometheus (scripts/setup-test-deps.sh)",
    ),
    ("podman", "scripts/setup-test-deps.sh"),
    ("containerd", "scripts/setup-test-deps.sh"),
    ("systemd-analyze", "scripts/setup-test-deps.sh"),
    ("kubectl", "scripts/setup-test-deps.sh"),
    ("kubernetes-validate", "PyPI (scripts/setup-test-deps.sh)"),
    ("python3", "scripts/setup-test-deps.sh"),
    ("python3-yaml", "scripts/setup-test-deps.sh"),
    ("opentelemetry-proto", "PyPI (scripts/python-deps.sh)"),
    (
        "musl target",
        "rustup target add x86_64-unknown-linux-musl (scripts/test.sh)",
    ),
    ("qemu", "scripts/aarch64/setup.sh"),
    ("arm64 root", "scripts/aarch64/setup.sh"),
    ("static aarch64 build", "scripts/test.sh builds it"),
    ("Wine", "scripts/windows/setup.sh"),
    ("Windows JDK", "scripts/windows/setup.sh"),
];

/// How every ignore reason ends: where all requirements are set up and the tier is run.
pub const RUN_WITH: &str = " (scripts/test.sh)";

/// Whether `reason` follows the vocabulary: `requires A, B (scripts/test.sh)`,
/// `slow: why (scripts/test.sh)` or `requires A, B; slow: why (scripts/test.sh)`.
pub fn follows_vocabulary(reason: &str) -> Result<(), String> {
    let body = reason
        .strip_suffix(RUN_WITH)
        .ok_or_else(|| format!("{reason:?} does not end with {RUN_WITH:?}"))?;
    let (requires, slow) = match body.split_once("slow: ") {
        Some((before, why)) if !why.is_empty() => {
            (before.strip_suffix("; ").unwrap_or(before), true)
        }
        Some(_) => return Err(format!("{reason:?}: `slow:` says why")),
        None => (body, false),
    };
    if requires.is_empty() && slow {
        return Ok(());
    }
    let list = requires
        .strip_prefix("requires ")
        .ok_or_else(|| format!("{reason:?} starts neither with `requires ` nor with `slow: `"))?;
    for word in list.split(", ") {
        if !REQUIREMENTS.iter().any(|(w, _)| *w == word) {
            return Err(format!(
                "{reason:?}: {word:?} is not in tests/integration/support/tiers.rs's REQUIREMENTS"
            ));
        }
    }
    Ok(())
}

/// Every `#[ignore = "..."]` of the integration tests follows the vocabulary.
#[test]
fn ignore_reasons_use_the_vocabulary() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    let mut files = vec![];
    for entry in std::fs::read_dir(&dir).unwrap() {
        files.push(entry.unwrap().path());
    }
    let (mut seen, mut bad) = (0, vec![]);
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines().map(str::trim) {
            let Some(reason) = line
                .strip_prefix("#[ignore = \"")
                .and_then(|r| r.strip_suffix("\"]"))
            else {
                continue;
            };
            seen += 1;
            if let Err(e) = follows_vocabulary(reason) {
                bad.push(format!("{}: {e}", file.display()));
            }
        }
    }
    assert!(seen > 100, "only {seen} ignore reasons found");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_grammar() {
    assert!(follows_vocabulary("requires root, JDK 17 (scripts/test.sh)").is_ok());
    assert!(follows_vocabulary("slow: 10,000 scrapes (scripts/test.sh)").is_ok());
    assert!(follows_vocabulary("requires Wine; slow: a second build (scripts/test.sh)").is_ok());
    assert!(follows_vocabulary("requires root and JDK 17 (scripts/test.sh)").is_err());
    assert!(follows_vocabulary("requires root").is_err());
    assert!(follows_vocabulary("needs root (scripts/test.sh)").is_err());
}
