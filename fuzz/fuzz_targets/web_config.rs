//! Fuzz target `web_config`: any text into serve's `--web.config.file` parser,
//! `web::config::parse` (src/serve/web/config.rs, included as it is). It must return, never panic or
//! hang (YAML aliases and nesting are bounded by serde-saphyr's budget); what it accepts keeps
//! its promises: header lines without line breaks, min_version <= max_version, file paths
//! joined to the config's directory, users' passwords that parse as bcrypt hashes.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

#[path = "../../src/serve/web/config.rs"]
#[allow(dead_code)]
mod config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let dir = Path::new("/etc/hsinspect");
    if let Ok(c) = config::parse(text, dir) {
        for h in &c.headers {
            assert!(!h.contains(['\r', '\n']), "{h:?}");
        }
        for hash in c.users.values() {
            assert!(hash.parse::<bcrypt::HashParts>().is_ok(), "{hash:?}");
        }
        if let Some(t) = &c.tls {
            assert!(t.min_version <= t.max_version);
            assert!(t.cert_file.is_absolute() && t.key_file.is_absolute());
        }
    }
});
