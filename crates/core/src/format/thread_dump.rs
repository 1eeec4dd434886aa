//! A thread dump's text as `jcmd <pid> Thread.print` prints it (`Threads::print_on`,
//! `JavaThread::print_on`, `Thread::print_on`, `OSThread::print_on` in
//! `runtime/thread.cpp`/`javaThread.cpp`/`osThread.cpp`, `java_lang_Thread::thread_status_name`
//! and `print_stack_element_to_stream` in `classfile/javaClasses.cpp`,
//! `DeadlockCycle::print_on_with` in `services/threadService.cpp`), from a
//! [`crate::threads::dump::Dump`].

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::threads::dump::{Dump, DumpThread, Waits};
use crate::threads::frames::{Frame, FrameKind};
use crate::threads::list::os_state_word;
use crate::threads::vthreads::UnmountedVirtualThread;

/// The dump as `jcmd <pid> Thread.print` prints its Java threads (the non-Java threads
/// and the JNI refs line are not known from outside and are left out).
pub fn to_jcmd_text(dump: &Dump) -> String {
    let mut out = Vec::new();
    write_jcmd(dump, &mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("the dump is UTF-8")
}

/// [`to_jcmd_text`] written to `w` a thread at a time (a dump of thousands of threads
/// is megabytes of text: it is never held whole).
///
/// # Errors
/// Those of `w`.
pub fn write_jcmd(dump: &Dump, w: &mut dyn Write) -> io::Result<()> {
    let mut out = String::new();
    // jcmd's first lines (`Threads::print_on`): the local time, then the VM's name,
    // release and mode.
    if let Some(when) = dump.taken_at.and_then(local_time_string) {
        let _ = writeln!(out, "{when}");
    }
    let _ = match (&dump.vm_name, &dump.release, &dump.vm_info) {
        (Some(name), Some(release), Some(info)) => {
            writeln!(out, "Full thread dump {name} ({release} {info}):")
        }
        (_, Some(release), _) => writeln!(out, "Full thread dump ({release}):"),
        _ => writeln!(out, "Full thread dump:"),
    };
    out.push('\n');
    // The SMR section came with thread-safe memory reclamation (JDK 10, JDK-8167108).
    if dump.major >= 10 {
        let _ = writeln!(out, "Threads class SMR info:");
        let _ = writeln!(
            out,
            "_java_thread_list={:#018x}, length={}, elements={{",
            dump.thread_list,
            dump.threads.len()
        );
        let addrs: Vec<String> = dump
            .threads
            .iter()
            .map(|t| format!("{:#018x}", t.vm.address))
            .collect();
        // `ThreadsSMRSupport::print_info_elements_on`: ", " between elements, a line break
        // after every fourth.
        for (i, a) in addrs.iter().enumerate() {
            out.push_str(a);
            if i + 1 < addrs.len() {
                out.push_str(if i % 4 == 3 { ",\n" } else { ", " });
            }
        }
        if !addrs.is_empty() {
            out.push('\n');
        }
        out.push_str("}\n\n");
    }
    for t in &dump.threads {
        thread_text(dump, t, &mut out);
        w.write_all(out.as_bytes())?;
        out.clear();
    }
    deadlocks_text(dump, &mut out);
    w.write_all(out.as_bytes())?;
    out.clear();
    if let Some(v) = &dump.virtual_threads {
        let _ = writeln!(
            out,
            "\nVirtual threads not mounted: {} ({} mounted, printed with their carriers; {} thread containers read):\n",
            v.threads.len(),
            v.mounted,
            v.containers
        );
        for note in &v.notes {
            let _ = writeln!(out, "<inspect: {note}>");
        }
        w.write_all(out.as_bytes())?;
        for t in &v.threads {
            out.clear();
            virtual_thread_text(t, &v.frames, &mut out);
            w.write_all(out.as_bytes())?;
        }
    }
    if let Some(e) = &dump.virtual_threads_error {
        out.clear();
        let _ = writeln!(out, "\n<inspect: virtual threads not read: {e}>");
        w.write_all(out.as_bytes())?;
    }
    Ok(())
}

/// The deadlocks as `DeadlockCycle::print_on_with` prints them (after jcmd's JNI refs line),
/// then `Found N deadlock(s).`; nothing when there are none.
fn deadlocks_text(dump: &Dump, out: &mut String) {
    if dump.deadlocks.is_empty() {
        return;
    }
    let name = |i: usize| {
        dump.threads[i]
            .java
            .as_ref()
            .map(|j| j.name.clone())
            .unwrap_or_else(|| format!("<thread {:#x}>", dump.threads[i].vm.address))
    };
    let class = |c: &Option<String>| c.clone().unwrap_or_else(|| "?".into());
    // JDK 11's `print_on_with` ends the "held by" line with `print`, and starts each thread
    // with `cr()`: no blank line between the threads of a cycle (17's has one; 12–16 were
    // not checked), and its "Found N deadlocks." line ends with an empty one.
    let compact = dump.major <= 11;
    for cycle in &dump.deadlocks {
        out.push_str("\nFound one Java-level deadlock:\n=============================");
        for (i, link) in cycle.iter().enumerate() {
            if i > 0 && compact {
                out.pop();
            }
            let _ = write!(out, "\n\"{}\":\n", name(link.thread));
            match &link.waits {
                Waits::Monitor {
                    monitor,
                    object,
                    class: c,
                } => {
                    let _ = write!(
                        out,
                        "  waiting to lock monitor {monitor:#018x} (object {object:#018x}, a {})",
                        class(c)
                    );
                }
                Waits::Synchronizer { object, class: c } => {
                    let _ = write!(
                        out,
                        "  waiting for ownable synchronizer {object:#018x}, (a {})",
                        class(c)
                    );
                }
            }
            let held = if dump.threads[link.thread].locks.pending_from_java
                || !matches!(link.waits, Waits::Monitor { .. })
            {
                ",\n  which is held by"
            } else {
                "\n  in JNI, which is held by"
            };
            match link.held_by {
                Some(h) => {
                    let _ = writeln!(out, "{held} \"{}\"", name(h));
                }
                None => {
                    let _ = writeln!(out, "{held} UNKNOWN_owner_addr={:#018x}", link.owner_raw);
                }
            }
        }
        out.push_str("\nJava stack information for the threads listed above:\n");
        out.push_str("===================================================\n");
        for link in cycle {
            let _ = writeln!(out, "\"{}\":", name(link.thread));
            stack_text(&dump.threads[link.thread].frames, out);
        }
    }
    if dump.deadlocks.len() == 1 {
        out.push_str("\nFound 1 deadlock.\n");
    } else {
        let _ = writeln!(out, "\nFound {} deadlocks.", dump.deadlocks.len());
    }
    // jcmd ends the section with an empty line (`print_on_with`'s last `cr()`).
    out.push('\n');
}

fn thread_text(dump: &Dump, t: &DumpThread, out: &mut String) {
    let walked = dump.ownable_synchronizers_walked;
    let name = t
        .java
        .as_ref()
        .map(|j| j.name.clone())
        .unwrap_or_else(|| format!("<thread {:#x}>", t.vm.address));
    let _ = write!(out, "\"{name}\" ");
    if let Some(j) = &t.java {
        let _ = write!(out, "#{} ", j.tid);
        if dump.major >= 19
            && let Some(nid) = t.vm.os_tid
        {
            let _ = write!(out, "[{nid}] ");
        }
        if j.daemon {
            out.push_str("daemon ");
        }
        let _ = write!(out, "prio={} ", j.priority);
    }
    if let Some(p) = t.os_prio {
        let _ = write!(out, "os_prio={p} ");
    }
    // `cpu=` (and `elapsed=`) came in JDK 11 (JDK-8200720).
    if let Some(c) = t.cpu_ms.filter(|_| dump.major >= 11) {
        let _ = write!(out, "cpu={c:.2}ms ");
    }
    let _ = write!(out, "tid={:#018x} ", t.vm.address);
    if let Some(nid) = t.vm.os_tid.filter(|_| t.virtual_thread.is_none()) {
        if dump.major >= 18 {
            let _ = write!(out, "nid={nid} ");
        } else {
            let _ = write!(out, "nid={nid:#x} ");
        }
    }
    // `Thread::print_on` leaves the OS thread out for a carrier with a mounted virtual thread.
    if t.virtual_thread.is_none()
        && let Some(w) = t.vm.os_state.and_then(|s| os_state_word(s as i32))
    {
        out.push_str(w);
    }
    // `JavaThread::print_on`: " [" + the last Java sp rounded down to its 4 KiB page (a
    // thread running Java has none; jcmd's safepoint would give it its sp register's).
    let sp = t.registers.map_or(t.vm.anchor.sp, |r| r.sp);
    let _ = writeln!(out, " [{:#018x}]", sp & !0xfff);
    if let Some(v) = &t.virtual_thread {
        let _ = writeln!(out, "   Carrying virtual thread #{}", v.tid);
    } else if let Some(j) = &t.java
        && let Some(s) = &j.state
    {
        let _ = writeln!(out, "   java.lang.Thread.State: {s}");
    }
    stack_text(&t.frames, out);
    // JDK 24+ (JDK-8330846) prints the mounted virtual thread's frames after the carrier's;
    // printed for JDK 21–23 too, where jcmd has no way to show them.
    if let Some(v) = &t.virtual_thread {
        let _ = writeln!(out, "   Mounted virtual thread #{}", v.tid);
        stack_text(&v.frames, out);
    }
    for n in &t.notes {
        let _ = writeln!(out, "\t<inspect: {n}>");
    }
    // Without a walk of the heap (`--locks`, as jcmd's `-l` walks it) only the synchronizers
    // other threads are parked on are known: the section is then printed when some are, never
    // as "- None" (`ConcurrentLocksDump::print_locks_on`).
    if walked && t.locks.owned_synchronizers.is_empty() {
        out.push_str("\n   Locked ownable synchronizers:\n\t- None\n");
    } else if !t.locks.owned_synchronizers.is_empty() {
        out.push_str("\n   Locked ownable synchronizers:\n");
        for l in &t.locks.owned_synchronizers {
            let line = l.text();
            let _ = writeln!(
                out,
                "\t- {}",
                line.strip_prefix("- locked ").unwrap_or(&line)
            );
        }
    }
    out.push('\n');
}

/// `time` in this machine's time zone as HotSpot's `os::local_time_string` prints it
/// (`YYYY-MM-DD hh:mm:ss`).
fn local_time_string(time: std::time::SystemTime) -> Option<String> {
    let ts = jiff::Timestamp::try_from(time).ok()?;
    Some(
        ts.to_zoned(jiff::tz::TimeZone::system())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string(),
    )
}

/// Frames and their lock lines (`JavaThread::print_stack_on`).
/// An unmounted virtual thread as `Thread.print` would print a thread: `"name" #tid virtual`
/// and its `VirtualThread` state, the `java.lang.Thread.State` line, its frames.
fn virtual_thread_text(t: &UnmountedVirtualThread, table: &[Frame], out: &mut String) {
    let _ = writeln!(out, "\"{}\" #{} virtual {}", t.name, t.tid, t.vthread_state);
    let _ = writeln!(out, "   java.lang.Thread.State: {}", t.thread_state);
    stack_text(t.frames.iter().map(|&i| &table[i as usize]), out);
    if let Some(note) = &t.note {
        let _ = writeln!(out, "\t<inspect: {note}>");
    }
    out.push('\n');
}

fn stack_text<'f>(frames: impl IntoIterator<Item = &'f Frame>, out: &mut String) {
    // Pieces pushed, not formatted: 27,000 frames on a JVM of 1,000 threads.
    for f in frames {
        out.push_str("\tat ");
        out.push_str(&f.class);
        out.push('.');
        out.push_str(&f.method);
        out.push('(');
        if let Some(module) = &f.module {
            out.push_str(module);
            out.push('/');
        }
        match (f.kind, &f.file, f.line) {
            (FrameKind::Native, _, _) => out.push_str("Native Method"),
            (_, Some(file), Some(line)) => {
                out.push_str(file);
                let _ = write!(out, ":{line}");
            }
            (_, Some(file), None) => out.push_str(file),
            (_, None, _) => out.push_str("Unknown Source"),
        }
        out.push(')');
        if let Some(m) = &f.mark {
            let _ = write!(out, " <{m}>");
        }
        out.push('\n');
        for l in &f.locks {
            let _ = writeln!(out, "\t{}", l.text());
        }
    }
}
