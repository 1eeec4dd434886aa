//! A thread's Java identity: the fields of its `java.lang.Thread` object.
//!
//! * The object's class from its header (`oops/oop.hpp`, `oops/markWord.hpp`): the klass word
//!   after the 8-byte mark, narrow (`u32`, decoded with `CompressedKlassPointers` base/shift)
//!   with `UseCompressedClassPointers`, full otherwise; with compact headers (JDK 24+) the narrow
//!   klass is the mark word's top bits (`markWord::klass_shift`, a long constant).
//! * Field offsets of `java.lang.Thread`, its `FieldHolder` (JDK 19+, field `holder`) and
//!   `java.lang.String` are not in vmStructs (`java_lang_Thread::_name_offset` is not
//!   exported): they come from the classes' own field metadata (`InstanceKlass::_fields` up to
//!   JDK 20, `_fieldinfo_stream` from 21; decoded by [`super::codec`]).
//! * Reference fields are narrow oops (`u32`, `CompressedOops` base/shift) with
//!   `UseCompressedOops`, full words otherwise.
//! * `threadStatus` is a JVMTI thread state bit set (`classfile/javaThreadStatus.hpp`), named
//!   as `java_lang_Thread::thread_status_name` names it (`classfile/javaClasses.cpp`).

use super::VmModel;
use crate::Error;
use crate::read::ReadMemory;

/// The fields of a `java.lang.Thread` a dump prints.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JavaIdentity {
    /// `name`.
    pub name: String,
    /// `tid` (jcmd's `#N`).
    pub tid: i64,
    /// `daemon`.
    pub daemon: bool,
    /// `priority`.
    pub priority: i32,
    /// `threadStatus` (JVMTI bits).
    pub status: i32,
    /// `java.lang.Thread.State` as jcmd prints it, when the status is a known one.
    pub state: Option<String>,
}

/// `java_lang_Thread::thread_status_name` for the JVMTI-bit values of `JavaThreadStatus`
/// (`classfile/javaThreadStatus.hpp`: NEW 0, RUNNABLE 0x5, SLEEPING 0xE1, IN_OBJECT_WAIT 0x191,
/// IN_OBJECT_WAIT_TIMED 0x1A1, PARKED 0x291, PARKED_TIMED 0x2A1, BLOCKED_ON_MONITOR_ENTER
/// 0x401, TERMINATED 0x2; the same values in every JDK since 5, as JVMTI fixes them).
pub fn thread_status_name(status: i32) -> Option<&'static str> {
    Some(match status {
        0 => "NEW",
        0x5 => "RUNNABLE",
        0xE1 => "TIMED_WAITING (sleeping)",
        0x191 => "WAITING (on object monitor)",
        0x1A1 => "TIMED_WAITING (on object monitor)",
        0x291 => "WAITING (parking)",
        0x2A1 => "TIMED_WAITING (parking)",
        0x401 => "BLOCKED (on object monitor)",
        0x2 => "TERMINATED",
        _ => return None,
    })
}

/// Reads `java.lang.Thread` objects.
pub struct JavaReader<'a> {
    mem: &'a dyn ReadMemory,
    vm: &'a VmModel,
}

impl<'a> JavaReader<'a> {
    /// A reader for `vm`'s heap through `mem`.
    ///
    /// # Errors
    /// [`Error::VmStructs`] when an entry it needs is missing.
    pub fn new(vm: &'a VmModel, mem: &'a dyn ReadMemory) -> Result<Self, Error> {
        vm.offset("Klass", "_name")?;
        Ok(JavaReader { mem, vm })
    }

    /// The identity of the thread whose `java.lang.Thread` is `oop`.
    ///
    /// # Errors
    /// [`Error::VmStructs`] when the class's field metadata cannot be decoded, [`Error::Memory`]
    /// when the object cannot be read.
    pub fn identity(&self, oop: u64) -> Result<JavaIdentity, Error> {
        let _ = (self.mem, self.vm, oop);
        Err(Error::VmStructs(
            "field metadata decoding (vm/codec/field_info) is not merged yet".into(),
        ))
    }
}
