//! The OS's own facilities that several stages use and that are no stage's seam: a path as an
//! ELF file or the dynamic linker stores it (bytes), a positioned read of a file, the modes that
//! keep the per-build symbol cache private (`locate/cache.rs`), and giving the allocator's free
//! pages back (`serve`).
//!
//! # The OS seam
//!
//! One module, chosen once below: `unix.rs` (Linux, macOS, any Unix) or `windows.rs`. Each
//! exports the same names; nothing else here holds OS code.

#[cfg(unix)]
#[path = "unix.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;

// The names each OS file exports:
//
// - `path_from_bytes(&[u8]) -> PathBuf`: a path as an ELF note or the dynamic linker stores it
//   (bytes, no encoding), as this OS names files: the bytes themselves on Unix; on Windows, the
//   bytes read as UTF-8 (the paths of a Linux core are only shown and looked up under
//   `--sysroot` there).
// - `read_exact_at(&File, buf, offset)`: fills `buf` from the file at `offset` without moving a
//   shared cursor (`pread`; `ReadFile` with an offset), `UnexpectedEof` when the file ends first.
// - `private_dir(&mut DirBuilder)`: a directory for this user alone (mode 0700; Windows: the
//   profile's own ACL).
// - `owned_and_private(path)`: the file is this user's alone: owned by the effective user, not a
//   symlink, writable by nobody else (`false` where the OS has no such modes: Windows).
// - `release_free_memory()`: the allocator's free pages given back to the kernel (glibc's
//   `malloc_trim`; nothing where the allocator does it itself), for `serve`.
pub(crate) use os::*;
