//! Hostile hsperfdata files, given by path and found by pid: every one is refused with a message
//! that says what is wrong and what to do, and none makes `inspect` block, die by a signal, or
//! print what a planted link points to. The rules are in crates/core/src/process/linux/hsperfdata_file.rs.
//!
//! The by-path cases need nothing but the committed capture `testdata/captures/jdk17-serial.hsperf`
//! (a region a real JDK 17 wrote) and run in plain `cargo test`.
//!
//! The by-pid cases use a test user (made by scripts/setup-test-deps.sh; the tests run as root,
//! as in CI) and a process of that user (`sleep`, run with setpriv): `inspect <pid>` looks for
//! `/tmp/hsperfdata_<user>/<pid>`, where the test plants each hostile file. A copy of a real JDK 17
//! JVM's hsperfdata file planted the same way is read fine, which shows the layout is right and
//! that only the hostile part is refused.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use crate::support::*;

/// The user whose hsperfdata directory the by-pid tests plant files in.
const USER: &str = "hsinspect-hostile";

/// A string only the real JVM's file contains (in `java.rt.vmArgs`): if it shows up in the output
/// of a refused read, inspect followed a link to that file.
const MARKER: &str = "hsinspect.marker=planted-link-target-7f3a";

/// How long any inspect run may take here; refusals are immediate, so this only catches hangs.
const LIMIT: Duration = Duration::from_secs(10);

/// Tests that change the user's hsperfdata directory itself take this for writing; tests that
/// only add a file in it take it for reading.
static DIR_LOCK: RwLock<()> = RwLock::new(());

/// The bytes of a real JDK 17 hsperfdata file (one JVM is started for the whole test binary).
fn real_file_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let jvm = Jvm::start(&[&format!("-D{MARKER}")]);
        let me = nix::unistd::User::from_uid(nix::unistd::geteuid())
            .unwrap()
            .expect("the test's own user has a name");
        let path = PathBuf::from(format!("/tmp/hsperfdata_{}/{}", me.name, jvm.pid));
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("reading the test JVM's file {}: {e}", path.display()));
        assert!(bytes.len() >= 32 * 1024, "short hsperfdata file");
        bytes
    })
}

/// The bytes of a real JDK 17 hsperfdata region saved by the JVM itself
/// (`testdata/captures/jdk17-serial.hsperf`, `tests/java/Target.java`): the by-path rules are
/// about the file, not about who wrote it, so these tests need no JVM.
fn capture_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/captures/jdk17-serial.hsperf");
        std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    })
}

/// A private directory holding a valid copy of a real hsperfdata file, named `copy`.
fn private_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("copy");
    std::fs::write(&file, capture_bytes()).unwrap();
    (dir, file)
}

/// Asserts `out` is a refusal: exit status 1 (not a signal), nothing on stdout, no panic, and
/// every fragment in `says` in the message (case-insensitive).
fn assert_refused(out: &Output, says: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected a refusal (exit 1), got {} with stderr: {stderr}",
        out.status
    );
    assert!(
        out.stdout.is_empty(),
        "a refused read printed counters: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "inspect panicked: {stderr}");
    let lower = stderr.to_lowercase();
    for s in says {
        assert!(
            lower.contains(&s.to_lowercase()),
            "message lacks {s:?}: {stderr}"
        );
    }
}

/// What every refusal must tell the user to do (besides the rule-specific advice).
const ALTERNATIVE: &str = "inspect -F";

// ---------------------------------------------------------------------------------------------
// By path.

#[test]
fn by_path_a_valid_copy_is_read() {
    let (_dir, file) = private_copy();
    let out = inspect_ok(&[file.to_str().unwrap(), "sun.rt.javaCommand"]);
    assert!(out.contains("Target"), "{out}");
}

#[test]
fn by_path_symlinked_file_is_refused() {
    let (dir, file) = private_copy();
    let link = dir.path().join("link");
    symlink(&file, &link).unwrap();
    let out = inspect_bounded(&[link.to_str().unwrap()], LIMIT);
    assert_refused(
        &out,
        &["symbolic link", "refused", "real file", ALTERNATIVE],
    );
}

#[test]
fn by_path_symlinked_directory_is_refused() {
    let (dir, _file) = private_copy();
    let link = dir.path().join("hsperfdata_link");
    symlink(dir.path(), &link).unwrap();
    let out = inspect_bounded(&[link.join("copy").to_str().unwrap()], LIMIT);
    assert_refused(
        &out,
        &["hsperfdata_link", "symbolic link", "refused", "realpath"],
    );
}

#[test]
fn by_path_other_writable_directory_is_refused_unless_sticky() {
    let (dir, file) = private_copy();
    for mode in [0o777, 0o770, 0o722] {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let out = inspect_bounded(&[file.to_str().unwrap()], LIMIT);
        assert_refused(
            &out,
            &[
                &format!("mode {mode:o}"),
                "writable",
                "refused",
                "copy the file to a private directory",
                "chmod go-w",
            ],
        );
    }
    // The sticky bit (as on /tmp) stops others from swapping the file: accepted.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    inspect_ok(&[file.to_str().unwrap()]);
}

#[test]
fn by_path_hard_linked_file_is_refused() {
    let (dir, file) = private_copy();
    std::fs::hard_link(&file, dir.path().join("second")).unwrap();
    let out = inspect_bounded(&[file.to_str().unwrap()], LIMIT);
    assert_refused(&out, &["2 hard links", "refused", "copy", ALTERNATIVE]);
}

#[test]
fn by_path_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let began = Instant::now();
    let out = inspect_bounded(&[fifo.to_str().unwrap()], LIMIT);
    assert_refused(
        &out,
        &["a FIFO", "not a regular hsperfdata file", ALTERNATIVE],
    );
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "took {:?}",
        began.elapsed()
    );
}

#[test]
fn by_path_device_is_refused() {
    let out = inspect_bounded(&["/dev/zero"], LIMIT);
    assert_refused(&out, &["/dev/zero", "a device", "not opened", ALTERNATIVE]);
}

#[test]
fn by_path_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = inspect_bounded(&[sub.to_str().unwrap()], LIMIT);
    assert_refused(&out, &["a directory", "refused", ALTERNATIVE]);
}

#[test]
fn by_path_absurdly_large_sparse_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge");
    let f = std::fs::File::create(&file).unwrap();
    f.set_len(65 << 20).unwrap();
    assert!(
        f.metadata().unwrap().blocks() < 1024,
        "expected a sparse file"
    );
    let out = inspect_bounded(&[file.to_str().unwrap()], LIMIT);
    assert_refused(
        &out,
        &[
            &format!("{} bytes", 65u64 << 20),
            "limit",
            "check the path",
            ALTERNATIVE,
        ],
    );
}

#[test]
fn by_path_empty_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty");
    std::fs::File::create(&file).unwrap();
    let out = inspect_bounded(&[file.to_str().unwrap()], LIMIT);
    assert_refused(&out, &["is empty", "try again", ALTERNATIVE]);
}

#[test]
fn file_shrinking_during_reads_never_kills_inspect_by_signal() {
    // A thread truncates the file and writes it back, over and over, while inspect reads it:
    // through a mapping that would raise SIGBUS; with pread it is at worst a clear error.
    let (_dir, file) = private_copy();
    let bytes = capture_bytes().to_vec();
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let (stop, file) = (stop.clone(), file.clone());
        std::thread::spawn(move || {
            use std::os::unix::fs::FileExt;
            let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
            let mut rounds = 0u64;
            while !stop.load(Ordering::Relaxed) {
                f.set_len(0).unwrap();
                f.set_len(bytes.len() as u64 / 2).unwrap();
                f.write_all_at(&bytes, 0).unwrap();
                rounds += 1;
            }
            rounds
        })
    };
    let (mut ok, mut refused, mut shrank) = (0, 0, 0);
    for _ in 0..150 {
        let out = inspect_bounded(&[file.to_str().unwrap()], LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.signal().is_none(),
            "inspect died by signal {:?}: {stderr}",
            out.status.signal()
        );
        assert!(!stderr.contains("panicked"), "inspect panicked: {stderr}");
        if out.status.success() {
            ok += 1;
        } else {
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            // Empty, shrank mid-read, or the bytes of a half-written file.
            assert!(
                [
                    "is empty",
                    "shrank from",
                    "perfdata",
                    "prologue",
                    "entry",
                    "truncated"
                ]
                .iter()
                .any(|s| stderr.to_lowercase().contains(&s.to_lowercase())),
                "unclear message for a changing file: {stderr}"
            );
            refused += 1;
            shrank += usize::from(stderr.contains("shrank from"));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = churn.join().unwrap();
    assert!(rounds > 150, "the file changed only {rounds} times");
    eprintln!(
        "shrinking file: {ok} reads succeeded, {refused} refused ({shrank} saw it shrink mid-read), {rounds} truncations"
    );
    assert!(
        refused > 0,
        "no read ever saw the file change: the test proves nothing"
    );
}

// ---------------------------------------------------------------------------------------------
// By pid.

/// The test user's hsperfdata directory, made as a JVM makes it (a real directory, mode 755,
/// owned by the user); repaired if an earlier run left it changed.
fn user_dir(uid: u32, gid: u32) -> PathBuf {
    let dir = PathBuf::from(format!("/tmp/hsperfdata_{USER}"));
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(&dir).unwrap();
    }
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => panic!("mkdir {}: {e}", dir.display()),
    }
    std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Removes whatever the test planted at `path` when dropped.
struct Planted(PathBuf);

impl Drop for Planted {
    fn drop(&mut self) {
        match std::fs::symlink_metadata(&self.0) {
            Ok(m) if m.is_dir() => {
                let _ = std::fs::remove_dir_all(&self.0);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&self.0);
            }
            Err(_) => {}
        }
    }
}

/// Writes a valid hsperfdata file at `path`, owned by the user.
fn plant_valid(path: &Path, uid: u32, gid: u32) {
    std::fs::write(path, real_file_bytes()).unwrap();
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
}

/// Runs `inspect <pid>` for a process of the test user whose hsperfdata file `plant` makes.
fn by_pid(plant: impl FnOnce(&Path, u32, u32)) -> (Output, i32) {
    let (uid, gid) = user_ids(USER);
    let _shared = DIR_LOCK.read().unwrap_or_else(|e| e.into_inner());
    let dir = user_dir(uid, gid);
    let sleeper = Sleeper::start_as(uid, gid);
    let path = dir.join(sleeper.pid.to_string());
    let _planted = Planted(path.clone());
    plant(&path, uid, gid);
    let out = inspect_bounded(&[&sleeper.pid.to_string()], LIMIT);
    (out, sleeper.pid)
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_a_valid_file_is_read() {
    let (out, _) = by_pid(plant_valid);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("sun.rt.javaCommand=\"Target"), "{text}");
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_symlinked_file_is_refused() {
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = secret_dir.path().join("secret");
    std::fs::write(&secret, real_file_bytes()).unwrap();
    let (out, pid) = by_pid(|path, _, _| symlink(&secret, path).unwrap());
    assert_refused(
        &out,
        &[
            "symbolic link",
            "refused",
            "planted",
            &format!("inspect -F {pid}"),
        ],
    );
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_hard_linked_file_is_refused() {
    let keep = tempfile::tempdir().unwrap();
    let (out, pid) = by_pid(|path, uid, gid| {
        plant_valid(path, uid, gid);
        std::fs::hard_link(path, keep.path().join("second")).unwrap();
    });
    assert_refused(
        &out,
        &["2 hard links", "refused", &format!("inspect -F {pid}")],
    );
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_fifo_is_refused_without_blocking() {
    let (out, pid) = by_pid(|path, uid, gid| {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    });
    assert_refused(
        &out,
        &["a FIFO", "not opened", &format!("inspect -F {pid}")],
    );
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_device_is_refused() {
    let (out, pid) = by_pid(|path, uid, gid| {
        // A character device like /dev/zero (1, 5): never opened, whatever the mount allows.
        nix::sys::stat::mknod(
            path,
            nix::sys::stat::SFlag::S_IFCHR,
            nix::sys::stat::Mode::from_bits_truncate(0o644),
            nix::sys::stat::makedev(1, 5),
        )
        .unwrap();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    });
    assert_refused(
        &out,
        &["a device", "not opened", &format!("inspect -F {pid}")],
    );
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_directory_is_refused() {
    let (out, pid) = by_pid(|path, uid, gid| {
        std::fs::create_dir(path).unwrap();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    });
    assert_refused(
        &out,
        &["a directory", "refused", &format!("inspect -F {pid}")],
    );
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_absurdly_large_sparse_file_is_refused() {
    let (out, pid) = by_pid(|path, uid, gid| {
        std::fs::File::create(path)
            .unwrap()
            .set_len(65 << 20)
            .unwrap();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    });
    assert_refused(&out, &["limit", "refused", &format!("inspect -F {pid}")]);
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_empty_file_is_waited_for_then_refused() {
    // An empty file of a live process is what a starting JVM shows between creating and sizing
    // it: waited for (--wait, 5 s), then refused with what it is and what to do.
    let (out, pid) = by_pid(|path, uid, gid| {
        std::fs::File::create(path).unwrap();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    });
    assert_refused(
        &out,
        &[
            "is 0 bytes after waiting",
            "still starting",
            &format!("inspect -F {pid}"),
        ],
    );
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_file_of_another_owner_is_refused() {
    // A valid file owned by root in the user's directory: not the JVM's own file.
    let (out, pid) = by_pid(|path, _, _| std::fs::write(path, real_file_bytes()).unwrap());
    assert_refused(
        &out,
        &["owned by uid 0", "refused", &format!("inspect -F {pid}")],
    );
}

/// Runs `change` on the user's directory with every other by-pid test held off, and restores
/// the directory afterwards.
fn with_dir_changed(
    change: impl FnOnce(&Path, u32, u32) -> Vec<PathBuf>,
    check: impl FnOnce(i32, Output),
) {
    let (uid, gid) = user_ids(USER);
    let _exclusive = DIR_LOCK.write().unwrap_or_else(|e| e.into_inner());
    let dir = user_dir(uid, gid);
    let sleeper = Sleeper::start_as(uid, gid);
    let _planted: Vec<Planted> = change(&dir, uid, gid).into_iter().map(Planted).collect();
    let out = inspect_bounded(&[&sleeper.pid.to_string()], LIMIT);
    check(sleeper.pid, out);
    drop(_planted);
    user_dir(uid, gid);
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_symlinked_directory_is_refused_and_its_target_not_printed() {
    // As root: the user replaced its hsperfdata directory by a link to a root-only directory
    // that holds a valid hsperfdata file under the sleeper's pid. Following it would print root's
    // file (with MARKER) to whoever ran inspect.
    let secret = tempfile::tempdir().unwrap();
    let secret_path = secret.path().to_owned();
    let (uid, gid) = user_ids(USER);
    let _exclusive = DIR_LOCK.write().unwrap_or_else(|e| e.into_inner());
    let dir = user_dir(uid, gid);
    let sleeper = Sleeper::start_as(uid, gid);
    std::fs::write(secret_path.join(sleeper.pid.to_string()), real_file_bytes()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    symlink(&secret_path, &dir).unwrap();
    let restore = Planted(dir.clone());
    let out = inspect_bounded(&[&sleeper.pid.to_string()], LIMIT);
    drop(restore);
    user_dir(uid, gid);
    assert_refused(
        &out,
        &[
            &format!("hsperfdata_{USER}"),
            "symbolic link",
            "refused",
            &format!("inspect -F {}", sleeper.pid),
        ],
    );
    assert_not_leaked(&out, &secret_path);
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_planted_link_to_root_file_is_not_followed() {
    // As root: the user planted, under its own pid, a link to a root-only hsperfdata file.
    let secret = tempfile::tempdir().unwrap();
    let secret_file = secret.path().join("root-only");
    std::fs::write(&secret_file, real_file_bytes()).unwrap();
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (out, _) = by_pid(|path, uid, gid| {
        symlink(&secret_file, path).unwrap();
        // The user owns the link, as a real plant would.
        nix::unistd::fchownat(
            nix::fcntl::AT_FDCWD,
            path,
            Some(nix::unistd::Uid::from_raw(uid)),
            Some(nix::unistd::Gid::from_raw(gid)),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .unwrap();
    });
    assert_refused(&out, &["symbolic link", "refused"]);
    assert_not_leaked(&out, &secret_file);
}

/// Nothing of the link's target (its contents, or where it is) appears in the output.
fn assert_not_leaked(out: &Output, target: &Path) {
    for (name, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(text);
        assert!(
            !text.contains("planted-link-target"),
            "{name} shows the link target's contents: {text}"
        );
        assert!(
            !text.contains(&*target.to_string_lossy()),
            "{name} names the link target: {text}"
        );
    }
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_group_or_other_writable_directory_is_refused() {
    for mode in [0o775, 0o757] {
        with_dir_changed(
            |dir, _, _| {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
                vec![]
            },
            |pid, out| {
                assert_refused(
                    &out,
                    &[
                        &format!("hsperfdata_{USER}"),
                        &format!("mode {mode:o}"),
                        "writable",
                        "refused",
                        "chmod go-w",
                        &format!("inspect -F {pid}"),
                    ],
                )
            },
        );
    }
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_directory_of_another_owner_is_refused() {
    with_dir_changed(
        |dir, _, _| {
            std::os::unix::fs::chown(dir, Some(0), Some(0)).unwrap();
            vec![]
        },
        |pid, out| {
            assert_refused(
                &out,
                &["owned by uid 0", "refused", &format!("inspect -F {pid}")],
            )
        },
    );
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn jvm_of_another_user_is_read_and_a_link_planted_for_it_is_not_followed() {
    // A real JVM run as the test user: HotSpot makes the directory and file itself, and both
    // pass the rules. Then the user swaps its file for a link to a root-only hsperfdata file.
    let (uid, gid) = user_ids(USER);
    let _shared = DIR_LOCK.read().unwrap_or_else(|e| e.into_inner());
    user_dir(uid, gid);
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args([
        &format!("--reuid={uid}"),
        &format!("--regid={gid}"),
        "--clear-groups",
        "--",
    ])
    .arg(jdk17().join("bin/java"))
    .args([
        "-Xmx32m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-cp",
    ])
    .arg(test_classes())
    .args(["Target", "0"])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &jdk17());
    let pid = jvm.pid.to_string();
    let file = PathBuf::from(format!("/tmp/hsperfdata_{USER}/{pid}"));
    let meta = std::fs::symlink_metadata(&file).unwrap();
    assert_eq!(meta.uid(), uid, "the JVM's file is not the user's");

    let shared = counters(&inspect_ok(&[&pid]));
    let forced = counters(&inspect_ok(&["-F", &pid]));
    assert_eq!(
        shared.get("sun.rt.javaCommand"),
        forced.get("sun.rt.javaCommand")
    );
    assert!(shared["sun.rt.javaCommand"].contains("Target"));

    let secret = tempfile::tempdir().unwrap();
    let secret_file = secret.path().join("root-only");
    std::fs::write(&secret_file, real_file_bytes()).unwrap();
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::rename(&file, secret.path().join("moved")).unwrap();
    symlink(&secret_file, &file).unwrap();
    let _planted = Planted(file.clone());
    let out = inspect_bounded(&[&pid], LIMIT);
    assert_refused(
        &out,
        &["symbolic link", "refused", &format!("inspect -F {pid}")],
    );
    assert_not_leaked(&out, &secret_file);
    // The forced read does not need the file and still works.
    assert!(inspect_ok(&["-F", &pid, "sun.rt.javaCommand"]).contains("Target"));
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn by_pid_a_file_still_being_initialized_is_waited_for() {
    // A starting JVM creates its file zero-filled and writes the prologue afterwards: a read in
    // between must wait (as for a region not yet accessible), not call the file malformed.
    let (uid, gid) = user_ids(USER);
    // The real file first (its JVM may take seconds to start): inspect waits for a file only
    // while its process is younger than 2 s, so the sleeper must be young when inspect runs.
    let bytes = real_file_bytes();
    let _shared = DIR_LOCK.read().unwrap_or_else(|e| e.into_inner());
    let dir = user_dir(uid, gid);
    let sleeper = Sleeper::start_as(uid, gid);
    let path = dir.join(sleeper.pid.to_string());
    let _planted = Planted(path.clone());
    std::fs::write(&path, vec![0u8; bytes.len()]).unwrap();
    std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
    let child = spawn_inspect(&[&sleeper.pid.to_string()]);
    std::thread::sleep(Duration::from_millis(300));
    // The "JVM" finishes initializing: same file, now filled in.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
        .unwrap();
    let out = wait_bounded(child, LIMIT, "inspect <pid> of a starting JVM");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("sun.rt.javaCommand=\"Target"), "{text}");
}
