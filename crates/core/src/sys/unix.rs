//! Unix's side of [`crate::sys`]: paths are bytes, `pread`, file modes and owners.

use std::path::{Path, PathBuf};

/// The bytes are the path.
pub fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

/// `pread` until `buf` is full.
///
/// # Errors
/// The OS error; [`std::io::ErrorKind::UnexpectedEof`] when the file ends first.
pub fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Mode 0700.
pub fn private_dir(dir: &mut std::fs::DirBuilder) {
    std::os::unix::fs::DirBuilderExt::mode(dir, 0o700);
}

/// Owned by the effective user, not a symlink, and neither group- nor world-writable.
pub fn owned_and_private(path: &Path) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    // SAFETY: geteuid has no arguments and cannot fail.
    let me = unsafe { libc::geteuid() };
    !meta.file_type().is_symlink() && meta.uid() == me && meta.permissions().mode() & 0o022 == 0
}

/// glibc keeps freed pages in its arenas: `malloc_trim(0)` gives them back (about 0.1 ms). musl
/// and the other Unixes' allocators need nothing.
#[cfg_attr(
    not(all(target_os = "linux", feature = "serve")),
    allow(
        dead_code,
        reason = "serve's alone, which is built on Linux and Windows"
    )
)]
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the kernel; no pointer is involved.
    unsafe {
        libc::malloc_trim(0);
    }
}
