//! The one way a command line names what to read, shared by `inspect` and `inspect stat`: a
//! pid (its hsperfdata file, or its memory with `-F`), a saved hsperfdata file, or a core.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use hsinspect::{ForcedOptions, Pid, SymbolCacheUse, Target};

/// The target flags both commands take.
#[derive(Debug, Clone)]
pub struct TargetArgs {
    /// A pid or a path (`TARGET`); ignored with `core`.
    pub target: Option<String>,
    /// `-F`: read the live process's memory.
    pub force: bool,
    /// `--no-stop`: do not stop the threads during a forced read.
    pub no_stop: bool,
    /// `--no-cache`: neither read nor write the per-build symbol cache.
    pub no_cache: bool,
    /// `--stop-timeout`.
    pub stop_timeout: Duration,
    /// `--wait`: how long to wait for a starting JVM.
    pub wait: Duration,
    /// `--core`, with `--exe` and `--sysroot`.
    pub core: Option<PathBuf>,
    /// `--exe`.
    pub exe: Option<PathBuf>,
    /// `--sysroot`.
    pub sysroot: Option<PathBuf>,
}

impl Default for TargetArgs {
    fn default() -> Self {
        let d = ForcedOptions::default();
        TargetArgs {
            target: None,
            force: false,
            no_stop: false,
            no_cache: false,
            stop_timeout: d.stop_timeout,
            wait: d.wait_accessible,
            core: None,
            exe: None,
            sysroot: None,
        }
    }
}

impl TargetArgs {
    /// The [`Target`] these flags name.
    ///
    /// # Errors
    /// No target; a pid that cannot be one (0, negative); `-F` with a file.
    pub fn source(&self) -> anyhow::Result<Target> {
        if let Some(core) = &self.core {
            return Ok(Target::Core {
                core: core.clone(),
                exe: self.exe.clone(),
                sysroot: self.sysroot.clone(),
            });
        }
        let Some(target) = &self.target else {
            bail!("give a pid, an hsperfdata file, or --core <core>");
        };
        Ok(match TargetSpec::parse(target) {
            TargetSpec::Pid(pid) if pid <= 0 => {
                bail!(
                    "{pid} is not a process id: pids are positive (find the JVM's with `jps` or `pgrep java`)"
                )
            }
            TargetSpec::Pid(pid) if self.force => Target::Forced {
                pid,
                opts: ForcedOptions {
                    stop: !self.no_stop,
                    stop_timeout: self.stop_timeout,
                    wait_accessible: self.wait,
                    symbol_cache: if self.no_cache {
                        SymbolCacheUse::Off
                    } else {
                        SymbolCacheUse::ReadWrite
                    },
                },
            },
            TargetSpec::Pid(pid) => Target::Hsperfdata {
                pid,
                wait: self.wait,
            },
            TargetSpec::File(path) if self.force => {
                bail!(
                    "-F reads a live process: give a pid, not the path {}",
                    path.display()
                )
            }
            TargetSpec::File(path) => Target::SavedFile(path),
        })
    }
}

/// A target named on the command line: a pid, or a path to an hsperfdata file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A process id.
    Pid(Pid),
    /// A file.
    File(PathBuf),
}

impl TargetSpec {
    /// An integer: a pid (0 and negative ones too, so they are refused as pids rather than
    /// looked for as files; a file named `-5` is `./-5`); anything else: a path.
    pub fn parse(s: &str) -> Self {
        match s.parse::<Pid>() {
            Ok(pid) if !s.starts_with('+') => TargetSpec::Pid(pid),
            _ => TargetSpec::File(PathBuf::from(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::TargetSpec;

    #[test]
    fn integers_are_pids_and_everything_else_is_a_path() {
        assert_eq!(TargetSpec::parse("4242"), TargetSpec::Pid(4242));
        // Refused later as pids, never looked for as files.
        assert_eq!(TargetSpec::parse("0"), TargetSpec::Pid(0));
        assert_eq!(TargetSpec::parse("-5"), TargetSpec::Pid(-5));
        for path in [
            "+5",
            "./4242",
            "4242.hsperf",
            "/tmp/hsperfdata_u/4242",
            "99999999999",
        ] {
            assert_eq!(
                TargetSpec::parse(path),
                TargetSpec::File(PathBuf::from(path))
            );
        }
    }
}
