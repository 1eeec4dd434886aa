//! A per-build cache of where `PerfMemory`'s variables are, keyed by libjvm's build-id.
//!
//! Finding the variables costs more than the rest of a forced read (reading a 20 MB library's
//! symbol tables and scanning 60 000 symbols, or walking vmStructs). The answer depends only on the build, so it is
//! kept as link-time addresses in `<cache dir>/perfmemory-<build-id>`; a later read of any JVM
//! of the same build only reads the build-id from the target's memory and adds its load bias.
//!
//! The cache directory is `$HSINSPECT_CACHE_DIR`, else `$XDG_CACHE_HOME/hsinspect`, else
//! `$HOME/.cache/hsinspect`; as the XDG base directory spec says, a relative or empty
//! `XDG_CACHE_HOME` (or `HOME`) is ignored, so the cache never lands in the current directory.
//! An entry is trusted only when it and its directory belong to the current user and are
//! writable by nobody else; entries are written atomically (a uniquely named temporary file,
//! mode 0600, renamed into place).
//! A damaged entry is ignored. The cache never holds target data, only symbol addresses.
//!
//! An entry that cannot be written (a user without a home directory), or that must not be (a
//! read-only cache: `inspect list` and `serve` write nothing), is kept in memory for the life of
//! the process instead, so a scan of many JVMs of one build still does the symbol work once.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::PerfMemoryVars;
use crate::elf::hex;

/// Entries this process found but could not write: (cache directory, build-id, entry).
static MEMO: Mutex<Vec<(PathBuf, Vec<u8>, CachedVars)>> = Mutex::new(Vec::new());

/// The cache directory in use.
#[derive(Debug, Clone)]
pub struct SymbolCache {
    dir: PathBuf,
    /// Whether entries are written to `dir` (else only kept in memory).
    write: bool,
}

/// A cached answer: link-time addresses (add the load bias) and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedVars {
    /// Link-time addresses of the variables.
    pub vars: PerfMemoryVars,
    /// The symbol source that first found them.
    pub source: String,
}

// Only the Linux live backend reads and fills the cache (Windows walks vmStructs in memory).
#[cfg_attr(not(all(feature = "live", target_os = "linux")), allow(dead_code))]
impl SymbolCache {
    /// The cache in the default directory (see the module docs), written to when `write`;
    /// `None` when no directory can be named (no `HOME`).
    pub fn from_env(write: bool) -> Option<Self> {
        Self::from_vars(|name| std::env::var_os(name)).map(|dir| SymbolCache { dir, write })
    }

    /// The cache directory the variables `var` give (see the module docs).
    fn from_vars(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
        let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
        var("HSINSPECT_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| absolute("XDG_CACHE_HOME").map(|d| d.join("hsinspect")))
            .or_else(|| absolute("HOME").map(|d| d.join(".cache/hsinspect")))
    }

    fn entry(&self, build_id: &[u8]) -> PathBuf {
        self.dir.join(format!("perfmemory-{}", hex(build_id)))
    }

    /// The entry for `build_id`, if present and trustworthy.
    pub fn get(&self, build_id: &[u8]) -> Option<CachedVars> {
        if build_id.is_empty() {
            return None;
        }
        self.read_entry(build_id)
            .or_else(|| self.memo_get(build_id))
    }

    fn read_entry(&self, build_id: &[u8]) -> Option<CachedVars> {
        if !trusted(&self.dir) {
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

    fn memo_get(&self, build_id: &[u8]) -> Option<CachedVars> {
        let memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        memo.iter()
            .find(|(dir, id, _)| *dir == self.dir && id == build_id)
            .map(|(_, _, entry)| entry.clone())
    }

    fn memo_put(&self, build_id: &[u8], entry: &CachedVars) {
        let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        memo.retain(|(dir, id, _)| !(*dir == self.dir && id == build_id));
        memo.push((self.dir.clone(), build_id.to_vec(), entry.clone()));
    }

    /// Stores an entry; in a read-only cache, or when it cannot be written, it is kept in memory
    /// for the rest of the process (see the module docs), and a write's failure is returned for
    /// `-v`, otherwise harmless.
    ///
    /// # Errors
    /// The I/O error that prevented the write.
    pub fn put(&self, build_id: &[u8], cached: &CachedVars) -> std::io::Result<()> {
        if build_id.is_empty() {
            return Ok(());
        }
        if !self.write {
            self.memo_put(build_id, cached);
            return Ok(());
        }
        self.write(build_id, cached)
            .inspect_err(|_| self.memo_put(build_id, cached))
    }

    fn write(&self, build_id: &[u8], cached: &CachedVars) -> std::io::Result<()> {
        let mut dir = std::fs::DirBuilder::new();
        dir.recursive(true);
        crate::sys::private_dir(&mut dir);
        dir.create(&self.dir)?;
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
        // A unique name (mode 0600) renamed into place: a reader sees the old entry or the new
        // one, and a run that died mid-write leaves nothing that blocks later writes.
        let mut tmp = tempfile::Builder::new()
            .prefix(".perfmemory-")
            .tempfile_in(&self.dir)?;
        tmp.write_all(text.as_bytes())?;
        tmp.persist(self.entry(build_id)).map_err(|e| e.error)?;
        Ok(())
    }
}

/// How a forced read uses the per-build symbol cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolCacheUse {
    /// Neither read nor write it (`--no-cache`).
    Off,
    /// Read it; what this process finds is kept in memory only, never written (`inspect list`
    /// and `serve`, which write nothing).
    ReadOnly,
    /// Read it, and write what was found (`inspect -F`, `inspect stat -F`).
    ReadWrite,
}

/// Owned by us, not a symlink, writable by nobody else. (Where the OS has no such modes, no
/// entry is trusted: the cache is written but never read.)
fn trusted(path: &Path) -> bool {
    crate::sys::owned_and_private(path)
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

#[cfg(all(test, unix))]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn vars<'a>(pairs: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    fn dir_of(pairs: &[(&str, &str)]) -> Option<PathBuf> {
        SymbolCache::from_vars(vars(pairs))
    }

    #[test]
    fn directory_follows_the_xdg_rules() {
        let home = ("HOME", "/home/u");
        assert_eq!(
            dir_of(&[("HSINSPECT_CACHE_DIR", "rel/dir"), home]),
            Some(PathBuf::from("rel/dir"))
        );
        assert_eq!(
            dir_of(&[("XDG_CACHE_HOME", "/xdg"), home]),
            Some(PathBuf::from("/xdg/hsinspect"))
        );
        // Empty or relative XDG_CACHE_HOME: ignored, never the current directory.
        for xdg in ["", "relative"] {
            assert_eq!(
                dir_of(&[("XDG_CACHE_HOME", xdg), home]),
                Some(PathBuf::from("/home/u/.cache/hsinspect"))
            );
        }
        assert_eq!(dir_of(&[("HSINSPECT_CACHE_DIR", ""), ("HOME", "")]), None);
        assert_eq!(dir_of(&[]), None);
    }

    fn sample() -> CachedVars {
        CachedVars {
            vars: PerfMemoryVars {
                start: 0x1234_5000,
                capacity: 0x1234_5008,
                top: None,
                initialized: Some(0x1234_5010),
            },
            source: ".symtab of /x/libjvm.so".into(),
        }
    }

    #[test]
    fn entries_round_trip_and_a_stale_temporary_file_does_not_block_writes() {
        let root = tempfile::tempdir().unwrap();
        let cache = SymbolCache {
            dir: root.path().join("c"),
            write: true,
        };
        let id = [0xab, 0xcd, 0xef];
        assert_eq!(cache.get(&id), None);
        cache.put(&id, &sample()).unwrap();
        assert_eq!(cache.get(&id), Some(sample()));
        let entry = cache.dir.join("perfmemory-abcdef");
        assert_eq!(
            std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // What a crashed writer would leave behind.
        std::fs::write(cache.dir.join(".perfmemory-stale"), "junk").unwrap();
        std::fs::write(cache.dir.join("perfmemory-abcdef.tmp4242"), "junk").unwrap();
        let mut other = sample();
        other.vars.start = 0x99;
        cache.put(&id, &other).unwrap();
        assert_eq!(cache.get(&id), Some(other));
        // Empty build-ids are never stored or looked up.
        cache.put(&[], &sample()).unwrap();
        assert_eq!(cache.get(&[]), None);
    }

    #[test]
    fn entries_others_can_write_or_that_are_damaged_are_ignored() {
        let root = tempfile::tempdir().unwrap();
        let cache = SymbolCache {
            dir: root.path().join("c"),
            write: true,
        };
        let id = [1, 2, 3, 4];
        cache.put(&id, &sample()).unwrap();
        let entry = cache.dir.join("perfmemory-01020304");
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o622)).unwrap();
        assert_eq!(cache.get(&id), None);
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&cache.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(cache.get(&id), None);
        std::fs::set_permissions(&cache.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(&entry, "start=0x10\ncapacity=zz\n").unwrap();
        assert_eq!(cache.get(&id), None);
        std::fs::remove_file(&entry).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &entry).unwrap();
        assert_eq!(cache.get(&id), None);
    }

    #[test]
    fn an_entry_that_cannot_be_written_is_kept_for_the_process() {
        let root = tempfile::tempdir().unwrap();
        // A directory that cannot be made: its parent is a file.
        std::fs::write(root.path().join("file"), "").unwrap();
        let cache = SymbolCache {
            dir: root.path().join("file/c"),
            write: true,
        };
        let id = [7, 7, 7];
        assert_eq!(cache.get(&id), None);
        assert!(cache.put(&id, &sample()).is_err());
        assert_eq!(cache.get(&id), Some(sample()));
        // Only for that directory.
        let elsewhere = SymbolCache {
            dir: root.path().join("elsewhere"),
            write: true,
        };
        assert_eq!(elsewhere.get(&id), None);
    }

    #[test]
    fn a_read_only_cache_reads_entries_but_writes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("c");
        let writer = SymbolCache {
            dir: dir.clone(),
            write: true,
        };
        let reader = SymbolCache {
            dir: dir.clone(),
            write: false,
        };
        writer.put(&[1], &sample()).unwrap();
        assert_eq!(reader.get(&[1]), Some(sample()));
        let before: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        reader.put(&[2], &sample()).unwrap();
        let after: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(before, after, "a read-only cache wrote a file");
        // What it found is still reused for the rest of the process.
        assert_eq!(reader.get(&[2]), Some(sample()));
        // A read-only cache never makes its directory either.
        let fresh = SymbolCache {
            dir: root.path().join("fresh"),
            write: false,
        };
        fresh.put(&[3], &sample()).unwrap();
        assert!(!root.path().join("fresh").exists());
    }
}
