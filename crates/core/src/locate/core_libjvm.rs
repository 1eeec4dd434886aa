//! Finding libjvm in a core file: its mappings from the `NT_FILE` note (the kernel's and gdb's
//! list of file-backed mappings with their file offsets), which gives the same [`Module`] the
//! live path builds from `/proc/<pid>/maps`; without the note, from the dynamic linker's list
//! (`r_debug`/`link_map` from the executable's `DT_DEBUG`), as the Serviceability Agent does
//! (`ps_core.c`, `hotspot-internals.md` §3.3). The files that can stand for it honour
//! `--sysroot` and `--exe`.

use std::path::{Path, PathBuf};

use goblin::elf::header::ET_DYN;
use goblin::elf::program_header::PT_DYNAMIC;

use crate::elf::ElfFile;
use crate::elf::link_map::{self, LinkMaps};
use crate::error::{Error, with_causes};
use crate::locate::{Mapping, Module};
use crate::memory::{MemoryError, ReadMemory};
use crate::process::LIBJVM;
use crate::process::strip_deleted;
use crate::read::{CoreMemory, machine_name};

fn is_libjvm(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == LIBJVM)
}

/// Most symbolic links followed in one path under a sysroot (Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The file `path` names inside the directory `root` (a sysroot: the files of another machine
/// under their own paths), as that machine would resolve it: symbolic links are followed inside
/// `root` (an absolute target starts again at `root`, `..` stops at it), never into this host's
/// own files. When a component is missing, the path resolved so far with the rest appended (a
/// path under `root` that does not exist, which names where the links led); after
/// [`MAX_LINKS`] links, `None`.
pub(crate) fn resolve_under(root: &Path, path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    // Components still to resolve, the next one last; the part resolved, relative to root.
    let mut todo: Vec<std::ffi::OsString> = Vec::new();
    let push_all = |todo: &mut Vec<std::ffi::OsString>, p: &Path| {
        for c in p.components().rev() {
            match c {
                Component::Normal(n) => todo.push(n.to_owned()),
                Component::ParentDir => todo.push("..".into()),
                _ => {}
            }
        }
    };
    push_all(&mut todo, path);
    let mut done = PathBuf::new();
    let mut links = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&c);
        let Ok(meta) = std::fs::symlink_metadata(root.join(&next)) else {
            // Missing: the rest as it is, under what was resolved (never a host path).
            let mut out = root.join(next);
            out.extend(todo.iter().rev());
            return Some(out);
        };
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return None;
            }
            let target = std::fs::read_link(root.join(&next)).ok()?;
            if target.is_absolute() {
                done = PathBuf::new();
            }
            push_all(&mut todo, &target);
        } else {
            done = next;
        }
    }
    Some(root.join(done))
}

/// `path` as found under `sysroot` ([`resolve_under`]; the plain `<sysroot>/<path>` after a
/// symbolic link loop), or `path` itself without one.
fn under_sysroot(sysroot: Option<&Path>, path: &Path) -> PathBuf {
    match sysroot {
        Some(root) => resolve_under(root, path)
            .unwrap_or_else(|| root.join(path.strip_prefix("/").unwrap_or(path))),
        None => path.to_owned(),
    }
}

/// The `--exe` file, symlinks resolved (so `/usr/bin/java` leads to the JDK home). With a
/// sysroot, a path inside it is resolved there, and any other path is first looked up under it
/// (the dead process's machine), then taken as given (a copy on this machine); links under the
/// sysroot never lead out of it.
fn resolve_exe(exe: &Path, sysroot: Option<&Path>) -> PathBuf {
    if let Some(root) = sysroot {
        let inside = exe.strip_prefix(root).ok();
        for rel in inside.into_iter().chain([exe]) {
            if let Some(p) = resolve_under(root, rel).filter(|p| p.exists()) {
                return p;
            }
        }
    }
    exe.canonicalize().unwrap_or_else(|_| exe.to_owned())
}

/// Files that may stand for the core's libjvm, best first: `--exe` when it names a libjvm;
/// the path the process mapped (under `--sysroot` when given); the same JDK-relative path under
/// the home of a `--exe` java launcher (`<home>/bin/java` → `<home>/lib/server/libjvm.so`; for
/// JDK 8 both `<home>/lib/amd64/server/libjvm.so`, a JRE's home, and
/// `<home>/jre/lib/amd64/server/libjvm.so`, a JDK's).
/// [`crate::locate::locate_perf_memory`] takes the first whose build-id matches the core.
pub fn candidates(mapped: &Path, exe: Option<&Path>, sysroot: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let exe = exe.map(|e| resolve_exe(e, sysroot));
    if let Some(e) = exe.as_deref().filter(|e| is_libjvm(e)) {
        out.push(e.to_owned());
    }
    out.push(under_sysroot(sysroot, mapped));
    if let Some(home) = exe
        .as_deref()
        .filter(|e| !is_libjvm(e))
        .and_then(|e| e.parent()?.parent())
    {
        // The part of the mapped path below its JDK or JRE home: "lib/server/libjvm.so" (JDK
        // 9+), "lib/amd64/server/libjvm.so" or "jre/lib/amd64/server/libjvm.so" (JDK 8). At
        // most 5 components, so the /usr of /usr/lib/jvm/... is not taken for a home.
        for anc in mapped.ancestors().skip(1) {
            let Ok(tail) = mapped.strip_prefix(anc) else {
                continue;
            };
            if tail.components().count() > 5 {
                break;
            }
            if tail.starts_with("lib") || tail.starts_with("jre") {
                // A home inside the sysroot: its links resolve there too.
                let inside = sysroot.and_then(|root| {
                    resolve_under(root, &home.strip_prefix(root).ok()?.join(tail))
                });
                out.push(inside.unwrap_or_else(|| home.join(tail)));
            }
        }
    }
    out.dedup();
    out
}

/// Builds libjvm's [`Module`] from the core's `NT_FILE` note.
///
/// # Errors
/// [`Error::Core`] when no libjvm is among the mapped files (not a HotSpot JVM's core).
pub fn libjvm_from_nt_file(
    core: &CoreMemory,
    exe: Option<&Path>,
    sysroot: Option<&Path>,
) -> Result<Module, Error> {
    let files = core.files().unwrap_or_default();
    let mut path: Option<PathBuf> = None;
    let mut mappings = Vec::new();
    for f in files {
        let name = strip_deleted(&f.path);
        if !is_libjvm(&name) {
            continue;
        }
        match &path {
            None => path = Some(name),
            Some(first) if *first != name => continue, // a second libjvm: keep the first
            Some(_) => {}
        }
        mappings.push(Mapping {
            start: f.start,
            end: f.end,
            offset: f.offset,
        });
    }
    let Some(path) = path else {
        let who = match core.process() {
            Some(p) => format!("process {} ({})", p.pid, p.command),
            None => "the process".into(),
        };
        return Err(Error::core(
            core.path(),
            format!(
                "not the core of a HotSpot JVM: {who} had no {LIBJVM} among its {} mapped files (NT_FILE note)",
                files.len()
            ),
        ));
    };
    mappings.sort_by_key(|m| m.start);
    let candidates = candidates(&path, exe, sysroot);
    Ok(Module {
        path,
        mappings,
        candidates,
        root: sysroot.map(Path::to_owned),
    })
}

/// Finds libjvm without `NT_FILE`, as SA's `ps_core.c` does: the executable's `PT_DYNAMIC`
/// (relocated by `AT_ENTRY - e_entry` for a PIE), its `DT_DEBUG` entry read from the core, and
/// the dynamic linker's `link_map` chain ([`elf::link_map`]). libjvm's mappings are then its
/// `PT_LOAD` segments at `l_addr`, read from the library file (the core has no offsets).
///
/// # Errors
/// [`Error::Core`] when `exe` is missing or not the core's executable, or the chain is not in the
/// core, or no libjvm is on it; errors opening the library.
pub fn libjvm_from_link_map(
    core: &CoreMemory,
    exe: Option<&Path>,
    sysroot: Option<&Path>,
) -> Result<Module, Error> {
    let Some(exe) = exe else {
        return Err(Error::core(
            core.path(),
            "the core has no NT_FILE note (the list of mapped files), so libjvm cannot be found from it alone: pass --exe <the java launcher the JVM ran> so its dynamic linker's library list can be walked",
        ));
    };
    let exe_path = resolve_exe(exe, sysroot);
    let exe_file = ElfFile::open(&exe_path)?;
    if exe_file.machine() != core.machine() {
        return Err(Error::core(
            core.path(),
            format!(
                "the core is of an {} process, but --exe {} is an {} executable: give the launcher the JVM ran, with --sysroot <dir> (that machine's files under their own paths) or --exe <its copy>",
                machine_name(core.machine()),
                exe_path.display(),
                machine_name(exe_file.machine())
            ),
        ));
    }
    if is_libjvm(exe) {
        // --exe names libjvm itself: its load address must come from the link_map walk anyway,
        // which needs the executable. Without NT_FILE, ask for the launcher.
        return Err(Error::core(
            core.path(),
            "the core has no NT_FILE note: pass --exe <the java launcher> (not libjvm.so) so the dynamic linker's library list can be walked",
        ));
    }
    let walk_err = |why: String| {
        Error::core(
            core.path(),
            format!(
                "the core has no NT_FILE note, and walking the dynamic linker's library list from {} failed: {why}",
                exe.display()
            ),
        )
    };
    let mem = |what: &str, e: MemoryError| walk_err(format!("reading {what}: {}", with_causes(&e)));
    let r_debug = r_debug_of(core, &exe_file, exe).map_err(walk_err)?;
    let mut maps = LinkMaps::new(core, r_debug).map_err(|e| mem("r_debug.r_map", e))?;
    for entry in maps.by_ref() {
        let entry = entry.map_err(|e| mem("link_map", e))?;
        let Some(name) = entry.name else { continue };
        let path = crate::elf::path_from_bytes(&name);
        if !is_libjvm(&path) {
            continue;
        }
        let candidates = candidates(&path, Some(exe), sysroot);
        // The core's architecture decides: this host's JDK at the same path is not a candidate.
        let mut other = Vec::new();
        let lib = candidates
            .iter()
            .filter_map(|c| ElfFile::open(c).ok().map(|e| (c, e)))
            .find_map(|(c, e)| {
                if e.machine() == core.machine() {
                    return Some(e);
                }
                other.push(format!(
                    "{} is an {} library",
                    c.display(),
                    machine_name(e.machine())
                ));
                None
            })
            .ok_or_else(|| {
                let other = if other.is_empty() {
                    String::new()
                } else {
                    format!(
                        " of this {} core ({})",
                        machine_name(core.machine()),
                        other.join(", ")
                    )
                };
                walk_err(format!(
                    "libjvm {} is on the list, but none of {candidates:?} opens as a copy{other}: pass --sysroot <dir> (the dead process's files under their own paths)",
                    path.display()
                ))
            })?;
        return Ok(Module {
            mappings: mappings_at(&lib, entry.l_addr, core.page_size()),
            path,
            candidates,
            root: sysroot.map(Path::to_owned),
        });
    }
    Err(Error::core(
        core.path(),
        format!(
            "not the core of a HotSpot JVM: no {LIBJVM} among the {} libraries on the dynamic linker's list",
            maps.seen()
        ),
    ))
}

/// Where a library's `PT_LOAD` segments lie when it is loaded with bias `l_addr`, as the
/// mappings `/proc/<pid>/maps` would show (aligned to `page`, a power of two, with their file
/// offsets).
fn mappings_at(lib: &ElfFile, l_addr: u64, page: u64) -> Vec<Mapping> {
    let mask = !(page - 1);
    lib.loads()
        .map(|p| Mapping {
            start: l_addr.wrapping_add(p.p_vaddr & mask),
            end: l_addr.wrapping_add((p.p_vaddr + p.p_memsz).next_multiple_of(page)),
            offset: p.p_offset & mask,
        })
        .collect()
}

/// The address of the dynamic linker's `struct r_debug`: the executable's `_DYNAMIC` found
/// through its `PT_DYNAMIC` (relocated by `AT_ENTRY - e_entry` for a PIE), then its `DT_DEBUG`.
fn r_debug_of(core: &CoreMemory, exe_file: &ElfFile, exe: &Path) -> Result<u64, String> {
    let entry = core
        .auxv_value(crate::elf::AT_ENTRY)
        .ok_or("the core has no AT_ENTRY in its auxiliary vector")?;
    let bias = if exe_file.elf_type() == ET_DYN {
        entry.wrapping_sub(exe_file.entry())
    } else {
        0
    };
    let dynamic = exe_file
        .program_headers()
        .iter()
        .find(|p| p.p_type == PT_DYNAMIC)
        .ok_or("the executable has no PT_DYNAMIC (static?)")?;
    let dyn_addr = bias.wrapping_add(dynamic.p_vaddr);
    match link_map::r_debug(core, dyn_addr, dynamic.p_memsz) {
        Ok(Some(r_debug)) => Ok(r_debug),
        Ok(None) => Err(format!(
            "no DT_DEBUG value in _DYNAMIC at {dyn_addr:#x}: is {} the executable the process ran?",
            exe.display()
        )),
        Err(e) => Err(format!(
            "reading _DYNAMIC (is {} the executable the process ran?): {}",
            exe.display(),
            with_causes(&e)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPPED: &str = "/usr/lib/jvm/jdk-21/lib/server/libjvm.so";

    fn paths(v: &[&str]) -> Vec<PathBuf> {
        v.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn candidates_put_a_given_libjvm_first_and_honour_the_sysroot() {
        let mapped = Path::new(MAPPED);
        assert_eq!(candidates(mapped, None, None), paths(&[MAPPED]));
        // A sysroot that does not exist: paths are still formed under it (and fail to open later).
        assert_eq!(
            candidates(mapped, None, Some(Path::new("/no/such/root"))),
            paths(&["/no/such/root/usr/lib/jvm/jdk-21/lib/server/libjvm.so"])
        );
        assert_eq!(
            candidates(mapped, Some(Path::new("/elsewhere/libjvm.so")), None),
            paths(&["/elsewhere/libjvm.so", MAPPED])
        );
    }

    /// Links in a sysroot resolve as on the machine it came from: absolute targets start again
    /// at the sysroot, `..` stops at it, and nothing leads to this host's own files.
    #[test]
    #[cfg(unix)]
    fn sysroot_links_resolve_inside_the_sysroot() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let lib = root.join("opt/jdk/lib/server/libjvm.so");
        std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
        std::fs::write(&lib, b"x").unwrap();
        std::fs::create_dir_all(root.join("usr/lib/jvm")).unwrap();
        std::fs::create_dir_all(root.join("usr/bin")).unwrap();
        symlink("/opt/jdk", root.join("usr/lib/jvm/jdk-21")).unwrap();
        symlink("../../../../opt/jdk/bin/java", root.join("usr/bin/java")).unwrap();
        symlink("/", root.join("top")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        let under = |p: &str| resolve_under(root, Path::new(p));
        assert_eq!(under(MAPPED), Some(lib.clone()));
        // A relative link whose `..`s run past the root stop there.
        assert_eq!(under("/usr/bin/java"), Some(root.join("opt/jdk/bin/java")));
        assert_eq!(
            under("/top/top/opt/jdk/lib/server/libjvm.so"),
            Some(lib.clone())
        );
        // Missing: a path under the root that names where the links led, never a host path
        // (this host has /usr/lib, /etc ...).
        assert_eq!(
            under("/usr/lib/jvm/jdk-21/lib/x.so"),
            Some(root.join("opt/jdk/lib/x.so"))
        );
        assert_eq!(under("/etc/passwd"), Some(root.join("etc/passwd")));
        assert_eq!(under("/loop/x"), None);
        assert_eq!(
            candidates(Path::new(MAPPED), None, Some(root)),
            vec![lib.clone()]
        );
        // --exe through links inside the sysroot, given either way.
        assert_eq!(
            resolve_exe(
                Path::new("/usr/lib/jvm/jdk-21/lib/server/libjvm.so"),
                Some(root)
            ),
            lib
        );
        assert_eq!(
            resolve_exe(
                &root.join("usr/lib/jvm/jdk-21/lib/server/libjvm.so"),
                Some(root)
            ),
            lib
        );
    }

    #[test]
    fn a_java_launcher_gives_its_homes_libjvm_at_the_same_relative_path() {
        let mapped = Path::new(MAPPED);
        assert_eq!(
            candidates(mapped, Some(Path::new("/opt/jdk/bin/java")), None),
            paths(&[MAPPED, "/opt/jdk/lib/server/libjvm.so"])
        );
        // JDK 8's layout keeps the jre/ part.
        assert_eq!(
            candidates(
                Path::new("/j8/jre/lib/amd64/server/libjvm.so"),
                Some(Path::new("/copy/bin/java")),
                None
            ),
            paths(&[
                "/j8/jre/lib/amd64/server/libjvm.so",
                "/copy/lib/amd64/server/libjvm.so",
                "/copy/jre/lib/amd64/server/libjvm.so"
            ])
        );
    }
}
