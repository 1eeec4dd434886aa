//! jstat's twelve views as data: the columns of each `jstat -<option>`, facts taken from the
//! `jstat_options` resource of JDK 17's `jdk.jcmd` module
//! (`src/jdk.jcmd/share/classes/sun/tools/jstat/resources/jstat_options`), written here in our
//! own form. JDK 17, 21 and 25 ship the same definitions.
//!
//! Each column is: header (with jstat's `^` alignment marks), the data expression over counter
//! names, scale, alignment, minimum width, number format, and whether missing counters count as 0
//! (`required`).

use super::Align::{Left, Right};
use super::Scale::{Kilo, Raw, Sec};
use super::{ColumnSpec, StatOption};

const fn col(
    header: &'static str,
    data: &'static str,
    scale: super::Scale,
    align: super::Align,
    width: usize,
    format: &'static str,
) -> ColumnSpec {
    ColumnSpec {
        header,
        data,
        scale,
        align,
        width,
        format,
        required: false,
        key: None,
    }
}

impl ColumnSpec {
    /// The same column with missing counters evaluating to 0 instead of NaN (`required true`).
    const fn required(self) -> Self {
        ColumnSpec {
            required: true,
            ..self
        }
    }

    /// The same column with its own key in machine output (when its header repeats in its view).
    const fn key(self, key: &'static str) -> Self {
        ColumnSpec {
            key: Some(key),
            ..self
        }
    }
}

/// The column `-t` puts first: the VM's uptime in seconds (jstat's `timestamp` option).
pub static TIMESTAMP: ColumnSpec = col(
    "^Timestamp",
    "(sun.os.hrt.ticks/sun.os.hrt.frequency)",
    Sec,
    Right,
    15,
    "0.0",
);

/// The twelve views `jstat -options` lists, in the order of `jstat_options`.
pub static OPTIONS: &[StatOption] = &[
    StatOption {
        name: "class",
        columns: &[
            col("^Loaded^", "(java.cls.loadedClasses + java.cls.sharedLoadedClasses)", Raw, Right, 5, "0"),
            col("^Bytes^", "(sun.cls.loadedBytes + sun.cls.sharedLoadedBytes)", Kilo, Right, 7, "0.0"),
            col("^Unloaded^", "(java.cls.unloadedClasses + java.cls.sharedUnloadedClasses)", Raw, Right, 5, "0"),
            col("^Bytes^", "(sun.cls.unloadedBytes + sun.cls.sharedUnloadedBytes)", Kilo, Right, 7, "0.0").key("UnloadedBytes"),
            col("^Time^", "sun.cls.time/sun.os.hrt.frequency", Raw, Right, 10, "0.00"),
        ],
    },
    StatOption {
        name: "compiler",
        columns: &[
            col("^Compiled^", "sun.ci.totalCompiles", Raw, Right, 6, "0"),
            col("^Failed^", "sun.ci.totalBailouts", Raw, Right, 6, "0"),
            col("^Invalid^", "sun.ci.totalInvalidates", Raw, Right, 6, "0"),
            col("^Time^", "java.ci.totalTime/sun.os.hrt.frequency", Sec, Right, 8, "0.00"),
            col("^FailedType^", "sun.ci.lastFailedType", Raw, Right, 4, "0"),
            col("^FailedMethod", "sun.ci.lastFailedMethod", Raw, Left, 1, "0"),
        ],
    },
    StatOption {
        name: "gc",
        columns: &[
            col("^S0C^", "sun.gc.generation.0.space.1.capacity", Kilo, Right, 11, "0.0"),
            col("^S1C^", "sun.gc.generation.0.space.2.capacity", Kilo, Right, 11, "0.0"),
            col("^S0U^", "sun.gc.generation.0.space.1.used", Kilo, Right, 11, "0.0"),
            col("^S1U^", "sun.gc.generation.0.space.2.used", Kilo, Right, 11, "0.0"),
            col("^EC^", "sun.gc.generation.0.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^EU^", "sun.gc.generation.0.space.0.used", Kilo, Right, 12, "0.0"),
            col("^OC^", "sun.gc.generation.1.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^OU^", "sun.gc.generation.1.space.0.used", Kilo, Right, 12, "0.0"),
            col("^MC^", "sun.gc.metaspace.capacity", Kilo, Right, 10, "0.0"),
            col("^MU^", "sun.gc.metaspace.used", Kilo, Right, 10, "0.0"),
            col("^CCSC^", "sun.gc.compressedclassspace.capacity", Kilo, Right, 9, "0.0"),
            col("^CCSU^", "sun.gc.compressedclassspace.used", Kilo, Right, 9, "0.0"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^YGCT^", "sun.gc.collector.0.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^FGCT^", "sun.gc.collector.1.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
            col("^CGCT^", "sun.gc.collector.2.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^GCT^", "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/sun.os.hrt.frequency", Sec, Right, 9, "0.000").required(),
        ],
    },
    StatOption {
        name: "gccapacity",
        columns: &[
            col("^NGCMN^", "sun.gc.generation.0.minCapacity", Kilo, Right, 12, "0.0"),
            col("^NGCMX^", "sun.gc.generation.0.maxCapacity", Kilo, Right, 12, "0.0"),
            col("^NGC^", "sun.gc.generation.0.capacity", Kilo, Right, 12, "0.0"),
            col("^S0C^", "sun.gc.generation.0.space.1.capacity", Kilo, Right, 11, "0.0"),
            col("^S1C", "sun.gc.generation.0.space.2.capacity", Kilo, Right, 11, "0.0"),
            col("^EC^", "sun.gc.generation.0.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^OGCMN^", "sun.gc.generation.1.minCapacity", Kilo, Right, 12, "0.0"),
            col("^OGCMX^", "sun.gc.generation.1.maxCapacity", Kilo, Right, 12, "0.0"),
            col("^OGC^", "sun.gc.generation.1.capacity", Kilo, Right, 12, "0.0"),
            col("^OC^", "sun.gc.generation.1.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^MCMN^", "sun.gc.metaspace.minCapacity", Kilo, Right, 10, "0.0"),
            col("^MCMX^", "sun.gc.metaspace.maxCapacity", Kilo, Right, 10, "0.0"),
            col("^MC^", "sun.gc.metaspace.capacity", Kilo, Right, 10, "0.0"),
            col("^CCSMN^", "sun.gc.compressedclassspace.minCapacity", Kilo, Right, 9, "0.0"),
            col("^CCSMX^", "sun.gc.compressedclassspace.maxCapacity", Kilo, Right, 9, "0.0"),
            col("^CCSC^", "sun.gc.compressedclassspace.capacity", Kilo, Right, 9, "0.0"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
        ],
    },
    StatOption {
        name: "gccause",
        columns: &[
            col("^S0^", "(1-((sun.gc.generation.0.space.1.capacity - sun.gc.generation.0.space.1.used)/sun.gc.generation.0.space.1.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^S1^", "(1-((sun.gc.generation.0.space.2.capacity - sun.gc.generation.0.space.2.used)/sun.gc.generation.0.space.2.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^E^", "(1-((sun.gc.generation.0.space.0.capacity - sun.gc.generation.0.space.0.used)/sun.gc.generation.0.space.0.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^O^", "(1-((sun.gc.generation.1.space.0.capacity - sun.gc.generation.1.space.0.used)/sun.gc.generation.1.space.0.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^M^", "(1-((sun.gc.metaspace.capacity - sun.gc.metaspace.used)/sun.gc.metaspace.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^CCS^", "(1-((sun.gc.compressedclassspace.capacity - sun.gc.compressedclassspace.used)/sun.gc.compressedclassspace.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^YGCT^", "sun.gc.collector.0.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^FGCT^", "sun.gc.collector.1.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
            col("^CGCT^", "sun.gc.collector.2.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^GCT^", "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/sun.os.hrt.frequency", Sec, Right, 9, "0.000").required(),
            col("^LGCC", "sun.gc.lastCause", Raw, Left, 20, "0"),
            col("^GCC", "sun.gc.cause", Raw, Left, 20, "0"),
        ],
    },
    StatOption {
        name: "gcnew",
        columns: &[
            col("^S0C^", "sun.gc.generation.0.space.1.capacity", Kilo, Right, 11, "0.0"),
            col("^S1C^", "sun.gc.generation.0.space.2.capacity", Kilo, Right, 11, "0.0"),
            col("^S0U^", "sun.gc.generation.0.space.1.used", Kilo, Right, 11, "0.0"),
            col("^S1U^", "sun.gc.generation.0.space.2.used", Kilo, Right, 11, "0.0"),
            col("^TT^", "sun.gc.policy.tenuringThreshold", Raw, Right, 2, "0"),
            col("^MTT^", "sun.gc.policy.maxTenuringThreshold", Raw, Right, 2, "0"),
            col("^DSS^", "sun.gc.policy.desiredSurvivorSize", Kilo, Right, 11, "0.0"),
            col("^EC^", "sun.gc.generation.0.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^EU^", "sun.gc.generation.0.space.0.used", Kilo, Right, 12, "0.0"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^YGCT^", "sun.gc.collector.0.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
        ],
    },
    StatOption {
        name: "gcnewcapacity",
        columns: &[
            col("^NGCMN^", "sun.gc.generation.0.minCapacity", Kilo, Right, 12, "0.0"),
            col("^NGCMX^", "sun.gc.generation.0.maxCapacity", Kilo, Right, 12, "0.0"),
            col("^NGC^", "sun.gc.generation.0.capacity", Kilo, Right, 12, "0.0"),
            col("^S0CMX^", "sun.gc.generation.0.space.1.maxCapacity", Kilo, Right, 11, "0.0"),
            col("^S0C^", "sun.gc.generation.0.space.1.capacity", Kilo, Right, 11, "0.0"),
            col("^S1CMX^", "sun.gc.generation.0.space.2.maxCapacity", Kilo, Right, 11, "0.0"),
            col("^S1C^", "sun.gc.generation.0.space.2.capacity", Kilo, Right, 11, "0.0"),
            col("^ECMX^", "sun.gc.generation.0.space.0.maxCapacity", Kilo, Right, 12, "0.0"),
            col("^EC^", "sun.gc.generation.0.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
        ],
    },
    StatOption {
        name: "gcold",
        columns: &[
            col("^MC^", "sun.gc.metaspace.capacity", Kilo, Right, 10, "0.0"),
            col("^MU^", "sun.gc.metaspace.used", Kilo, Right, 10, "0.0"),
            col("^CCSC^", "sun.gc.compressedclassspace.capacity", Kilo, Right, 9, "0.0"),
            col("^CCSU^", "sun.gc.compressedclassspace.used", Kilo, Right, 9, "0.0"),
            col("^OC^", "sun.gc.generation.1.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^OU^", "sun.gc.generation.1.space.0.used", Kilo, Right, 12, "0.0"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^FGCT^", "sun.gc.collector.1.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
            col("^CGCT^", "sun.gc.collector.2.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^GCT^", "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/sun.os.hrt.frequency", Sec, Right, 9, "0.000").required(),
        ],
    },
    StatOption {
        name: "gcoldcapacity",
        columns: &[
            col("^OGCMN^", "sun.gc.generation.1.minCapacity", Kilo, Right, 12, "0.0"),
            col("^OGCMX^", "sun.gc.generation.1.maxCapacity", Kilo, Right, 12, "0.0"),
            col("^OGC^", "sun.gc.generation.1.capacity", Kilo, Right, 12, "0.0"),
            col("^OC^", "sun.gc.generation.1.space.0.capacity", Kilo, Right, 12, "0.0"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^FGCT^", "sun.gc.collector.1.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
            col("^CGCT^", "sun.gc.collector.2.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^GCT^", "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/sun.os.hrt.frequency", Sec, Right, 9, "0.000").required(),
        ],
    },
    StatOption {
        name: "gcmetacapacity",
        columns: &[
            col("^MCMN^", "sun.gc.metaspace.minCapacity", Kilo, Right, 10, "0.0"),
            col("^MCMX^", "sun.gc.metaspace.maxCapacity", Kilo, Right, 10, "0.0"),
            col("^MC^", "sun.gc.metaspace.capacity", Kilo, Right, 10, "0.0"),
            col("^CCSMN^", "sun.gc.compressedclassspace.minCapacity", Kilo, Right, 9, "0.0"),
            col("^CCSMX^", "sun.gc.compressedclassspace.maxCapacity", Kilo, Right, 9, "0.0"),
            col("^CCSC^", "sun.gc.compressedclassspace.capacity", Kilo, Right, 9, "0.0"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^FGCT^", "sun.gc.collector.1.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
            col("^CGCT^", "sun.gc.collector.2.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^GCT^", "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/sun.os.hrt.frequency", Sec, Right, 9, "0.000").required(),
        ],
    },
    StatOption {
        name: "gcutil",
        columns: &[
            col("^S0^", "(1-((sun.gc.generation.0.space.1.capacity - sun.gc.generation.0.space.1.used)/sun.gc.generation.0.space.1.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^S1^", "(1-((sun.gc.generation.0.space.2.capacity - sun.gc.generation.0.space.2.used)/sun.gc.generation.0.space.2.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^E^", "(1-((sun.gc.generation.0.space.0.capacity - sun.gc.generation.0.space.0.used)/sun.gc.generation.0.space.0.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^O^", "(1-((sun.gc.generation.1.space.0.capacity - sun.gc.generation.1.space.0.used)/sun.gc.generation.1.space.0.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^M^", "(1-((sun.gc.metaspace.capacity - sun.gc.metaspace.used)/sun.gc.metaspace.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^CCS^", "(1-((sun.gc.compressedclassspace.capacity - sun.gc.compressedclassspace.used)/sun.gc.compressedclassspace.capacity)) * 100", Raw, Right, 6, "0.00"),
            col("^YGC^", "sun.gc.collector.0.invocations", Raw, Right, 6, "0"),
            col("^YGCT^", "sun.gc.collector.0.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^FGC^", "sun.gc.collector.1.invocations", Raw, Right, 5, "0"),
            col("^FGCT^", "sun.gc.collector.1.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^CGC^", "sun.gc.collector.2.invocations", Raw, Right, 5, "0"),
            col("^CGCT^", "sun.gc.collector.2.time/sun.os.hrt.frequency", Sec, Right, 9, "0.000"),
            col("^GCT^", "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/sun.os.hrt.frequency", Sec, Right, 9, "0.000").required(),
        ],
    },
    StatOption {
        name: "printcompilation",
        columns: &[
            col("^Compiled^", "sun.ci.totalCompiles", Raw, Right, 6, "0"),
            col("^Size^", "sun.ci.lastSize", Raw, Right, 6, "0"),
            col("^Type^", "sun.ci.lastType", Raw, Right, 4, "0"),
            col("^Method", "sun.ci.lastMethod", Raw, Left, 1, "0"),
        ],
    },
];
