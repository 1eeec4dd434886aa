//! A JVM opened once for every pipeline that reads its VM (threads, heap, info, the thread
//! states): the target's memory, its libjvm (or `jvm.dll`) and the VM model read from it with
//! the JVM running, whatever the target is (a live process, an ELF core, a Windows minidump).
//!
//! The live open goes through the seams only (`process::Process::open`,
//! `read::ProcessMemory::open`, `locate::find_jvm`); the exported symbols of libjvm or
//! `jvm.dll` are read from the target's memory by one resolver (`locate::exported_symbols`),
//! so nothing here depends on the OS.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Detail, ReadPath, Warning};
use crate::error::Error;
use crate::locate::{self, JvmImage};
use crate::memory::ReadMemory;
use crate::pid::Pid;
use crate::process::Process;
use crate::read::{CoreMemory, MinidumpMemory, ProcessMemory};
use crate::registers::ThreadRegisters;
use crate::vm::paged::Paged;
use crate::vm::{VmModel, tables};

/// What a [`Jvm`] reads from.
enum Target {
    /// A live process and its memory.
    Live {
        process: Process,
        mem: ProcessMemory,
    },
    /// An ELF core, with the bytes it lacks of libjvm read from a file of the same build.
    Core { path: PathBuf, core: CoreMemory },
    /// A Windows JVM's minidump; `needs` says what the caller reads (for the message of a dump
    /// that lacks it, [`super::minidump::explain`]).
    Minidump {
        path: PathBuf,
        mdmp: MinidumpMemory,
        needs: &'static str,
    },
}

/// A JVM opened for reading its VM: the target's memory and the [`VmModel`] read from it.
/// Built by [`Jvm::live`], [`Jvm::core`] or [`Jvm::minidump`]; the pipelines then stop (a live
/// target), walk and release.
pub(super) struct Jvm {
    target: Target,
    /// The JVM's library as the target has it loaded.
    image: JvmImage,
    /// The VM model (`vmStructs`, flags, version), read with the JVM running.
    pub(super) vm: VmModel,
    /// How long opening the target and reading the model took.
    pub(super) modelled: Duration,
    /// What the user should know of the target even without `-v` (a truncated core).
    pub(super) warnings: Vec<Warning>,
}

/// Reads the VM model of the JVM `image` through `mem`: its exported vmStructs symbols, then
/// the tables.
fn model(image: &JvmImage, mem: &dyn ReadMemory) -> Result<VmModel, Error> {
    let names: Vec<&'static str> = tables::all_symbols().collect();
    let symbols = locate::exported_symbols(image, mem, &names)?;
    VmModel::read(&Paged::new(mem), &|name| symbols.address(name))
}

impl Jvm {
    /// Opens live process `pid` and reads its VM model with the JVM running: the process, its
    /// memory, the JVM found by the locate seam (libjvm in `/proc/<pid>/maps`, `jvm.dll` in
    /// the toolhelp module list) and its exported symbols read from the target's memory.
    ///
    /// # Errors
    /// [`Error::NotAJvm`], [`Error::PermissionDenied`], [`Error::NoSuchProcess`], [`Error::Os`]
    /// (a 32-bit Windows process), [`Error::Pe`], [`Error::Vm`] when the model cannot be
    /// read, [`Error::Unsupported`] without a live backend.
    pub(super) fn live(pid: Pid) -> Result<Jvm, Error> {
        let began = Instant::now();
        let process = Process::open(pid)?;
        let mem = ProcessMemory::open(&process)?;
        let image = locate::find_jvm(&process)?;
        let vm = model(&image, &mem)?;
        Ok(Jvm {
            target: Target::Live { process, mem },
            image,
            vm,
            modelled: began.elapsed(),
            warnings: Vec::new(),
        })
    }

    /// Opens ELF core `path` and reads its VM model: libjvm found from the core's `NT_FILE`
    /// note or its `link_map` (`exe`, `sysroot` as for [`super::read_core`]), the bytes the
    /// core lacks of it read from a file of the same build. A truncated core is a warning.
    ///
    /// # Errors
    /// [`Error::Core`] when the file is not a usable core of an x86_64 or aarch64 JVM;
    /// [`Error::Vm`] or [`Error::Memory`] when the model cannot be read from it.
    pub(super) fn core(
        path: &Path,
        exe: Option<&Path>,
        sysroot: Option<&Path>,
    ) -> Result<Jvm, Error> {
        use crate::locate::core_libjvm::{libjvm_from_link_map, libjvm_from_nt_file};
        let began = Instant::now();
        let mut core = CoreMemory::open(path)?;
        let mut warnings = Vec::new();
        let truncated = core.truncated();
        if let Some((actual, needed)) = truncated {
            warnings.push(Warning::CoreTruncated { actual, needed });
        }
        let cut = |e| truncated_error(path, truncated, e);
        let module = match core.files() {
            Some(_) => libjvm_from_nt_file(&core, exe, sysroot),
            None => libjvm_from_link_map(&core, exe, sysroot),
        }
        .map_err(cut)?;
        super::coredump::back_with_library(&mut core, &module);
        let arch = crate::registers::Arch::from_elf_machine(core.machine()).ok_or_else(|| {
            Error::core(
                path,
                format!(
                    "a core of a {} process: the VM is read from x86_64 and aarch64 cores",
                    crate::read::machine_name(core.machine())
                ),
            )
        })?;
        let image = JvmImage::Elf(module);
        let vm = model(&image, &core).map_err(cut)?.with_arch(arch);
        Ok(Jvm {
            target: Target::Core {
                path: path.to_owned(),
                core,
            },
            image,
            vm,
            modelled: began.elapsed(),
            warnings,
        })
    }

    /// A file a pipeline reads a JVM from (`--core`): a Windows full-memory minidump (a file that
    /// starts with `MDMP`: `Jvm::minidump`, `needs` saying what must be in it; `exe` and `sysroot`
    /// refused, they are for ELF cores), else an ELF core ([`Jvm::core`]).
    ///
    /// # Errors
    /// [`Error::Core`] for a minidump given `exe` or `sysroot`; those of `Jvm::minidump` and
    /// [`Jvm::core`].
    pub(super) fn open_file(
        core_path: &std::path::Path,
        exe: Option<&std::path::Path>,
        sysroot: Option<&std::path::Path>,
        needs: &'static str,
    ) -> Result<Jvm, Error> {
        // An unreadable file is left to `CoreMemory::open`, which says why.
        if crate::read::is_minidump(core_path).unwrap_or(false) {
            if exe.is_some() || sysroot.is_some() {
                return Err(Error::core(
                    core_path,
                    "a Windows minidump: --exe and --sysroot are for ELF cores (a full-memory minidump holds jvm.dll itself); leave them out",
                ));
            }
            return Self::minidump(core_path, needs);
        }
        Self::core(core_path, exe, sysroot)
    }

    /// Opens Windows minidump `path` (on any OS) and reads its VM model: `jvm.dll` from its
    /// module list, its exports read from the image in the dump, the tables walked. `needs`
    /// says what the caller reads (`"jvm.dll's image, the VM's tables and its flags are"`), for
    /// the message of a dump that lacks it.
    ///
    /// # Errors
    /// [`Error::Core`] for a file that is not a usable minidump or has no `jvm.dll`; the model's
    /// errors, explained by what the dump holds ([`super::minidump::explain`]).
    pub(super) fn minidump(path: &Path, needs: &'static str) -> Result<Jvm, Error> {
        let began = Instant::now();
        let mdmp = MinidumpMemory::open(path)?;
        let module = super::minidump::jvm_dll(&mdmp)?;
        let image = JvmImage::Pe {
            base: module.base,
            path: module.path,
        };
        let explain = |e, what: &str| super::minidump::explain(&mdmp, e, what, needs);
        let symbols = locate::exported_symbols(&image, &mdmp, &[])
            .map_err(|e| explain(e, "jvm.dll's image"))?;
        let vm = VmModel::read(&Paged::new(&mdmp), &|s| symbols.address(s))
            .map_err(|e| explain(e, "the VM model (vmStructs)"))?;
        Ok(Jvm {
            target: Target::Minidump {
                path: path.to_owned(),
                mdmp,
                needs,
            },
            image,
            vm,
            modelled: began.elapsed(),
            warnings: Vec::new(),
        })
    }

    /// The run-time addresses of `names` in libjvm's `.symtab` (what vmStructs does not
    /// export: Metaspace's counters), from the first of its files that matches the target's
    /// mappings; empty for a `jvm.dll` or a libjvm without one.
    pub(super) fn symtab_addresses(
        &self,
        names: &[&str],
    ) -> std::collections::HashMap<String, u64> {
        match &self.image {
            JvmImage::Elf(module) => locate::symtab_addresses(module, self.memory(), names),
            JvmImage::Pe { .. } => std::collections::HashMap::new(),
        }
    }

    /// The target's memory.
    pub(super) fn memory(&self) -> &dyn ReadMemory {
        match &self.target {
            Target::Live { mem, .. } => mem,
            Target::Core { core, .. } => core,
            Target::Minidump { mdmp, .. } => mdmp,
        }
    }

    /// The target's memory, readable from several threads at once (the heap walks in two halves).
    pub(super) fn memory_sync(&self) -> &(dyn ReadMemory + Sync) {
        match &self.target {
            Target::Live { mem, .. } => mem,
            Target::Core { core, .. } => core,
            Target::Minidump { mdmp, .. } => mdmp,
        }
    }

    /// The live process, `None` for a file.
    pub(super) fn process(&self) -> Option<&Process> {
        match &self.target {
            Target::Live { process, .. } => Some(process),
            _ => None,
        }
    }

    /// The target's memory, kept when the model is dropped.
    pub(super) fn into_memory(self) -> Box<dyn ReadMemory + Send> {
        match self.target {
            Target::Live { mem, .. } => Box::new(mem),
            Target::Core { core, .. } => Box::new(core),
            Target::Minidump { mdmp, .. } => Box::new(mdmp),
        }
    }

    /// The registers a file saved of thread `tid` (its OS thread id): a core's `NT_PRSTATUS`, a
    /// minidump's `CONTEXT`; `None` for a live process (the stop hands those).
    pub(super) fn saved_registers(&self, tid: Pid) -> Option<ThreadRegisters> {
        match &self.target {
            Target::Live { .. } => None,
            Target::Core { core, .. } => core.thread_registers(tid),
            Target::Minidump { mdmp, .. } => mdmp.thread_registers(tid),
        }
    }

    /// `e`, a failure to read `what` from this JVM, said the way the target explains it: a
    /// truncated core's cut first, a minidump's missing memory with what kind of dump it is.
    pub(super) fn explain(&self, e: Error, what: &str) -> Error {
        match &self.target {
            Target::Live { .. } => e,
            Target::Core { path, core } => truncated_error(path, core.truncated(), e),
            Target::Minidump { mdmp, needs, .. } => super::minidump::explain(mdmp, e, what, needs),
        }
    }

    /// The `-v` line of the path taken: the live process, the core or the minidump read.
    pub(super) fn path_detail(&self) -> Detail {
        Detail::Path(match &self.target {
            Target::Live { process, .. } => ReadPath::Live {
                pid: process.pid(),
                name: process.name().to_string(),
            },
            Target::Core { path, core } => ReadPath::Core {
                path: path.clone(),
                process: core.process().map(|p| (p.pid, p.command.clone())),
            },
            Target::Minidump { path, mdmp, .. } => ReadPath::Minidump {
                path: path.clone(),
                pid: mdmp.process_id(),
                executable: mdmp.executable(),
            },
        })
    }

    /// The `-v` line of a minidump's streams and memory lists; `None` for another target.
    pub(super) fn dump_contents(&self) -> Option<Detail> {
        match &self.target {
            Target::Minidump { mdmp, .. } => Some(Detail::MinidumpContents {
                flags: mdmp.flags(),
                streams: mdmp.streams().to_vec(),
                memory: mdmp
                    .memory_list()
                    .map(|(list, n, bytes)| (list.to_string(), n, bytes)),
            }),
            _ => None,
        }
    }

    /// The `-v` lines of the bytes a core lacked and took from libjvm's file (read so far);
    /// none for another target.
    pub(super) fn backed_reads(&self) -> Vec<Detail> {
        match &self.target {
            Target::Core { core, .. } => core
                .backed_reads()
                .into_iter()
                .map(|(file, bytes)| Detail::CoreBytesFromFile { file, bytes })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The `-v` fact of the VM model: release, JDK, table sizes, layout, and how long it took.
    pub(super) fn model_fact(&self) -> Detail {
        let vm = &self.vm;
        let (fields, types, int_constants, long_constants) = vm.counts();
        Detail::VmModel {
            release: vm.release.clone(),
            major: vm.major,
            took: self.modelled,
            fields,
            types,
            int_constants,
            long_constants,
            layout: format!("{:?}", vm.layout),
        }
    }
}

/// `e` as it is, or for a truncated core (`truncated`: its (actual, needed) sizes) said to be
/// likely that: in a cut core whatever fails may be missing for that reason, so that comes
/// first.
fn truncated_error(core_path: &Path, truncated: Option<(u64, u64)>, e: Error) -> Error {
    match truncated {
        Some((actual, needed)) => Error::core(
            core_path,
            format!(
                "the core file is truncated ({actual} of {needed} bytes), and {}: copy the whole core",
                crate::error::with_causes(&e)
            ),
        ),
        None => e,
    }
}
