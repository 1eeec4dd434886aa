//! Which string counters the machine formats (`--format json`, `--format prometheus`, `serve`)
//! export: an allow-list, because HotSpot's string counters include the JVM's arguments
//! (`java.rt.vmArgs`, `java.rt.vmFlags`), its command line (`sun.rt.javaCommand`) and system
//! properties (`java.property.*`, `sun.property.*`), any of which can hold a password.
//!
//! Names come from HotSpot: `java.property.*` from `StatSampler::create_system_property_instrumentation`
//! (`statSampler.cpp`), `sun.gc.*.name` from the collector, generation and space counters
//! (`collectorCounters.cpp`, `generationCounters.cpp`, `hSpaceCounters.cpp`, `gcPolicyCounters.cpp`),
//! `sun.gc.cause` / `sun.gc.lastCause` from `gcCause.cpp` users, `sun.ci.last*Method` from
//! `compileBroker.cpp`.

/// The JVM's identity strings, each with the label it gets on `hotspot_jvm_info`.
pub const IDENTITY: &[(&str, &str)] = &[
    ("java.property.java.vm.name", "vm_name"),
    ("java.property.java.vm.vendor", "vm_vendor"),
    ("java.property.java.vm.version", "vm_version"),
    ("java.property.java.vm.info", "vm_info"),
    ("java.property.java.version", "java_version"),
    (
        "java.property.java.vm.specification.version",
        "vm_specification_version",
    ),
];

/// Strings that change while the JVM runs and name nothing secret (a GC cause, a method name):
/// exported in JSON, but not as Prometheus labels (a label that changes makes a new series).
const VOLATILE: &[&str] = &[
    "sun.gc.cause",
    "sun.gc.lastCause",
    "sun.ci.lastMethod",
    "sun.ci.lastFailedMethod",
    "sun.ci.lastInvalidatedMethod",
];

/// Whether this string counter is a GC object's name: `sun.gc.<...>.name`, such as
/// `sun.gc.collector.0.name`, `sun.gc.generation.1.space.0.name` or `sun.gc.policy.name`.
pub fn is_gc_name(name: &str) -> bool {
    name.starts_with("sun.gc.") && name.ends_with(".name")
}

/// Whether a string counter may appear in a machine format at all. Everything not listed here
/// (arguments, flags, the command line, every other property) is withheld.
pub fn string_exportable(name: &str) -> bool {
    IDENTITY.iter().any(|(n, _)| *n == name)
        || is_gc_name(name)
        || VOLATILE.contains(&name)
        || is_compiler_thread_method(name)
}

/// `sun.ci.compilerThread.<n>.method`: the method a compiler thread is compiling.
fn is_compiler_thread_method(name: &str) -> bool {
    name.strip_prefix("sun.ci.compilerThread.")
        .and_then(|rest| rest.strip_suffix(".method"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The label a string counter gets on an info metric in Prometheus output, or `None` when it is
/// not exported there (withheld, or volatile).
pub fn info_label(name: &str) -> Option<&'static str> {
    if let Some((_, label)) = IDENTITY.iter().find(|(n, _)| *n == name) {
        return Some(label);
    }
    is_gc_name(name).then_some("name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_withheld() {
        for name in [
            "java.rt.vmArgs",
            "java.rt.vmFlags",
            "sun.rt.javaCommand",
            "java.property.java.class.path",
            "java.property.password",
            "sun.property.sun.boot.library.path",
            "sun.ci.compilerThread.x.method",
            "sun.gcname",
        ] {
            assert!(!string_exportable(name), "{name}");
            assert_eq!(info_label(name), None, "{name}");
        }
        assert!(string_exportable("sun.gc.collector.0.name"));
        assert!(string_exportable("sun.ci.compilerThread.1.method"));
        assert_eq!(info_label("sun.gc.cause"), None);
        assert_eq!(info_label("java.property.java.vm.name"), Some("vm_name"));
    }
}
