//! The shared-file path: the hsperfdata file a JVM keeps at `/tmp/hsperfdata_<user>/<pid>`
//! (`src/hotspot/os/posix/perfMemory_posix.cpp`), read with HotSpot's own safety rules and more.
//!
//! Rules, for a file found by pid: the directory is a real directory (not a symlink), not group-
//! or other-writable, and owned by the JVM's effective uid; the file is looked at with
//! `fstatat(AT_SYMLINK_NOFOLLOW)` and opened only when it is a regular file (a device is never
//! opened), then opened `O_RDONLY | O_NOFOLLOW | O_NONBLOCK` relative to that directory (no
//! symlink, never blocks on a FIFO swapped in meanwhile) and checked again on the open descriptor:
//! a regular file with one link, owned by the same uid, of a sane size. For a file given by path:
//! the same rules for the file; its directory is opened `O_NOFOLLOW` (the file's own directory
//! may not be a symlink) and may be group/other-writable only with the sticky bit (`/tmp`).
//!
//! Every refusal says what is wrong and what to do instead (usually `inspect -F <pid>`, which
//! does not need the file).
//!
//! The file is copied with `pread` rather than mapped: a file another user truncates while we read
//! would raise SIGBUS through a mapping, while a short read is just an error.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag, open, openat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};

use super::ProcessInfo;
use crate::error::{Error, Looked};
use crate::pid::Pid;

/// Largest hsperfdata file read: [`crate::perfdata::MAX_REGION`].
const MAX_FILE_SIZE: u64 = crate::perfdata::MAX_REGION;

/// `inspect -F <pid>` with the pid when known: the way to read a JVM without its file.
fn forced(pid: Option<Pid>) -> String {
    match pid {
        Some(pid) => format!("`inspect -F {pid}`"),
        None => "`inspect -F <pid>`".to_string(),
    }
}

fn refuse(path: &Path, reason: impl Into<String>) -> Error {
    Error::HsperfdataFile {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// The uid a process with host uid `uid` has inside its user namespace, from the text of its
/// `/proc/<pid>/uid_map` (lines `inside outside count`, `outside` as the reader's namespace sees
/// it, `user_namespaces(7)`); `None` when no line maps it.
pub fn uid_inside(uid_map: &str, uid: u32) -> Option<u32> {
    uid_map.lines().find_map(|line| {
        let mut f = line.split_whitespace().map(|w| w.parse::<u64>().ok());
        let (inside, outside, count) = (f.next()??, f.next()??, f.next()??);
        let uid = u64::from(uid);
        (uid >= outside && uid - outside < count)
            .then(|| u32::try_from(inside + (uid - outside)).ok())
            .flatten()
    })
}

/// Who owns the JVM's hsperfdata directory, and by which name HotSpot made it.
struct Owner {
    /// The JVM's effective uid as this host sees it: the owner of its directory and file.
    host_uid: u32,
    /// The same uid inside the JVM's user namespace (`/proc/<pid>/uid_map`): HotSpot names the
    /// directory after this uid's user (`getpwuid_r(geteuid())` in `mmap_create_shared`).
    ns_uid: u32,
}

impl Owner {
    fn of(info: &ProcessInfo) -> Owner {
        let ns_uid = std::fs::read_to_string(format!("/proc/{}/uid_map", info.pid))
            .ok()
            .and_then(|map| uid_inside(&map, info.euid))
            .unwrap_or(info.euid);
        Owner {
            host_uid: info.euid,
            ns_uid,
        }
    }

    /// Whether the JVM runs in another user namespace with another uid than on the host.
    fn remapped(&self) -> bool {
        self.ns_uid != self.host_uid
    }

    /// "uid 0 in its user namespace (host uid 1000)", or "uid 1000".
    fn describe(&self) -> String {
        if self.remapped() {
            format!(
                "uid {} in its user namespace (host uid {})",
                self.ns_uid, self.host_uid
            )
        } else {
            format!("uid {}", self.host_uid)
        }
    }
}

/// The hsperfdata directories HotSpot may have made for `info`, best first, each with the way
/// its name was found: the user of the JVM's uid inside its user namespace in the JVM's own
/// `/etc/passwd`, under the JVM's own `/tmp` (both through `/proc/<pid>/root`: another mount
/// namespace, e.g. a container); then, for a JVM not in another user namespace, our `/tmp` with
/// the name from our `/etc/passwd` and then from NSS (LDAP users and the like). A lookup that
/// found no name is recorded in `looked`; a root this user may not enter, in `denied`.
fn named_dirs(
    info: &ProcessInfo,
    owner: &Owner,
    looked: &mut Vec<Looked>,
    denied: &mut Option<PathBuf>,
) -> Vec<PathBuf> {
    let root = format!("/proc/{}/root", info.pid);
    let mut dirs: Vec<PathBuf> = Vec::new();
    let passwd = format!("{root}/etc/passwd");
    match std::fs::read_to_string(&passwd) {
        Ok(text) => match user_name_in(&text, owner.ns_uid) {
            Some(name) => dirs.push(PathBuf::from(format!("{root}/tmp/hsperfdata_{name}"))),
            None => looked.push(Looked {
                path: passwd.into(),
                why: format!("no user with uid {}", owner.ns_uid),
            }),
        },
        // Another user's process: its root is closed to us, and so is its file.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            *denied = Some(PathBuf::from(format!("{root}/tmp")));
        }
        Err(e) => looked.push(Looked {
            path: passwd.into(),
            why: format!("not readable ({})", io_reason(&e)),
        }),
    }
    if !owner.remapped() {
        let host = std::fs::read_to_string("/etc/passwd")
            .ok()
            .and_then(|text| user_name_in(&text, owner.host_uid));
        for name in [host, super::user_name(owner.host_uid)]
            .into_iter()
            .flatten()
        {
            let dir = PathBuf::from(format!("/tmp/hsperfdata_{name}"));
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

fn user_name_in(passwd: &str, uid: u32) -> Option<String> {
    passwd.lines().find_map(|line| {
        let mut f = line.split(':');
        let name = f.next()?;
        let id: u32 = f.nth(1)?.parse().ok()?;
        (id == uid && !name.is_empty() && !name.contains('/')).then(|| name.to_string())
    })
}

/// An OS error in a few words ("no such file or directory", "permission denied").
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// What looking in one hsperfdata directory gave.
enum Step {
    /// The file, read.
    Found(PathBuf, Vec<u8>),
    /// Not there, or not usable; recorded and the next place is tried.
    Missing(Looked),
    /// This user may not open the directory or the file.
    Denied(PathBuf),
}

/// Looks for the JVM's file in `dir`. `named`: a directory HotSpot's naming rule gives, whose
/// unsafe shape is refused outright; a directory found by [`scanned_dirs`] is only skipped.
fn look_in(dir: &Path, info: &ProcessInfo, named: bool) -> Result<Step, Error> {
    let path = dir.join(info.nspid.to_string());
    let missing = |why: String| {
        Ok(Step::Missing(Looked {
            path: path.clone(),
            why,
        }))
    };
    let dirfd = match open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::ENOENT) => return missing("no such directory".into()),
        Err(nix::errno::Errno::EACCES) => return Ok(Step::Denied(dir.to_owned())),
        Err(nix::errno::Errno::ELOOP) | Err(nix::errno::Errno::ENOTDIR) if named => {
            return Err(refuse(
                dir,
                format!(
                    "is a symbolic link or not a directory: refused (HotSpot refuses it too; someone may have planted it). Remove it if you did not make it, or read the JVM's memory with {}",
                    forced(Some(info.pid))
                ),
            ));
        }
        Err(nix::errno::Errno::ELOOP) | Err(nix::errno::Errno::ENOTDIR) => {
            return missing("directory is a symbolic link: skipped".into());
        }
        Err(e) => return Err(Error::io(dir, e.into())),
    };
    let st = fstat(dirfd.as_fd()).map_err(|e| Error::io(dir, e.into()))?;
    if st.st_mode & (libc::S_IWGRP | libc::S_IWOTH) != 0 {
        if !named {
            return missing("directory is group- or other-writable: skipped".into());
        }
        return Err(refuse(
            dir,
            format!(
                "directory is group- or other-writable (mode {:o}): refused, other users could replace its files. Make it private (`chmod go-w {}`) or read the JVM's memory with {}",
                st.st_mode & 0o7777,
                dir.display(),
                forced(Some(info.pid))
            ),
        ));
    }
    if st.st_uid != info.euid {
        if !named {
            return missing(format!(
                "directory is owned by uid {}, not by the JVM's uid {}: skipped",
                st.st_uid, info.euid
            ));
        }
        return Err(refuse(
            dir,
            format!(
                "directory is owned by uid {}, not by the JVM's uid {}: refused, another user may have made it. Remove it if you did not make it, or read the JVM's memory with {}",
                st.st_uid,
                info.euid,
                forced(Some(info.pid))
            ),
        ));
    }
    let name = info.nspid.to_string();
    let rules = Rules {
        owner: Some(info.euid),
        pid: Some(info.pid),
    };
    match fstatat(dirfd.as_fd(), name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => rules.check_kind(&path, &st)?,
        Err(nix::errno::Errno::ENOENT) => return missing("no such file".into()),
        Err(e) => return Err(Error::io(&path, e.into())),
    }
    let fd = match openat(dirfd.as_fd(), name.as_str(), file_flags(), Mode::empty()) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::EACCES) => return Ok(Step::Denied(path)),
        Err(e) => return Err(rules.open_error(&path, e)),
    };
    let bytes = rules.read_checked(&path, fd)?;
    Ok(Step::Found(path, bytes))
}

/// The `hsperfdata_*` directories of the JVM's own `/tmp` (through `/proc/<pid>/root`) that hold
/// a file named after its innermost pid, as jcmd finds a JVM's user (`get_user_name_slow` in
/// `perfMemory_posix.cpp`): for names this host cannot tell (an NSS user inside a container).
/// The directories in `skip` were looked in already.
fn scanned_dirs(info: &ProcessInfo, skip: &[PathBuf]) -> Vec<PathBuf> {
    let tmp = PathBuf::from(format!("/proc/{}/root/tmp", info.pid));
    let Ok(entries) = std::fs::read_dir(&tmp) else {
        return Vec::new();
    };
    let name = info.nspid.to_string();
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("hsperfdata_"))
        .map(|e| e.path())
        .filter(|dir| !skip.contains(dir))
        .filter(|dir| std::fs::symlink_metadata(dir.join(&name)).is_ok())
        .collect();
    dirs.sort();
    dirs
}

/// Whether this process may read `info`'s memory (`inspect -F`): the same uid, or
/// `CAP_SYS_PTRACE` in its effective set (root has it). An estimate for advice: a policy
/// (Yama, a security module, a non-dumpable process) may still refuse.
fn may_ptrace(info: &ProcessInfo) -> bool {
    const CAP_SYS_PTRACE: u32 = 19;
    let caps = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let hex = s
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))?
                .trim()
                .to_string();
            u64::from_str_radix(&hex, 16).ok()
        })
        .unwrap_or(0);
    nix::unistd::geteuid().as_raw() == info.euid || caps & (1 << CAP_SYS_PTRACE) != 0
}

/// Reads the hsperfdata file of process `info` (named by its innermost NSpid): in the
/// directory HotSpot's rule names (the JVM's user inside its user namespace, through its root),
/// else in any `hsperfdata_*` directory of its `/tmp` owned by its uid that holds the file (as
/// jcmd looks).
///
/// # Errors
/// [`Error::NoHsperfdataFile`] when no candidate exists (each place looked in and why it was not
/// usable, and a fix this user can apply); [`Error::HsperfdataFile`] when a file exists but
/// breaks a rule; [`Error::HsperfdataFileNotSized`] for a file not sized yet;
/// [`Error::PermissionDenied`] when the file or its directory is not readable for this user.
pub fn read_for_process(info: &ProcessInfo) -> Result<(PathBuf, Vec<u8>), Error> {
    let owner = Owner::of(info);
    let mut looked = Vec::new();
    let mut denied = None;
    let named = named_dirs(info, &owner, &mut looked, &mut denied);
    // The named directories first; the scan only once they are all missing.
    let scanned = std::cell::OnceCell::new();
    let dirs = named.iter().map(|d| (d, true)).chain(
        std::iter::once(())
            .flat_map(|()| scanned.get_or_init(|| scanned_dirs(info, &named)))
            .map(|d| (d, false)),
    );
    for (dir, is_named) in dirs {
        match look_in(dir, info, is_named)? {
            Step::Found(path, bytes) => return Ok((path, bytes)),
            Step::Missing(l) => looked.push(l),
            Step::Denied(path) => {
                denied.get_or_insert(path);
            }
        }
    }
    if let Some(path) = denied {
        return Err(denied_error(&path, info));
    }
    let no_name = looked
        .iter()
        .any(|l| l.path.ends_with("etc/passwd") && l.why.starts_with("no user"));
    let all_absent = looked
        .iter()
        .all(|l| l.why.starts_with("no such") || l.path.ends_with("etc/passwd"));
    let cause = if no_name {
        format!(
            "the JVM's {} has no user name there, and HotSpot, which names the directory after the user, then keeps its PerfData private (as with -XX:+PerfDisableSharedMem)",
            owner.describe()
        )
    } else if all_absent {
        "the JVM may run with -XX:+PerfDisableSharedMem or -XX:-UsePerfData, or keep its /tmp where this user cannot see it".to_string()
    } else {
        "no usable file was found".to_string()
    };
    let fix = if may_ptrace(info) {
        format!("use {} to read its memory", forced(Some(info.pid)))
    } else {
        let who = super::user_name(info.euid)
            .map(|name| format!("{name} (uid {})", info.euid))
            .unwrap_or_else(|| format!("uid {}", info.euid));
        format!(
            "its memory can be read with {} run as root or as the JVM's user, {who} (you are uid {}, and may not read another user's process)",
            forced(Some(info.pid)),
            nix::unistd::geteuid().as_raw()
        )
    };
    Err(Error::NoHsperfdataFile {
        pid: info.pid,
        tried: looked,
        why: format!("{cause}: {fix}"),
    })
}

/// The hsperfdata file (or its directory) exists but this user may not read it: say whose it is
/// and who can read it, rather than claiming there is no file.
fn denied_error(path: &Path, info: &ProcessInfo) -> Error {
    let me = nix::unistd::geteuid().as_raw();
    // The file itself, or a directory on the way to where it would be.
    let is_file = path.file_name() == Some(info.nspid.to_string().as_ref());
    let owner = super::user_name(info.euid)
        .map(|name| format!("uid {} ({name})", info.euid))
        .unwrap_or_else(|| format!("uid {}", info.euid));
    Error::PermissionDenied {
        what: format!("reading {}", path.display()),
        hint: if is_file {
            format!(
                "The hsperfdata file of process {} belongs to the JVM's user, {owner}, and only that user and root can read it; you are uid {me}: run inspect as {owner} or as root",
                info.pid
            )
        } else {
            format!(
                "The files of process {} belong to the JVM's user, {owner}, and only that user and root can read them; you are uid {me}: run inspect as {owner} or as root",
                info.pid
            )
        },
    }
}

/// Reads an hsperfdata file given by path (a copy, or one written by `-XX:+PerfDataSaveToFile`).
///
/// # Errors
/// [`Error::Io`] when it cannot be opened; [`Error::HsperfdataFile`] when it breaks a rule.
pub fn read_path(path: &Path) -> Result<Vec<u8>, Error> {
    let rules = Rules {
        owner: None,
        pid: None,
    };
    let Some(name) = path.file_name() else {
        // `/`, `..`: not a file name; open it only to say what it is.
        let fd = open(path, file_flags(), Mode::empty()).map_err(|e| rules.open_error(path, e))?;
        return rules.read_checked(path, fd);
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dirfd = match open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        // With O_DIRECTORY, a symlink gives ENOTDIR (and ELOOP without it).
        Err(nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR)
            if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) =>
        {
            return Err(refuse(
                dir,
                "is a symbolic link: refused, the directory of an hsperfdata file is never a link (someone may have planted it). Give the path through the real directory (`realpath`), or read the JVM's memory with `inspect -F <pid>`",
            ));
        }
        Err(e) => return Err(Error::io(dir, e.into())),
    };
    let st = fstat(dirfd.as_fd()).map_err(|e| Error::io(dir, e.into()))?;
    let mode = st.st_mode;
    if mode & (libc::S_IWGRP | libc::S_IWOTH) != 0 && mode & libc::S_ISVTX == 0 {
        return Err(refuse(
            dir,
            format!(
                "directory is group- or other-writable without the sticky bit (mode {:o}): refused, other users could swap the file while it is read. Copy the file to a private directory and inspect the copy, or make the directory private (`chmod go-w {}`)",
                mode & 0o7777,
                dir.display()
            ),
        ));
    }
    match fstatat(dirfd.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => rules.check_kind(path, &st)?,
        Err(e) => return Err(Error::io(path, e.into())),
    }
    let fd = openat(dirfd.as_fd(), name, file_flags(), Mode::empty())
        .map_err(|e| rules.open_error(path, e))?;
    rules.read_checked(path, fd)
}

fn file_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC
}

/// The checks on an hsperfdata file, and what a refusal suggests.
struct Rules {
    /// The uid that must own the file (by pid: the JVM's effective uid).
    owner: Option<u32>,
    /// The JVM's pid, when known, for the `inspect -F` suggestion.
    pid: Option<Pid>,
}

impl Rules {
    fn open_error(&self, path: &Path, e: nix::errno::Errno) -> Error {
        match e {
            nix::errno::Errno::ELOOP => refuse(
                path,
                format!(
                    "is a symbolic link: refused, hsperfdata files are never links (someone may have planted it). Remove it if you did not make it, give the real file's path, or read the JVM's memory with {}",
                    forced(self.pid)
                ),
            ),
            e => Error::io(path, e.into()),
        }
    }

    /// Refuses anything but a regular file (checked before opening, and again on the descriptor).
    fn check_kind(&self, path: &Path, st: &FileStat) -> Result<(), Error> {
        let kind = SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT);
        if kind == SFlag::S_IFREG {
            return Ok(());
        }
        let what = match kind {
            SFlag::S_IFLNK => {
                return Err(self.open_error(path, nix::errno::Errno::ELOOP));
            }
            SFlag::S_IFIFO => "a FIFO",
            SFlag::S_IFDIR => "a directory",
            SFlag::S_IFCHR | SFlag::S_IFBLK => "a device",
            SFlag::S_IFSOCK => "a socket",
            _ => "not a regular file",
        };
        Err(refuse(
            path,
            format!(
                "is {what}, not a regular hsperfdata file: refused (not opened). Give the path of an hsperfdata file a JVM wrote, or read the JVM's memory with {}",
                forced(self.pid)
            ),
        ))
    }

    fn read_checked(&self, path: &Path, fd: OwnedFd) -> Result<Vec<u8>, Error> {
        let st = fstat(fd.as_fd()).map_err(|e| Error::io(path, e.into()))?;
        self.check_kind(path, &st)?;
        if st.st_nlink != 1 {
            return Err(refuse(
                path,
                format!(
                    "has {} hard links: refused, an hsperfdata file has one (a second link may expose another user's file). Inspect a copy you made, or read the JVM's memory with {}",
                    st.st_nlink,
                    forced(self.pid)
                ),
            ));
        }
        if let Some(uid) = self.owner.filter(|&uid| uid != st.st_uid) {
            return Err(refuse(
                path,
                format!(
                    "is owned by uid {}, not by the JVM's uid {uid}: refused, another user may have planted it. Read the JVM's memory with {}",
                    st.st_uid,
                    forced(self.pid)
                ),
            ));
        }
        let size = st.st_size as u64;
        // A live JVM's file shorter than a prologue is one HotSpot has created and not sized yet
        // (`create_sharedmem_resources`: open, then `ftruncate` to the region's size): the
        // caller waits for it as for a starting JVM.
        if let Some(pid) = self
            .pid
            .filter(|_| size < crate::perfdata::PROLOGUE_SIZE as u64)
        {
            return Err(Error::HsperfdataFileNotSized {
                pid,
                path: path.to_owned(),
                size,
                waited_ms: 0,
            });
        }
        if size == 0 {
            return Err(refuse(
                path,
                format!(
                    "is empty (the JVM may not have initialized it yet, or it exited): try again, or read the JVM's memory with {}",
                    forced(self.pid)
                ),
            ));
        }
        if size > MAX_FILE_SIZE {
            return Err(refuse(
                path,
                format!(
                    "is {size} bytes, more than the {MAX_FILE_SIZE}-byte limit for an hsperfdata file: refused, it is not one (HotSpot's region is 32 KiB unless -XX:PerfDataMemorySize raises it). Check the path, or read the JVM's memory with {}",
                    forced(self.pid)
                ),
            ));
        }
        let file = File::from(fd);
        let mut buf = vec![0u8; size as usize];
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], done as u64) {
                Ok(0) => {
                    return Err(refuse(
                        path,
                        format!(
                            "shrank from {size} to {done} bytes while being read (the JVM exited, or someone truncated it): try again, or read the JVM's memory with {}",
                            forced(self.pid)
                        ),
                    ));
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_map_through_every_line_of_a_uid_map() {
        // `unshare --user --map-root-user` by uid 1000.
        assert_eq!(
            uid_inside("         0       1000          1\n", 1000),
            Some(0)
        );
        // The initial namespace: the identity over every uid.
        assert_eq!(uid_inside("0 0 4294967295\n", 1000), Some(1000));
        // Rootless podman: root to the owner, then a subordinate range.
        let podman = "0 1000 1\n1 100000 65536\n";
        assert_eq!(uid_inside(podman, 1000), Some(0));
        assert_eq!(uid_inside(podman, 100000), Some(1));
        assert_eq!(uid_inside(podman, 112344), Some(12345));
        assert_eq!(uid_inside(podman, 165536), None, "past the range");
        assert_eq!(uid_inside(podman, 999), None);
        // Garbage is no mapping, never a panic or an overflow.
        assert_eq!(uid_inside("", 0), None);
        assert_eq!(uid_inside("x y z\n", 0), None);
        assert_eq!(uid_inside("4294967295 0 10\n", 5), None);
    }

    #[test]
    fn user_names_come_from_the_passwd_text() {
        let passwd = "root:x:0:0::/root:/bin/sh\n12345:x:12345:12345:container user:/:/bin/sh\nbad\n:x:7:7::/:/\n";
        assert_eq!(user_name_in(passwd, 0).as_deref(), Some("root"));
        assert_eq!(user_name_in(passwd, 12345).as_deref(), Some("12345"));
        assert_eq!(user_name_in(passwd, 7), None, "an empty name is no name");
        assert_eq!(user_name_in(passwd, 1), None);
    }
}
