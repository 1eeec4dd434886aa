//! Cores of real JVMs: the kernel's (`SIGABRT` with core dumps allowed) and their doctoring.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

/// The kernel's core of a process whose working directory was `cwd`; panics saying how to set
/// it up when `/proc/sys/kernel/core_pattern` does not write cores there.
pub fn kernel_core_in(cwd: &Path) -> PathBuf {
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    let pattern = pattern.trim();
    assert!(
        !pattern.starts_with('|') && !pattern.contains('/'),
        "kernel cores go to {pattern:?}, not the process's directory: run \
         `echo core > /proc/sys/kernel/core_pattern` (as root) for this test"
    );
    let mut cores: Vec<PathBuf> = std::fs::read_dir(cwd)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("core"))
        })
        .collect();
    assert_eq!(
        cores.len(),
        1,
        "expected one core in {} (pattern {pattern:?}): {cores:?}",
        cwd.display()
    );
    cores.pop().unwrap()
}

/// Sends SIGABRT to `jvm` and waits (up to 2 min: the kernel writes the core first) for it to
/// die with a core.
/// Lifts `RLIMIT_CORE` for the process `cmd` starts, so SIGABRT leaves a kernel core.
pub fn allow_core_dumps(cmd: &mut Command) {
    // SAFETY: setrlimit only sets this (forked) process's limit before exec.
    unsafe {
        cmd.pre_exec(|| {
            let unlimited = libc::rlimit {
                rlim_cur: libc::RLIM_INFINITY,
                rlim_max: libc::RLIM_INFINITY,
            };
            if libc::setrlimit(libc::RLIMIT_CORE, &unlimited) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

pub fn abort_with_core(jvm: &mut Jvm) {
    send_signal(jvm.pid, libc::SIGABRT);
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = jvm.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the JVM did not die on SIGABRT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(libc::SIGABRT), "{status}");
    assert!(
        status.core_dumped(),
        "no core dumped on SIGABRT ({status}): RLIMIT_CORE or core_pattern"
    );
}

/// Renames the core's NT_FILE note (to an unknown type) in place, as if the dumper wrote none.
pub fn hide_nt_file(core: &Path) {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::FileExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(core)
        .unwrap();
    let mut h = [0u8; 64];
    f.read_exact(&mut h).unwrap();
    let phoff = u64::from_le_bytes(h[32..40].try_into().unwrap());
    let phnum = u16::from_le_bytes(h[56..58].try_into().unwrap()) as usize;
    let mut ph = vec![0u8; 56 * phnum];
    f.seek(SeekFrom::Start(phoff)).unwrap();
    f.read_exact(&mut ph).unwrap();
    let mut patched = 0;
    for p in ph.chunks_exact(56) {
        if u32::from_le_bytes(p[0..4].try_into().unwrap()) != 4 {
            continue; // not PT_NOTE
        }
        let off = u64::from_le_bytes(p[8..16].try_into().unwrap());
        let size = u64::from_le_bytes(p[32..40].try_into().unwrap()) as usize;
        let mut notes = vec![0u8; size];
        f.read_exact_at(&mut notes, off).unwrap();
        let mut at = 0;
        while at + 12 <= size {
            let word = |i: usize| u32::from_le_bytes(notes[i..i + 4].try_into().unwrap()) as usize;
            let (namesz, descsz, ntype) = (word(at), word(at + 4), word(at + 8));
            if ntype == 0x4649_4c45 {
                f.write_all_at(&0x7fff_0001u32.to_le_bytes(), off + at as u64 + 8)
                    .unwrap();
                patched += 1;
            }
            at += 12 + namesz.next_multiple_of(4) + descsz.next_multiple_of(4);
        }
    }
    assert_eq!(
        patched,
        1,
        "expected one NT_FILE note in {}",
        core.display()
    );
}
