//! The info pipeline (`inspect info <pid>`, `inspect info --core <core>`): target → VM model →
//! the `JVMFlag` table and `Arguments`' command line. Read with the JVM running: the flags and
//! the command line are written once at start-up (a manageable flag set later is read as it
//! is), so nothing is held. The open is the thread dump's ([`super::threads`]).

use super::jvm::Jvm;
use super::{Detail, Warning};
use crate::error::Error;
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::flags::{VmArguments, VmFlag, read_arguments, read_flags};

/// What `inspect info` reads: the VM's flags and its command line.
#[derive(Debug, Clone)]
pub struct VmInfo {
    /// Every flag of the VM, in table order.
    pub flags: Vec<VmFlag>,
    /// The command line (may hold secrets: printed on request only, never serialized).
    pub arguments: VmArguments,
    /// Facts for `-v` (path, model).
    pub details: Vec<Detail>,
    /// Things the user should know even without `-v` (a truncated core).
    pub warnings: Vec<Warning>,
}

fn read(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    details: Vec<Detail>,
    warnings: Vec<Warning>,
) -> Result<VmInfo, Error> {
    Ok(VmInfo {
        flags: read_flags(vm, mem)?,
        arguments: read_arguments(vm, mem)?,
        details,
        warnings,
    })
}

/// The flags and command line of live process `pid`, read with it running; the process is
/// checked to be the same one afterwards.
///
/// # Errors
/// As [`super::dump_threads`] for the open; those of [`read_flags`] and [`read_arguments`];
/// [`Error::ProcessExited`], [`Error::PidReused`].
pub fn vm_info(pid: crate::process::Pid) -> Result<VmInfo, Error> {
    let jvm = Jvm::live(pid)?;
    let Some(process) = jvm.process() else {
        unreachable!("Jvm::live opens a process");
    };
    let details = vec![jvm.path_detail(), Detail::Info(jvm.model_fact())];
    let info = read(&jvm.vm, jvm.memory(), details, Vec::new())?;
    process.check_same()?;
    Ok(info)
}

/// The flags and command line of a core (`inspect info --core <core>`): an ELF core, libjvm
/// found as for [`super::dump_threads_core`] (`exe`, `sysroot` likewise), or a Windows JVM's
/// full-memory minidump (found by its signature; `exe` and `sysroot` unused).
///
/// # Errors
/// [`Error::Core`] when the file is not a usable ELF core of a JVM or a usable minidump (no
/// `jvm.dll` in it); as [`vm_info`] for the reads (a truncated core or a dump without the
/// VM's memory said so).
pub fn vm_info_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
) -> Result<VmInfo, Error> {
    let jvm = if crate::read::is_minidump(core_path).unwrap_or(false) {
        Jvm::minidump(
            core_path,
            "jvm.dll's image, the VM's tables and its flags are",
        )?
    } else {
        super::threads::open_elf_core(core_path, exe, sysroot, "the flags are")?
    };
    let details = vec![jvm.path_detail(), Detail::Info(jvm.model_fact())];
    read(&jvm.vm, jvm.memory(), details, jvm.warnings.clone())
        .map_err(|e| jvm.explain(e, "the flags"))
}
