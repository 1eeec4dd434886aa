//! Windows (and any OS that is not Unix): the system allocator, copies for the multi-call
//! names.

use std::path::Path;

use anyhow::Context;

/// First thing in `main`: nothing to set here.
pub fn init_allocator() {}

/// Makes `link` a name of `exe`: a copy, `link.exe`.
pub fn link_tool(exe: &Path, link: &Path) -> anyhow::Result<()> {
    std::fs::copy(exe, link.with_extension("exe"))
        .map(|_| ())
        .with_context(|| format!("copying {} to {}", exe.display(), link.display()))
}
