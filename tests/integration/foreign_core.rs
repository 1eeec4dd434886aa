//! Cores of another architecture (issue 16, item 3): the core's own `e_machine`, page size and
//! pointer layout decide how it is read, never the host's.
//!
//! * `aarch64_kernel_cores_read_on_x86_64`: kernel cores (SIGABRT) of real aarch64 JVMs, made in
//!   the `qemu-system-aarch64` VM of `scripts/aarch64/setup.sh` (on a 4 KiB-page kernel, and on
//!   Debian 13's 16 KiB-page one) by `scripts/aarch64/cores.sh`
//!   (cached in `~/.cache/hsinspect/aarch64/cores/`, so a warm run takes seconds), read by this
//!   (x86_64) build with `--sysroot`, against that JVM's own `jcmd PerfCounter.print` and
//!   `jstat -gc` taken just before it died (and by the aarch64 build under qemu-user, the same);
//!   and the errors when the JVM's files are missing or wrong.
//! * `x86_64_cores_read_by_the_aarch64_build`: gcores of real x86_64 JVMs made here, read by the
//!   static aarch64 build (`aarch64-unknown-linux-musl`, what release.sh ships) under
//!   `qemu-aarch64-static`: byte for byte what this build prints, and equal to jcmd around the
//!   dump.
//! * The thread dump and the heap (`histo`, `heap`, `heapdump`) of aarch64 kernel cores made by
//!   the same script (ThreadsTarget, HeapTarget on G1), read on x86_64 against that JVM's own jcmd
//!   taken before the SIGABRT, and by the aarch64 build the same.
//!
//! The counters' tests use a JDK 17 with `.symtab` in libjvm and a copy whose libjvm is stripped
//! (found through `gHotSpotVMStructs`), that one at `coredump_filter` 0x3b (no bit 2: the type and
//! field names the vmStructs walk reads are not in the core and come from the libjvm file of the
//! other architecture, once its build-id matches).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::*;

const A64: &str = "aarch64-unknown-linux-musl";
/// Where the arm64 Debian JDK 17 and the stripped copy live in the VM's root (and in the cache's
/// sysroot).
/// `stripped16k` ran on Debian 13's arm64 kernel with 16 KiB pages.
const A64_JDKS: [(&str, &str); 3] = [
    ("jdk17", "/usr/lib/jvm/java-17-openjdk-arm64"),
    ("stripped", "/opt/jdk-stripped"),
    ("stripped16k", "/opt/jdk-stripped"),
];

/// The cached aarch64 cores and their references: runs `scripts/aarch64/cores.sh` (which makes
/// them in the VM when the cache does not have them) and returns its directory.
/// Made once per test binary: the tests that read the cores run in parallel, and two runs of
/// the script at once would remove each other's half-made cores.
fn aarch64_cores() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| cached_by_script("", "scripts/aarch64/cores.sh", &[], A64_NEEDS, &[".done"]))
        .clone()
}

/// What the aarch64 VM's scripts need.
const A64_NEEDS: &str = "it needs qemu-system-aarch64 and the arm64 root of scripts/aarch64/setup.sh \
                         (run that as root, or scripts/test.sh)";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `inspect` and returns its stderr, asserting it failed cleanly (exit 1, no panic, nothing
/// printed on stdout).
fn fails(args: &[&str]) -> String {
    let out = inspect(args);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "inspect {args:?}: {err}");
    assert!(
        err.starts_with("inspect: ") && !err.contains("panicked") && out.stdout.is_empty(),
        "inspect {args:?} did not fail cleanly: {err}"
    );
    err
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The GNU build-id of an ELF file, read with goblin (not with the crate's own reader).
fn build_id_of(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    elf.iter_note_headers(&bytes)
        .expect("notes")
        .filter_map(Result::ok)
        .find(|n| n.n_type == goblin::elf::note::NT_GNU_BUILD_ID && n.name == "GNU")
        .map(|n| n.desc.to_vec())
        .unwrap_or_else(|| panic!("{} has no build-id", path.display()))
}

#[test]
#[ignore = "requires qemu, arm64 root, JDK 17, static aarch64 build (scripts/test.sh)"]
fn aarch64_kernel_cores_read_on_x86_64() {
    let a64 = aarch64_bin();
    let dir = aarch64_cores();
    let sysroot = dir.join("sysroot");
    let sysroot_s = sysroot.to_str().unwrap();
    for (name, home) in A64_JDKS {
        let page_size = read(&dir.join(format!("{name}.pagesize")))
            .trim()
            .to_string();
        assert_eq!(
            page_size,
            if name == "stripped16k" {
                "16384"
            } else {
                "4096"
            },
            "{name}: the VM's page size"
        );
        let core = dir.join(format!("{name}.core"));
        let core_s = core.to_str().unwrap();
        let jcmd1 = read(&dir.join(format!("{name}.jcmd1")));
        let pid = jcmd1
            .lines()
            .next()
            .unwrap()
            .trim_end_matches(':')
            .to_string();
        let filter = u32::from_str_radix(read(&dir.join(format!("{name}.filter"))).trim(), 16)
            .expect("coredump_filter in hex");
        let lib = format!("{home}/lib/server/libjvm.so");

        // The counters: the same names as the JVM's own jcmd just before it died, and every
        // counter that did not move between its two reads has that value (the second read was
        // of the JVM held still with SIGSTOP until the SIGABRT: the state the core holds).
        let out = inspect(&["-v", "--core", core_s, "--sysroot", sysroot_s]);
        let err = stderr_of(&out);
        assert!(out.status.success(), "{name}: {err}");
        let x86_stdout = String::from_utf8(out.stdout).unwrap();
        // The aarch64 build (under qemu-user) reads its own architecture's core the same.
        let a64_out = inspect_a64(&a64, &["--core", core_s, "--sysroot", sysroot_s]);
        assert!(a64_out.status.success(), "{name}: {}", stderr_of(&a64_out));
        assert_eq!(
            String::from_utf8_lossy(&a64_out.stdout),
            x86_stdout,
            "{name}: the aarch64 and x86_64 builds differ"
        );
        let ours = counters(&x86_stdout);
        let mut settled = ours.clone();
        let jcmd2 = counters(&read(&dir.join(format!("{name}.jcmd2"))));
        // The SIGCONT that lets the SIGABRT in (scripts/aarch64/cores.sh) lets the JVM run for
        // the moment before the core is written: a VM operation, the monitor deflation thread
        // may run then (seen: `sun.threads.vmOperationTime` and `sun.rt._sync_Deflations` past
        // the held JVM's second read). So a monotonic counter (its variability as the core's
        // PerfData entry gives it) may only have grown past that read, and the deflation
        // thread's own counters (`sun.rt._sync_*`) are compared by name only; every constant
        // and every other variable counter stable between the two reads is exact.
        let json = inspect(&["--core", core_s, "--sysroot", sysroot_s, "--format", "json"]);
        assert!(json.status.success(), "{name}: {}", stderr_of(&json));
        let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
        for (counter, value) in settled.iter_mut() {
            let Some(reference) = jcmd2.get(counter) else {
                continue;
            };
            let monotonic = json["counters"][counter]["variability"] == "monotonic";
            let grown = matches!(
                (value.parse::<u64>(), reference.parse::<u64>()),
                (Ok(v), Ok(r)) if v >= r
            );
            if (monotonic && grown)
                || (counter.starts_with("sun.rt._sync_") && value.parse::<u64>().is_ok())
            {
                *value = reference.clone();
            }
        }
        let compared = assert_matches_reference(&settled, &counters(&jcmd1), &jcmd2);
        assert!(compared > 100, "{name}: only {compared} compared");
        assert!(
            ours.get("sun.rt.internalVersion")
                .is_some_and(|v| v.contains("for linux-aarch64")),
            "{name}: not an aarch64 JVM's counters: {:?}",
            ours.get("sun.rt.internalVersion")
        );
        // -v: the core's machine and page size, the dead process, the sysroot's libjvm.
        for needle in [
            format!("core of an aarch64 process, {page_size}-byte pages"),
            format!("of process {pid} (java)"),
            format!("opened as {sysroot_s}{lib}"),
        ] {
            assert!(err.contains(&needle), "{name}: no {needle:?} in: {err}");
        }
        if name.starts_with("stripped") {
            // No bit 2: the names the vmStructs walk reads came from the sysroot's libjvm.
            assert_eq!(filter & 0x4, 0, "{name}: filter {filter:#x}");
            assert!(err.contains("gHotSpotVMStructs"), "{err}");
            assert!(
                err.contains("not in the core: ")
                    && err.contains(&format!("bytes read from {sysroot_s}{lib}")),
                "{err}"
            );
        } else {
            assert!(err.contains(".symtab of"), "{err}");
        }

        // jstat's view of the same core: byte for byte what that JVM's jstat -gc printed just
        // before it died (it did not move between the two reads: an idle JVM).
        let jstat1 = read(&dir.join(format!("{name}.jstat1")));
        let jstat2 = read(&dir.join(format!("{name}.jstat2")));
        let stat = inspect_ok(&["stat", "--core", core_s, "--sysroot", sysroot_s, "-gc"]);
        assert_eq!(
            jstat1, jstat2,
            "{name}: the JVM's jstat -gc moved between reads"
        );
        assert_eq!(
            stat, jstat2,
            "{name}: inspect stat -gc differs from jstat -gc"
        );

        // Without the JVM's files: with bit 2 the core's own copy of libjvm's exported symbols
        // does; without it the error names the file, the architecture, the fix and the bit.
        if filter & 0x4 != 0 {
            let out = inspect(&["-v", "--core", core_s]);
            let err = stderr_of(&out);
            assert!(out.status.success(), "{name}: {err}");
            assert!(
                err.contains("its .dynsym read from the target's memory"),
                "{err}"
            );
            assert_eq!(
                counters(&String::from_utf8(out.stdout).unwrap()),
                ours,
                "{name}: without --sysroot"
            );
        } else {
            let err = fails(&["--core", core_s]);
            for needle in [lib.as_str(), "aarch64", "--sysroot", "bit 2 (0x4"] {
                assert!(err.contains(needle), "{name}: no {needle:?} in: {err}");
            }
        }
    }
    assert_ne!(
        read(&dir.join("jdk17.filter")).trim(),
        read(&dir.join("stripped.filter")).trim(),
        "the cores should differ in bit 2"
    );

    let tmp = scratch_dir("foreign-core");
    let wrong = tmp.path().join("sysroot");
    // This host's x86_64 libjvm where the aarch64 one should be: refused for its architecture
    // (the core without bit 2; the other one reads its symbols from the core instead).
    let stripped_lib = wrong.join("opt/jdk-stripped/lib/server/libjvm.so");
    std::fs::create_dir_all(stripped_lib.parent().unwrap()).unwrap();
    std::fs::copy(jdk17().join("lib/server/libjvm.so"), &stripped_lib).unwrap();
    let stripped_core = dir.join("stripped.core");
    let err = fails(&[
        "--core",
        stripped_core.to_str().unwrap(),
        "--sysroot",
        wrong.to_str().unwrap(),
    ]);
    for needle in [
        "the core is of an aarch64 process",
        "is an x86_64 library",
        stripped_lib.to_str().unwrap(),
        "--sysroot",
        "bit 2 (0x4",
    ] {
        assert!(err.contains(needle), "no {needle:?} in: {err}");
    }
    let core = dir.join("jdk17.core");
    let core_s = core.to_str().unwrap();
    let lib_rel = "usr/lib/jvm/java-17-openjdk-arm64/lib/server/libjvm.so";
    let wrong_lib = wrong.join(lib_rel);
    std::fs::create_dir_all(wrong_lib.parent().unwrap()).unwrap();
    // Another build of the aarch64 libjvm: both build-ids named, and the fix.
    let right = sysroot.join(lib_rel);
    let id = build_id_of(&right);
    let mut bytes = std::fs::read(&right).unwrap();
    let at = bytes
        .windows(id.len())
        .position(|w| w == id.as_slice())
        .unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(&wrong_lib, &bytes).unwrap();
    let mut other = id.clone();
    other[0] ^= 0xff;
    let err = fails(&["--core", core_s, "--sysroot", wrong.to_str().unwrap()]);
    for needle in [
        hex(&id),
        hex(&other),
        wrong_lib.display().to_string(),
        "--sysroot".into(),
    ] {
        assert!(err.contains(&needle), "no {needle:?} in: {err}");
    }
    // Without NT_FILE, libjvm is found through the dynamic linker's list, walked from the
    // aarch64 launcher given with --exe (its _DYNAMIC, DT_DEBUG, r_debug, link_map in the core).
    let full = inspect_ok(&["--core", core_s, "--sysroot", sysroot_s]);
    let no_nt_file = tmp.path().join("no-nt-file.core");
    run_ok(
        Command::new("cp")
            .arg("--sparse=always")
            .arg(&core)
            .arg(&no_nt_file),
    );
    hide_nt_file(&no_nt_file);
    let nf = no_nt_file.to_str().unwrap();
    let err = fails(&["--core", nf, "--sysroot", sysroot_s]);
    assert!(err.contains("NT_FILE") && err.contains("--exe"), "{err}");
    let java = "/usr/lib/jvm/java-17-openjdk-arm64/bin/java";
    let via_link_map = inspect_ok(&["--core", nf, "--sysroot", sysroot_s, "--exe", java]);
    assert_eq!(via_link_map, full);
    // This host's x86_64 launcher is not the dead process's.
    let host_java = jdk17().join("bin/java");
    let err = fails(&["--core", nf, "--exe", host_java.to_str().unwrap()]);
    assert!(
        err.contains("the core is of an aarch64 process") && err.contains("x86_64 executable"),
        "{err}"
    );
    std::fs::remove_file(&no_nt_file).unwrap();

    // A sysroot whose JDK directory is an absolute symbolic link (as Debian's alternatives and
    // many copied roots have): followed inside the sysroot, as the dead machine would. A link
    // to a path this host also has (its own JDK 17) never leads to this host's file.
    let linked = tmp.path().join("linked");
    let real = linked.join("opt/jdk/lib/server/libjvm.so");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::copy(sysroot.join(lib_rel), &real).unwrap();
    std::fs::create_dir_all(linked.join("usr/lib/jvm")).unwrap();
    let jdk_link = linked.join("usr/lib/jvm/java-17-openjdk-arm64");
    std::os::unix::fs::symlink("/opt/jdk", &jdk_link).unwrap();
    let out = inspect(&[
        "-v",
        "--core",
        core_s,
        "--sysroot",
        linked.to_str().unwrap(),
    ]);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("opened as {}", real.display())),
        "{err}"
    );
    std::fs::remove_file(&jdk_link).unwrap();
    std::os::unix::fs::symlink(jdk17(), &jdk_link).unwrap();
    // (no copy opens there, so the core's own copy of libjvm's exported symbols is read)
    let out = inspect(&[
        "-v",
        "--core",
        core_s,
        "--sysroot",
        linked.to_str().unwrap(),
    ]);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("no copy opened") && !err.contains("opened as"),
        "{err}"
    );
}

/// Renames the core's NT_FILE note (to an unknown type) in place, as if the dumper wrote none
/// (qemu-user's cores, Linux before 3.7).
fn hide_nt_file(core: &Path) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(core)
        .unwrap();
    let read = |at: u64, len: usize| {
        let mut b = vec![0u8; len];
        f.read_exact_at(&mut b, at).unwrap();
        b
    };
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let h = read(0, 64);
    let phnum = u16::from_le_bytes(h[56..58].try_into().unwrap()) as usize;
    let ph = read(u64_at(&h, 32), 56 * phnum);
    let mut patched = 0;
    for p in ph.chunks_exact(56).filter(|p| u32_at(p, 0) == 4) {
        let (off, size) = (u64_at(p, 8), u64_at(p, 32) as usize);
        let notes = read(off, size);
        let mut at = 0;
        while at + 12 <= size {
            let (namesz, descsz) = (u32_at(&notes, at) as usize, u32_at(&notes, at + 4) as usize);
            if u32_at(&notes, at + 8) == 0x4649_4c45 {
                f.write_all_at(&0x7fff_0001u32.to_le_bytes(), off + at as u64 + 8)
                    .unwrap();
                patched += 1;
            }
            at += 12 + namesz.next_multiple_of(4) + descsz.next_multiple_of(4);
        }
    }
    assert_eq!(patched, 1, "one NT_FILE note in {}", core.display());
}

/// The static aarch64 build: `$HSINSPECT_A64_BIN`, else the release build in this target dir.
fn aarch64_bin() -> PathBuf {
    let path = release_build("HSINSPECT_A64_BIN", A64);
    assert!(
        path.is_file(),
        "no aarch64 binary at {}: build it with `rustup target add {A64} && source \
         scripts/musl-env.sh && cargo build --release --target {A64}` (scripts/test.sh does), or \
         set HSINSPECT_A64_BIN",
        path.display()
    );
    path
}

/// Runs the aarch64 build under qemu-user.
fn inspect_a64(bin: &Path, args: &[&str]) -> Output {
    Command::new("qemu-aarch64-static")
        .arg(bin)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "running qemu-aarch64-static ({e}): install it with `apt-get install \
                 qemu-user-static` (scripts/aarch64/setup.sh does)"
            )
        })
}

#[test]
#[ignore = "requires root, gdb, JDK 17, qemu, static aarch64 build (scripts/test.sh)"]
fn x86_64_cores_read_by_the_aarch64_build() {
    let a64 = aarch64_bin();
    let tmp = scratch_dir("foreign-core-x86");
    let stripped = jdk_copy(&jdk17(), tmp.path());
    run_ok(
        Command::new("strip")
            .arg("--strip-all")
            .arg(stripped.join("lib/server/libjvm.so")),
    );
    let stripped_flags = [
        "-XX:+UnlockDiagnosticVMOptions",
        "-XX:-DumpPrivateMappingsInCore",
    ];
    for (home, flags) in [(stripped, &stripped_flags[..]), (jdk17(), &[][..])] {
        let is_stripped = !flags.is_empty();
        let jvm = small_jvm(&home, flags);
        let filter = std::fs::read_to_string(format!("/proc/{}/coredump_filter", jvm.pid)).unwrap();
        let before = jcmd_counters(&home, jvm.pid);
        let core = gcore(jvm.pid, tmp.path());
        let after = jcmd_counters(&home, jvm.pid);
        let core_s = core.to_str().unwrap();

        // A sysroot holding the JVM's libjvm at the path it mapped, as an operator copies it to
        // the aarch64 machine that reads the core.
        let lib = std::fs::canonicalize(home.join("lib/server/libjvm.so")).unwrap();
        let sysroot = tmp.path().join("sysroot");
        let copy = sysroot.join(lib.strip_prefix("/").unwrap());
        let _ = std::fs::remove_dir_all(&sysroot);
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(&lib, &copy).unwrap();
        let sysroot_s = sysroot.to_str().unwrap();

        let x86 = inspect_ok(&["--core", core_s]);
        let out = inspect_a64(&a64, &["-v", "--core", core_s, "--sysroot", sysroot_s]);
        let err = stderr_of(&out);
        assert!(out.status.success(), "aarch64 build on {core_s}: {err}");
        let ours = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            ours, x86,
            "the aarch64 and x86_64 builds read {core_s} differently"
        );
        let compared = assert_matches_reference(&counters(&ours), &before, &after);
        assert!(compared > 100, "only {compared} compared");
        for needle in [
            "core of an x86_64 process, 4096-byte pages".to_string(),
            format!("opened as {}", copy.display()),
        ] {
            assert!(err.contains(&needle), "no {needle:?} in: {err}");
        }
        let filter = u32::from_str_radix(filter.trim(), 16).unwrap();
        // The stripped one: no bit 2, so vmStructs' names came from the sysroot's libjvm.
        assert_eq!(is_stripped, filter & 0x4 == 0, "filter {filter:#x}");
        if is_stripped {
            assert!(err.contains("gHotSpotVMStructs"), "{err}");
            assert!(
                err.contains(&format!("bytes read from {}", copy.display())),
                "filter {filter:#x}: {err}"
            );
        }
        // jstat's view, and the errors, the same from both builds.
        let stat = |args: &[&str]| -> (String, String) {
            let out = inspect_a64(&a64, args);
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr_of(&out),
            )
        };
        let x86_stat = inspect_ok(&["stat", "--core", core_s, "-gcutil"]);
        assert_eq!(
            stat(&["stat", "--core", core_s, "--sysroot", sysroot_s, "-gcutil"]).0,
            x86_stat
        );
        // Without the libjvm file: both builds read the core's own exported symbols (bit 2),
        // or both say which file and which bit would do.
        let empty = tmp.path().join("empty");
        let no_file = ["--core", core_s, "--sysroot", empty.to_str().unwrap()];
        let x86_out = inspect(&no_file);
        let (a64_out, a64_err) = stat(&no_file);
        assert_eq!(
            (
                String::from_utf8_lossy(&x86_out.stdout).into_owned(),
                stderr_of(&x86_out)
            ),
            (a64_out.clone(), a64_err.clone())
        );
        if is_stripped {
            assert!(a64_out.is_empty());
            assert!(
                a64_err.contains(lib.strip_prefix("/").unwrap().to_str().unwrap())
                    && a64_err.contains("--sysroot")
                    && a64_err.contains("bit 2 (0x4"),
                "{a64_err}"
            );
        } else {
            assert_eq!(a64_out, x86);
        }
        std::fs::remove_file(&core).unwrap();
        drop(jvm);
    }
}

/// The thread dump of an aarch64 JVM's kernel core (ThreadsTarget on Debian's arm64 JDK 17 in the
/// VM of scripts/aarch64/cores.sh), read on x86_64: the same threads, states, top 10 frames,
/// lock lines and deadlocks as the JVM's own `jcmd Thread.print -l` taken twice before the
/// SIGABRT (AArch64's interpreter frame layout and its entry frames' `JavaCallWrapper` offset,
/// which its tables do not export); and the aarch64 build under qemu-user prints the same bytes.
#[test]
#[ignore = "requires qemu, arm64 root, static aarch64 build (scripts/test.sh)"]
fn aarch64_thread_dump_core_read_on_x86_64_matches_jcmd() {
    let dir = aarch64_cores();
    let sysroot = dir.join("sysroot");
    let core = dir.join("threads.core");
    let args = [
        "--core",
        core.to_str().unwrap(),
        "--sysroot",
        sysroot.to_str().unwrap(),
    ];
    let ours = crate::support::jcmd::threads_ok(&args);
    let (first, second) = (
        read(&dir.join("threads.jcmd1")),
        read(&dir.join("threads.jcmd2")),
    );
    let compared = crate::support::jcmd::agree(&first, &ours, &second, crate::support::jcmd::NAMED);
    assert!(compared >= 12, "only {compared} threads compared:\n{ours}");
    let locked = crate::support::jcmd::agree_locks(&first, &ours, &second);
    assert!(
        locked.len() >= 12,
        "only {} threads' lock lines compared",
        locked.len()
    );
    let mut a64_args = vec!["threads"];
    a64_args.extend_from_slice(&args);
    assert_a64_prints(&a64_args, &ours);
}

/// The aarch64 build (under qemu-user) run with `args` exits 0 and prints `ours`, byte for byte.
fn assert_a64_prints(args: &[&str], ours: &str) {
    let a64 = inspect_a64(&aarch64_bin(), args);
    assert!(a64.status.success(), "{}", stderr_of(&a64));
    assert_eq!(
        String::from_utf8_lossy(&a64.stdout),
        ours,
        "the aarch64 build's output differs from the x86_64 build's"
    );
}

/// An x86_64 JVM's thread dump read from its gcore by the aarch64 build (under qemu-user): the
/// same bytes as the x86_64 build, which agrees with jcmd before and after the core.
#[test]
#[ignore = "requires root, gdb, JDK 17, qemu, static aarch64 build (scripts/test.sh)"]
fn x86_64_thread_dump_core_read_by_the_aarch64_build() {
    let tmp = scratch_dir("foreign-threads-x86");
    let home = jdk17();
    let jvm = crate::support::jcmd::start_target(&home, &[]);
    let jcmd = |pid: i32| {
        let out = Command::new(home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args([&pid.to_string(), "Thread.print", "-l"])
            .output()
            .expect("running jcmd");
        assert!(out.status.success(), "jcmd Thread.print failed");
        String::from_utf8(out.stdout).unwrap()
    };
    let first = jcmd(jvm.pid);
    let core = gcore(jvm.pid, tmp.path());
    let second = jcmd(jvm.pid);
    let args = ["threads", "--core", core.to_str().unwrap()];
    let ours = crate::support::jcmd::threads_ok(&args[1..]);
    let compared = crate::support::jcmd::agree(&first, &ours, &second, crate::support::jcmd::NAMED);
    assert!(compared >= 12, "only {compared} threads compared:\n{ours}");
    assert_a64_prints(&args, &ours);
}

/// `inspect threads <pid>` live inside the aarch64 VM (qemu-system-aarch64; the static aarch64
/// build, ThreadsTarget on Debian's arm64 JDK 17, run by scripts/aarch64/threads-live.sh, cached
/// per build): it exits 0 and agrees with the JVM's own `jcmd Thread.print -l` before and after
/// it (threads, states, top 10 frames, lock lines and deadlocks), and leaves the JVM running.
#[test]
#[ignore = "requires qemu, arm64 root, static aarch64 build (scripts/test.sh)"]
fn aarch64_live_thread_dump_in_the_vm_matches_jcmd() {
    let bin = aarch64_bin();
    let dir = cached_by_script(
        "",
        "scripts/aarch64/threads-live.sh",
        &[bin.as_os_str()],
        A64_NEEDS,
        &[".done"],
    );
    let ours = read(&dir.join("ours"));
    assert_eq!(
        read(&dir.join("ours.rc")).trim(),
        "0",
        "inspect threads in the VM failed: {}",
        read(&dir.join("ours.err"))
    );
    let state = read(&dir.join("state"));
    let letter = state.split_whitespace().nth(1).unwrap_or("?");
    assert!(
        !matches!(letter, "T" | "t" | "?"),
        "the JVM was left stopped: {state}"
    );
    let (first, second) = (read(&dir.join("jcmd1")), read(&dir.join("jcmd2")));
    let compared = crate::support::jcmd::agree(&first, &ours, &second, crate::support::jcmd::NAMED);
    assert!(compared >= 12, "only {compared} threads compared:\n{ours}");
    let locked = crate::support::jcmd::agree_locks(&first, &ours, &second);
    assert!(
        locked.len() >= 12,
        "only {} threads' lock lines compared",
        locked.len()
    );
}

/// The HeapTarget JVM's kernel core of scripts/aarch64/cores.sh (Debian's arm64 JDK 17, G1,
/// `-Xshare:off`), the `--core`/`--sysroot` arguments that read it, and its references: `jcmd
/// GC.class_histogram -all` and `GC.heap_info`, each taken twice (in that order, in one attach)
/// just before the SIGABRT.
struct HeapCore {
    /// `--core <core> --sysroot <sysroot>`.
    args: [String; 4],
    histo1: String,
    histo2: String,
    info1: String,
    info2: String,
}

/// The [`HeapCore`] of the cached aarch64 cores (made by the script when missing).
fn heap_core() -> HeapCore {
    let dir = aarch64_cores();
    let core = dir.join("heap.core");
    // jcmd's `<pid>:` line left out, as heap.rs's `jcmd_heap_info` leaves it out.
    let info = |n: &str| {
        let text = read(&dir.join(n));
        text.split_once('\n')
            .map_or(text.clone(), |(_, rest)| rest.to_string())
    };
    HeapCore {
        args: [
            "--core".into(),
            core.to_str().unwrap().into(),
            "--sysroot".into(),
            dir.join("sysroot").to_str().unwrap().into(),
        ],
        histo1: read(&dir.join("heap.histo1")),
        histo2: read(&dir.join("heap.histo2")),
        info1: info("heap.info1"),
        info2: info("heap.info2"),
    }
}

impl HeapCore {
    /// `inspect SUBCOMMAND --core <core> --sysroot <sysroot> EXTRA...`'s arguments.
    fn with<'a>(&'a self, subcommand: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut v = vec![subcommand];
        v.extend(self.args.iter().map(String::as_str));
        v.extend_from_slice(extra);
        v
    }
}

/// `inspect histo` of an aarch64 JVM's kernel core (HeapTarget on Debian's arm64 JDK 17 with
/// G1, 1 MiB regions, its `int[300000]` humongous), read on x86_64: every class whose row is the
/// same in the JVM's two `jcmd GC.class_histogram -all` taken before the SIGABRT has that row in
/// ours (tests/integration/heap.rs's comparison), and the aarch64 build under qemu-user prints
/// the same bytes.
#[test]
#[ignore = "requires qemu, arm64 root, static aarch64 build (scripts/test.sh)"]
fn aarch64_histo_core_read_on_x86_64_matches_jcmd() {
    let h = heap_core();
    let args = h.with("histo", &[]);
    let ours = inspect_ok(&args);
    crate::support::histo::compare(&h.histo1, &ours, &h.histo2);
    assert_a64_prints(&args, &ours);
}

/// `inspect heap` of the same core: byte for byte one of the JVM's own `jcmd GC.heap_info`
/// taken before the SIGABRT (G1's committed regions, young and survivor counts, Metaspace read
/// through the `.symtab` of the sysroot's libjvm), its JSON names G1 and JDK 17, and the aarch64
/// build prints the same bytes.
#[test]
#[ignore = "requires qemu, arm64 root, static aarch64 build (scripts/test.sh)"]
fn aarch64_heap_info_core_read_on_x86_64_matches_jcmd() {
    let h = heap_core();
    let args = h.with("heap", &[]);
    let ours = inspect_ok(&args);
    assert!(
        ours == h.info1 || ours == h.info2,
        "inspect heap --core:\n{ours}\njcmd GC.heap_info, first:\n{}\nsecond:\n{}",
        h.info1,
        h.info2
    );
    let json: serde_json::Value =
        serde_json::from_str(&inspect_ok(&h.with("heap", &["--format", "json"]))).unwrap();
    assert_eq!(json["heap"]["collector"], "G1", "{json}");
    assert_eq!(json["jdk"], 17, "{json}");
    assert_a64_prints(&args, &ours);
}

/// `inspect heapdump` of the same core: both readers of tests/integration/heapdump.rs (the
/// strict one and VisualVM's heap library) read it with no violation and no reference to
/// nothing, every class with the same instances in the JVM's two jcmd histograms has that many
/// in the file, HeapTarget's values and the threads' frames (AArch64's stacks) are there; the
/// aarch64 build under qemu-user writes the same records (the header's timestamp aside).
#[test]
#[ignore = "requires qemu, arm64 root, JDK 17, static aarch64 build (scripts/test.sh)"]
fn aarch64_heapdump_core_read_on_x86_64_passes_both_readers() {
    let h = heap_core();
    let tmp = scratch_dir("foreign-heapdump");
    let file = tmp.path().join("x86.hprof");
    inspect_ok(&h.with("heapdump", &["-o", file.to_str().unwrap()]));
    crate::heapdump::check_ours(
        &file,
        &h.histo1,
        &h.histo2,
        17,
        "an aarch64 JDK 17 G1 kernel core",
    );
    let a64_file = tmp.path().join("a64.hprof");
    let out = inspect_a64(
        &aarch64_bin(),
        &h.with("heapdump", &["-o", a64_file.to_str().unwrap()]),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let (x86, a64) = (
        std::fs::read(&file).unwrap(),
        std::fs::read(&a64_file).unwrap(),
    );
    // "JAVA PROFILE 1.0.2\0", the id size (u4) and the time of the dump (u8)
    const HEADER: usize = 19 + 4 + 8;
    assert!(
        x86.len() > HEADER && a64.len() > HEADER && x86[..HEADER - 8] == a64[..HEADER - 8],
        "the two builds' dumps begin differently"
    );
    assert!(
        x86[HEADER..] == a64[HEADER..],
        "the aarch64 build's dump differs from the x86_64 build's ({} and {} bytes)",
        a64.len(),
        x86.len()
    );
}
