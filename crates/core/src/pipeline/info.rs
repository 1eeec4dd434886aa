//! The info pipeline (`inspect info <pid>`, `inspect info --core <core>`): target → VM model →
//! the `JVMFlag` table and `Arguments`' command line, and on request the system properties from
//! the heap. Read with the JVM running: the flags and the command line are written once at
//! start-up (a manageable flag set later is read as it is), and the properties rarely change
//! after it, so nothing is held. The open is the thread dump's ([`super::threads`]).

use super::jvm::Jvm;
use super::{Detail, Warning};
use crate::error::Error;
use crate::heap::sysprops::read_system_properties;
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::flags::{VmArguments, VmFlag, read_arguments, read_flags};

/// What `inspect info` reads: the VM's flags and its command line.
#[derive(Debug, Clone)]
pub struct VmInfo {
    /// Every flag of the VM, in table order.
    pub flags: Vec<VmFlag>,
    /// The JDK feature release (8, 17, 25): what the flag table's print style follows.
    pub jdk_major: u32,
    /// `Abstract_VM_Version::_s_vm_release` (`17.0.15+6-Debian-1deb12u1`, `25.462-b08`), when
    /// readable.
    pub vm_release: Option<String>,
    /// The command line (may hold secrets: printed on request only, never serialized).
    pub arguments: VmArguments,
    /// The system properties (String keys and values, sorted by key), when asked for and read
    /// (may hold secrets, as the command line).
    pub system_properties: Option<Vec<(String, String)>>,
    /// Facts for `-v` (path, model).
    pub details: Vec<Detail>,
    /// Things the user should know even without `-v` (a truncated core).
    pub warnings: Vec<Warning>,
}

fn read(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    details: Vec<Detail>,
    mut warnings: Vec<Warning>,
    properties: bool,
) -> Result<VmInfo, Error> {
    let system_properties = if properties {
        match read_system_properties(vm, mem) {
            Ok(p) => Some(p),
            Err(e) => {
                warnings.push(Warning::SystemPropertiesNotRead {
                    why: crate::error::with_causes(&e),
                });
                None
            }
        }
    } else {
        None
    };
    Ok(VmInfo {
        flags: read_flags(vm, mem)?,
        jdk_major: vm.major,
        vm_release: vm.release.clone(),
        arguments: read_arguments(vm, mem)?,
        system_properties,
        details,
        warnings,
    })
}

/// The flags and command line of live process `pid` (with `properties`, also its system
/// properties: a failure to read them is a warning), read with it running; the process is
/// checked to be the same one afterwards.
///
/// # Errors
/// As [`super::dump_threads`] for the open; those of `vm::flags::read_flags` and `read_arguments`;
/// [`Error::ProcessExited`], [`Error::PidReused`].
pub fn vm_info(pid: crate::process::Pid, properties: bool) -> Result<VmInfo, Error> {
    let jvm = Jvm::live(pid)?;
    let Some(process) = jvm.process() else {
        unreachable!("Jvm::live opens a process");
    };
    let details = vec![jvm.path_detail(), jvm.model_fact()];
    let info = read(&jvm.vm, jvm.memory(), details, Vec::new(), properties)?;
    process.check_same()?;
    Ok(info)
}

/// The flags and command line of a core (`inspect info --core <core>`): an ELF core, libjvm
/// found as for [`super::dump_threads_core`] (`exe`, `sysroot` likewise), or a Windows JVM's
/// full-memory minidump (found by its signature; `exe` and `sysroot` unused); `properties` as
/// for [`vm_info`].
///
/// # Errors
/// [`Error::Core`] when the file is not a usable ELF core of a JVM or a usable minidump (no
/// `jvm.dll` in it); as [`vm_info`] for the reads (a truncated core or a dump without the
/// VM's memory said so).
pub fn vm_info_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
    properties: bool,
) -> Result<VmInfo, Error> {
    let jvm = Jvm::open_file(
        core_path,
        exe,
        sysroot,
        "jvm.dll's image, the VM's tables and its flags are",
    )?;
    let details = vec![jvm.path_detail(), jvm.model_fact()];
    read(
        &jvm.vm,
        jvm.memory(),
        details,
        jvm.warnings.clone(),
        properties,
    )
    .map_err(|e| jvm.explain(e, "the flags"))
}
