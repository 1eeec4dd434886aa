//! The VM's flags (`-XX:` options) as its `JVMFlag` table holds them: name, type, value and
//! where the value came from — what `jinfo -flags` and `jcmd <pid> VM.flags` print.
//!
//! Layout (`runtime/flags/jvmFlag.hpp`; `Flag` in `runtime/globals.hpp` up to JDK 10), all by
//! vmStructs name: the static `JVMFlag::flags` (the array) and `JVMFlag::numFlags` (its length,
//! the last entry a null terminator), each entry's `_name` (`const char*`), `_addr` (the value),
//! `_flags` (the origin in its low four bits, `VALUE_ORIGIN_MASK`; `DEFAULT` is 0) and `_type`:
//! a `const char*` type name up to JDK 15, from JDK 16 an `int` indexing `bool`, `int`, `uint`,
//! `intx`, `uintx`, `uint64_t`, `size_t`, `double`, `ccstr`, `ccstrlist` (`JVMFlag::FlagType`).

use crate::error::{Error, VmEntry, VmError};
use crate::memory::{LeBytes, ReadMemory};
use crate::vm::VmModel;

/// The most `JVMFlag` entries read (JDK 21 has about 1 300 in a product build).
pub const MAX_FLAGS: u64 = 20_000;

/// The longest flag name read, in bytes.
const MAX_NAME: usize = 128;

/// The longest string value read (`ccstr`, `ccstrlist`), in bytes.
pub const MAX_STRING: usize = 1 << 20;

/// A flag's value, by its C++ type.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum FlagValue {
    /// `bool`.
    Bool(bool),
    /// `int` (32 bits).
    Int(i32),
    /// `uint` (32 bits).
    Uint(u32),
    /// `intx` (pointer-sized, signed).
    Intx(i64),
    /// `uintx` (pointer-sized).
    Uintx(u64),
    /// `uint64_t`.
    #[serde(rename = "uint64_t")]
    Uint64(u64),
    /// `size_t`.
    #[serde(rename = "size_t")]
    SizeT(u64),
    /// `double`.
    Double(f64),
    /// `ccstr`: a C string, `None` when the pointer is null.
    Ccstr(Option<String>),
    /// `ccstrlist`: a C string whose lines are the values given (one per `-XX:` option).
    Ccstrlist(Option<String>),
}

/// Where a flag's value came from (`JVMFlagOrigin`, `jvmFlag.hpp`; `Flag::Flags` in JDK 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagOrigin {
    /// The build's default.
    Default,
    /// The command line (`-XX:`, `-Xmx`, ...).
    CommandLine,
    /// `JAVA_TOOL_OPTIONS`, `_JAVA_OPTIONS`, `JDK_JAVA_OPTIONS`.
    EnvironVar,
    /// `-XX:Flags=` / `.hotspotrc`.
    ConfigFile,
    /// Set through JMX (`HotSpotDiagnosticMXBean.setVMOption`).
    Management,
    /// Chosen by the VM for this machine.
    Ergonomic,
    /// Set through the attach API (`jcmd VM.set_flag`, `jinfo -flag`).
    AttachOnDemand,
    /// Set by the VM itself.
    Internal,
    /// From the runtime image's `jimage` resources (JDK 10+).
    JimageResource,
    /// A value this reader does not know (the low four bits of `_flags`).
    Other(u8),
}

impl FlagOrigin {
    fn from_bits(bits: u8) -> FlagOrigin {
        match bits {
            0 => FlagOrigin::Default,
            1 => FlagOrigin::CommandLine,
            2 => FlagOrigin::EnvironVar,
            3 => FlagOrigin::ConfigFile,
            4 => FlagOrigin::Management,
            5 => FlagOrigin::Ergonomic,
            6 => FlagOrigin::AttachOnDemand,
            7 => FlagOrigin::Internal,
            8 => FlagOrigin::JimageResource,
            b => FlagOrigin::Other(b),
        }
    }
}

/// A flag's kind: its `KIND_*` bits of `_flags` (`JVMFlag::Flags`, `runtime/flags/jvmFlag.hpp`;
/// `Flag::Flags` in `runtime/globals.hpp` in JDK 8), named as `JVMFlag::print_kind` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum FlagKind {
    /// `KIND_JVMCI` (`JVMCI`).
    #[serde(rename = "JVMCI")]
    Jvmci,
    /// `KIND_C1` (`C1`).
    C1,
    /// `KIND_C2` (`C2`).
    C2,
    /// `KIND_ARCH` (`ARCH`).
    #[serde(rename = "ARCH")]
    Arch,
    /// `KIND_SHARK` (`SHARK`, JDK 8).
    #[serde(rename = "SHARK")]
    Shark,
    /// `KIND_PLATFORM_DEPENDENT` (`pd`).
    #[serde(rename = "pd")]
    PlatformDependent,
    /// `KIND_PRODUCT` (`product`).
    #[serde(rename = "product")]
    Product,
    /// `KIND_MANAGEABLE` (`manageable`): writable at run time through JMX or jcmd.
    #[serde(rename = "manageable")]
    Manageable,
    /// `KIND_DIAGNOSTIC` (`diagnostic`): locked unless `UnlockDiagnosticVMOptions`.
    #[serde(rename = "diagnostic")]
    Diagnostic,
    /// `KIND_EXPERIMENTAL` (`experimental`): locked unless `UnlockExperimentalVMOptions`.
    #[serde(rename = "experimental")]
    Experimental,
    /// `KIND_COMMERCIAL` (`commercial`, JDK 8).
    #[serde(rename = "commercial")]
    Commercial,
    /// `KIND_NOT_PRODUCT` (`notproduct`): a constant in a product build.
    #[serde(rename = "notproduct")]
    NotProduct,
    /// `KIND_DEVELOP` (`develop`): a constant in a product build.
    #[serde(rename = "develop")]
    Develop,
    /// `KIND_LP64_PRODUCT` (`lp64_product`).
    #[serde(rename = "lp64_product")]
    Lp64Product,
    /// `KIND_READ_WRITE` (`rw`, up to JDK 13).
    #[serde(rename = "rw")]
    ReadWrite,
}

impl FlagKind {
    /// The word `JVMFlag::print_kind` prints for it.
    pub fn name(self) -> &'static str {
        match self {
            FlagKind::Jvmci => "JVMCI",
            FlagKind::C1 => "C1",
            FlagKind::C2 => "C2",
            FlagKind::Arch => "ARCH",
            FlagKind::Shark => "SHARK",
            FlagKind::PlatformDependent => "pd",
            FlagKind::Product => "product",
            FlagKind::Manageable => "manageable",
            FlagKind::Diagnostic => "diagnostic",
            FlagKind::Experimental => "experimental",
            FlagKind::Commercial => "commercial",
            FlagKind::NotProduct => "notproduct",
            FlagKind::Develop => "develop",
            FlagKind::Lp64Product => "lp64_product",
            FlagKind::ReadWrite => "rw",
        }
    }
}

/// Where each `KIND_*` bit of `_flags` sits, in the order `print_kind` prints the kinds, and
/// the bit that says a flag was given on the command line.
struct KindBits {
    kinds: &'static [(FlagKind, u32)],
    on_command_line: u32,
}

/// JDK 8 (`Flag::Flags`, `runtime/globals.hpp`): no origin bit is printed.
const KINDS_8: KindBits = KindBits {
    kinds: &[
        (FlagKind::C1, 12),
        (FlagKind::C2, 13),
        (FlagKind::Arch, 14),
        (FlagKind::Shark, 15),
        (FlagKind::PlatformDependent, 10),
        (FlagKind::Product, 4),
        (FlagKind::Manageable, 5),
        (FlagKind::Diagnostic, 6),
        (FlagKind::Experimental, 7),
        (FlagKind::Commercial, 17),
        (FlagKind::NotProduct, 8),
        (FlagKind::Develop, 9),
        (FlagKind::Lp64Product, 16),
        (FlagKind::ReadWrite, 11),
    ],
    on_command_line: 0,
};

/// JDK 9 to 13 (`JVMFlag::Flags` with `KIND_READ_WRITE`; `ORIG_COMMAND_LINE` is bit 17).
const KINDS_11: KindBits = KindBits {
    kinds: &[
        (FlagKind::Jvmci, 16),
        (FlagKind::C1, 12),
        (FlagKind::C2, 13),
        (FlagKind::Arch, 14),
        (FlagKind::PlatformDependent, 10),
        (FlagKind::Product, 4),
        (FlagKind::Manageable, 5),
        (FlagKind::Diagnostic, 6),
        (FlagKind::Experimental, 7),
        (FlagKind::NotProduct, 8),
        (FlagKind::Develop, 9),
        (FlagKind::Lp64Product, 15),
        (FlagKind::ReadWrite, 11),
    ],
    on_command_line: 1 << 17,
};

/// JDK 14 to 23 (`JVMFlag::Flags` without `KIND_READ_WRITE`; `WAS_SET_ON_COMMAND_LINE` is bit
/// 17).
const KINDS_17: KindBits = KindBits {
    kinds: &[
        (FlagKind::Jvmci, 15),
        (FlagKind::C1, 11),
        (FlagKind::C2, 12),
        (FlagKind::Arch, 13),
        (FlagKind::PlatformDependent, 10),
        (FlagKind::Product, 4),
        (FlagKind::Manageable, 5),
        (FlagKind::Diagnostic, 6),
        (FlagKind::Experimental, 7),
        (FlagKind::NotProduct, 8),
        (FlagKind::Develop, 9),
        (FlagKind::Lp64Product, 14),
    ],
    on_command_line: 1 << 17,
};

/// JDK 24 on (`KIND_NOT_PRODUCT` gone with the `notproduct` flags: every later bit one lower).
const KINDS_24: KindBits = KindBits {
    kinds: &[
        (FlagKind::Jvmci, 14),
        (FlagKind::C1, 10),
        (FlagKind::C2, 11),
        (FlagKind::Arch, 12),
        (FlagKind::PlatformDependent, 9),
        (FlagKind::Product, 4),
        (FlagKind::Manageable, 5),
        (FlagKind::Diagnostic, 6),
        (FlagKind::Experimental, 7),
        (FlagKind::Develop, 8),
        (FlagKind::Lp64Product, 13),
    ],
    on_command_line: 1 << 17,
};

/// The kind bits of this VM's flag table: JDK 8's for `Flag`; JDK 9–13's, 14–23's or 24 on's
/// by the VM's major version (checked against `jcmd VM.flags -all` on JDK 8, 11, 17, 21 and
/// 25). The command-line bit is vmStructs' `JVMFlag::WAS_SET_ON_COMMAND_LINE` where it is
/// exported.
fn kind_bits(vm: &VmModel) -> KindBits {
    let bits = if vm.has_type("Flag") && !vm.has_type("JVMFlag") {
        KINDS_8
    } else if vm.major >= 24 {
        KINDS_24
    } else if vm.major >= 14 {
        KINDS_17
    } else {
        KINDS_11
    };
    match vm.int_opt("JVMFlag::WAS_SET_ON_COMMAND_LINE") {
        Some(bit) if bits.on_command_line != 0 => KindBits {
            on_command_line: bit as u32,
            ..bits
        },
        _ => bits,
    }
}

/// One flag of the target VM.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VmFlag {
    /// Its name (`MaxHeapSize`).
    pub name: String,
    /// Its value, by type.
    #[serde(flatten)]
    pub value: FlagValue,
    /// Where the value came from.
    pub origin: FlagOrigin,
    /// Its kinds, in the order `JVMFlag::print_kind` prints them (`product`; `C2 diagnostic`).
    pub kinds: Vec<FlagKind>,
    /// Whether it was given on the command line, whatever set it since
    /// (`WAS_SET_ON_COMMAND_LINE`; `ORIG_COMMAND_LINE` up to JDK 13; false in JDK 8): `jcmd
    /// VM.flags -all` prints an ergonomic value of such a flag as `{command line, ergonomic}`.
    pub set_on_command_line: bool,
}

impl VmFlag {
    /// Whether it has kind `k`.
    pub fn is(&self, k: FlagKind) -> bool {
        self.kinds.contains(&k)
    }
}

/// The C++ types of `JVMFlag::FlagType` (JDK 16+), in its order.
const TYPES: [&str; 10] = [
    "bool",
    "int",
    "uint",
    "intx",
    "uintx",
    "uint64_t",
    "size_t",
    "double",
    "ccstr",
    "ccstrlist",
];

/// One row of the flag table as read: the name, the value's address, the type (by name) and the
/// `_flags` word.
pub(crate) struct FlagRow {
    pub name: Vec<u8>,
    pub addr: u64,
    pub type_name: Option<&'static str>,
    pub flags: u32,
}

/// Reads the rows of the target's flag table: every entry with a name and a value address, in
/// table order. `with_types`: also read each entry's type and `_flags` (the layout flags of
/// [`VmModel::read`] need only the names).
///
/// # Errors
/// [`Error::Vm`] when the table's vmStructs entries are missing or its size implausible
/// (more than [`MAX_FLAGS`] entries, an entry size outside 16–256 bytes, a field past the
/// entry); [`Error::Memory`] when the table cannot be read.
pub(crate) fn rows(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    with_types: bool,
) -> Result<Vec<FlagRow>, Error> {
    // `Flag` up to JDK 10 (`runtime/globals.hpp`), `JVMFlag` from 11.
    let ty = if vm.has_type("JVMFlag") || !vm.has_type("Flag") {
        "JVMFlag"
    } else {
        "Flag"
    };
    let flags = vm.static_address(ty, "flags")?;
    let num = vm.static_address(ty, "numFlags")?;
    let name_at = vm.offset(ty, "_name")?;
    let addr_at = vm.offset(ty, "_addr")?;
    let size = vm.size_of(ty)?;
    let (type_at, flags_at, type_is_int) = if with_types {
        let field = vm.field(ty, "_type").ok_or_else(|| VmError::MissingEntry {
            entry: VmEntry::member(ty, "_type"),
        })?;
        let is_int = field
            .type_string
            .as_deref()
            .is_some_and(|t| !t.contains("char"));
        (field.offset, vm.offset(ty, "_flags")?, is_int)
    } else {
        (0, 0, false)
    };
    let table = mem
        .read_u64(flags)
        .map_err(|e| Error::memory(format!("{ty}::flags"), e))?;
    let num = mem
        .read_u64(num)
        .map_err(|e| Error::memory(format!("{ty}::numFlags"), e))?;
    let fits = |at: u64, len: u64| at.checked_add(len).is_some_and(|end| end <= size);
    if num > MAX_FLAGS
        || !(16..=256).contains(&size)
        || !fits(name_at, 8)
        || !fits(addr_at, 8)
        || (with_types && (!fits(type_at, if type_is_int { 4 } else { 8 }) || !fits(flags_at, 4)))
    {
        return Err(VmError::Implausible {
            what: format!("{ty} table").into(),
            detail: format!("{num} flags of {size} bytes"),
        }
        .into());
    }
    let mut bytes = vec![0u8; (num * size) as usize];
    mem.read_exact_at(table, &mut bytes)
        .map_err(|e| Error::memory(format!("the {ty} table"), e))?;
    let mut out = Vec::with_capacity(num as usize);
    for row in bytes.chunks_exact(size as usize) {
        let row = LeBytes::new(row);
        let w = |o: u64| row.u64_at(o as usize).unwrap_or(0);
        let (name, addr) = (w(name_at), w(addr_at));
        if name == 0 || addr == 0 {
            continue;
        }
        let Ok(Some(name)) = mem.read_c_string(name, MAX_NAME) else {
            continue;
        };
        let (type_name, flags) = if with_types {
            let type_name = if type_is_int {
                row.u32_at(type_at as usize)
                    .and_then(|t| TYPES.get(t as usize).copied())
            } else {
                match mem.read_c_string(w(type_at), 32) {
                    Ok(Some(t)) => TYPES.iter().copied().find(|k| k.as_bytes() == t),
                    _ => None,
                }
            };
            (type_name, row.u32_at(flags_at as usize).unwrap_or(0))
        } else {
            (None, 0)
        };
        out.push(FlagRow {
            name,
            addr,
            type_name,
            flags,
        });
    }
    Ok(out)
}

/// Every flag of the target VM with its value and origin, in table order. A flag whose type
/// this reader does not know (none in JDK 8–25) is left out.
///
/// # Errors
/// [`Error::Vm`] when the table's vmStructs entries are missing or its size implausible
/// (more than [`MAX_FLAGS`] entries); [`Error::Memory`] when a value cannot be read (the flag is named); a string
/// value longer than [`MAX_STRING`] bytes is an error.
pub fn read_flags(vm: &VmModel, mem: &dyn ReadMemory) -> Result<Vec<VmFlag>, Error> {
    let bits = kind_bits(vm);
    let mut out = Vec::new();
    for row in rows(vm, mem, true)? {
        let name = String::from_utf8_lossy(&row.name).into_owned();
        let Some(type_name) = row.type_name else {
            continue;
        };
        let at = row.addr;
        let fail = |e| Error::memory(format!("flag {name}"), e);
        let string = |at: u64| -> Result<Option<String>, Error> {
            c_string(
                mem,
                mem.read_u64(at).map_err(fail)?,
                &format!("flag {name}"),
            )
        };
        let value = match type_name {
            "bool" => FlagValue::Bool(mem.read_u8(at).map_err(fail)? != 0),
            "int" => FlagValue::Int(mem.read_i32(at).map_err(fail)?),
            "uint" => FlagValue::Uint(mem.read_u32(at).map_err(fail)?),
            "intx" => FlagValue::Intx(mem.read_u64(at).map_err(fail)? as i64),
            "uintx" => FlagValue::Uintx(mem.read_u64(at).map_err(fail)?),
            "uint64_t" => FlagValue::Uint64(mem.read_u64(at).map_err(fail)?),
            "size_t" => FlagValue::SizeT(mem.read_u64(at).map_err(fail)?),
            "double" => FlagValue::Double(f64::from_bits(mem.read_u64(at).map_err(fail)?)),
            "ccstr" => FlagValue::Ccstr(string(at)?),
            _ => FlagValue::Ccstrlist(string(at)?),
        };
        out.push(VmFlag {
            name,
            value,
            origin: FlagOrigin::from_bits((row.flags & 0xf) as u8),
            kinds: bits
                .kinds
                .iter()
                .filter(|(_, bit)| row.flags & (1 << bit) != 0)
                .map(|(k, _)| *k)
                .collect(),
            set_on_command_line: row.flags & bits.on_command_line != 0,
        });
    }
    Ok(out)
}

/// The C string at `ptr` (`None` for a null pointer), at most [`MAX_STRING`] bytes; `what` names
/// it in errors.
fn c_string(mem: &dyn ReadMemory, ptr: u64, what: &str) -> Result<Option<String>, Error> {
    if ptr == 0 {
        return Ok(None);
    }
    match mem
        .read_c_string(ptr, MAX_STRING)
        .map_err(|e| Error::memory(what.to_string(), e))?
    {
        Some(s) => Ok(Some(String::from_utf8_lossy(&s).into_owned())),
        None => Err(VmError::Unterminated {
            what: what.to_owned().into(),
            unit: "bytes (no terminating NUL)",
            max: MAX_STRING as u64,
        }
        .into()),
    }
}

/// The VM's command line as `Arguments` holds it (`runtime/arguments.hpp`): the options given
/// to the VM and the main class or jar with its arguments — `jcmd VM.command_line`'s
/// `jvm_flags:`, `jvm_args:` and `java_command:` lines. These may hold secrets (a `-D`
/// password): printed only when asked for by name, never serialized.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmArguments {
    /// `Arguments::_jvm_flags_array`: the options of a `-XX:Flags=` file (`.hotspotrc`).
    pub jvm_flags: Vec<String>,
    /// `Arguments::_jvm_args_array`: the options given to the VM (`-Xmx64m`, `-Dk=v`, ...).
    pub jvm_args: Vec<String>,
    /// `Arguments::_java_command`: the main class or `-jar` file and the program's arguments;
    /// `None` when the VM has none (a JNI-embedded VM).
    pub java_command: Option<String>,
}

/// The most options read from each of `Arguments`' arrays.
pub const MAX_ARGS: u64 = 100_000;

/// Reads `Arguments::_jvm_flags_array`/`_num_jvm_flags`, `_jvm_args_array`/`_num_jvm_args`
/// and `_java_command` (static fields in vmStructs, JDK 8–25).
///
/// # Errors
/// [`Error::Vm`] when an entry is missing, a count is negative or above [`MAX_ARGS`], or
/// a string is longer than [`MAX_STRING`] bytes; [`Error::Memory`].
pub fn read_arguments(vm: &VmModel, mem: &dyn ReadMemory) -> Result<VmArguments, Error> {
    let array = |array: &str, count: &str| -> Result<Vec<String>, Error> {
        let what = format!("Arguments::{count}");
        let n = mem
            .read_i32(vm.static_address("Arguments", count)?)
            .map_err(|e| Error::memory(what.clone(), e))?;
        if n < 0 || n as u64 > MAX_ARGS {
            return Err(VmError::Implausible {
                what: what.into(),
                detail: format!("{n} (0 to {MAX_ARGS})"),
            }
            .into());
        }
        let what = format!("Arguments::{array}");
        let base = mem
            .read_u64(vm.static_address("Arguments", array)?)
            .map_err(|e| Error::memory(what.clone(), e))?;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n as u64 {
            let ptr = mem
                .read_u64(base.wrapping_add(i * 8))
                .map_err(|e| Error::memory(format!("{what}[{i}]"), e))?;
            if let Some(s) = c_string(mem, ptr, &what)? {
                out.push(s);
            }
        }
        Ok(out)
    };
    let command = mem
        .read_u64(vm.static_address("Arguments", "_java_command")?)
        .map_err(|e| Error::memory("Arguments::_java_command", e))?;
    Ok(VmArguments {
        jvm_flags: array("_jvm_flags_array", "_num_jvm_flags")?,
        jvm_args: array("_jvm_args_array", "_num_jvm_args")?,
        java_command: c_string(mem, command, "Arguments::_java_command")?,
    })
}
