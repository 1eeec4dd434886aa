//! A per-build cache of where `PerfMemory`'s variables are, keyed by libjvm's build-id.
//!
//! Finding the variables costs more than the rest of a forced read (mapping a 20 MB library and
//! scanning 60 000 symbols, or walking vmStructs). The answer depends only on the build, so it is
//! kept as link-time addresses in `<cache dir>/perfmemory-<build-id>`; a later read of any JVM
//! of the same build only reads the build-id from the target's memory and adds its load bias.
//!
//! The cache directory is `$HSINSPECT_CACHE_DIR`, else `$XDG_CACHE_HOME/hsinspect`, else
//! `$HOME/.cache/hsinspect`. An entry is trusted only when it and its directory belong to the
//! current user and are writable by nobody else; entries are written atomically with mode 0600.
//! A damaged entry is ignored. The cache never holds target data, only symbol addresses.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::PerfMemoryVars;
use super::elf::hex;

/// The cache directory in use.
#[derive(Debug, Clone)]
pub struct SymbolCache {
    dir: PathBuf,
}

/// A cached answer: link-time addresses (add the load bias) and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedVars {
    /// Link-time addresses of the variables.
    pub vars: PerfMemoryVars,
    /// The symbol source that first found them.
    pub source: String,
}

impl SymbolCache {
    /// The cache in the default directory (see the module docs); `None` when no directory can be
    /// named (no `HOME`).
    pub fn from_env() -> Option<Self> {
        let dir = std::env::var_os("HSINSPECT_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("hsinspect"))
            })
            .or_else(|| {
                std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/hsinspect"))
            })?;
        Some(SymbolCache { dir })
    }

    fn entry(&self, build_id: &[u8]) -> PathBuf {
        self.dir.join(format!("perfmemory-{}", hex(build_id)))
    }

    /// The entry for `build_id`, if present and trustworthy.
    pub fn get(&self, build_id: &[u8]) -> Option<CachedVars> {
        if build_id.is_empty() || !trusted(&self.dir) {
            return None;
        }
        let path = self.entry(build_id);
        if !trusted(&path) {
            return None;
        }
        let text = std::fs::read_to_string(&path).ok()?;
        let field = |key: &str| -> Option<Option<u64>> {
            let v = text
                .lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))?;
            if v == "-" {
                Some(None)
            } else {
                u64::from_str_radix(v.trim_start_matches("0x"), 16)
                    .ok()
                    .map(Some)
            }
        };
        let vars = PerfMemoryVars {
            start: field("start")??,
            capacity: field("capacity")??,
            top: field("top")?,
            initialized: field("initialized")?,
        };
        let source = text
            .lines()
            .find_map(|l| l.strip_prefix("source="))?
            .to_string();
        Some(CachedVars { vars, source })
    }

    /// Stores an entry; failures are returned for `-v` but are otherwise harmless.
    ///
    /// # Errors
    /// The I/O error that prevented the write.
    pub fn put(&self, build_id: &[u8], cached: &CachedVars) -> std::io::Result<()> {
        if build_id.is_empty() {
            return Ok(());
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| format!("{v:#x}"));
        let v = &cached.vars;
        let text = format!(
            "# hsinspect: link-time addresses of PerfMemory's variables in libjvm build-id {}\nstart={:#x}\ncapacity={:#x}\ntop={}\ninitialized={}\nsource={}\n",
            hex(build_id),
            v.start,
            v.capacity,
            opt(v.top),
            opt(v.initialized),
            cached.source.replace('\n', " ")
        );
        let path = self.entry(build_id);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        drop(f);
        std::fs::rename(&tmp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

/// Owned by us, not a symlink, writable by nobody else.
fn trusted(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    !meta.file_type().is_symlink()
        && meta.uid() == nix::unistd::geteuid().as_raw()
        && meta.permissions().mode() & 0o022 == 0
}

impl PerfMemoryVars {
    /// The same variables moved by `delta` (add a load bias, or subtract one with a negative
    /// delta expressed by wrapping arithmetic).
    pub fn shifted(&self, delta: u64) -> Self {
        PerfMemoryVars {
            start: self.start.wrapping_add(delta),
            capacity: self.capacity.wrapping_add(delta),
            top: self.top.map(|a| a.wrapping_add(delta)),
            initialized: self.initialized.map(|a| a.wrapping_add(delta)),
        }
    }
}
