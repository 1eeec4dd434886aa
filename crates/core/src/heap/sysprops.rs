//! The system properties (`jinfo -sysprops`, `jcmd VM.system_properties`) read from the heap:
//! `java.lang.System`'s static `props` (a `java.util.Properties`), then its entries.
//!
//! * JDK 9+ (`java/util/Properties.java`): the entries are in the `ConcurrentHashMap` field
//!   `map`: its `table` of `ConcurrentHashMap$Node`s (`key`, `val`, `next`); a bucket of eight
//!   or more keys is a `TreeBin` whose `first` starts the same `next` list; a
//!   `ForwardingNode` (a resize in progress) points at the `nextTable` being filled.
//! * JDK 8: `Properties` is a `Hashtable`: `table` of `Hashtable$Entry`s (`key`, `value`,
//!   `next`).
//!
//! Only entries whose key and value are both Strings are kept, as jinfo keeps them
//! (`jdk.internal.vm.VMSupport.onlyStrings`). The map is untrusted: the table length, the chain
//! lengths and the entry count are bounded.

use std::collections::HashSet;

use crate::error::{Error, VmError};
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::java::JavaReader;

/// The most buckets read of the table.
const MAX_TABLE: usize = 1 << 20;
/// The most entries kept.
const MAX_ENTRIES: usize = 1 << 16;

/// The target's system properties (String keys and values), sorted by key.
///
/// # Errors
/// [`Error::Vm`] when `java.lang.System` or its `props` cannot be found or the map is
/// not one of the layouts above, or when a bound is passed; [`Error::Memory`].
pub fn read_system_properties(
    vm: &VmModel,
    mem: &dyn ReadMemory,
) -> Result<Vec<(String, String)>, Error> {
    let java = JavaReader::new(vm, mem)?;
    let system = match crate::threads::vthreads::find_classes(vm, mem, &java, &["java/lang/System"])
    {
        Ok(found) => found.get("java/lang/System").copied(),
        // JDK 8 does not export `ClassLoaderData::_klasses`.
        Err(_) => None,
    };
    let system = match system {
        Some(k) => k,
        None => object_subclass(vm, mem, &java, "java/lang/System")?,
    };
    let props = java.static_reference(system, "props", "Ljava/util/Properties;")?;
    if props == 0 {
        return Err(VmError::NotInitialized {
            what: "System.props".into(),
        }
        .into());
    }
    let props_klass = java.klass_at(props)?;
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // JDK 9+: a ConcurrentHashMap inside; JDK 8: the Hashtable itself.
    if let Ok(map_at) = java.field_in(
        props_klass,
        "map",
        "Ljava/util/concurrent/ConcurrentHashMap;",
    ) {
        let map = java.reference_at(props.wrapping_add(map_at), "Properties.map")?;
        let map_klass = java.klass_at(map)?;
        let table_at = java.field_in(
            map_klass,
            "table",
            "[Ljava/util/concurrent/ConcurrentHashMap$Node;",
        )?;
        let table = java.reference_at(map.wrapping_add(table_at), "ConcurrentHashMap.table")?;
        let mut tables = vec![table];
        while let Some(table) = tables.pop() {
            if table == 0 || !seen.insert(table) {
                continue;
            }
            for head in java.object_array(table, MAX_TABLE)? {
                chain(&java, head, "val", &mut out, &mut tables, &mut seen)?;
            }
        }
    } else {
        let table_at = java.field_in(props_klass, "table", "[Ljava/util/Hashtable$Entry;")?;
        let table = java.reference_at(props.wrapping_add(table_at), "Hashtable.table")?;
        for head in java.object_array(table, MAX_TABLE)? {
            chain(&java, head, "value", &mut out, &mut Vec::new(), &mut seen)?;
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// The direct subclass `name` of `java.lang.Object`, found from a Java thread's class up its
/// `Klass::_super`s, then down Object's `Klass::_subklass` and their `_next_sibling`s.
fn object_subclass(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    java: &JavaReader<'_>,
    name: &str,
) -> Result<u64, Error> {
    let rd = |a: u64, what: &str| mem.read_u64(a).map_err(|e| Error::memory(what, e));
    // java.lang.Object: the root of the first Java thread's class.
    let threads = crate::threads::list::ThreadLayout::new(vm)?;
    let (_, list) = threads.thread_addresses(mem)?;
    let oop = list
        .iter()
        .find_map(|&t| threads.thread_obj(mem, t).ok().filter(|&o| o != 0))
        .ok_or(VmError::NoThreadObject {
            threads: list.len() as u64,
        })?;
    let super_at = vm.offset("Klass", "_super")?;
    let mut object = java.klass_at(oop)?;
    for _ in 0..64 {
        let up = rd(object.wrapping_add(super_at), "Klass::_super")?;
        if up == 0 {
            break;
        }
        object = up;
    }
    let sibling = vm.offset("Klass", "_next_sibling")?;
    let mut k = rd(
        object.wrapping_add(vm.offset("Klass", "_subklass")?),
        "Klass::_subklass",
    )?;
    let mut steps = 0usize;
    while k != 0 && steps < MAX_ENTRIES {
        steps += 1;
        if java.name_of_klass(k)? == name {
            return Ok(k);
        }
        k = rd(k.wrapping_add(sibling), "Klass::_next_sibling")?;
    }
    Err(VmError::ClassNotLoaded {
        class: name.to_owned().into(),
    }
    .into())
}

/// Follows one bucket's `next` list from `node`, keeping String pairs; a `TreeBin` is entered
/// at its `first`, a `ForwardingNode`'s `nextTable` is queued in `tables`.
fn chain(
    java: &JavaReader<'_>,
    mut node: u64,
    value_field: &str,
    out: &mut Vec<(String, String)>,
    tables: &mut Vec<u64>,
    seen: &mut HashSet<u64>,
) -> Result<(), Error> {
    let mut steps = 0usize;
    while node != 0 {
        steps += 1;
        if steps > MAX_ENTRIES || out.len() >= MAX_ENTRIES || !seen.insert(node) {
            return Err(VmError::Unterminated {
                what: "the system properties' map".into(),
                unit: "entries",
                max: MAX_ENTRIES as u64,
            }
            .into());
        }
        let (klass, name) = java.class_of(node)?;
        match name.as_str() {
            "java/util/concurrent/ConcurrentHashMap$TreeBin" => {
                let first = java.field_in(
                    klass,
                    "first",
                    "Ljava/util/concurrent/ConcurrentHashMap$TreeNode;",
                )?;
                node = java.reference_at(node.wrapping_add(first), "TreeBin.first")?;
                continue;
            }
            "java/util/concurrent/ConcurrentHashMap$ForwardingNode" => {
                let next_table = java.field_in(
                    klass,
                    "nextTable",
                    "[Ljava/util/concurrent/ConcurrentHashMap$Node;",
                )?;
                tables.push(java.reference_at(node.wrapping_add(next_table), "nextTable")?);
                return Ok(());
            }
            _ => {}
        }
        let key_at = java.field_in(klass, "key", "Ljava/lang/Object;")?;
        let value_at = java.field_in(klass, value_field, "Ljava/lang/Object;")?;
        let next_at = java
            .field_in(
                klass,
                "next",
                "Ljava/util/concurrent/ConcurrentHashMap$Node;",
            )
            .or_else(|_| java.field_in(klass, "next", "Ljava/util/Hashtable$Entry;"))?;
        let key = java.reference_at(node.wrapping_add(key_at), "a property's key")?;
        let value = java.reference_at(node.wrapping_add(value_at), "a property's value")?;
        if let (Some(k), Some(v)) = (string(java, key)?, string(java, value)?) {
            out.push((k, v));
        }
        node = java.reference_at(node.wrapping_add(next_at), "a property's next")?;
    }
    Ok(())
}

/// The text of `oop` when it is a `java.lang.String`, `None` for another class or null.
fn string(java: &JavaReader<'_>, oop: u64) -> Result<Option<String>, Error> {
    if oop == 0 {
        return Ok(None);
    }
    let (_, name) = java.class_of(oop)?;
    if name != "java/lang/String" {
        return Ok(None);
    }
    java.string_at(oop).map(Some)
}
