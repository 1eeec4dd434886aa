//! The "every HotSpot in the field" matrix: each test is one shape of target a user meets, run
//! as a real JVM, with `inspect`'s counters compared to a reference read of the same JVM
//! (`jcmd <pid> PerfCounter.print` of the same JDK, or, where no outside tool can see the region,
//! the VM's own copy taken by a Java agent).
//!
//! Needs: JDK 17 (system), the JDK 11/21/25 runtimes of `scripts/fetch-jdks.sh`, binutils,
//! util-linux, root, and the test users of `scripts/setup-test-deps.sh`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

/// `-F` and the shared-file path both match jcmd on the JDK at `home`.
fn both_paths_match_jcmd(home: &Path, flags: &[&str]) -> Jvm {
    let jvm = Jvm::start_with(home, flags, 2);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(home, jvm.pid);
    let forced = counters(&inspect_ok(&["-F", &pid]));
    let shared = counters(&inspect_ok(&[&pid]));
    let after = jcmd_counters(home, jvm.pid);
    assert_plausible(&forced);
    assert_matches_reference(&forced, &before, &after);
    assert_matches_reference(&shared, &before, &after);
    assert_left_alone(jvm.pid, false);
    jvm
}

fn version_of(counters: &BTreeMap<String, String>) -> String {
    counters["java.property.java.vm.specification.version"].clone()
}

/// Both paths match jcmd on JDK `major`, and the counters say it is that JDK.
fn forced_and_shared_match_jcmd_on(major: u32) {
    let jvm = both_paths_match_jcmd(&jdk(major), &[]);
    let c = counters(&inspect_ok(&["-F", &jvm.pid.to_string(), "java.property"]));
    assert_eq!(version_of(&c), format!("\"{major}\""));
}

#[test]
#[ignore = "requires root, JDK 11 runtime (scripts/test.sh)"]
fn jdk11_forced_and_shared_match_jcmd() {
    forced_and_shared_match_jcmd_on(11);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_forced_and_shared_match_jcmd() {
    forced_and_shared_match_jcmd_on(17);
}

#[test]
#[ignore = "requires root, JDK 21 runtime (scripts/test.sh)"]
fn jdk21_forced_and_shared_match_jcmd() {
    forced_and_shared_match_jcmd_on(21);
}

#[test]
#[ignore = "requires root, JDK 25 runtime (scripts/test.sh)"]
fn jdk25_forced_and_shared_match_jcmd() {
    forced_and_shared_match_jcmd_on(25);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn perf_disable_shared_mem_forced_matches_agent_dump_jdk17() {
    perf_disable_shared_mem_forced_matches_agent_dump(17);
}

#[test]
#[ignore = "requires root, JDK 17, JDK 11 runtime (scripts/test.sh)"]
fn perf_disable_shared_mem_forced_matches_agent_dump_jdk11() {
    perf_disable_shared_mem_forced_matches_agent_dump(11);
}

#[test]
#[ignore = "requires root, JDK 17, JDK 21 runtime (scripts/test.sh)"]
fn perf_disable_shared_mem_forced_matches_agent_dump_jdk21() {
    perf_disable_shared_mem_forced_matches_agent_dump(21);
}

/// `-XX:+PerfDisableSharedMem` on JDK `major`: no file, so the default path says to use `-F`,
/// and `-F` matches the VM's own copy of its region (PerfDumpAgent) taken before and after.
fn perf_disable_shared_mem_forced_matches_agent_dump(major: u32) {
    let home = jdk(major);
    // JDK 21+ warns about dynamically loaded agents unless told they are expected.
    let flags: &[&str] = if major >= 21 {
        &[
            "-XX:+PerfDisableSharedMem",
            "-XX:+EnableDynamicAgentLoading",
        ]
    } else {
        &["-XX:+PerfDisableSharedMem"]
    };
    let jvm = Jvm::start_with(&home, flags, 1);
    let pid = jvm.pid.to_string();
    // jcmd (jvmstat) cannot see this JVM: that is why it is a shape of its own.
    let jcmd = Command::new(home.join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args([&pid, "PerfCounter.print"])
        .output()
        .unwrap();
    let jcmd_text = String::from_utf8_lossy(&jcmd.stdout);
    assert!(
        !jcmd_text.contains("sun.rt.createVmBeginTime"),
        "jcmd unexpectedly read a PerfDisableSharedMem JVM: {jcmd_text}"
    );
    // The default path has no file to read and says to use -F.
    let err = inspect_err(&inspect(&[&pid]));
    assert!(err.contains("no hsperfdata file"), "{err}");
    assert!(err.contains(&format!("inspect -F {pid}")), "{err}");

    let dir = scratch_dir("agent-dump");
    let before = agent_counters(jvm.pid, &dir.path().join("before.hsperf"));
    let ours = counters(&inspect_ok(&["-F", &pid]));
    let after = agent_counters(jvm.pid, &dir.path().join("after.hsperf"));
    assert_plausible(&ours);
    let compared = assert_matches_reference(&ours, &before, &after);
    assert!(compared > 100, "compared {compared}");
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn disable_attach_mechanism_both_paths_match_jcmd() {
    // jcmd's PerfCounter.print reads the hsperfdata file (jvmstat), not the attach socket, so it
    // still serves as the reference here; the attach API itself is refused.
    let jvm = both_paths_match_jcmd(&jdk17(), &["-XX:+DisableAttachMechanism"]);
    let out = Command::new(jdk17().join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args([&jvm.pid.to_string(), "VM.version"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success() && text.contains("does not support the attach mechanism"),
        "attach should be disabled in the target, yet jcmd VM.version said: {text}"
    );
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn use_perf_data_off_fails_fast_with_the_cause() {
    let jvm = Jvm::start(&["-XX:-UsePerfData"]);
    let pid = jvm.pid.to_string();
    let began = Instant::now();
    let err = inspect_err(&inspect(&["-F", &pid]));
    let took = began.elapsed();
    assert!(
        err.contains("perf data is disabled in the target (-XX:-UsePerfData)"),
        "{err}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let err = inspect_err(&inspect(&[&pid]));
    assert!(err.contains("-XX:-UsePerfData"), "{err}");
    assert_left_alone(jvm.pid, false);
}

/// `strip` (or `objcopy`) `args` applied to the copy's libjvm, written to a new file that then
/// replaces it (the original inode is never written).
fn rewrite_libjvm(home: &Path, tool: &str, args: &[&str]) {
    let lib = home.join("lib/server/libjvm.so");
    let new = home.join("lib/server/libjvm.so.new");
    let mut cmd = Command::new(tool);
    cmd.args(args);
    if tool == "strip" {
        cmd.arg("-o").arg(&new).arg(&lib);
    } else {
        cmd.arg(&lib).arg(&new);
    }
    run_ok(&mut cmd);
    std::fs::rename(&new, &lib).unwrap();
}

fn has_section(lib: &Path, section: &str) -> bool {
    let out = run_ok(Command::new("readelf").arg("-S").arg(lib));
    String::from_utf8_lossy(&out.stdout).contains(&format!(" {section} "))
}

#[test]
#[ignore = "requires root, binutils, JDK 17 (scripts/test.sh)"]
fn stripped_libjvm_found_through_vmstructs_jdk17() {
    stripped_libjvm_found_through_vmstructs(17);
}

#[test]
#[ignore = "requires root, binutils, JDK 11 runtime (scripts/test.sh)"]
fn stripped_libjvm_found_through_vmstructs_jdk11() {
    stripped_libjvm_found_through_vmstructs(11);
}

#[test]
#[ignore = "requires root, binutils, JDK 21 runtime (scripts/test.sh)"]
fn stripped_libjvm_found_through_vmstructs_jdk21() {
    stripped_libjvm_found_through_vmstructs(21);
}

#[test]
#[ignore = "requires root, binutils, JDK 25 runtime (scripts/test.sh)"]
fn stripped_libjvm_found_through_vmstructs_jdk25() {
    stripped_libjvm_found_through_vmstructs(25);
}

/// A copy of JDK `major` whose libjvm keeps only `.dynsym`: `-F` must walk the exported
/// `gHotSpotVMStructs` table of that version and still match jcmd.
fn stripped_libjvm_found_through_vmstructs(major: u32) {
    let dir = scratch_dir(&format!("stripped-{major}"));
    let home = jdk_copy(&jdk(major), dir.path());
    rewrite_libjvm(
        &home,
        "strip",
        &["--strip-all", "--remove-section=.gnu_debuglink"],
    );
    let lib = home.join("lib/server/libjvm.so");
    assert!(!has_section(&lib, ".symtab"), "strip left .symtab");

    let jvm = Jvm::start_with(&home, &[], 2);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&home, jvm.pid);
    let out = inspect(&["-F", "-v", &pid]);
    let after = jcmd_counters(&home, jvm.pid);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("symbols: gHotSpotVMStructs"), "{stderr}");
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    assert_matches_reference(&ours, &before, &after);
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, binutils, gdb, JDK 17 (scripts/test.sh)"]
fn separate_debug_file_by_debuglink() {
    let dir = scratch_dir("debuglink");
    let home = jdk_copy(&jdk17(), dir.path());
    let server = home.join("lib/server");
    let debug_dir = server.join(".debug");
    std::fs::create_dir(&debug_dir).unwrap();
    let debug = debug_dir.join("libjvm.so.debug");
    run_ok(
        Command::new("objcopy")
            .arg("--only-keep-debug")
            .arg(server.join("libjvm.so"))
            .arg(&debug),
    );
    rewrite_libjvm(
        &home,
        "strip",
        &["--strip-all", "--remove-section=.gnu_debuglink"],
    );
    // --add-gnu-debuglink records the file's base name and CRC; the locator looks for it beside
    // the library and in .debug/ beside it, as gdb does.
    rewrite_libjvm(
        &home,
        "objcopy",
        &[&format!("--add-gnu-debuglink={}", debug.display())],
    );
    let lib = server.join("libjvm.so");
    assert!(!has_section(&lib, ".symtab"));
    assert!(has_section(&lib, ".gnu_debuglink"));

    let jvm = Jvm::start_with(&home, &[], 0);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&home, jvm.pid);
    let out = inspect(&["-F", "-v", &pid]);
    let after = jcmd_counters(&home, jvm.pid);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&debug.display().to_string()),
        "-v does not name the debug file {}: {stderr}",
        debug.display()
    );
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    assert_matches_reference(&ours, &before, &after);
}

/// Removes a file on drop (a debug file placed under the global `/usr/lib/debug`).
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        // Its `xx/` directory too, if this left it empty (fails harmlessly otherwise).
        if let Some(parent) = self.0.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

#[test]
#[ignore = "requires root, binutils, JDK 17 (scripts/test.sh)"]
fn separate_debug_file_by_build_id() {
    let dir = scratch_dir("build-id");
    let home = jdk_copy(&jdk17(), dir.path());
    // A build-id of this test run's own (random), so the file it places under the global
    // /usr/lib/debug/.build-id can be no other library's and no other test's.
    let mut id = [0u8; 20];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut id).unwrap();
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    // The note: namesz 4, descsz 20, type NT_GNU_BUILD_ID (3), "GNU\0", the id.
    let mut note = Vec::new();
    for v in [4u32, 20, 3] {
        note.extend_from_slice(&v.to_le_bytes());
    }
    note.extend_from_slice(b"GNU\0");
    note.extend_from_slice(&id);
    let note_file = dir.path().join("build-id.note");
    std::fs::write(&note_file, &note).unwrap();
    rewrite_libjvm(
        &home,
        "objcopy",
        &[&format!(
            "--update-section=.note.gnu.build-id={}",
            note_file.display()
        )],
    );
    let debug_dir = Path::new("/usr/lib/debug/.build-id").join(&hex[..2]);
    std::fs::create_dir_all(&debug_dir).unwrap();
    let debug = RemoveOnDrop(debug_dir.join(format!("{}.debug", &hex[2..])));
    run_ok(
        Command::new("objcopy")
            .arg("--only-keep-debug")
            .arg(home.join("lib/server/libjvm.so"))
            .arg(&debug.0),
    );
    rewrite_libjvm(
        &home,
        "strip",
        &["--strip-all", "--remove-section=.gnu_debuglink"],
    );
    let lib = home.join("lib/server/libjvm.so");
    let notes = run_ok(Command::new("readelf").arg("-n").arg(&lib));
    assert!(String::from_utf8_lossy(&notes.stdout).contains(&hex));
    assert!(!has_section(&lib, ".symtab"));

    let jvm = Jvm::start_with(&home, &[], 0);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&home, jvm.pid);
    let out = inspect(&["-F", "-v", &pid]);
    let after = jcmd_counters(&home, jvm.pid);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&debug.0.display().to_string()),
        "-v does not name the debug file {}: {stderr}",
        debug.0.display()
    );
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    assert_matches_reference(&ours, &before, &after);
}

#[test]
#[ignore = "requires root, JDK 17, JDK 21 runtime (scripts/test.sh)"]
fn libjvm_replaced_on_disk_after_start() {
    let dir = scratch_dir("replaced");
    let home = jdk_copy(&jdk17(), dir.path());
    let jvm = Jvm::start_with(&home, &[], 0);
    // What a package upgrade does: a different build renamed over the path.
    let lib = home.join("lib/server/libjvm.so");
    let other = home.join("lib/server/libjvm.so.upgrade");
    std::fs::copy(jdk(21).join("lib/server/libjvm.so"), &other).unwrap();
    std::fs::rename(&other, &lib).unwrap();
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", jvm.pid)).unwrap();
    assert!(
        maps.contains("libjvm.so (deleted)"),
        "maps does not show the deleted libjvm"
    );

    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&jdk17(), jvm.pid);
    let out = inspect(&["-F", "-v", &pid]);
    let after = jcmd_counters(&jdk17(), jvm.pid);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The mapped inode itself was opened (the path now holds JDK 21's build).
    assert!(
        stderr.contains(&format!("opened as /proc/{pid}/map_files/")),
        "{stderr}"
    );
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    assert_matches_reference(&ours, &before, &after);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn sigstopped_target_answers_and_stays_stopped() {
    let jvm = Jvm::start_with(&jdk17(), &[], 4);
    let pid = jvm.pid.to_string();
    run_ok(Command::new("kill").args(["-STOP", &pid]));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !status_field(jvm.pid, "State").starts_with('T') {
        assert!(Instant::now() < deadline, "the JVM did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
    let before = jcmd_counters(&jdk17(), jvm.pid);
    let began = Instant::now();
    let out = inspect(&["-F", &pid]);
    let took = began.elapsed();
    let after = jcmd_counters(&jdk17(), jvm.pid);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    assert_matches_reference(&ours, &before, &after);
    assert_left_alone(jvm.pid, true);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn own_pid_and_mount_namespace_by_host_pid() {
    // A container without Docker: own pid namespace (the JVM is pid 1 there) and a private /tmp.
    let jvm = start_in_own_namespaces(&[]);
    let nspid = status_field(jvm.pid, "NSpid");
    let ids: Vec<&str> = nspid.split_whitespace().collect();
    assert_eq!(ids.len(), 2, "NSpid {nspid}");
    assert_ne!(ids[0], ids[1]);
    let inner = ids[1];
    // The JVM is pid `inner` (1) in its namespace; the host's /tmp has no file of that name.
    assert!(
        !Path::new(&format!("/tmp/hsperfdata_root/{inner}")).exists(),
        "the namespace's /tmp is not private"
    );
    assert!(
        Path::new(&format!(
            "/proc/{}/root/tmp/hsperfdata_root/{inner}",
            jvm.pid
        ))
        .exists(),
        "no hsperfdata file in the namespace's /tmp"
    );

    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&jdk17(), jvm.pid);
    let forced = counters(&inspect_ok(&["-F", &pid]));
    let out = inspect(&["-v", &pid]);
    let after = jcmd_counters(&jdk17(), jvm.pid);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("/proc/{pid}/root/tmp/hsperfdata_root/{inner}")),
        "{stderr}"
    );
    let shared = counters(&String::from_utf8(out.stdout).unwrap());
    assert_plausible(&forced);
    assert_matches_reference(&forced, &before, &after);
    assert_matches_reference(&shared, &before, &after);
    assert_left_alone(jvm.pid, false);
}

/// Starts the test program on JDK 17 as `hsinspect-jvm` in a user namespace of its own made by
/// that user (`unshare --user` with `map`: `--map-root-user`, or `--map-user=12345`), in a mount
/// namespace (made by root) with a private `/tmp` and, when `passwd` is given, that file as its
/// `/etc/passwd` (as rootless podman gives a container a line for a `--user` it lacks).
fn start_in_user_namespace(map: &[&str], passwd: Option<&Path>) -> Jvm {
    let (uid, gid) = user_ids("hsinspect-jvm");
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(
            // The checkout (the test classes, the passwd file) may lie under /tmp (a clone
            // there): bind the passwd file and keep the classes open as fd 3 before the private
            // /tmp hides them; the JVM gets /proc/self/fd/3 as its class path.
            "{ [ -z \"$HSINSPECT_PASSWD\" ] || mount --bind \"$HSINSPECT_PASSWD\" /etc/passwd; } \
             && exec 3<\"$HSINSPECT_CLASSES\" \
             && mount -t tmpfs -o mode=1777 hsinspect-tmp /tmp \
             && exec setpriv --reuid=\"$HSINSPECT_UID\" --regid=\"$HSINSPECT_GID\" --clear-groups -- \"$0\" \"$@\"",
        )
        .env("HSINSPECT_PASSWD", passwd.map(Path::as_os_str).unwrap_or_default())
        .env("HSINSPECT_CLASSES", test_classes())
        // By number: the JVM's /etc/passwd may not name the user.
        .env("HSINSPECT_UID", uid.to_string())
        .env("HSINSPECT_GID", gid.to_string())
        .args(["unshare", "--user"])
        .args(map)
        .arg("--")
        .arg(jdk17().join("bin/java"))
        .args(target_args_classes_on_fd3(&[], 1))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &jdk17())
}

/// The JVM's uid inside its user namespace, from `/proc/<pid>/uid_map`.
fn uid_inside(pid: i32) -> u32 {
    let map = std::fs::read_to_string(format!("/proc/{pid}/uid_map")).unwrap();
    let f: Vec<u32> = map
        .split_whitespace()
        .take(3)
        .map(|w| w.parse().unwrap())
        .collect();
    let (jvm_uid, _) = user_ids("hsinspect-jvm");
    assert_eq!(f[1], jvm_uid, "uid_map {map}");
    f[0]
}

/// Both paths, as root and as the namespace's owner, match jcmd (which finds the file by
/// scanning the JVM's `/tmp`, `get_user_name_slow`), and `list` says `both` to each.
fn user_namespace_jvm_matches_jcmd(jvm: &Jvm, dir_name: &str) {
    let pid = jvm.pid.to_string();
    let file = format!("/proc/{pid}/root/tmp/{dir_name}/{pid}");
    assert!(Path::new(&file).exists(), "HotSpot made no {file}");
    for user in [None, Some("hsinspect-jvm")] {
        let run = |args: &[&str]| match user {
            Some(u) => inspect_as(u, args),
            None => inspect(args),
        };
        let ok = |args: &[&str]| {
            let out = run(args);
            assert!(
                out.status.success(),
                "inspect {args:?} as {user:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            out
        };
        let before = jcmd_counters(&jdk17(), jvm.pid);
        let shared = ok(&["-v", &pid]);
        let forced = ok(&["-F", &pid]);
        let after = jcmd_counters(&jdk17(), jvm.pid);
        let said = String::from_utf8_lossy(&shared.stderr);
        assert!(said.contains(&file), "as {user:?}: {said}");
        for out in [&shared, &forced] {
            let ours = counters(&String::from_utf8_lossy(&out.stdout));
            assert_plausible(&ours);
            assert_matches_reference(&ours, &before, &after);
        }
        let list = ok(&["list", "--format", "json"]);
        let jvms: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
        let row = jvms
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["pid"] == jvm.pid)
            .unwrap_or_else(|| panic!("as {user:?}, pid {pid} not listed: {jvms:#}"));
        assert_eq!(row["readable"], "both", "as {user:?}: {row:#}");
    }
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn jvm_in_a_user_namespace_as_its_root_is_read_like_jcmd() {
    // `unshare --user --map-root-user`: uid 0 inside, so HotSpot's directory is hsperfdata_root,
    // owned by the namespace's owner on the host.
    let jvm = start_in_user_namespace(&["--map-root-user"], None);
    assert_eq!(uid_inside(jvm.pid), 0);
    user_namespace_jvm_matches_jcmd(&jvm, "hsperfdata_root");
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn jvm_in_a_user_namespace_with_a_uid_the_host_does_not_know() {
    assert!(
        nix::unistd::User::from_uid(12345.into()).unwrap().is_none(),
        "this test needs uid 12345 to have no user on the host"
    );
    // A user only the JVM's own /etc/passwd names (rootless podman writes such a line for a
    // `--user` the image lacks, named after the uid): HotSpot's directory is hsperfdata_12345.
    let dir = scratch_dir("userns-passwd");
    let passwd = dir.path().join("passwd");
    std::fs::write(
        &passwd,
        "root:x:0:0:root:/root:/bin/sh\n12345:x:12345:12345:container user:/:/bin/sh\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&passwd, std::fs::Permissions::from_mode(0o644)).unwrap();
    let jvm = start_in_user_namespace(&["--map-user=12345", "--map-group=12345"], Some(&passwd));
    assert_eq!(uid_inside(jvm.pid), 12345);
    user_namespace_jvm_matches_jcmd(&jvm, "hsperfdata_12345");
    drop(jvm);

    // No user at all for the uid: HotSpot makes no file (`get_user_name` fails in
    // `mmap_create_shared`, and it falls back to private memory), so jcmd cannot read it either;
    // `inspect <pid>` says so and what to do, and -F reads it, as root and as the owner.
    let jvm = start_in_user_namespace(&["--map-user=12345", "--map-group=12345"], None);
    let pid = jvm.pid.to_string();
    let jcmd = Command::new(jdk17().join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args([&pid, "PerfCounter.print"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&jcmd.stdout).contains("sun.rt.createVmBeginTime"),
        "HotSpot made a file for a uid without a user?"
    );
    for user in [None, Some("hsinspect-jvm")] {
        let run = |args: &[&str]| match user {
            Some(u) => inspect_as(u, args),
            None => inspect(args),
        };
        let err = inspect_err(&run(&[&pid]));
        assert!(
            err.contains(&format!("/proc/{pid}/root/etc/passwd"))
                && err.contains("uid 12345 in its user namespace")
                && err.contains("no user name")
                && err.contains(&format!("`inspect -F {pid}`"))
                && !err.contains("looked for )"),
            "as {user:?}: {err}"
        );
        let out = run(&["-F", &pid]);
        assert!(
            out.status.success(),
            "-F as {user:?}: {}",
            inspect_err(&out)
        );
        let c = counters(&String::from_utf8_lossy(&out.stdout));
        assert_plausible(&c);
        assert!(c["sun.rt.javaCommand"].contains("Target"), "{c:?}");
    }
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn another_users_jvm_root_reads_it_others_get_cause_and_fix() {
    require_user("hsinspect-other");
    let jvm = start_as_user("hsinspect-jvm", &[]);
    let uid = status_field(jvm.pid, "Uid");
    let jvm_uid = uid.split_whitespace().nth(1).unwrap().to_string();
    assert_ne!(jvm_uid, "0");
    let pid = jvm.pid.to_string();

    // Root reads it both ways.
    let before = jcmd_counters(&jdk17(), jvm.pid);
    let forced = counters(&inspect_ok(&["-F", &pid]));
    let shared = counters(&inspect_ok(&[&pid]));
    let after = jcmd_counters(&jdk17(), jvm.pid);
    assert_matches_reference(&forced, &before, &after);
    assert_matches_reference(&shared, &before, &after);
    assert_left_alone(jvm.pid, false);

    // A third, unprivileged user gets the cause and the fix, both ways.
    let err = inspect_err(&inspect_as("hsinspect-other", &["-F", &pid]));
    assert!(err.contains("permission denied"), "{err}");
    assert!(err.contains(&format!("uid {jvm_uid}")), "{err}");
    assert!(
        err.contains("root") && err.contains("CAP_SYS_PTRACE"),
        "{err}"
    );
    let err = inspect_err(&inspect_as("hsinspect-other", &[&pid]));
    assert!(err.contains("permission denied"), "{err}");
    assert!(err.contains(&format!("uid {jvm_uid}")), "{err}");
    assert!(err.contains("root"), "{err}");
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn no_hsperfdata_file_says_where_it_looked_why_and_a_fix_for_this_user() {
    require_user("hsinspect-other");
    let jvm = start_as_user("hsinspect-jvm", &["-XX:+PerfDisableSharedMem"]);
    let pid = jvm.pid.to_string();
    // Root and the JVM's own user: every place looked in with why, the likely cause, and -F,
    // which works for them (and does).
    for user in [None, Some("hsinspect-jvm")] {
        let run = |args: &[&str]| match user {
            Some(u) => inspect_as(u, args),
            None => inspect(args),
        };
        let err = inspect_err(&run(&[&pid]));
        assert!(
            err.contains(&format!(
                "/proc/{pid}/root/tmp/hsperfdata_hsinspect-jvm/{pid}: no such"
            )) && err.contains("PerfDisableSharedMem")
                && err.contains(&format!("use `inspect -F {pid}`"))
                && !err.contains("looked for )"),
            "as {user:?}: {err}"
        );
        let out = run(&["-F", &pid]);
        assert!(out.status.success(), "as {user:?}: {}", inspect_err(&out));
    }
    // A third user may use neither path: no advice it cannot follow (no bare `inspect -F`, which
    // would be refused), but whom to run as.
    for args in [vec![&pid[..]], vec!["-F", &pid[..]]] {
        let err = inspect_err(&inspect_as("hsinspect-other", &args));
        assert!(
            err.contains("permission denied")
                && err.contains("hsinspect-jvm")
                && err.contains("root"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("use `inspect -F"), "{args:?}: {err}");
        assert!(!err.contains("Without it, `inspect"), "{args:?}: {err}");
    }
    drop(jvm);

    // A file of the JVM's pid exists, in a directory that is not its user's: the message says
    // so, and does not blame -XX:+PerfDisableSharedMem.
    let jvm = start_in_own_namespaces(&[]);
    let tmp = format!("/proc/{}/root/tmp", jvm.pid);
    std::fs::rename(
        format!("{tmp}/hsperfdata_root"),
        format!("{tmp}/hsperfdata_gone"),
    )
    .unwrap();
    std::os::unix::fs::chown(format!("{tmp}/hsperfdata_gone"), Some(12345), Some(12345)).unwrap();
    let err = inspect_err(&inspect(&[&jvm.pid.to_string()]));
    assert!(
        err.contains("hsperfdata_gone/1: directory is owned by uid 12345, not by the JVM's uid 0")
            && !err.contains("PerfDisableSharedMem"),
        "{err}"
    );
}

/// Starts the test program and returns as soon as libjvm is mapped, long before `main`.
fn start_caught_early() -> std::process::Child {
    let mut child = Command::new(jdk17().join("bin/java"))
        .args(target_args(&[], 0))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        if maps.contains("/libjvm.so") {
            return child;
        }
        std::thread::yield_now();
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("libjvm was never mapped in the test JVM");
}

/// A reading of a JVM that was just made accessible: `Threads::create_vm`
/// (`src/hotspot/share/runtime/threads.cpp`) calls `PerfMemory::set_accessible(true)` before the
/// misc counters (`sun.os.hrt.*`, `java.property.*`, ...) are created, so jvmstat and we may see
/// the region without them; only the early counters are required.
fn assert_plausible_early(c: &BTreeMap<String, String>) {
    assert!(c.len() > 100, "only {} counters", c.len());
    for name in ["sun.rt.createVmBeginTime", "sun.rt.createVmEndTime"] {
        assert!(c.contains_key(name), "no {name} among {} counters", c.len());
    }
}

/// Runs `inspect args` against a JVM caught while starting; returns the output and how long it took.
fn inspect_starting(args: &[&str]) -> (std::process::Output, Duration) {
    let mut child = start_caught_early();
    let pid = child.id().to_string();
    let mut args = args.to_vec();
    args.push(&pid);
    let began = Instant::now();
    let out = inspect(&args);
    let took = began.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    (out, took)
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn starting_jvm_is_waited_for_then_read() {
    // With the default wait (5 s), both paths wait for the region (or file) to appear and become
    // accessible, then answer.
    for args in [&["-F"][..], &[][..]] {
        let (out, took) = inspect_starting(args);
        assert!(
            out.status.success(),
            "inspect {args:?} should wait for a starting JVM: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_plausible_early(&counters(&String::from_utf8_lossy(&out.stdout)));
        assert!(
            took < Duration::from_secs(8),
            "inspect {args:?} took {took:?}"
        );
    }
    // With no wait, it answers, or says the JVM is still starting: never a wrong cause.
    for args in [&["-F", "--wait", "0"][..], &["--wait", "0"][..]] {
        let (out, _) = inspect_starting(args);
        if out.status.success() {
            assert_plausible_early(&counters(&String::from_utf8_lossy(&out.stdout)));
        } else {
            let err = inspect_err(&out);
            assert!(err.contains("still starting"), "inspect {args:?}: {err}");
        }
    }
}

/// A JDK 17 test JVM held by gdb at its first `ftruncate`: HotSpot's `create_sharedmem_resources`
/// (`perfMemory_posix.cpp`) has just created the hsperfdata file and not yet sized it, so the
/// file is empty, on purpose rather than by luck. [`HeldAtSizing::go`] lets it run on; drop kills it.
struct HeldAtSizing {
    gdb: std::process::Child,
    pid: i32,
    dir: tempfile::TempDir,
}

impl HeldAtSizing {
    fn start() -> HeldAtSizing {
        let dir = scratch_dir("held-at-sizing");
        let script = dir.path().join("gdb.cmd");
        let (pid_file, go) = (dir.path().join("pid"), dir.path().join("go"));
        std::fs::write(
            &script,
            format!(
                "set pagination off\nset confirm off\nset startup-with-shell off\n\
                 handle SIGSEGV SIGBUS SIGILL SIGFPE SIGUSR1 SIGUSR2 SIGPIPE SIGCHLD SIGQUIT nostop noprint pass\n\
                 catch syscall ftruncate\nrun\n\
                 python open('{pid}', 'w').write(str(gdb.selected_inferior().pid))\n\
                 shell while [ ! -e '{go}' ]; do sleep 0.02; done\n\
                 detach\nquit\n",
                pid = pid_file.display(),
                go = go.display()
            ),
        )
        .unwrap();
        let gdb = Command::new("gdb")
            .args(["-q", "-nx", "-batch", "-x"])
            .arg(&script)
            .arg("--args")
            .arg(jdk17().join("bin/java"))
            .args(target_args(&[], 0))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gdb (package gdb) runs: scripts/setup-test-deps.sh installs it");
        let deadline = Instant::now() + Duration::from_secs(60);
        let pid = loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                break pid;
            }
            assert!(
                Instant::now() < deadline,
                "gdb never stopped the JVM at ftruncate"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        HeldAtSizing { gdb, pid, dir }
    }

    /// Lets the JVM run on (gdb detaches and exits).
    fn go(&self) {
        std::fs::write(self.dir.path().join("go"), "").unwrap();
    }
}

impl Drop for HeldAtSizing {
    fn drop(&mut self) {
        self.go();
        let _ = self.gdb.wait();
        let _ = Command::new("kill")
            .args(["-KILL", &self.pid.to_string()])
            .status();
    }
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn jvm_caught_with_an_empty_hsperfdata_file_is_waited_for() {
    let held = HeldAtSizing::start();
    let pid = held.pid.to_string();
    let file = PathBuf::from(format!("/tmp/hsperfdata_root/{pid}"));
    let size = std::fs::metadata(&file).map(|m| m.len());
    assert!(
        matches!(size, Ok(0)),
        "held at ftruncate, {} should exist, empty: {size:?}",
        file.display()
    );
    // Not waiting: a starting JVM, never "refused" or "-XX:+PerfDisableSharedMem".
    for args in [
        &["--wait", "0", &pid][..],
        &["stat", "--wait", "0", "-gc", &pid][..],
    ] {
        let err = inspect_err(&inspect(args));
        assert!(
            err.contains("still starting") && err.contains("is 0 bytes"),
            "inspect {args:?}: {err}"
        );
    }
    // `list` (and `serve`, which reads what the scan read) says it is starting: its memory,
    // read as early, has no region yet, which must not pass for -XX:-UsePerfData.
    let out = inspect(&["list", "--format", "json"]);
    let jvms: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = jvms
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["pid"] == held.pid)
        .unwrap_or_else(|| panic!("pid {pid} not listed: {jvms:#}"));
    assert!(
        row["reason"]
            .as_str()
            .unwrap_or("")
            .contains("still starting"),
        "{row:#}"
    );
    // Waiting: both commands read it once it is sized and accessible.
    let readers: Vec<_> = [
        vec!["--wait", "20000", &pid],
        vec!["stat", "--wait", "20000", "-gc", &pid],
    ]
    .into_iter()
    .map(|args| {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        std::thread::spawn(move || {
            let began = Instant::now();
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            (inspect(&argv), began.elapsed(), args)
        })
    })
    .collect();
    std::thread::sleep(Duration::from_millis(500));
    held.go();
    for reader in readers {
        let (out, took, args) = reader.join().unwrap();
        assert!(
            out.status.success(),
            "inspect {args:?} should wait for the file to be sized: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            took >= Duration::from_millis(400),
            "inspect {args:?} did not wait: {took:?}"
        );
        if args[0] != "stat" {
            assert_plausible_early(&counters(&String::from_utf8_lossy(&out.stdout)));
        }
    }
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn not_a_jvm_no_such_pid_and_exit_during_read() {
    // A live process without libjvm.
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let sp = sleeper.id().to_string();
    let err = inspect_err(&inspect(&["-F", &sp]));
    assert!(err.contains("is not a HotSpot JVM"), "{err}");
    // The file path says the same, not "no hsperfdata file ... use -F" (issue 23).
    let err = inspect_err(&inspect(&[&sp]));
    assert!(err.contains("is not a HotSpot JVM"), "{err}");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    // A pid that does not exist (the reaped sleeper's, unless reused meanwhile).
    if !Path::new(&format!("/proc/{sp}")).exists() {
        for args in [vec!["-F", &sp[..]], vec![&sp[..]]] {
            let err = inspect_err(&inspect(&args));
            assert!(err.contains(&format!("no process with pid {sp}")), "{err}");
        }
    }
    // A JVM that exits while inspect reads it: a reading or a clear error, never a hang or panic.
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid;
    let reader = std::thread::spawn(move || {
        let mut outs = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Path::new(&format!("/proc/{pid}/maps")).exists() && Instant::now() < deadline {
            outs.push((true, inspect(&["-F", &pid.to_string()])));
            outs.push((false, inspect(&[&pid.to_string()])));
        }
        outs.push((true, inspect(&["-F", &pid.to_string()])));
        outs
    });
    std::thread::sleep(Duration::from_millis(300));
    drop(jvm);
    let outs = reader.join().unwrap();
    assert!(outs.len() >= 2);
    for (forced, out) in &outs {
        if !out.status.success() {
            let err = inspect_err(out);
            // The VM deletes its hsperfdata file early in its shutdown, while it still runs.
            let file_gone = !forced && err.contains("no hsperfdata file");
            assert!(
                err.contains("exited")
                    || err.contains(&format!("no process with pid {pid}"))
                    || file_gone,
                "unclear error for a JVM that exited: {err}"
            );
        }
    }
    assert!(!outs.last().unwrap().1.status.success());
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn larger_perf_data_memory_size_both_paths_match() {
    let jvm = both_paths_match_jcmd(&jdk17(), &["-XX:PerfDataMemorySize=256k"]);
    let out = inspect(&["-F", "-v", &jvm.pid.to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("region: 262144 bytes"), "{stderr}");
    let file = format!("/tmp/hsperfdata_root/{}", jvm.pid);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 262144);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn perf_data_save_to_file_matches_last_read() {
    use hsinspect::perfdata::{Value, Variability};
    let dir = scratch_dir("save-to-file");
    let saved: PathBuf = dir.path().join("saved.hsperf");
    let last_raw: PathBuf = dir.path().join("last.hsperf");
    let mut jvm = Jvm::start(&[
        "-XX:+PerfDataSaveToFile",
        &format!("-XX:PerfDataSaveFile={}", saved.display()),
    ]);
    let pid = jvm.pid.to_string();
    // The last read before exit, kept raw for its variabilities.
    let last_text = inspect_ok(&["-F", "--save", last_raw.to_str().unwrap(), &pid]);
    // Close stdin: the test program returns from main and the VM exits normally, saving the region.
    drop(jvm.child.stdin.take());
    let status = jvm.child.wait().unwrap();
    assert!(status.success());
    let at_exit_text = inspect_ok(&[saved.to_str().unwrap()]);
    assert_plausible(&counters(&at_exit_text));

    let last = hsinspect::read_file(&last_raw).unwrap().snapshot;
    let at_exit = hsinspect::read_file(&saved).unwrap().snapshot;
    assert_eq!(counters(&last_text).len(), {
        let names: std::collections::BTreeSet<_> = last.counters.iter().map(|c| &c.name).collect();
        names.len()
    });
    // Between the last read and exit, constants stay, monotonic counters only grow.
    let (mut constants, mut monotonic) = (0, 0);
    for c in &last.counters {
        let saved_c = at_exit
            .get(&c.name)
            .unwrap_or_else(|| panic!("{} missing from the saved file", c.name));
        match (c.variability, &c.value, &saved_c.value) {
            (Variability::Constant, a, b) => {
                assert_eq!(a, b, "constant {} changed", c.name);
                constants += 1;
            }
            (Variability::Monotonic, Value::Long(a), Value::Long(b)) => {
                assert!(b >= a, "monotonic {} went from {a} to {b}", c.name);
                monotonic += 1;
            }
            _ => {}
        }
    }
    assert!(
        constants > 30 && monotonic > 20,
        "{constants} constants, {monotonic} monotonic"
    );
}
