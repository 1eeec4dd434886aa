//! jstat's twelve views as data: the columns of each `jstat -<option>`, facts taken from the
//! `jstat_options` resource of JDK 17's `jdk.jcmd` module
//! (`src/jdk.jcmd/share/classes/sun/tools/jstat/resources/jstat_options`), written here in our
//! own form. JDK 17, 21 and 25 ship the same definitions.
//!
//! The older layouts are written as their differences from JDK 17's ([`NARROW`], [`GCT_JDK8`]):
//! JDK 11's `jstat_options` (same path) has the same columns with the narrower widths and
//! centred alignments of [`NARROW`]; JDK 8's (jdk8u
//! `jdk/src/share/classes/sun/tools/jstat/resources/jstat_options`, in its `lib/tools.jar`) is
//! JDK 11's without the `CGC`/`CGCT` columns and with `GCT` summing two collectors
//! ([`GCT_JDK8`]). Checked by reading each JDK's file and by the tests against each JDK's jstat.
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

// Columns that several views share.
const COMPILED: ColumnSpec = col("^Compiled^", "sun.ci.totalCompiles", Raw, Right, 6, "0");
const S0C: ColumnSpec = col(
    "^S0C^",
    "sun.gc.generation.0.space.1.capacity",
    Kilo,
    Right,
    11,
    "0.0",
);
const S1C: ColumnSpec = col(
    "^S1C^",
    "sun.gc.generation.0.space.2.capacity",
    Kilo,
    Right,
    11,
    "0.0",
);
const S0U: ColumnSpec = col(
    "^S0U^",
    "sun.gc.generation.0.space.1.used",
    Kilo,
    Right,
    11,
    "0.0",
);
const S1U: ColumnSpec = col(
    "^S1U^",
    "sun.gc.generation.0.space.2.used",
    Kilo,
    Right,
    11,
    "0.0",
);
const EC: ColumnSpec = col(
    "^EC^",
    "sun.gc.generation.0.space.0.capacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const EU: ColumnSpec = col(
    "^EU^",
    "sun.gc.generation.0.space.0.used",
    Kilo,
    Right,
    12,
    "0.0",
);
const OC: ColumnSpec = col(
    "^OC^",
    "sun.gc.generation.1.space.0.capacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const OU: ColumnSpec = col(
    "^OU^",
    "sun.gc.generation.1.space.0.used",
    Kilo,
    Right,
    12,
    "0.0",
);
const MC: ColumnSpec = col("^MC^", "sun.gc.metaspace.capacity", Kilo, Right, 10, "0.0");
const MU: ColumnSpec = col("^MU^", "sun.gc.metaspace.used", Kilo, Right, 10, "0.0");
const CCSC: ColumnSpec = col(
    "^CCSC^",
    "sun.gc.compressedclassspace.capacity",
    Kilo,
    Right,
    9,
    "0.0",
);
const CCSU: ColumnSpec = col(
    "^CCSU^",
    "sun.gc.compressedclassspace.used",
    Kilo,
    Right,
    9,
    "0.0",
);
const YGC: ColumnSpec = col(
    "^YGC^",
    "sun.gc.collector.0.invocations",
    Raw,
    Right,
    6,
    "0",
);
const YGCT: ColumnSpec = col(
    "^YGCT^",
    "sun.gc.collector.0.time/sun.os.hrt.frequency",
    Sec,
    Right,
    9,
    "0.000",
);
const FGC: ColumnSpec = col(
    "^FGC^",
    "sun.gc.collector.1.invocations",
    Raw,
    Right,
    5,
    "0",
);
const FGCT: ColumnSpec = col(
    "^FGCT^",
    "sun.gc.collector.1.time/sun.os.hrt.frequency",
    Sec,
    Right,
    9,
    "0.000",
);
const CGC: ColumnSpec = col(
    "^CGC^",
    "sun.gc.collector.2.invocations",
    Raw,
    Right,
    5,
    "0",
);
const CGCT: ColumnSpec = col(
    "^CGCT^",
    "sun.gc.collector.2.time/sun.os.hrt.frequency",
    Sec,
    Right,
    9,
    "0.000",
);
/// JDK 8's `GCT`: young plus full collection time (no concurrent collector 2), not `required`.
pub const GCT_JDK8: ColumnSpec = col(
    "^GCT^",
    "(sun.gc.collector.0.time + sun.gc.collector.1.time)/sun.os.hrt.frequency",
    Sec,
    Right,
    8,
    "0.000",
);
const GCT: ColumnSpec = col("^GCT^", "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/sun.os.hrt.frequency", Sec, Right, 9, "0.000").required();
const NGCMN: ColumnSpec = col(
    "^NGCMN^",
    "sun.gc.generation.0.minCapacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const NGCMX: ColumnSpec = col(
    "^NGCMX^",
    "sun.gc.generation.0.maxCapacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const NGC: ColumnSpec = col(
    "^NGC^",
    "sun.gc.generation.0.capacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const OGCMN: ColumnSpec = col(
    "^OGCMN^",
    "sun.gc.generation.1.minCapacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const OGCMX: ColumnSpec = col(
    "^OGCMX^",
    "sun.gc.generation.1.maxCapacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const OGC: ColumnSpec = col(
    "^OGC^",
    "sun.gc.generation.1.capacity",
    Kilo,
    Right,
    12,
    "0.0",
);
const MCMN: ColumnSpec = col(
    "^MCMN^",
    "sun.gc.metaspace.minCapacity",
    Kilo,
    Right,
    10,
    "0.0",
);
const MCMX: ColumnSpec = col(
    "^MCMX^",
    "sun.gc.metaspace.maxCapacity",
    Kilo,
    Right,
    10,
    "0.0",
);
const CCSMN: ColumnSpec = col(
    "^CCSMN^",
    "sun.gc.compressedclassspace.minCapacity",
    Kilo,
    Right,
    9,
    "0.0",
);
const CCSMX: ColumnSpec = col(
    "^CCSMX^",
    "sun.gc.compressedclassspace.maxCapacity",
    Kilo,
    Right,
    9,
    "0.0",
);
const S0: ColumnSpec = col(
    "^S0^",
    "(1-((sun.gc.generation.0.space.1.capacity - sun.gc.generation.0.space.1.used)/sun.gc.generation.0.space.1.capacity)) * 100",
    Raw,
    Right,
    6,
    "0.00",
);
const S1: ColumnSpec = col(
    "^S1^",
    "(1-((sun.gc.generation.0.space.2.capacity - sun.gc.generation.0.space.2.used)/sun.gc.generation.0.space.2.capacity)) * 100",
    Raw,
    Right,
    6,
    "0.00",
);
const E: ColumnSpec = col(
    "^E^",
    "(1-((sun.gc.generation.0.space.0.capacity - sun.gc.generation.0.space.0.used)/sun.gc.generation.0.space.0.capacity)) * 100",
    Raw,
    Right,
    6,
    "0.00",
);
const O: ColumnSpec = col(
    "^O^",
    "(1-((sun.gc.generation.1.space.0.capacity - sun.gc.generation.1.space.0.used)/sun.gc.generation.1.space.0.capacity)) * 100",
    Raw,
    Right,
    6,
    "0.00",
);
const M: ColumnSpec = col(
    "^M^",
    "(1-((sun.gc.metaspace.capacity - sun.gc.metaspace.used)/sun.gc.metaspace.capacity)) * 100",
    Raw,
    Right,
    6,
    "0.00",
);
const CCS: ColumnSpec = col(
    "^CCS^",
    "(1-((sun.gc.compressedclassspace.capacity - sun.gc.compressedclassspace.used)/sun.gc.compressedclassspace.capacity)) * 100",
    Raw,
    Right,
    6,
    "0.00",
);

/// The twelve views `jstat -options` lists, in the order of `jstat_options`.
pub static OPTIONS: &[StatOption] = &[
    StatOption {
        name: "class",
        columns: &[
            col(
                "^Loaded^",
                "(java.cls.loadedClasses + java.cls.sharedLoadedClasses)",
                Raw,
                Right,
                5,
                "0",
            ),
            col(
                "^Bytes^",
                "(sun.cls.loadedBytes + sun.cls.sharedLoadedBytes)",
                Kilo,
                Right,
                7,
                "0.0",
            ),
            col(
                "^Unloaded^",
                "(java.cls.unloadedClasses + java.cls.sharedUnloadedClasses)",
                Raw,
                Right,
                5,
                "0",
            ),
            col(
                "^Bytes^",
                "(sun.cls.unloadedBytes + sun.cls.sharedUnloadedBytes)",
                Kilo,
                Right,
                7,
                "0.0",
            )
            .key("UnloadedBytes"),
            col(
                "^Time^",
                "sun.cls.time/sun.os.hrt.frequency",
                Raw,
                Right,
                10,
                "0.00",
            ),
        ],
    },
    StatOption {
        name: "compiler",
        columns: &[
            COMPILED,
            col("^Failed^", "sun.ci.totalBailouts", Raw, Right, 6, "0"),
            col("^Invalid^", "sun.ci.totalInvalidates", Raw, Right, 6, "0"),
            col(
                "^Time^",
                "java.ci.totalTime/sun.os.hrt.frequency",
                Sec,
                Right,
                8,
                "0.00",
            ),
            col("^FailedType^", "sun.ci.lastFailedType", Raw, Right, 4, "0"),
            col(
                "^FailedMethod",
                "sun.ci.lastFailedMethod",
                Raw,
                Left,
                1,
                "0",
            ),
        ],
    },
    StatOption {
        name: "gc",
        columns: &[
            S0C, S1C, S0U, S1U, EC, EU, OC, OU, MC, MU, CCSC, CCSU, YGC, YGCT, FGC, FGCT, CGC,
            CGCT, GCT,
        ],
    },
    StatOption {
        name: "gccapacity",
        columns: &[
            NGCMN,
            NGCMX,
            NGC,
            S0C,
            col(
                "^S1C",
                "sun.gc.generation.0.space.2.capacity",
                Kilo,
                Right,
                11,
                "0.0",
            ),
            EC,
            OGCMN,
            OGCMX,
            OGC,
            OC,
            MCMN,
            MCMX,
            MC,
            CCSMN,
            CCSMX,
            CCSC,
            YGC,
            FGC,
            CGC,
        ],
    },
    StatOption {
        name: "gccause",
        columns: &[
            S0,
            S1,
            E,
            O,
            M,
            CCS,
            YGC,
            YGCT,
            FGC,
            FGCT,
            CGC,
            CGCT,
            GCT,
            col("^LGCC", "sun.gc.lastCause", Raw, Left, 20, "0"),
            col("^GCC", "sun.gc.cause", Raw, Left, 20, "0"),
        ],
    },
    StatOption {
        name: "gcnew",
        columns: &[
            S0C,
            S1C,
            S0U,
            S1U,
            col(
                "^TT^",
                "sun.gc.policy.tenuringThreshold",
                Raw,
                Right,
                2,
                "0",
            ),
            col(
                "^MTT^",
                "sun.gc.policy.maxTenuringThreshold",
                Raw,
                Right,
                2,
                "0",
            ),
            col(
                "^DSS^",
                "sun.gc.policy.desiredSurvivorSize",
                Kilo,
                Right,
                11,
                "0.0",
            ),
            EC,
            EU,
            YGC,
            YGCT,
        ],
    },
    StatOption {
        name: "gcnewcapacity",
        columns: &[
            NGCMN,
            NGCMX,
            NGC,
            col(
                "^S0CMX^",
                "sun.gc.generation.0.space.1.maxCapacity",
                Kilo,
                Right,
                11,
                "0.0",
            ),
            S0C,
            col(
                "^S1CMX^",
                "sun.gc.generation.0.space.2.maxCapacity",
                Kilo,
                Right,
                11,
                "0.0",
            ),
            S1C,
            col(
                "^ECMX^",
                "sun.gc.generation.0.space.0.maxCapacity",
                Kilo,
                Right,
                12,
                "0.0",
            ),
            EC,
            YGC,
            FGC,
            CGC,
        ],
    },
    StatOption {
        name: "gcold",
        columns: &[MC, MU, CCSC, CCSU, OC, OU, YGC, FGC, FGCT, CGC, CGCT, GCT],
    },
    StatOption {
        name: "gcoldcapacity",
        columns: &[OGCMN, OGCMX, OGC, OC, YGC, FGC, FGCT, CGC, CGCT, GCT],
    },
    StatOption {
        name: "gcmetacapacity",
        columns: &[
            MCMN, MCMX, MC, CCSMN, CCSMX, CCSC, YGC, FGC, FGCT, CGC, CGCT, GCT,
        ],
    },
    StatOption {
        name: "gcutil",
        columns: &[S0, S1, E, O, M, CCS, YGC, YGCT, FGC, FGCT, CGC, CGCT, GCT],
    },
    StatOption {
        name: "printcompilation",
        columns: &[
            COMPILED,
            col("^Size^", "sun.ci.lastSize", Raw, Right, 6, "0"),
            col("^Type^", "sun.ci.lastType", Raw, Right, 4, "0"),
            col("^Method", "sun.ci.lastMethod", Raw, Left, 1, "0"),
        ],
    },
];

/// Columns of JDK 17's views (option, header) that JDK 8's and JDK 11's jstat print narrower or
/// centred: (option, header, width, alignment) as their `jstat_options` give them. JDK 17 widened
/// the size columns (`S0C` 6 → 11, `EC` 8 → 12, ...) and the time columns (8 → 9) and right-aligns
/// `-gc`'s. The `CGC`/`CGCT` rows apply to JDK 11 only (JDK 8 has no such columns).
pub static NARROW: &[(&str, &str, usize, super::Align)] = {
    use super::Align::Center;
    &[
        ("gc", "^S0C^", 6, Center),
        ("gc", "^S1C^", 6, Center),
        ("gc", "^S0U^", 6, Center),
        ("gc", "^S1U^", 6, Center),
        ("gc", "^EC^", 8, Center),
        ("gc", "^EU^", 8, Center),
        ("gc", "^OC^", 10, Center),
        ("gc", "^OU^", 10, Center),
        ("gc", "^MC^", 6, Center),
        ("gc", "^MU^", 6, Center),
        ("gc", "^CCSC^", 6, Center),
        ("gc", "^CCSU^", 6, Center),
        ("gc", "^YGCT^", 8, Right),
        ("gc", "^FGC^", 5, Center),
        ("gc", "^FGCT^", 8, Right),
        ("gc", "^CGC^", 5, Center),
        ("gc", "^CGCT^", 8, Right),
        ("gc", "^GCT^", 8, Right),
        ("gccapacity", "^NGCMN^", 8, Right),
        ("gccapacity", "^NGCMX^", 8, Right),
        ("gccapacity", "^NGC^", 8, Right),
        ("gccapacity", "^S0C^", 6, Right),
        ("gccapacity", "^S1C", 6, Right),
        ("gccapacity", "^EC^", 8, Right),
        ("gccapacity", "^OGCMN^", 10, Right),
        ("gccapacity", "^OGCMX^", 10, Right),
        ("gccapacity", "^OGC^", 10, Right),
        ("gccapacity", "^OC^", 10, Right),
        ("gccapacity", "^MCMN^", 8, Right),
        ("gccapacity", "^MCMX^", 8, Right),
        ("gccapacity", "^MC^", 8, Right),
        ("gccapacity", "^CCSMN^", 8, Right),
        ("gccapacity", "^CCSMX^", 8, Right),
        ("gccapacity", "^CCSC^", 8, Right),
        ("gccause", "^YGCT^", 8, Right),
        ("gccause", "^FGCT^", 8, Right),
        ("gccause", "^CGCT^", 8, Right),
        ("gccause", "^GCT^", 8, Right),
        ("gcnew", "^S0C^", 6, Right),
        ("gcnew", "^S1C^", 6, Right),
        ("gcnew", "^S0U^", 6, Right),
        ("gcnew", "^S1U^", 6, Right),
        ("gcnew", "^DSS^", 6, Right),
        ("gcnew", "^EC^", 8, Right),
        ("gcnew", "^EU^", 8, Right),
        ("gcnew", "^YGCT^", 8, Right),
        ("gcnewcapacity", "^NGCMN^", 10, Right),
        ("gcnewcapacity", "^NGCMX^", 10, Right),
        ("gcnewcapacity", "^NGC^", 10, Right),
        ("gcnewcapacity", "^S0CMX^", 8, Right),
        ("gcnewcapacity", "^S0C^", 8, Right),
        ("gcnewcapacity", "^S1CMX^", 8, Right),
        ("gcnewcapacity", "^S1C^", 8, Right),
        ("gcnewcapacity", "^ECMX^", 10, Right),
        ("gcnewcapacity", "^EC^", 10, Right),
        ("gcnewcapacity", "^YGC^", 5, Right),
        ("gcold", "^MC^", 8, Right),
        ("gcold", "^MU^", 8, Right),
        ("gcold", "^CCSC^", 8, Right),
        ("gcold", "^CCSU^", 8, Right),
        ("gcold", "^OC^", 11, Right),
        ("gcold", "^OU^", 11, Right),
        ("gcold", "^FGCT^", 8, Right),
        ("gcold", "^CGCT^", 8, Right),
        ("gcold", "^GCT^", 8, Right),
        ("gcoldcapacity", "^OGCMN^", 11, Right),
        ("gcoldcapacity", "^OGCMX^", 11, Right),
        ("gcoldcapacity", "^OGC^", 11, Right),
        ("gcoldcapacity", "^OC^", 11, Right),
        ("gcoldcapacity", "^YGC^", 5, Right),
        ("gcoldcapacity", "^FGCT^", 8, Right),
        ("gcoldcapacity", "^CGCT^", 8, Right),
        ("gcoldcapacity", "^GCT^", 8, Right),
        ("gcmetacapacity", "^CCSMN^", 10, Right),
        ("gcmetacapacity", "^CCSMX^", 10, Right),
        ("gcmetacapacity", "^CCSC^", 10, Right),
        ("gcmetacapacity", "^YGC^", 5, Right),
        ("gcmetacapacity", "^FGCT^", 8, Right),
        ("gcmetacapacity", "^CGCT^", 8, Right),
        ("gcmetacapacity", "^GCT^", 8, Right),
        ("gcutil", "^YGCT^", 8, Right),
        ("gcutil", "^FGCT^", 8, Right),
        ("gcutil", "^CGCT^", 8, Right),
        ("gcutil", "^GCT^", 8, Right),
    ]
};
