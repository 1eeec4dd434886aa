//! The shared-file path: the hsperfdata file a JVM keeps at `/tmp/hsperfdata_<user>/<pid>`
//! (`src/hotspot/os/posix/perfMemory_posix.cpp`), read with HotSpot's own safety rules and more.
//!
//! Rules, for a file found by pid: the directory is a real directory (not a symlink), not group-
//! or other-writable, and owned by the JVM's effective uid; the file is opened `O_NOFOLLOW |
//! O_NONBLOCK` relative to that directory (no symlink, never blocks on a FIFO), is a regular file
//! with one link, owned by the same uid, of a sane size. For a file given by path: the same rules
//! for the file, and its directory may be group/other-writable only with the sticky bit (`/tmp`).
//!
//! The file is copied with `pread` rather than mapped: a file another user truncates while we read
//! would raise SIGBUS through a mapping, while a short read is just an error.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::{Mode, SFlag, fstat};

use super::ProcessInfo;
use crate::Error;

/// Largest hsperfdata file read (HotSpot's default region is 32 KiB; `-XX:PerfDataMemorySize`
/// raises it).
pub const MAX_FILE_SIZE: u64 = 64 << 20;

fn refuse(path: &Path, reason: impl Into<String>) -> Error {
    Error::HsperfFile {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// The hsperfdata files that may belong to `info`'s JVM, best first: the target's own `/tmp` as
/// seen through `/proc/<pid>/root` (another mount namespace, e.g. a container), then ours.
pub fn candidate_dirs(info: &ProcessInfo) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for tmp in [format!("/proc/{}/root/tmp", info.pid), "/tmp".to_string()] {
        let passwd = if tmp.starts_with("/proc") {
            format!("/proc/{}/root/etc/passwd", info.pid)
        } else {
            "/etc/passwd".to_string()
        };
        let mut names = Vec::new();
        if let Some(n) = user_name_in(&passwd, info.euid) {
            names.push(n);
        }
        if tmp == "/tmp"
            && let Ok(Some(u)) = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(info.euid))
        {
            names.push(u.name);
        }
        for n in names {
            let dir = PathBuf::from(&tmp).join(format!("hsperfdata_{n}"));
            if !out.contains(&dir) {
                out.push(dir);
            }
        }
    }
    out
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
/// [`Error::NoHsperfFile`] when no candidate exists (the message says to use `-F`);
/// [`Error::HsperfFile`] when a file exists but breaks a rule.
pub fn read_for_process(info: &ProcessInfo) -> Result<(PathBuf, Vec<u8>), Error> {
    let mut tried = Vec::new();
    for dir in candidate_dirs(info) {
        let path = dir.join(info.nspid.to_string());
        let dirfd = match open(
            &dir,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(nix::errno::Errno::ENOENT) | Err(nix::errno::Errno::EACCES) => {
                tried.push(path);
                continue;
            }
            Err(nix::errno::Errno::ELOOP) | Err(nix::errno::Errno::ENOTDIR) => {
                return Err(refuse(
                    &dir,
                    "is a symbolic link or not a directory: refused (HotSpot's rule; someone may be planting it)",
                ));
            }
            Err(e) => return Err(Error::io(&dir, e.into())),
        };
        let st = fstat(dirfd.as_fd()).map_err(|e| Error::io(&dir, e.into()))?;
        if st.st_mode & (libc::S_IWGRP | libc::S_IWOTH) != 0 {
            return Err(refuse(
                &dir,
                format!(
                    "directory is group- or other-writable (mode {:o}): refused, its files could be replaced by other users",
                    st.st_mode & 0o7777
                ),
            ));
        }
        if st.st_uid != info.euid {
            return Err(refuse(
                &dir,
                format!(
                    "directory is owned by uid {}, not by the JVM's uid {}: refused",
                    st.st_uid, info.euid
                ),
            ));
        }
        let name = info.nspid.to_string();
        let fd = match openat(dirfd.as_fd(), name.as_str(), file_flags(), Mode::empty()) {
            Ok(fd) => fd,
            Err(nix::errno::Errno::ENOENT) => {
                tried.push(path);
                continue;
            }
            Err(e) => return Err(open_error(&path, e)),
        };
        let bytes = read_checked(&path, fd, Some(info.euid))?;
        return Ok((path, bytes));
    }
    Err(Error::NoHsperfFile {
        pid: info.pid,
        tried,
    })
}

/// Reads an hsperfdata file given by path (a copy, or one written by `-XX:+PerfDataSaveToFile`).
///
/// # Errors
/// [`Error::Io`] when it cannot be opened; [`Error::HsperfFile`] when it breaks a rule.
pub fn read_path(path: &Path) -> Result<Vec<u8>, Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let st = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
        let mode = st.mode();
        if mode & (libc::S_IWGRP | libc::S_IWOTH) != 0 && mode & libc::S_ISVTX == 0 {
            return Err(refuse(
                dir,
                format!(
                    "directory is group- or other-writable without the sticky bit (mode {:o}): refused, the file could be swapped under us",
                    mode & 0o7777
                ),
            ));
        }
    }
    let fd = open(path, file_flags(), Mode::empty()).map_err(|e| open_error(path, e))?;
    read_checked(path, fd, None)
}

fn file_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC
}

fn open_error(path: &Path, e: nix::errno::Errno) -> Error {
    match e {
        nix::errno::Errno::ELOOP => refuse(
            path,
            "is a symbolic link: refused (hsperfdata files are never links; someone may be planting it)",
        ),
        e => Error::io(path, e.into()),
    }
}

fn read_checked(path: &Path, fd: OwnedFd, owner: Option<u32>) -> Result<Vec<u8>, Error> {
    let st = fstat(fd.as_fd()).map_err(|e| Error::io(path, e.into()))?;
    let kind = SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT);
    if kind != SFlag::S_IFREG {
        let what = match kind {
            SFlag::S_IFIFO => "a FIFO",
            SFlag::S_IFDIR => "a directory",
            SFlag::S_IFCHR | SFlag::S_IFBLK => "a device",
            SFlag::S_IFSOCK => "a socket",
            _ => "not a regular file",
        };
        return Err(refuse(
            path,
            format!("is {what}, not a regular hsperfdata file: refused"),
        ));
    }
    if st.st_nlink != 1 {
        return Err(refuse(
            path,
            format!(
                "has {} hard links (an hsperfdata file has one): refused",
                st.st_nlink
            ),
        ));
    }
    if let Some(uid) = owner.filter(|&uid| uid != st.st_uid) {
        return Err(refuse(
            path,
            format!(
                "is owned by uid {}, not by the JVM's uid {uid}: refused",
                st.st_uid
            ),
        ));
    }
    let size = st.st_size as u64;
    if size == 0 {
        return Err(refuse(
            path,
            "is empty (the JVM may not have initialized it yet, or it exited)",
        ));
    }
    if size > MAX_FILE_SIZE {
        return Err(refuse(
            path,
            format!(
                "is {size} bytes, more than the {MAX_FILE_SIZE}-byte limit for an hsperfdata file: refused"
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
                    format!("shrank from {size} to {done} bytes while being read"),
                ));
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(buf)
}
