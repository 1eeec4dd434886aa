//! Windows' side of [`crate::sys`]: paths read as UTF-8, `ReadFile` at an offset, no Unix modes.

use std::path::{Path, PathBuf};

/// The bytes read as UTF-8 (lossily).
pub fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// `seek_read` (`ReadFile` with an offset) until `buf` is full.
///
/// # Errors
/// The OS error; [`std::io::ErrorKind::UnexpectedEof`] when the file ends first.
pub fn read_exact_at(
    file: &std::fs::File,
    mut buf: &mut [u8],
    mut offset: u64,
) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Nothing to set: the directory inherits the user profile's ACL.
pub fn private_dir(_dir: &mut std::fs::DirBuilder) {}

/// No Unix owner or modes to check: no file is trusted.
pub fn owned_and_private(_path: &Path) -> bool {
    false
}

/// The Windows heap gives pages back itself: nothing to do.
#[cfg_attr(not(feature = "serve"), allow(dead_code, reason = "serve's alone"))]
pub fn release_free_memory() {}
