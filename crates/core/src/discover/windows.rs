//! The Windows side of [`super::scan`]: one toolhelp process snapshot, then each process's
//! module list (see the module docs).
//!
//! **What is a JVM.** A process that has `jvm.dll` loaded (a toolhelp module snapshot,
//! `TH32CS_SNAPMODULE`), whatever its executable: `java.exe`, `javaw.exe`, procrun's
//! `prunsrv.exe`, an IDE's launcher. When its modules cannot be listed (a service's or another
//! user's process, from a prompt that is not elevated), a process is still known to be a JVM when
//! its executable is `java.exe` or `javaw.exe`, or when this user's temp directory has an
//! hsperfdata file of its pid: it is listed as [`Readable::Neither`] with the reason and the fix.
//! The other unlistable processes are counted in [`Scan::not_inspected`].
//!
//! **What is said about it.** Its user is the account of its token ([`token_user`]), which is
//! also the `<user>` of its shared memory `hsperfdata_<user>_<pid>`: a JVM whose hsperfdata file
//! lives under another user's profile is read through that mapping, not found by a directory
//! scan. Main class and version come from the PerfData strings, read from the shared memory or
//! file, else from the process's memory with no stop (`ReadProcessMemory`; never a debug attach),
//! else the version alone from the `release` file of the JDK whose `jvm.dll` is loaded.
//! The scan enables `SeDebugPrivilege` when this process's token holds it (an elevated prompt), as
//! Windows' own tools do, so that service JVMs can be read.

use std::path::{Path, PathBuf};

use super::{
    Described, Examined, InfoSource, JvmInfo, Look, NotInspected, Readable, Scan, ScanOptions,
    assemble, launcher, parallel_map,
};
use crate::error::Error;
use crate::locate::JVM_DLL;
use crate::locate::os::find_module;
use crate::pid::Pid;
use crate::pipeline::Reading;
use crate::process::os::{Process, candidate_users, enable_debug_privilege, processes, token_user};

/// A process found to be a JVM by the first pass.
struct Candidate {
    process: Process,
    exe: String,
    /// Whether its module list could be read (then its memory may be read too).
    modules_readable: bool,
    /// `jvm.dll`'s path, from the module list.
    jvm_dll: Option<PathBuf>,
}

pub(super) fn scan(opts: &ScanOptions) -> Result<Scan, Error> {
    let elevated = enable_debug_privilege();
    let me = std::process::id() as Pid;
    // pid 0 is the idle process, 4 the kernel's System process: neither runs a JVM.
    let procs: Vec<_> = processes()?
        .into_iter()
        .filter(|p| p.pid != me && p.pid > 4)
        .collect();
    let examined = parallel_map(&procs, |p| examine(p.pid, &p.exe, elevated));
    Ok(assemble(examined, |candidates| {
        // One JVM first, so that its jvm.dll's export lookup fills the symbol cache for the others.
        let (first, rest) = candidates.split_at(candidates.len().min(1));
        let mut outcomes = parallel_map(first, |c| inspect_one(c, opts, elevated));
        outcomes.extend(parallel_map(rest, |c| inspect_one(c, opts, elevated)));
        outcomes
    }))
}

/// The fix for a process this user may not look into.
fn elevate_hint(elevated: bool) -> &'static str {
    if elevated {
        "even with SeDebugPrivilege enabled (a protected process, or a security product's policy)"
    } else {
        "run inspect from an elevated prompt (Run as administrator: SeDebugPrivilege), or as that user"
    }
}

/// Whether process `pid` (executable `exe`) is a JVM.
fn examine(pid: Pid, exe: &str, elevated: bool) -> Examined<Candidate> {
    let process = match Process::open(pid) {
        Ok(p) => p,
        Err(Error::NoSuchProcess(_) | Error::ProcessExited(_)) => return Examined::Vanished,
        Err(e) => {
            // Not even PROCESS_QUERY_LIMITED_INFORMATION: a protected process (antivirus,
            // csrss); a JVM is never one, but one named java.exe is reported.
            return if is_java_launcher(exe) {
                Examined::NotInspected(NotInspected {
                    pid,
                    uid: None,
                    reason: format!("{exe}: {e}"),
                })
            } else {
                Examined::NotAJvm
            };
        }
    };
    match find_module(&process, JVM_DLL) {
        Ok(Some(module)) => Examined::Jvm(Candidate {
            process,
            exe: exe.to_string(),
            modules_readable: true,
            jvm_dll: Some(module.path),
        }),
        Ok(None) => Examined::NotAJvm,
        Err(Error::ProcessExited(_) | Error::NoSuchProcess(_)) => Examined::Vanished,
        Err(e) => {
            if is_java_launcher(exe) || has_hsperfdata_file(pid) {
                return Examined::Jvm(Candidate {
                    process,
                    exe: exe.to_string(),
                    modules_readable: false,
                    jvm_dll: None,
                });
            }
            let reason = match e {
                Error::PermissionDenied { .. } => format!(
                    "a service's or another user's process: its modules cannot be listed ({})",
                    elevate_hint(elevated)
                ),
                e => e.to_string(),
            };
            Examined::NotInspected(NotInspected {
                pid,
                uid: None,
                reason,
            })
        }
    }
}

/// `java.exe` or `javaw.exe`, any case.
fn is_java_launcher(exe: &str) -> bool {
    exe.eq_ignore_ascii_case("java.exe") || exe.eq_ignore_ascii_case("javaw.exe")
}

/// Whether this user's temp directory has an hsperfdata file named `pid` (how jps finds JVMs).
fn has_hsperfdata_file(pid: Pid) -> bool {
    candidate_users(pid).1.iter().any(|p| p.exists())
}

/// Everything about one JVM; `None` when it exited or its pid was reused meanwhile.
fn inspect_one(c: &Candidate, opts: &ScanOptions, elevated: bool) -> Option<JvmInfo> {
    let pid = c.process.pid();
    let look = Look::take(pid, c.modules_readable, opts);
    if look.saw_it_vanish() && c.process.check_same().is_err() {
        return None;
    }
    let readable = look.readable();
    let owner = token_user(&c.process);
    let user = owner.clone().unwrap_or_else(|| "?".into());
    let reason = (readable == Readable::Neither).then(|| {
        why_neither(
            owner.as_deref(),
            c.modules_readable,
            elevated,
            look.file.as_ref().err(),
            look.forced.as_ref(),
        )
    });
    let (described, info_from) =
        look.described()
            .unwrap_or_else(|| match c.jvm_dll.as_deref().and_then(release_version) {
                Some(version) => (
                    Described {
                        version,
                        ..Described::default()
                    },
                    InfoSource::Cmdline,
                ),
                None => (Described::default(), InfoSource::None),
            });
    // A pid reused during the look: what was read may be another process's.
    c.process.check_same().ok()?;
    let reading: Option<Reading> = if opts.keep_readings {
        look.into_reading()
    } else {
        None
    };
    Some(JvmInfo {
        pid,
        container_pid: None,
        uid: None,
        user,
        comm: c.exe.clone(),
        main: described.main,
        jvm_version: described.version,
        uptime_s: (c.process.age().as_secs_f64() * 100.0).round() / 100.0,
        start_ticks: 0,
        readable,
        reason,
        container: None,
        info_from,
        main_args: opts.main_args.then_some(described.main_args).flatten(),
        jvm_flags: opts.jvm_flags.then_some(described.jvm_flags).flatten(),
        reading,
    })
}

/// The version in the `release` file of the JDK whose `<home>\\bin\\server\\jvm.dll` (or
/// `bin\\client`) this is.
fn release_version(jvm_dll: &Path) -> Option<String> {
    let home = jvm_dll.parent()?.parent()?.parent()?;
    launcher::release_version(&std::fs::read_to_string(home.join("release")).ok()?)
}

/// Why neither the shared memory nor the process's memory could be read, and the fix, in one
/// line. `owner` is the token's user when the token could be opened.
fn why_neither(
    owner: Option<&str>,
    modules_readable: bool,
    elevated: bool,
    file: Option<&Error>,
    forced: Option<&Result<Reading, Error>>,
) -> String {
    let forced = forced.and_then(|f| f.as_ref().err());
    let denied = |e: Option<&Error>| matches!(e, Some(Error::PermissionDenied { .. }));
    let no_file = matches!(file, Some(Error::NoHsperfdataFile { .. }));
    let who = owner.map_or_else(
        || "a service's or another user's JVM".to_string(),
        |u| format!("another user's JVM ({u})"),
    );
    match (file, forced) {
        (_, Some(Error::PerfDataDisabled(_))) => {
            "perf data is disabled (-XX:-UsePerfData): nothing to read; remove the flag".into()
        }
        (Some(Error::NotAccessible { .. }), _) | (_, Some(Error::NotAccessible { .. })) => {
            "the JVM is still starting (its PerfData is not accessible yet): list again".into()
        }
        _ if !modules_readable => format!("{who}: {}", elevate_hint(elevated)),
        _ if denied(forced) && (no_file || denied(file)) => format!(
            "no shared PerfData memory (-XX:+PerfDisableSharedMem, or {who}) and its memory cannot be read: {}",
            elevate_hint(elevated)
        ),
        (_, Some(e)) => format!("-F: {e}"),
        (Some(e), None) => format!("file: {e}"),
        (None, None) => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied() -> Error {
        Error::PermissionDenied {
            what: "x".into(),
            hint: "y".into(),
        }
    }

    /// Every way neither read works names a cause and a fix.
    #[test]
    fn every_neither_has_a_cause_and_a_fix() {
        let no_file = || Error::NoHsperfdataFile {
            pid: 4242,
            tried: vec![],
            why: String::new(),
        };
        type Case = (
            Option<&'static str>,
            bool,
            bool,
            Error,
            Option<Error>,
            &'static [&'static str],
        );
        let cases: Vec<Case> = vec![
            (
                Some("me"),
                true,
                false,
                no_file(),
                Some(Error::PerfDataDisabled(4242)),
                &["-XX:-UsePerfData"],
            ),
            (
                None,
                false,
                false,
                denied(),
                None,
                &["service", "elevated prompt", "SeDebugPrivilege"],
            ),
            (
                Some("svc"),
                false,
                true,
                denied(),
                None,
                &["(svc)", "protected process"],
            ),
            (
                Some("me"),
                true,
                false,
                no_file(),
                Some(denied()),
                &["PerfDisableSharedMem", "elevated prompt"],
            ),
        ];
        for (owner, modules, elevated, file, forced, wanted) in cases {
            let forced = forced.map(Err);
            let r = why_neither(owner, modules, elevated, Some(&file), forced.as_ref());
            for w in wanted {
                assert!(r.contains(w), "{w:?} not in {r:?}");
            }
        }
    }

    /// The scan of this host works under Windows (or Wine) and never lists itself.
    #[test]
    fn scan_runs_and_leaves_out_this_process() {
        let scan = super::scan(&ScanOptions::default()).unwrap();
        let me = std::process::id() as Pid;
        assert!(scan.jvms.iter().all(|j| j.pid != me));
    }
}
