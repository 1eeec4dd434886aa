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
use crate::Error;

/// Largest hsperfdata file read: [`crate::perfdata::MAX_REGION`].
const MAX_FILE_SIZE: u64 = crate::perfdata::MAX_REGION;

/// `inspect -F <pid>` with the pid when known: the way to read a JVM without its file.
fn forced(pid: Option<i32>) -> String {
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

/// The hsperfdata directories that may hold `info`'s file, best first, computed lazily: the
/// target's own `/tmp` seen through `/proc/<pid>/root` (another mount namespace, e.g. a
/// container) with the user name from the target's `/etc/passwd`, then our `/tmp` with the name
/// from our `/etc/passwd` and then from NSS (LDAP users and the like).
pub fn candidate_dirs(info: &ProcessInfo) -> impl Iterator<Item = PathBuf> + '_ {
    let mut seen: Vec<PathBuf> = Vec::new();
    (0..3).filter_map(move |source| {
        let root = format!("/proc/{}/root", info.pid);
        let (tmp, name) = match source {
            0 => (
                format!("{root}/tmp"),
                user_name_in(&format!("{root}/etc/passwd"), info.euid)?,
            ),
            1 => ("/tmp".to_string(), user_name_in("/etc/passwd", info.euid)?),
            _ => ("/tmp".to_string(), super::user_name(info.euid)?),
        };
        let dir = PathBuf::from(tmp).join(format!("hsperfdata_{name}"));
        (!seen.contains(&dir)).then(|| {
            seen.push(dir.clone());
            dir
        })
    })
}

fn user_name_in(passwd: &str, uid: u32) -> Option<String> {
    let text = std::fs::read_to_string(passwd).ok()?;
    text.lines().find_map(|line| {
        let mut f = line.split(':');
        let name = f.next()?;
        let id: u32 = f.nth(1)?.parse().ok()?;
        (id == uid && !name.is_empty() && !name.contains('/')).then(|| name.to_string())
    })
}

/// Reads the hsperfdata file of process `info` (named by its innermost NSpid).
///
/// # Errors
/// [`Error::NoHsperfdataFile`] when no candidate exists (the message says to use `-F`);
/// [`Error::HsperfdataFile`] when a file exists but breaks a rule.
pub fn read_for_process(info: &ProcessInfo) -> Result<(PathBuf, Vec<u8>), Error> {
    let mut tried = Vec::new();
    let mut denied = None;
    for dir in candidate_dirs(info) {
        let path = dir.join(info.nspid.to_string());
        let dirfd = match open(
            &dir,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(nix::errno::Errno::ENOENT) => {
                tried.push(path);
                continue;
            }
            Err(nix::errno::Errno::EACCES) => {
                denied.get_or_insert_with(|| dir.clone());
                tried.push(path);
                continue;
            }
            Err(nix::errno::Errno::ELOOP) | Err(nix::errno::Errno::ENOTDIR) => {
                return Err(refuse(
                    &dir,
                    format!(
                        "is a symbolic link or not a directory: refused (HotSpot refuses it too; someone may have planted it). Remove it if you did not make it, or read the JVM's memory with {}",
                        forced(Some(info.pid))
                    ),
                ));
            }
            Err(e) => return Err(Error::io(&dir, e.into())),
        };
        let st = fstat(dirfd.as_fd()).map_err(|e| Error::io(&dir, e.into()))?;
        if st.st_mode & (libc::S_IWGRP | libc::S_IWOTH) != 0 {
            return Err(refuse(
                &dir,
                format!(
                    "directory is group- or other-writable (mode {:o}): refused, other users could replace its files. Make it private (`chmod go-w {}`) or read the JVM's memory with {}",
                    st.st_mode & 0o7777,
                    dir.display(),
                    forced(Some(info.pid))
                ),
            ));
        }
        if st.st_uid != info.euid {
            return Err(refuse(
                &dir,
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
            Err(nix::errno::Errno::ENOENT) => {
                tried.push(path);
                continue;
            }
            Err(e) => return Err(Error::io(&path, e.into())),
        }
        let fd = match openat(dirfd.as_fd(), name.as_str(), file_flags(), Mode::empty()) {
            Ok(fd) => fd,
            Err(nix::errno::Errno::EACCES) => return Err(denied_error(&path, info)),
            Err(e) => return Err(rules.open_error(&path, e)),
        };
        let bytes = rules.read_checked(&path, fd)?;
        return Ok((path, bytes));
    }
    if let Some(dir) = denied {
        return Err(denied_error(&dir, info));
    }
    Err(Error::NoHsperfdataFile {
        pid: info.pid,
        tried,
    })
}

/// The hsperfdata file (or its directory) exists but this user may not read it: say whose it is
/// and who can read it, rather than claiming there is no file.
fn denied_error(path: &Path, info: &ProcessInfo) -> Error {
    let me = nix::unistd::geteuid().as_raw();
    let owner = super::user_name(info.euid)
        .map(|name| format!("uid {} ({name})", info.euid))
        .unwrap_or_else(|| format!("uid {}", info.euid));
    Error::PermissionDenied {
        what: format!("reading {}", path.display()),
        hint: format!(
            "The hsperfdata file of process {} belongs to the JVM's user, {owner}, and only that user and root can read it; you are uid {me}: run inspect as {owner} or as root",
            info.pid
        ),
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
    pid: Option<i32>,
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
