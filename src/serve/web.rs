//! `inspect serve --web.config.file`: TLS and Basic authentication from the Prometheus
//! exporter-toolkit web configuration ([`config`] parses the file).
//!
//! As exporter-toolkit does, the file is read again for every connection, and with it the
//! certificate, key and client CA files, so new users, passwords and certificates take effect
//! without a restart; what is unchanged since the last connection (compared byte for byte) is
//! reused, TLS session state included. A file that has become unreadable or invalid fails that
//! connection closed (a TLS connection is dropped, a plain one gets `500`) and is reported once
//! on stderr. Whether the port speaks TLS is decided at start.
//!
//! TLS is rustls (TLS 1.2 and 1.3 only) with ring's primitives. Basic credentials are checked
//! against the bcrypt hashes with the `bcrypt` crate, one check at a time (each costs about
//! 2^cost hashing rounds); an unknown user's password is checked against a configured user's
//! hash, so a wrong user name costs what a wrong password costs. Results are remembered by a
//! SHA-256 of user, hash and password (at most [`AUTH_CACHE`] of them), so a scraper sending the
//! same credentials pays for bcrypt once, as in exporter-toolkit.

pub mod config;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

use super::http::head;
use config::{CipherSuite, ClientAuth, Curve, TlsConfig, TlsVersion, WebConfig};

/// Most remembered credential checks; the memory is emptied when full.
pub const AUTH_CACHE: usize = 1024;

/// What a connection is served with: the file as it was when the connection came.
pub struct Policy {
    /// The TLS server configuration, on a TLS port.
    pub tls: Option<Arc<ServerConfig>>,
    /// Header lines added to every response.
    pub headers: Vec<String>,
    /// User → bcrypt hash; empty: no authentication.
    users: std::collections::BTreeMap<String, String>,
    /// Whether the TLS handshake requires a verified client certificate.
    client_certs_required: bool,
}

impl Policy {
    /// Whether requests need Basic credentials.
    pub fn needs_auth(&self) -> bool {
        !self.users.is_empty()
    }
}

/// The web configuration file, re-read per connection.
pub struct Web {
    path: PathBuf,
    tls: bool,
    loaded: Mutex<Loaded>,
    checked: Mutex<HashMap<[u8; 32], bool>>,
    bcrypt: Mutex<()>,
}

/// The last good load, and what it was made from.
struct Loaded {
    text: Vec<u8>,
    files: Vec<Vec<u8>>,
    policy: Arc<Policy>,
    /// The last error reported on stderr (reported again only when it changes).
    reported: Option<String>,
}

impl Web {
    /// Loads `path` once, to start with: everything a connection would use is read and checked
    /// (the YAML, the certificate and key and that they match, the client CAs, the hashes).
    ///
    /// # Errors
    /// The reason, naming the file at fault.
    pub fn open(path: &Path) -> Result<Web, String> {
        let text = read(path, "web config file")?;
        let config = parse(path, &text)?;
        let files = read_files(config.tls.as_ref())?;
        let policy = build(&config, &files, config.tls.is_some())?;
        Ok(Web {
            path: path.to_path_buf(),
            tls: config.tls.is_some(),
            loaded: Mutex::new(Loaded {
                text,
                files,
                policy: Arc::new(policy),
                reported: None,
            }),
            checked: Mutex::new(HashMap::new()),
            bcrypt: Mutex::new(()),
        })
    }

    /// Whether the port speaks TLS (fixed at start).
    pub fn speaks_tls(&self) -> bool {
        self.tls
    }

    /// What the file, as loaded last, leaves open: `None` when every request needs Basic
    /// credentials or a verified client certificate; else "no authentication" (and whether
    /// there is TLS).
    pub fn unauthenticated(&self) -> Option<&'static str> {
        let loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let p = &loaded.policy;
        match (p.needs_auth() || p.client_certs_required, self.tls) {
            (true, _) => None,
            (false, true) => Some("TLS, but no basic_auth_users or client certificates"),
            (false, false) => Some("no TLS, no basic_auth_users"),
        }
    }

    /// What the current connection is served with: the file and the files it names, read now.
    ///
    /// # Errors
    /// When the file or a file it names cannot be read or is invalid (already reported on
    /// stderr); the connection is then refused.
    pub fn current(&self) -> Result<Arc<Policy>, ()> {
        let result = self.reload();
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(Some((text, files, policy))) => {
                *loaded = Loaded {
                    text,
                    files,
                    policy,
                    reported: None,
                };
                Ok(Arc::clone(&loaded.policy))
            }
            Ok(None) => {
                loaded.reported = None; // back to the last good file: a new failure is news
                Ok(Arc::clone(&loaded.policy))
            }
            Err(e) => {
                if loaded.reported.as_ref() != Some(&e) {
                    eprintln!("inspect serve: refusing connections until this is fixed: {e}");
                    loaded.reported = Some(e);
                }
                Err(())
            }
        }
    }

    /// Reads the files again: `None` when they are byte for byte what the last load used.
    #[allow(clippy::type_complexity)]
    fn reload(&self) -> Result<Option<(Vec<u8>, Vec<Vec<u8>>, Arc<Policy>)>, String> {
        let text = read(&self.path, "web config file")?;
        let (same_text, last_files) = {
            let loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
            (loaded.text == text, loaded.files.clone())
        };
        let config = parse(&self.path, &text)?;
        if self.tls && config.tls.is_none() {
            return Err(format!(
                "{}: no longer configures TLS; restart serve to serve plain HTTP",
                self.path.display()
            ));
        }
        // A plain port stays plain until restarted (its users and headers still apply).
        let tls = if self.tls { config.tls.as_ref() } else { None };
        let files = read_files(tls)?;
        if same_text && files == last_files {
            return Ok(None);
        }
        let policy = build(&config, &files, self.tls)?;
        Ok(Some((text, files, Arc::new(policy))))
    }

    /// Whether a request with this `Authorization` value may be answered under `policy`.
    pub fn authorized(&self, policy: &Policy, authorization: Option<&str>) -> bool {
        if policy.users.is_empty() {
            return true;
        }
        let Some((user, password)) = authorization.and_then(head::basic_credentials) else {
            return false;
        };
        // An unknown user is checked against a configured user's hash: the same cost.
        let (hash, known) = match policy.users.get(&user) {
            Some(h) => (h, true),
            None => (policy.users.values().next().expect("not empty"), false),
        };
        let mut key = ring::digest::Context::new(&ring::digest::SHA256);
        for part in [user.as_bytes(), hash.as_bytes(), password.as_bytes()] {
            key.update(&(part.len() as u64).to_le_bytes());
            key.update(part);
        }
        let key: [u8; 32] = key
            .finish()
            .as_ref()
            .try_into()
            .expect("SHA-256 is 32 bytes");
        let remembered = self
            .checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied();
        let matches = match remembered {
            Some(m) => m,
            None => {
                let m = {
                    let _one_at_a_time = self.bcrypt.lock().unwrap_or_else(|e| e.into_inner());
                    // Go's bcrypt refuses passwords over 72 bytes instead of truncating them.
                    bcrypt::non_truncating_verify(password.as_bytes(), hash).unwrap_or(false)
                };
                let mut checked = self.checked.lock().unwrap_or_else(|e| e.into_inner());
                if checked.len() >= AUTH_CACHE {
                    checked.clear();
                }
                checked.insert(key, m);
                m
            }
        };
        matches && known
    }
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("{what} {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(config::MAX_FILE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{what} {}: {e}", path.display()))?;
    if bytes.len() > config::MAX_FILE {
        return Err(format!(
            "{what} {}: larger than {} bytes",
            path.display(),
            config::MAX_FILE
        ));
    }
    Ok(bytes)
}

fn parse(path: &Path, text: &[u8]) -> Result<WebConfig, String> {
    let text = std::str::from_utf8(text)
        .map_err(|e| format!("web config file {}: not UTF-8: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    config::parse(text, dir).map_err(|e| format!("web config file {}: {e}", path.display()))
}

/// The certificate, key and client CA files' bytes (none without TLS).
fn read_files(tls: Option<&TlsConfig>) -> Result<Vec<Vec<u8>>, String> {
    let Some(tls) = tls else {
        return Ok(Vec::new());
    };
    let mut files = vec![
        read(&tls.cert_file, "cert_file")?,
        read(&tls.key_file, "key_file")?,
    ];
    if let Some(ca) = &tls.client_ca_file {
        files.push(read(ca, "client_ca_file")?);
    }
    Ok(files)
}

fn build(config: &WebConfig, files: &[Vec<u8>], tls: bool) -> Result<Policy, String> {
    let tls = match (&config.tls, tls) {
        (Some(t), true) => Some(Arc::new(server_config(t, files)?)),
        _ => None,
    };
    Ok(Policy {
        client_certs_required: tls.is_some()
            && config.tls.as_ref().map(|t| t.client_auth)
                == Some(ClientAuth::RequireAndVerifyClientCert),
        tls,
        headers: config.headers.clone(),
        users: config.users.clone(),
    })
}

/// The rustls configuration `tls` describes, from the files' bytes (cert, key, client CAs).
fn server_config(tls: &TlsConfig, files: &[Vec<u8>]) -> Result<ServerConfig, String> {
    let cert_path = tls.cert_file.display();
    let key_path = tls.key_file.display();
    let certs = CertificateDer::pem_slice_iter(&files[0])
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cert_file {cert_path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("cert_file {cert_path}: no PEM CERTIFICATE in it"));
    }
    let key = PrivateKeyDer::from_pem_slice(&files[1])
        .map_err(|e| format!("key_file {key_path}: {e}"))?;

    let mut provider = rustls::crypto::ring::default_provider();
    if !tls.cipher_suites.is_empty() {
        let tls12: Vec<_> = tls.cipher_suites.iter().map(|s| rustls_suite(*s)).collect();
        let mut suites: Vec<_> = provider
            .cipher_suites
            .iter()
            .filter(|s| s.version() == &rustls::version::TLS13)
            .copied()
            .collect();
        for wanted in tls12 {
            if let Some(s) = provider.cipher_suites.iter().find(|s| s.suite() == wanted) {
                suites.push(*s);
            }
        }
        provider.cipher_suites = suites;
    }
    if !tls.curves.is_empty() {
        use rustls::crypto::ring::kx_group;
        provider.kx_groups = tls
            .curves
            .iter()
            .map(|c| match c {
                Curve::X25519 => kx_group::X25519,
                Curve::P256 => kx_group::SECP256R1,
                Curve::P384 => kx_group::SECP384R1,
            })
            .collect();
    }
    let provider = Arc::new(provider);
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [TlsVersion::Tls12, TlsVersion::Tls13]
            .into_iter()
            .filter(|v| (tls.min_version..=tls.max_version).contains(v))
            .map(|v| match v {
                TlsVersion::Tls12 => &rustls::version::TLS12,
                TlsVersion::Tls13 => &rustls::version::TLS13,
            })
            .collect();
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&versions)
        .map_err(|e| format!("tls_server_config: {e}"))?;
    let builder = match (tls.client_auth, &tls.client_ca_file) {
        (ClientAuth::NoClientCert, _) | (_, None) => builder.with_no_client_auth(),
        (auth, Some(ca_path)) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(&files[2]) {
                let cert =
                    cert.map_err(|e| format!("client_ca_file {}: {e}", ca_path.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("client_ca_file {}: {e}", ca_path.display()))?;
            }
            if roots.is_empty() {
                return Err(format!(
                    "client_ca_file {}: no PEM CERTIFICATE in it",
                    ca_path.display()
                ));
            }
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider));
            let verifier = if auth == ClientAuth::VerifyClientCertIfGiven {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|e| format!("client_ca_file {}: {e}", ca_path.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => {
            format!("key_file {key_path} does not match cert_file {cert_path}: {e}")
        }
        e => format!("cert_file {cert_path} / key_file {key_path}: {e}"),
    })?;
    config.ignore_client_order = tls.prefer_server_cipher_suites;
    // One request per connection, and Prometheus does not resume sessions: keep no session
    // state (nothing per client in memory, no tickets to protect).
    config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    config.send_tls13_tickets = 0;
    Ok(config)
}

fn rustls_suite(s: CipherSuite) -> rustls::CipherSuite {
    use rustls::CipherSuite as R;
    match s {
        CipherSuite::EcdheEcdsaAes128GcmSha256 => R::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::EcdheEcdsaAes256GcmSha384 => R::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::EcdheEcdsaChacha20Poly1305Sha256 => {
            R::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        }
        CipherSuite::EcdheRsaAes128GcmSha256 => R::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::EcdheRsaAes256GcmSha384 => R::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::EcdheRsaChacha20Poly1305Sha256 => {
            R::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
    }
}
