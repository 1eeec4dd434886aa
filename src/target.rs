//! The one way a command line names what to read, shared by `inspect` and `inspect stat`: a
//! pid (its hsperfdata file, or its memory with `-F`), a saved hsperfdata file, or a core.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use hsinspect::pipeline::DEFAULT_STOP_TIMEOUT;
use hsinspect::{LiveOptions, Pid, SymbolCacheUse, Target};

/// The target flags of `inspect` and `inspect stat`: one clap group, flattened into `inspect`'s
/// command line and filled by `inspect stat`'s jstat-style parser. The target itself (a pid or a
/// path) is each command's positional argument, given to [`TargetArgs::target`].
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// Post-mortem read: take the region out of this ELF core file (from a crash or `gcore`), or
    /// this Windows minidump with full memory (`hs_err_pid<pid>.mdmp`, `procdump -ma`).
    #[arg(long, value_name = "CORE", conflicts_with_all = ["force", "no_stop"])]
    pub core: Option<PathBuf>,

    /// With --core: the java launcher the JVM ran, or its libjvm.so, when the library is no longer
    /// at the path the process used (or the core has no list of mapped files).
    #[arg(long, value_name = "PATH", requires = "core")]
    pub exe: Option<PathBuf>,

    /// With --core: a directory holding the dead process's files under their original paths
    /// (for a core from another machine, container or architecture); symbolic links in it
    /// resolve inside it.
    #[arg(long, value_name = "DIR", requires = "core")]
    pub sysroot: Option<PathBuf>,

    /// Forced read: take the region out of the process's memory (ptrace), not its hsperfdata file.
    #[arg(short = 'F', long = "force")]
    pub force: bool,

    /// With -F: do not stop the JVM's threads while reading (no pause, snapshot may be torn).
    #[arg(long, requires = "force")]
    pub no_stop: bool,

    /// With -F: longest time the stop may take, in milliseconds: seizing, interrupting and waiting
    /// for every thread of the JVM (about 28 µs a thread). Threads not stopped by then are read
    /// running, with a warning; the read and the release follow (-v prints the whole hold). The
    /// default leaves room for a 5,000-thread JVM on a loaded host; a small JVM stops in a few ms.
    #[arg(long, default_value_t = DEFAULT_STOP_TIMEOUT.as_millis() as u64, value_name = "MS")]
    pub stop_timeout: u64,

    /// Longest time to wait for a starting JVM to make its region (or hsperfdata file) ready, and
    /// with -F for another tracer's hold to end (another `inspect -F` reading it), in milliseconds.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    pub wait: u64,

    /// With -F: do not use or fill the per-build symbol cache (~/.cache/hsinspect).
    #[arg(long)]
    pub no_cache: bool,
}

impl Default for TargetArgs {
    fn default() -> Self {
        let d = LiveOptions::default();
        TargetArgs {
            core: None,
            exe: None,
            sysroot: None,
            force: false,
            no_stop: false,
            stop_timeout: d.stop_timeout.as_millis() as u64,
            wait: d.wait_accessible.as_millis() as u64,
            no_cache: false,
        }
    }
}

impl TargetArgs {
    /// The [`Target`] these flags and the positional `target` (a pid or a path; ignored with
    /// `--core`) name.
    ///
    /// # Errors
    /// No target; a pid that cannot be one (0, negative); `-F` with a file.
    pub fn target(&self, target: Option<&str>) -> anyhow::Result<Target> {
        if let Some(core) = &self.core {
            return Ok(Target::Core {
                core: core.clone(),
                exe: self.exe.clone(),
                sysroot: self.sysroot.clone(),
            });
        }
        let Some(target) = target else {
            bail!("give a pid, an hsperfdata file, or --core <core>");
        };
        let wait = Duration::from_millis(self.wait);
        Ok(match TargetSpec::parse(target) {
            TargetSpec::Pid(pid) if pid <= 0 => {
                bail!(
                    "{pid} is not a process id: pids are positive (find the JVM's with `jps` or `pgrep java`)"
                )
            }
            TargetSpec::Pid(pid) if self.force => Target::Live {
                pid,
                opts: LiveOptions {
                    stop: !self.no_stop,
                    stop_timeout: Duration::from_millis(self.stop_timeout),
                    wait_accessible: wait,
                    symbol_cache: if self.no_cache {
                        SymbolCacheUse::Off
                    } else {
                        SymbolCacheUse::ReadWrite
                    },
                },
            },
            TargetSpec::Pid(pid) => Target::Hsperfdata { pid, wait },
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

/// The post-mortem flags of the commands that read the VM (`inspect threads`, `inspect histo`):
/// a core instead of a live pid, and where its libjvm is.
#[derive(Debug, clap::Args)]
pub struct CoreFileArgs {
    /// Read a core file instead of a live process: an ELF core, or a Windows
    /// JVM's full-memory minidump (`hs_err_pid<pid>.mdmp`, `procdump -ma`).
    #[arg(long, value_name = "CORE")]
    pub core: Option<PathBuf>,
    /// With --core: the java launcher or libjvm.so the JVM ran.
    #[arg(long, value_name = "PATH", requires = "core")]
    pub exe: Option<PathBuf>,
    /// With --core: a directory holding the dead process's files under their own paths.
    #[arg(long, value_name = "DIR", requires = "core")]
    pub sysroot: Option<PathBuf>,
}

/// What a command reads: a live JVM or a core.
pub enum Source<'a> {
    /// The live process.
    Live(i32),
    /// The core file.
    Core(&'a std::path::Path),
}

impl CoreFileArgs {
    /// The core to read or the live pid, refusing both or neither.
    ///
    /// # Errors
    /// Both a pid and --core, or neither.
    pub fn source(&self, pid: Option<i32>) -> anyhow::Result<Source<'_>> {
        match (&self.core, pid) {
            (Some(_), Some(_)) => bail!("give either a pid or --core, not both"),
            (None, None) => bail!("give the JVM's pid, or --core <core>"),
            (Some(core), None) => Ok(Source::Core(core)),
            (None, Some(pid)) => Ok(Source::Live(pid)),
        }
    }
}

/// How the commands that read a live VM (`inspect threads`, `inspect histo`) hold it, as
/// `inspect -F` does.
#[derive(Debug, clap::Args)]
pub struct HoldArgs {
    /// Do not stop the threads while reading (frames may be torn; a heap walk may meet objects
    /// being written and end a space early, with a note).
    #[arg(long)]
    pub no_stop: bool,
    /// Longest time the stop may take, in milliseconds, as for `inspect -F` (threads not stopped
    /// by then are read running, with a warning).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_STOP_TIMEOUT.as_millis() as u64)]
    pub stop_timeout: u64,
    /// Longest time to wait for another tracer's hold to end (another `inspect` reading the
    /// JVM, which lasts milliseconds), in milliseconds, as for `inspect -F`.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub wait: u64,
}

impl HoldArgs {
    /// The hold of a heap read (`inspect histo`, `inspect heap`; live reads of the heap are
    /// Linux's so far).
    #[cfg_attr(not(all(target_os = "linux", feature = "live")), allow(dead_code))]
    pub fn heap_options(&self) -> hsinspect::pipeline::HeapOptions {
        hsinspect::pipeline::HeapOptions {
            stop: !self.no_stop,
            stop_timeout: std::time::Duration::from_millis(self.stop_timeout),
            wait: std::time::Duration::from_millis(self.wait),
        }
    }
}
