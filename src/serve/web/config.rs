//! The web configuration file of `inspect serve --web.config.file`: the Prometheus
//! exporter-toolkit format (`docs/web-configuration.md` and `web/tls_config.go` of
//! prometheus/exporter-toolkit, the version `promtool check web-config` of Prometheus 2.42
//! checks), parsed and checked without touching any other file. No I/O, so the fuzz target
//! `web_config` (fuzz/) includes this file as it is.
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt        # relative paths: from the config file's directory
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert   # mTLS; default NoClientCert
//!   client_ca_file: clients-ca.crt
//!   min_version: TLS12           # TLS12 (default) or TLS13
//!   max_version: TLS13
//!   cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]   # TLS 1.2 suites, Go's names
//!   curve_preferences: [X25519, CurveP256]
//!   prefer_server_cipher_suites: true
//! http_server_config:
//!   headers:
//!     X-Content-Type-Options: nosniff
//! basic_auth_users:
//!   prometheus: $2y$10$...       # bcrypt hash (`htpasswd -nBC 10 "" | tr -d ':\n'`)
//! ```
//!
//! As in exporter-toolkit: unknown keys are errors (its `UnmarshalStrict`); without `cert_file`,
//! `key_file`, `client_auth_type` and `client_ca_file` there is no TLS; headers are limited to
//! the five it allows, with its allowed values. Where this server differs, it refuses at start
//! instead of accepting something it would not do: TLS 1.0 and 1.1 (`min_version: TLS10`),
//! the CBC and RSA-key-exchange cipher suites and the curve P-521 (rustls has none of them),
//! and the client auth types that take a client certificate without verifying it
//! (`RequestClientCert`, `RequireAnyClientCert`). `http_server_config.http2` is accepted and
//! has no effect (HTTP/1.1 only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The checked content of a web configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebConfig {
    /// `tls_server_config`, when it configures TLS.
    pub tls: Option<TlsConfig>,
    /// `http_server_config.headers`: added to every response, as `Name: value` lines.
    pub headers: Vec<String>,
    /// `basic_auth_users`: user name → bcrypt hash. Empty: no authentication.
    pub users: BTreeMap<String, String>,
}

/// `tls_server_config`, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// The server's certificate chain (PEM), joined to the config file's directory.
    pub cert_file: PathBuf,
    /// The server's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// Whether client certificates are asked for and required.
    pub client_auth: ClientAuth,
    /// The CAs client certificates must chain to (PEM), when `client_auth` verifies them.
    pub client_ca_file: Option<PathBuf>,
    /// The oldest TLS version accepted.
    pub min_version: TlsVersion,
    /// The newest TLS version accepted.
    pub max_version: TlsVersion,
    /// The TLS 1.2 cipher suites allowed, in preference order; empty: rustls's defaults. TLS
    /// 1.3's suites are not configurable (as in Go).
    pub cipher_suites: Vec<CipherSuite>,
    /// The key exchange groups, in preference order; empty: rustls's defaults.
    pub curves: Vec<Curve>,
    /// Choose the cipher suite by the server's order rather than the client's.
    pub prefer_server_cipher_suites: bool,
}

/// `client_auth_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// `NoClientCert` (the default): none asked for.
    NoClientCert,
    /// `VerifyClientCertIfGiven`: optional, verified against `client_ca_file` when sent.
    VerifyClientCertIfGiven,
    /// `RequireAndVerifyClientCert`: mutual TLS.
    RequireAndVerifyClientCert,
}

/// `min_version` / `max_version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// `TLS12`
    Tls12,
    /// `TLS13`
    Tls13,
}

/// A TLS 1.2 cipher suite both Go's `tls.CipherSuites()` and rustls have, by Go's (IANA's) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CipherSuite {
    /// `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`
    EcdheEcdsaAes128GcmSha256,
    /// `TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384`
    EcdheEcdsaAes256GcmSha384,
    /// `TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256`
    EcdheEcdsaChacha20Poly1305Sha256,
    /// `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`
    EcdheRsaAes128GcmSha256,
    /// `TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`
    EcdheRsaAes256GcmSha384,
    /// `TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256`
    EcdheRsaChacha20Poly1305Sha256,
}

/// The TLS 1.2 suites offered, by the names the file uses.
pub const CIPHER_SUITES: [(&str, CipherSuite); 6] = [
    (
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        CipherSuite::EcdheEcdsaAes128GcmSha256,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        CipherSuite::EcdheEcdsaAes256GcmSha384,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        CipherSuite::EcdheEcdsaChacha20Poly1305Sha256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        CipherSuite::EcdheRsaAes128GcmSha256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        CipherSuite::EcdheRsaAes256GcmSha384,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        CipherSuite::EcdheRsaChacha20Poly1305Sha256,
    ),
];

/// TLS 1.3's suites: Go accepts their names in `cipher_suites` and ignores them (TLS 1.3's
/// suites are not configurable); so does this server.
const TLS13_SUITES: [&str; 3] = [
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

/// Suites Go's `tls.CipherSuites()` and `tls.InsecureCipherSuites()` name that rustls does not
/// implement (CBC, RSA key exchange, RC4, 3DES): refused with that reason, not as unknown.
const GO_ONLY_SUITES: [&str; 16] = [
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
];

/// `curve_preferences`: the groups both Go's list and rustls (ring) have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    /// `X25519`
    X25519,
    /// `CurveP256` (secp256r1)
    P256,
    /// `CurveP384` (secp384r1)
    P384,
}

/// The headers exporter-toolkit lets `http_server_config.headers` set, and the values each may
/// take (empty: any).
const HEADERS: [(&str, &[&str]); 5] = [
    ("Strict-Transport-Security", &[]),
    ("X-Content-Type-Options", &["nosniff"]),
    ("X-Frame-Options", &["deny", "sameorigin"]),
    ("X-XSS-Protection", &[]),
    ("Content-Security-Policy", &[]),
];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    tls_server_config: Option<RawTls>,
    #[serde(default)]
    http_server_config: Option<RawHttp>,
    #[serde(default)]
    basic_auth_users: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTls {
    #[serde(default)]
    cert_file: Option<String>,
    #[serde(default)]
    key_file: Option<String>,
    #[serde(default)]
    client_auth_type: Option<String>,
    #[serde(default)]
    client_ca_file: Option<String>,
    #[serde(default)]
    cipher_suites: Option<Vec<String>>,
    #[serde(default)]
    curve_preferences: Option<Vec<String>>,
    #[serde(default)]
    min_version: Option<String>,
    #[serde(default)]
    max_version: Option<String>,
    #[serde(default)]
    prefer_server_cipher_suites: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    #[serde(default)]
    #[allow(dead_code)] // accepted as exporter-toolkit does; HTTP/2 is never offered here
    http2: Option<bool>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
}

/// Largest web configuration file read, in bytes (a real one is well under 4 KiB).
pub const MAX_FILE: usize = 1 << 20;

/// Parses and checks a web configuration file's text; relative paths in it are joined to `dir`
/// (the file's directory, as exporter-toolkit does). Reads no other file: whether the
/// certificate and key exist and match is checked by whoever loads them.
///
/// # Errors
/// The reason, in words naming the key: YAML syntax, an unknown key, a missing `cert_file` or
/// `key_file`, a value this server does not offer, a password that is not a bcrypt hash, a
/// header exporter-toolkit does not allow.
pub fn parse(text: &str, dir: &Path) -> Result<WebConfig, String> {
    if text.len() > MAX_FILE {
        return Err(format!("larger than {MAX_FILE} bytes"));
    }
    let raw: RawConfig = if is_empty_document(text) {
        RawConfig::default()
    } else {
        serde_saphyr::from_str(text).map_err(|e| e.to_string())?
    };
    let mut config = WebConfig::default();
    if let Some(tls) = raw.tls_server_config {
        config.tls = tls_config(tls, dir)?;
    }
    if let Some(http) = raw.http_server_config {
        for (name, value) in http.headers.unwrap_or_default() {
            let Some((_, allowed)) = HEADERS.iter().find(|(n, _)| *n == name) else {
                return Err(format!(
                    "http_server_config.headers: HTTP header {name:?} can not be configured \
                     (only {})",
                    HEADERS.map(|(n, _)| n).join(", ")
                ));
            };
            if !allowed.is_empty() && !allowed.contains(&value.as_str()) {
                return Err(format!(
                    "http_server_config.headers: invalid value for {name}: expected one of \
                     {allowed:?}, got {value:?}"
                ));
            }
            if value.contains(['\r', '\n']) {
                return Err(format!(
                    "http_server_config.headers: the value of {name} holds a line break"
                ));
            }
            if !value.is_empty() {
                config.headers.push(format!("{name}: {value}"));
            }
        }
    }
    for (user, hash) in raw.basic_auth_users.unwrap_or_default() {
        if let Err(e) = hash.parse::<bcrypt::HashParts>() {
            return Err(format!(
                "basic_auth_users: the password of {user:?} is not a bcrypt hash ({e}); make one \
                 with `htpasswd -nBC 10 \"\" | tr -d ':\\n'`"
            ));
        }
        config.users.insert(user, hash);
    }
    Ok(config)
}

/// A YAML stream with no document (empty, blank or only comments), which exporter-toolkit
/// reads as all defaults.
fn is_empty_document(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    })
}

/// Joins `path` to `dir` unless it is empty or absolute (exporter-toolkit's `JoinDir`).
fn join(dir: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

fn tls_config(raw: RawTls, dir: &Path) -> Result<Option<TlsConfig>, String> {
    let set = |s: &Option<String>| s.as_deref().filter(|s| !s.is_empty()).map(str::to_string);
    let (cert, key, auth, ca) = (
        set(&raw.cert_file),
        set(&raw.key_file),
        set(&raw.client_auth_type),
        set(&raw.client_ca_file),
    );
    if cert.is_none() && key.is_none() && auth.is_none() && ca.is_none() {
        return Ok(None); // exporter-toolkit: no TLS config, plain HTTP
    }
    let cert_file = join(dir, &cert.ok_or("tls_server_config: missing cert_file")?);
    let key_file = join(dir, &key.ok_or("tls_server_config: missing key_file")?);
    let client_auth = match auth.as_deref().unwrap_or("NoClientCert") {
        "NoClientCert" => ClientAuth::NoClientCert,
        "VerifyClientCertIfGiven" => ClientAuth::VerifyClientCertIfGiven,
        "RequireAndVerifyClientCert" => ClientAuth::RequireAndVerifyClientCert,
        t @ ("RequestClientCert" | "RequireAnyClientCert" | "RequireClientCert") => {
            return Err(format!(
                "tls_server_config: client_auth_type {t} takes client certificates without \
                 verifying them, which this server does not do: use RequireAndVerifyClientCert \
                 (or VerifyClientCertIfGiven) with client_ca_file"
            ));
        }
        t => return Err(format!("tls_server_config: invalid client_auth_type {t:?}")),
    };
    match (client_auth, &ca) {
        (ClientAuth::NoClientCert, Some(_)) => {
            return Err(
                "tls_server_config: client_ca_file is set without a client_auth_type \
                        that verifies client certificates (RequireAndVerifyClientCert)"
                    .into(),
            );
        }
        (ClientAuth::NoClientCert, None) | (_, Some(_)) => {}
        (_, None) => {
            return Err(
                "tls_server_config: client_auth_type verifies client certificates: give the \
                 CAs to verify them against in client_ca_file"
                    .into(),
            );
        }
    }
    let version = |key: &str, value: &Option<String>, default| match value.as_deref() {
        None | Some("") => Ok(default),
        Some("TLS12") => Ok(TlsVersion::Tls12),
        Some("TLS13") => Ok(TlsVersion::Tls13),
        Some(v @ ("TLS10" | "TLS11")) => Err(format!(
            "tls_server_config: {key} {v}: TLS 1.0 and 1.1 are not offered (TLS 1.2 and 1.3 \
             only)"
        )),
        Some(v) => Err(format!(
            "tls_server_config: {key}: unknown TLS version {v:?}"
        )),
    };
    let min_version = version("min_version", &raw.min_version, TlsVersion::Tls12)?;
    let max_version = version("max_version", &raw.max_version, TlsVersion::Tls13)?;
    if min_version > max_version {
        return Err("tls_server_config: min_version is above max_version".into());
    }
    let mut cipher_suites = Vec::new();
    let names = raw.cipher_suites.unwrap_or_default();
    for name in &names {
        if let Some((_, s)) = CIPHER_SUITES.iter().find(|(n, _)| n == name) {
            cipher_suites.push(*s);
        } else if TLS13_SUITES.contains(&name.as_str()) {
            // Ignored, as Go does.
        } else if GO_ONLY_SUITES.contains(&name.as_str()) {
            return Err(format!(
                "tls_server_config: cipher {name} is not offered here (no CBC, RC4, 3DES or \
                 RSA-key-exchange suites); the TLS 1.2 suites are {}",
                CIPHER_SUITES.map(|(n, _)| n).join(", ")
            ));
        } else {
            return Err(format!("tls_server_config: unknown cipher: {name}"));
        }
    }
    if !names.is_empty() && cipher_suites.is_empty() && min_version == TlsVersion::Tls12 {
        return Err(
            "tls_server_config: cipher_suites names no TLS 1.2 suite while TLS 1.2 is allowed \
             (min_version: TLS13 for TLS 1.3 only)"
                .into(),
        );
    }
    let mut curves = Vec::new();
    for name in raw.curve_preferences.unwrap_or_default() {
        curves.push(match name.as_str() {
            "X25519" => Curve::X25519,
            "CurveP256" => Curve::P256,
            "CurveP384" => Curve::P384,
            "CurveP521" => {
                return Err(
                    "tls_server_config: curve CurveP521 is not offered here (X25519, CurveP256, \
                     CurveP384)"
                        .into(),
                );
            }
            _ => return Err(format!("tls_server_config: unknown curve: {name}")),
        });
    }
    Ok(Some(TlsConfig {
        cert_file,
        key_file,
        client_auth,
        client_ca_file: ca.map(|c| join(dir, &c)),
        min_version,
        max_version,
        cipher_suites,
        curves,
        prefer_server_cipher_suites: raw.prefer_server_cipher_suites.unwrap_or(true),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";

    fn parse_ok(text: &str) -> WebConfig {
        parse(text, Path::new("/etc/hsinspect")).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn parse_err(text: &str) -> String {
        parse(text, Path::new("/etc/hsinspect")).expect_err(text)
    }

    #[test]
    fn empty_and_comment_only_files_are_all_defaults() {
        for text in ["", "\n", "# nothing\n", "---\n"] {
            assert_eq!(parse_ok(text), WebConfig::default());
        }
    }

    #[test]
    fn a_full_file() {
        let c = parse_ok(&format!(
            "tls_server_config:\n  cert_file: s.crt\n  key_file: /abs/s.key\n  \
             client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  \
             min_version: TLS13\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, \
             TLS_AES_128_GCM_SHA256]\n  curve_preferences: [X25519]\n  \
             prefer_server_cipher_suites: false\nhttp_server_config:\n  http2: false\n  headers:\n    \
             X-Frame-Options: deny\n    Strict-Transport-Security: max-age=31536000\n\
             basic_auth_users:\n  prometheus: '{HASH}'\n"
        ));
        let tls = c.tls.unwrap();
        assert_eq!(tls.cert_file, Path::new("/etc/hsinspect/s.crt"));
        assert_eq!(tls.key_file, Path::new("/abs/s.key"));
        assert_eq!(
            tls.client_ca_file.unwrap(),
            Path::new("/etc/hsinspect/ca.crt")
        );
        assert_eq!(tls.client_auth, ClientAuth::RequireAndVerifyClientCert);
        assert_eq!(tls.min_version, TlsVersion::Tls13);
        assert_eq!(tls.max_version, TlsVersion::Tls13);
        assert_eq!(tls.cipher_suites, [CipherSuite::EcdheRsaAes128GcmSha256]);
        assert_eq!(tls.curves, [Curve::X25519]);
        assert!(!tls.prefer_server_cipher_suites);
        assert_eq!(
            c.headers,
            [
                "Strict-Transport-Security: max-age=31536000",
                "X-Frame-Options: deny"
            ]
        );
        assert_eq!(c.users["prometheus"], HASH);
    }

    #[test]
    fn users_without_tls_is_plain_http_with_auth() {
        let c = parse_ok(&format!("basic_auth_users:\n  alice: {HASH}\n"));
        assert!(c.tls.is_none());
        assert_eq!(c.users.len(), 1);
    }

    #[test]
    fn refusals_name_their_reason() {
        let cases = [
            ("tls_server_config:\n  key_file: k\n", "missing cert_file"),
            ("tls_server_config:\n  cert_file: c\n", "missing key_file"),
            ("tls_server_cnfig:\n  cert_file: c\n", "tls_server_cnfig"),
            ("tls_server_config:\n  cert_fil: c\n", "cert_fil"),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS11\n",
                "TLS 1.0 and 1.1",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS14\n",
                "unknown TLS version",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n  max_version: TLS12\n",
                "above max_version",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n",
                "without a client_auth_type",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: RequireAndVerifyClientCert\n",
                "client_ca_file",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: RequireAnyClientCert\n",
                "without verifying",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: Sometimes\n",
                "invalid client_auth_type",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n",
                "not offered",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: [TLS_MADE_UP]\n",
                "unknown cipher",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  curve_preferences: [CurveP521]\n",
                "CurveP521",
            ),
            (
                "http_server_config:\n  headers:\n    X-Powered-By: me\n",
                "can not be configured",
            ),
            (
                "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
                "invalid value",
            ),
            ("basic_auth_users:\n  alice: hunter2\n", "not a bcrypt hash"),
            ("basic_auth_users: [alice]\n", "basic_auth_users"),
            ("tls_server_config: {cert_file: [}\n", ""),
        ];
        for (text, want) in cases {
            let e = parse_err(text);
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let e = parse_err(&format!(
            "basic_auth_users:\n  alice: {HASH}\n  alice: {HASH}\n"
        ));
        assert!(e.to_lowercase().contains("duplicate"), "{e}");
    }
}
