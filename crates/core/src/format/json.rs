//! JSON Lines output of PerfData counters (`--format json`): one object per sample, one line each.
//!
//! ```json
//! {"pid":4242,"timestamp":1795365584954,"counters":{"java.threads.live":{"value":6,"units":"none","variability":"variable"},...}}
//! ```
//!
//! - `pid`: the live process read (`null` for a file or a core).
//! - `timestamp`: when the sample was taken, Unix time in milliseconds (as in `inspect stat
//!   --format json`).
//! - `counters`: an object keyed by counter name, in the order of the text output (jvmstat's), each
//!   with `value` (a JSON number for a `'J'` long, raw as in the region: Ticks are ticks, see
//!   `sun.os.hrt.frequency`; a string for a string counter), `units` and `variability` (HotSpot's
//!   `perfData.hpp` names, lower case: `none bytes ticks events string hertz`,
//!   `constant monotonic variable`).
//!
//! String counters outside the allow-list of [`super::allow`] (the JVM's arguments, flags,
//! command line and system properties, which can hold secrets) are left out, as are entries
//! the text output cannot show either (byte vectors, unsupported types). Values are otherwise
//! exactly the text output's.

use std::collections::HashSet;
use std::io::{self, Write};
use std::time::SystemTime;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::allow;
use super::prometheus::{units_word, variability_word};
use crate::perfdata::{Counter, Value};
use crate::pid::Pid;

#[derive(Serialize)]
struct Line<'a> {
    pid: Option<Pid>,
    timestamp: u64,
    counters: Counters<'a>,
}

struct Counters<'a>(&'a [&'a Counter]);

#[derive(Serialize)]
#[serde(untagged)]
enum JsonValue<'a> {
    Long(i64),
    String(&'a str),
}

#[derive(Serialize)]
struct Entry<'a> {
    value: JsonValue<'a>,
    units: &'static str,
    variability: &'static str,
}

/// The value a counter has in JSON, or `None` when it is left out.
fn json_value(c: &Counter) -> Option<JsonValue<'_>> {
    match &c.value {
        Value::Long(v) => Some(JsonValue::Long(*v)),
        Value::String(s) if allow::string_exportable(&c.name) => Some(JsonValue::String(s)),
        Value::String(_) | Value::Bytes(_) | Value::Unsupported { .. } => None,
    }
}

impl Serialize for Counters<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut seen = HashSet::new();
        for c in self.0 {
            let Some(value) = json_value(c) else { continue };
            // A damaged region may name two entries alike: JSON keys must be unique.
            if !seen.insert(c.name.as_str()) {
                continue;
            }
            map.serialize_entry(
                &c.name,
                &Entry {
                    value,
                    units: units_word(c.units),
                    variability: variability_word(c.variability),
                },
            )?;
        }
        map.end()
    }
}

/// Writes one JSON Lines record for a sample: `pid` (when live), `timestamp`, and the counters given
/// (already filtered and ordered, as [`super::sorted`] returns them). Returns the counters left
/// out because JSON cannot show them as the text output cannot (byte vectors, unsupported
/// types), so the caller can warn; withheld strings are not returned.
///
/// # Errors
/// Any error from `out`.
pub fn write_json_line<'a, W: Write>(
    out: &mut W,
    pid: Option<Pid>,
    time: SystemTime,
    counters: &[&'a Counter],
) -> io::Result<Vec<&'a Counter>> {
    let line = Line {
        pid,
        timestamp: time
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        counters: Counters(counters),
    };
    serde_json::to_writer(&mut *out, &line).map_err(io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(counters
        .iter()
        .copied()
        .filter(|c| matches!(c.value, Value::Bytes(_) | Value::Unsupported { .. }))
        .collect())
}
