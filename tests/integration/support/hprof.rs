//! Two readers of HPROF heap dumps ("JAVA PROFILE 1.0.2", ids of 8 bytes), both independent of
//! `inspect heapdump`'s writer, for checking its files (and, as the reference, jcmd's
//! `GC.heap_dump`):
//!
//! * [`visualvm_check`]: VisualVM's heap library (`org.graalvm.visualvm.lib.jfluid.heap`, the jar
//!   of Debian's `visualvm` package that scripts/visualvm-heaplib.sh caches) driven by
//!   tests/java/HprofCheck.java on JDK 17: each class's instance count and sizes, the GC roots by
//!   kind, the references that resolve to nothing, and field values on request ([`Query`]).
//! * [`strict_check`]: the `jvm-hprof` crate's parser under a framing walk of our own, with the
//!   checks a reader relies on: every record's tag and length, each INSTANCE_DUMP's class dumped
//!   and its byte count the sum of its fields' sizes up the super chain, every OBJ_ARRAY_DUMP's
//!   class dumped, ids unique, names present.
//!
//! Class names are VisualVM's in both: `java.lang.String`, `int[]`, `java.lang.Object[][]`.
//! GC root kinds are named by VisualVM's `GCRoot` constants: `THREAD_OBJECT`, `STICKY_CLASS`,
//! `JAVA_FRAME`, `JNI_GLOBAL`, `JNI_LOCAL`, ... (VisualVM's own words are in
//! [`HprofReport::root_kinds`]: "thread object", "sticky class", ...).
//!
//! Seen in jcmd's dumps (JDK 11, 17, 21, 25), which both readers accept:
//! * with CDS (the default), references from the archived heap to the mirrors of archived classes
//!   the VM has not loaded, which jcmd writes no CLASS_DUMP for, resolve to nothing (818 in a
//!   HeapTarget JVM on JDK 17, both readers count the same); with `-Xshare:off` there are none;
//! * classes carry static fields HotSpot makes up, `<resolved_references>` and `<init_lock>`;
//! * JDK 17 writes the LOAD_CLASS of some array classes twice (same id and name, two serials);
//! * the 9 primitive types' mirrors (`int.class`, ...) are INSTANCE_DUMPs of `java.lang.Class`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use jvm_hprof::heap_dump::{FieldType, FieldValue, SubRecord};

use super::{jdk17, run_ok, wait_bounded};

/// The checker's source file in tests/java (left out of [`super::test_classes`]).
pub const CHECKER_SOURCE: &str = "HprofCheck.java";

/// The jar scripts/visualvm-heaplib.sh caches.
pub const HEAPLIB_JAR: &str = "org-graalvm-visualvm-lib-jfluid-heap.jar";

/// How long the checker may take before it is killed and the test fails.
pub const CHECK_LIMIT: Duration = Duration::from_secs(300);

/// VisualVM's heap library: `$HSINSPECT_VISUALVM_DIR/<jar>`, by default
/// `~/.cache/hsinspect/visualvm/<jar>`; panics saying how to install it when missing.
pub fn heaplib_jar() -> PathBuf {
    let dir = std::env::var_os("HSINSPECT_VISUALVM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is not set"))
                .join(".cache/hsinspect/visualvm")
        });
    let jar = dir.join(HEAPLIB_JAR);
    assert!(
        jar.is_file(),
        "VisualVM's heap library is not installed: run scripts/visualvm-heaplib.sh \
         (scripts/test.sh does this); looked for {}",
        jar.display()
    );
    jar
}

/// tests/java/HprofCheck.java compiled with JDK 17's javac against [`heaplib_jar`], once per
/// test binary.
pub fn checker_classes() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hprof-check-classes");
        std::fs::create_dir_all(&out).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/java")
            .join(CHECKER_SOURCE);
        run_ok(
            Command::new(jdk17().join("bin/javac"))
                .args(["--release", "17", "-nowarn", "-cp"])
                .arg(heaplib_jar())
                .arg("-d")
                .arg(&out)
                .arg(&src),
        );
        out
    })
}

/// A question for [`visualvm_check`] beside its fixed report.
#[derive(Clone, Copy, Debug)]
pub enum Query<'a> {
    /// `Field(class, field)`: the field's value in every instance of the class.
    Field(&'a str, &'a str),
    /// `Static(class, field)`: a static field's value.
    Static(&'a str, &'a str),
    /// `RootsOf(class)`: for every instance of the class, the kinds of GC root it is.
    RootsOf(&'a str),
}

/// The instances of the classes of one name, as VisualVM counts them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassCount {
    /// `JavaClass.getInstancesCount()`, summed over the classes of this name.
    pub instances: u64,
    /// `JavaClass.getInstanceSize()`: the size of one instance (-1 for arrays).
    pub instance_size: i64,
    /// `JavaClass.getAllInstancesSize()`, summed over the classes of this name.
    pub total: u64,
    /// How many class dumps have this name (more than one: several class loaders).
    pub classes: u32,
}

/// A field's value as [`visualvm_check`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A null reference.
    Null,
    /// A `java.lang.String`, by its text.
    Str(String),
    /// Another object: its class and id.
    Object {
        /// Its class's name.
        class: String,
        /// Its id in the dump.
        id: u64,
    },
    /// A primitive, as VisualVM prints it (`42`, `true`, `3.5`).
    Prim(String),
}

/// A reference that resolves to nothing in the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dangling {
    /// The holder's class.
    pub holder: String,
    /// The holder's id (a class's id for a static field).
    pub holder_id: u64,
    /// The field, `[i]` for an array element, `static NAME` for a static field.
    pub field: String,
    /// The id it holds.
    pub id: u64,
}

/// The answer to a [`Query::Field`] for one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldAnswer {
    /// The class asked about.
    pub class: String,
    /// The field asked about.
    pub field: String,
    /// The instance's id.
    pub instance: u64,
    /// The field's value in it.
    pub value: Value,
}

/// What tests/java/HprofCheck.java (VisualVM's heap library) read in a heap dump.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HprofReport {
    /// Every class by name.
    pub classes: BTreeMap<String, ClassCount>,
    /// GC roots by kind (VisualVM's `GCRoot` constant's name: `THREAD_OBJECT`, ...).
    pub roots: BTreeMap<String, u64>,
    /// VisualVM's own word for each kind of [`HprofReport::roots`] ("thread object", ...).
    pub root_kinds: BTreeMap<String, String>,
    /// GC roots whose object VisualVM does not find.
    pub unresolved_roots: u64,
    /// Instances (arrays included) the heap's iterator gave.
    pub instances: u64,
    /// Non-null instance fields and object array elements that resolve to no instance or class.
    pub dangling: u64,
    /// The same for classes' static fields.
    pub dangling_static: u64,
    /// Up to 10 of those references.
    pub examples: Vec<Dangling>,
    /// `Heap.getSummary()`: `time`, `live_bytes`, `live_instances`, `allocated_bytes`,
    /// `allocated_instances` (-1: unknown).
    pub summary: BTreeMap<String, i64>,
    /// The answers to [`Query::Field`], in order.
    pub fields: Vec<FieldAnswer>,
    /// The answers to [`Query::Static`]: (class, field) to the value.
    pub statics: BTreeMap<(String, String), Value>,
    /// The answers to [`Query::RootsOf`]: (class, instance id) to its root kinds (empty: none).
    pub roots_of: BTreeMap<(String, u64), Vec<String>>,
    /// Queries whose class (field `None`) or field is not in the dump: (query, class, field).
    pub absent: Vec<(String, String, Option<String>)>,
}

/// Undoes HprofCheck's escapes (`\\`, `\t`, `\n`, `\r`).
pub fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// An id as Java prints a `long` (possibly negative) back to its 64 bits.
fn id(s: &str) -> Result<u64, String> {
    s.parse::<i64>()
        .map(|v| v as u64)
        .map_err(|e| format!("id {s:?}: {e}"))
}

fn count(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|e| format!("count {s:?}: {e}"))
}

impl Value {
    /// Parses HprofCheck's `null`, `str:TEXT`, `obj:CLASS@ID` or `prim:TEXT`.
    pub fn parse(s: &str) -> Result<Value, String> {
        if s == "null" {
            Ok(Value::Null)
        } else if let Some(text) = s.strip_prefix("str:") {
            Ok(Value::Str(unescape(text)))
        } else if let Some(obj) = s.strip_prefix("obj:") {
            let (class, at) = obj
                .rsplit_once('@')
                .ok_or_else(|| format!("object value without @: {s:?}"))?;
            Ok(Value::Object {
                class: unescape(class),
                id: id(at)?,
            })
        } else if let Some(text) = s.strip_prefix("prim:") {
            Ok(Value::Prim(unescape(text)))
        } else {
            Err(format!("unknown value {s:?}"))
        }
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl HprofReport {
    /// Parses HprofCheck's output (its format is described at the top of HprofCheck.java); an
    /// output without its `end` line (cut short) is an error.
    pub fn parse(text: &str) -> Result<HprofReport, String> {
        let mut r = HprofReport::default();
        let (mut format, mut ended) = (false, false);
        for (n, line) in text.lines().enumerate() {
            if ended {
                return Err(format!("line {}: {line:?} after the end", n + 1));
            }
            let cols: Vec<&str> = line.split('\t').collect();
            let at = |e: String| format!("line {}: {line:?}: {e}", n + 1);
            match cols.as_slice() {
                ["format", "hprofcheck", "1"] => format = true,
                ["class", name, _id, instances, size, total] => {
                    let c = r.classes.entry(unescape(name)).or_default();
                    c.instances += count(instances).map_err(at)?;
                    c.instance_size = size.parse().map_err(|e| at(format!("{e}")))?;
                    c.total += count(total).map_err(at)?;
                    c.classes += 1;
                }
                ["root", constant, kind, n] => {
                    r.roots.insert(constant.to_string(), count(n).map_err(at)?);
                    r.root_kinds.insert(constant.to_string(), unescape(kind));
                }
                ["root_unresolved", n] => r.unresolved_roots = count(n).map_err(at)?,
                ["instances", n] => r.instances = count(n).map_err(at)?,
                ["dangling", n] => r.dangling = count(n).map_err(at)?,
                ["dangling_static", n] => r.dangling_static = count(n).map_err(at)?,
                ["dangling_example", holder, holder_id, field, target] => {
                    r.examples.push(Dangling {
                        holder: unescape(holder),
                        holder_id: id(holder_id).map_err(at)?,
                        field: unescape(field),
                        id: id(target).map_err(at)?,
                    })
                }
                ["summary", name, value] => {
                    let v = value.parse().map_err(|e| at(format!("{e}")))?;
                    r.summary.insert(name.to_string(), v);
                }
                ["field", class, field, instance, value] => r.fields.push(FieldAnswer {
                    class: unescape(class),
                    field: unescape(field),
                    instance: id(instance).map_err(at)?,
                    value: Value::parse(value).map_err(at)?,
                }),
                ["static", class, field, value] => {
                    r.statics.insert(
                        (unescape(class), unescape(field)),
                        Value::parse(value).map_err(at)?,
                    );
                }
                ["roots_of", class, instance, kinds] => {
                    let kinds = match *kinds {
                        "-" => vec![],
                        k => k.split(',').map(str::to_string).collect(),
                    };
                    r.roots_of
                        .insert((unescape(class), id(instance).map_err(at)?), kinds);
                }
                ["absent", query, class, field] => r.absent.push((
                    query.to_string(),
                    unescape(class),
                    (*field != "-").then(|| unescape(field)),
                )),
                ["end"] => ended = true,
                _ => return Err(at("not a line of HprofCheck's report".into())),
            }
        }
        if !format {
            return Err("no `format hprofcheck 1` line: not HprofCheck's report".into());
        }
        if !ended {
            return Err("no `end` line: the report was cut short".into());
        }
        Ok(r)
    }

    /// The values of `field` in every instance of `class` (a [`Query::Field`] asked for).
    pub fn field_values(&self, class: &str, field: &str) -> Vec<&Value> {
        self.fields
            .iter()
            .filter(|a| a.class == class && a.field == field)
            .map(|a| &a.value)
            .collect()
    }

    /// The value of the static `field` of `class` (a [`Query::Static`] asked for).
    pub fn static_value(&self, class: &str, field: &str) -> Option<&Value> {
        self.statics.get(&(class.to_string(), field.to_string()))
    }

    /// Instance counts by class name (the form [`StrictReport::instances`] has).
    pub fn instance_counts(&self) -> BTreeMap<String, u64> {
        self.classes
            .iter()
            .map(|(name, c)| (name.clone(), c.instances))
            .collect()
    }
}

/// Reads `hprof` with VisualVM's heap library (tests/java/HprofCheck.java on JDK 17) and answers
/// `queries` too. Panics when the library is missing (saying how to install it), when the
/// checker fails or prints something else than its report, and when it runs longer than
/// [`CHECK_LIMIT`] (it is killed). VisualVM's cache beside the dump (`<file>.hwcache`) is
/// removed before and after, so each call reads the file as it is.
pub fn visualvm_check(hprof: &Path, queries: &[Query]) -> HprofReport {
    let jar = heaplib_jar();
    let classes = checker_classes();
    let cache = PathBuf::from(format!("{}.hwcache", hprof.display()));
    let _ = std::fs::remove_dir_all(&cache);
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(jdk17().join("bin/java"));
    cmd.arg(format!("-Djava.io.tmpdir={}", tmp.path().display()))
        .arg("-cp")
        .arg(std::env::join_paths([jar.as_path(), classes]).unwrap())
        .arg("HprofCheck")
        .arg(hprof);
    for q in queries {
        match q {
            Query::Field(class, field) => cmd.args(["--field", class, field]),
            Query::Static(class, field) => cmd.args(["--static", class, field]),
            Query::RootsOf(class) => cmd.args(["--roots-of", class]),
        };
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
    let what = format!(
        "VisualVM's heap library (HprofCheck) on {}",
        hprof.display()
    );
    let out = wait_bounded(child, CHECK_LIMIT, &what);
    let _ = std::fs::remove_dir_all(&cache);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}): {stderr}",
        out.status
    );
    let stdout = String::from_utf8(out.stdout).expect("HprofCheck prints UTF-8");
    HprofReport::parse(&stdout).unwrap_or_else(|e| panic!("{what}: {e}\nstderr: {stderr}"))
}

// ---- The strict reader: jvm-hprof's parser under our own framing walk. ----

/// What [`strict_check`] read in a heap dump, and what it found wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrictReport {
    /// The header's label (`JAVA PROFILE 1.0.2`).
    pub label: String,
    /// The header's id size (8).
    pub id_size: u32,
    /// Top-level records by tag (`UTF8`, `LOAD_CLASS`, `HEAP_DUMP_SEGMENT`, ...; `0xNN` unknown).
    pub records: BTreeMap<String, u64>,
    /// Heap dump sub-records by tag (`CLASS_DUMP`, `INSTANCE_DUMP`, `OBJ_ARRAY_DUMP`,
    /// `PRIM_ARRAY_DUMP`, `ROOT_JNI_GLOBAL`, ...).
    pub sub_records: BTreeMap<String, u64>,
    /// Instances and arrays by class name, in VisualVM's spelling (`int[]`, `java.lang.String`).
    pub instances: BTreeMap<String, u64>,
    /// GC roots by kind, named as [`HprofReport::roots`] names them (`THREAD_OBJECT`, ...).
    pub roots: BTreeMap<String, u64>,
    /// GC roots whose id is no object or class of the dump.
    pub unresolved_roots: u64,
    /// The `ROOT_JAVA_FRAME`s: (object id, thread serial).
    pub frame_roots: BTreeSet<(u64, u32)>,
    /// The objects of the `ROOT_JNI_GLOBAL`s.
    pub jni_global_roots: BTreeSet<u64>,
    /// The `ROOT_JNI_LOCAL`s: (object id, thread serial).
    pub jni_local_roots: BTreeSet<(u64, u32)>,
    /// The `ROOT_THREAD_OBJ`s: thread serial to its `java.lang.Thread`'s id.
    pub thread_objects: BTreeMap<u32, u64>,
    /// Non-null instance fields and object array elements that are no object or class of the dump.
    pub dangling: u64,
    /// The same for classes' static fields.
    pub dangling_static: u64,
    /// Up to 10 of those references: `HOLDER ID: FIELD = ID` (`[i]` for an array element,
    /// `static NAME` for a static field).
    pub examples: Vec<String>,
    /// Everything that breaks the format or what a reader relies on (at most
    /// [`MAX_VIOLATIONS`], then a line saying how many more).
    pub violations: Vec<String>,
}

/// How many violations [`StrictReport::violations`] lists.
pub const MAX_VIOLATIONS: usize = 50;

/// The HPROF name of a top-level record tag.
pub fn record_name(tag: u8) -> String {
    match tag {
        0x01 => "UTF8",
        0x02 => "LOAD_CLASS",
        0x03 => "UNLOAD_CLASS",
        0x04 => "STACK_FRAME",
        0x05 => "STACK_TRACE",
        0x06 => "ALLOC_SITES",
        0x07 => "HEAP_SUMMARY",
        0x0A => "START_THREAD",
        0x0B => "END_THREAD",
        0x0C => "HEAP_DUMP",
        0x0D => "CPU_SAMPLES",
        0x0E => "CONTROL_SETTINGS",
        0x1C => "HEAP_DUMP_SEGMENT",
        0x2C => "HEAP_DUMP_END",
        _ => return format!("0x{tag:02X}"),
    }
    .to_string()
}

/// A class name as HPROF spells it (`java/lang/String`, `[I`, `[[Ljava/lang/Object;`) as
/// VisualVM does (`java.lang.String`, `int[]`, `java.lang.Object[][]`).
pub fn java_name(hprof_name: &str) -> String {
    let dims = hprof_name.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return hprof_name.replace('/', ".");
    }
    let element = &hprof_name[dims..];
    let base = match element {
        "Z" => "boolean".to_string(),
        "C" => "char".to_string(),
        "F" => "float".to_string(),
        "D" => "double".to_string(),
        "B" => "byte".to_string(),
        "S" => "short".to_string(),
        "I" => "int".to_string(),
        "J" => "long".to_string(),
        other => other
            .strip_prefix('L')
            .and_then(|e| e.strip_suffix(';'))
            .unwrap_or(other)
            .replace('/', "."),
    };
    base + &"[]".repeat(dims)
}

struct Violations {
    list: Vec<String>,
    more: usize,
}

impl Violations {
    fn add(&mut self, v: String) {
        if self.list.contains(&v) {
            // the same words from both passes
        } else if self.list.len() < MAX_VIOLATIONS {
            self.list.push(v);
        } else {
            self.more += 1;
        }
    }
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// Our own walk of the header and the top-level records: their tags, lengths and the fixed
/// sizes of the small ones. Returns the label and id size, or `None` when the header is broken.
fn walk_records(bytes: &[u8], r: &mut StrictReport, v: &mut Violations) -> Option<(String, u32)> {
    let Some(nul) = bytes.iter().take(64).position(|&b| b == 0) else {
        v.add("no NUL-terminated label in the first 64 bytes: not an HPROF file".into());
        return None;
    };
    let label = String::from_utf8_lossy(&bytes[..nul]).into_owned();
    if label != "JAVA PROFILE 1.0.2" {
        v.add(format!("label {label:?}, not \"JAVA PROFILE 1.0.2\""));
    }
    let mut pos = nul + 1;
    if bytes.len() < pos + 12 {
        v.add("the header ends early".into());
        return None;
    }
    let id_size = be_u32(bytes, pos);
    if id_size != 8 {
        v.add(format!("id size {id_size}, not 8"));
        return None;
    }
    pos += 12;
    let id = id_size as usize;
    let (mut segments, mut ended) = (0u64, false);
    while pos < bytes.len() {
        if bytes.len() - pos < 9 {
            v.add(format!(
                "{} stray bytes at the end (offset {pos})",
                bytes.len() - pos
            ));
            break;
        }
        let tag = bytes[pos];
        let len = be_u32(bytes, pos + 5) as usize;
        let body = pos + 9;
        let name = record_name(tag);
        if bytes.len() - body < len {
            v.add(format!(
                "{name} record at offset {pos} of {len} bytes runs past the end of the file ({})",
                bytes.len()
            ));
            break;
        }
        *r.records.entry(name.clone()).or_default() += 1;
        let wrong = |what: &str| format!("{name} record at offset {pos}: length {len}, {what}");
        match tag {
            0x01 if len < id => v.add(wrong("shorter than its id")),
            0x02 if len != 2 * id + 8 => v.add(wrong(&format!("not {}", 2 * id + 8))),
            0x04 if len != 4 * id + 8 => v.add(wrong(&format!("not {}", 4 * id + 8))),
            0x05 => {
                let frames = if len >= 12 {
                    be_u32(bytes, body + 8) as usize
                } else {
                    0
                };
                if len < 12 || len != 12 + frames * id {
                    v.add(wrong(&format!("not 12 + {frames} frame ids")));
                }
            }
            0x0C | 0x1C => {
                if ended {
                    v.add(format!("{name} at offset {pos} after HEAP_DUMP_END"));
                }
                segments += 1;
            }
            0x2C => {
                if len != 0 {
                    v.add(wrong("not 0"));
                }
                if segments == 0 {
                    v.add(format!("HEAP_DUMP_END at offset {pos} before any segment"));
                }
                ended = true;
            }
            0x01..=0x07 | 0x0A | 0x0B | 0x0D | 0x0E => {}
            _ => v.add(format!("unknown record tag {name} at offset {pos}")),
        }
        pos = body + len;
    }
    if segments == 0 {
        v.add("no HEAP_DUMP or HEAP_DUMP_SEGMENT record".into());
    } else if !ended && r.records.contains_key("HEAP_DUMP_SEGMENT") {
        v.add("heap dump segments without a HEAP_DUMP_END".into());
    }
    Some((label, id_size))
}

/// The size of a field of `t` in an instance dump (ids of 8 bytes).
fn field_size(t: FieldType) -> usize {
    match t {
        FieldType::ObjectId | FieldType::Double | FieldType::Long => 8,
        FieldType::Int | FieldType::Float => 4,
        FieldType::Char | FieldType::Short => 2,
        FieldType::Boolean | FieldType::Byte => 1,
    }
}

/// A set of ids, or a map of ids to small numbers: open addressing with linear probing, 0 (the
/// null id) marking a free slot. Simple on purpose: this test code runs unoptimized, where
/// std's HashMap costs about half a microsecond an operation, on dumps of millions of objects.
struct IdIndex {
    keys: Vec<u64>,
    values: Vec<u32>,
    len: usize,
}

impl IdIndex {
    fn with_capacity(n: usize) -> IdIndex {
        let slots = (n * 2).next_power_of_two().max(16);
        IdIndex {
            keys: vec![0; slots],
            values: vec![0; slots],
            len: 0,
        }
    }

    fn slot(&self, id: u64) -> usize {
        // Fibonacci hashing: the product's top bits, which depend on all of the id's
        let mask = self.keys.len() - 1;
        let bits = self.keys.len().trailing_zeros();
        let mut i = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
        while self.keys[i] != 0 && self.keys[i] != id {
            i = (i + 1) & mask;
        }
        i
    }

    /// Inserts `id` (not 0) with `value`; false when it was there already (left as it was).
    fn insert(&mut self, id: u64, value: u32) -> bool {
        if (self.len + 1) * 2 > self.keys.len() {
            let old = std::mem::replace(self, IdIndex::with_capacity(self.keys.len()));
            for (k, v) in old.keys.into_iter().zip(old.values) {
                if k != 0 {
                    self.insert(k, v);
                }
            }
        }
        let i = self.slot(id);
        if self.keys[i] == id {
            return false;
        }
        self.keys[i] = id;
        self.values[i] = value;
        self.len += 1;
        true
    }

    fn get(&self, id: u64) -> Option<u32> {
        let i = self.slot(id);
        (self.keys[i] == id && id != 0).then(|| self.values[i])
    }

    fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }
}

/// A CLASS_DUMP as the second pass needs it.
struct ClassInfo {
    super_id: Option<u64>,
    /// This class's own instance fields: name id, type.
    fields: Vec<(u64, FieldType)>,
    /// Static object fields: name id, the id they hold.
    static_refs: Vec<(u64, u64)>,
}

fn sub_record_name(s: &SubRecord) -> (&'static str, Option<(&'static str, u64)>) {
    match s {
        SubRecord::GcRootUnknown(x) => ("ROOT_UNKNOWN", Some(("UNKNOWN", x.obj_id().id()))),
        SubRecord::GcRootThreadObj(x) => (
            "ROOT_THREAD_OBJECT",
            // a thread root without a thread object (null id) is no root of an object
            Some(("THREAD_OBJECT", x.thread_obj_id().map_or(0, |i| i.id()))),
        ),
        SubRecord::GcRootJniGlobal(x) => ("ROOT_JNI_GLOBAL", Some(("JNI_GLOBAL", x.obj_id().id()))),
        SubRecord::GcRootJniLocalRef(x) => ("ROOT_JNI_LOCAL", Some(("JNI_LOCAL", x.obj_id().id()))),
        SubRecord::GcRootJavaStackFrame(x) => {
            ("ROOT_JAVA_FRAME", Some(("JAVA_FRAME", x.obj_id().id())))
        }
        SubRecord::GcRootNativeStack(x) => {
            ("ROOT_NATIVE_STACK", Some(("NATIVE_STACK", x.obj_id().id())))
        }
        SubRecord::GcRootSystemClass(x) => {
            ("ROOT_STICKY_CLASS", Some(("STICKY_CLASS", x.obj_id().id())))
        }
        SubRecord::GcRootThreadBlock(x) => {
            ("ROOT_THREAD_BLOCK", Some(("THREAD_BLOCK", x.obj_id().id())))
        }
        SubRecord::GcRootBusyMonitor(x) => {
            ("ROOT_MONITOR_USED", Some(("MONITOR_USED", x.obj_id().id())))
        }
        SubRecord::Class(_) => ("CLASS_DUMP", None),
        SubRecord::Instance(_) => ("INSTANCE_DUMP", None),
        SubRecord::ObjectArray(_) => ("OBJ_ARRAY_DUMP", None),
        SubRecord::PrimitiveArray(_) => ("PRIM_ARRAY_DUMP", None),
    }
}

/// Calls `each(segment number, sub-record)` for every heap dump sub-record, in order; a parse
/// error ends the walk with a violation.
fn each_sub_record<'a>(
    hprof: &jvm_hprof::Hprof<'a>,
    v: &mut Violations,
    mut each: impl FnMut(&SubRecord<'a>, &mut Violations),
) {
    let mut segment = 0;
    for record in hprof.records_iter() {
        let Ok(record) = record else {
            v.add(format!(
                "jvm-hprof cannot parse the record after segment {segment}"
            ));
            return;
        };
        let Some(seg) = record.as_heap_dump_segment() else {
            continue;
        };
        segment += 1;
        let Ok(seg) = seg else {
            v.add(format!(
                "jvm-hprof cannot parse heap dump segment {segment}"
            ));
            return;
        };
        let mut previous = "none";
        for (n, sub) in seg.sub_records().enumerate() {
            let Ok(sub) = sub else {
                v.add(format!(
                    "jvm-hprof cannot parse sub-record {n} of heap dump segment {segment} \
                     (the one before: {previous}): a wrong length or count before it"
                ));
                return;
            };
            previous = sub_record_name(&sub).0;
            each(&sub, v);
        }
    }
}

/// Reads `hprof` with the `jvm-hprof` crate's parser under our own walk of the records, and
/// checks what a reader relies on (see the module's doc). Never panics on a bad file: what is
/// wrong is in [`StrictReport::violations`] (a panic of jvm-hprof's included).
pub fn strict_check(hprof: &Path) -> StrictReport {
    let bytes = std::fs::read(hprof).unwrap_or_else(|e| panic!("reading {}: {e}", hprof.display()));
    let mut r = StrictReport::default();
    let mut v = Violations {
        list: vec![],
        more: 0,
    };
    let Some((label, id_size)) = walk_records(&bytes, &mut r, &mut v) else {
        r.violations = v.list;
        return r;
    };
    r.label = label;
    r.id_size = id_size;
    if r.records.keys().any(|k| k.starts_with("0x")) {
        // jvm-hprof panics on an unknown tag: the walk already said where it is.
        r.violations = v.list;
        return r;
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        parse_contents(&bytes, &mut r, &mut v)
    }));
    if let Err(panic) = outcome {
        let msg = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        v.add(format!("jvm-hprof panicked: {msg}"));
    }
    if v.more > 0 {
        v.list.push(format!("... and {} more", v.more));
    }
    r.violations = v.list;
    r
}

/// A dumped class as the second pass needs it.
struct ClassEntry {
    name: String,
    /// Its instance fields and its super classes', in an INSTANCE_DUMP's order (its own
    /// first); `None` when the super chain is broken.
    fields: Option<Vec<(u64, FieldType)>>,
    instances: u64,
}

fn parse_contents(bytes: &[u8], r: &mut StrictReport, v: &mut Violations) {
    let Ok(hprof) = jvm_hprof::parse_hprof(bytes) else {
        v.add("jvm-hprof cannot parse the header".into());
        return;
    };
    let id_size = hprof.header().id_size();
    // Pass 1: names, classes, every object's id, the roots.
    let mut utf8: HashMap<u64, String> = HashMap::new();
    let mut load_class: HashMap<u64, u64> = HashMap::new();
    let mut names_conflict = vec![];
    for record in hprof.records_iter() {
        // an error repeats forever (the iterator does not move past it): the walk said where
        let Ok(record) = record else { break };
        if let Some(Ok(u)) = record.as_utf_8() {
            utf8.insert(
                u.name_id().id(),
                String::from_utf8_lossy(u.text()).into_owned(),
            );
        } else if let Some(Ok(l)) = record.as_load_class() {
            // JDK 17 writes some array classes' LOAD_CLASS twice (same id and name, two serials)
            let (id, name) = (l.class_obj_id().id(), l.class_name_id().id());
            if let Some(earlier) = load_class.insert(id, name)
                && earlier != name
            {
                names_conflict.push((id, earlier, name));
            }
        }
    }
    for (id, a, b) in names_conflict {
        let text = |n| utf8.get(&n).cloned().unwrap_or_default();
        if text(a) != text(b) {
            v.add(format!(
                "two LOAD_CLASS of 0x{id:x} name it {:?} and {:?}",
                text(a),
                text(b)
            ));
        }
    }
    let mut classes: HashMap<u64, ClassInfo> = HashMap::new();
    let mut objects = IdIndex::with_capacity(bytes.len() / 40);
    let mut roots: Vec<u64> = vec![];
    let mut sub_records: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut root_kinds: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut frame_roots = BTreeSet::new();
    let mut jni_local_roots = BTreeSet::new();
    let mut jni_global_roots = BTreeSet::new();
    let mut thread_objects = BTreeMap::new();
    each_sub_record(&hprof, v, |sub, v| {
        let (name, root) = sub_record_name(sub);
        *sub_records.entry(name).or_default() += 1;
        if let Some((kind, id)) = root {
            *root_kinds.entry(kind).or_default() += 1;
            roots.push(id);
        }
        match sub {
            SubRecord::GcRootJavaStackFrame(f) => {
                frame_roots.insert((f.obj_id().id(), f.thread_serial().num()));
            }
            SubRecord::GcRootJniGlobal(g) => {
                jni_global_roots.insert(g.obj_id().id());
            }
            SubRecord::GcRootJniLocalRef(f) => {
                jni_local_roots.insert((f.obj_id().id(), f.thread_serial().num()));
            }
            SubRecord::GcRootThreadObj(t) => {
                if let Some(id) = t.thread_obj_id() {
                    thread_objects.insert(t.thread_serial().num(), id.id());
                }
            }
            _ => {}
        }
        let object = match sub {
            SubRecord::Class(c) => {
                let mut fields = vec![];
                for f in c.instance_field_descriptors() {
                    match f {
                        Ok(f) => fields.push((f.name_id().id(), f.field_type())),
                        Err(_) => v.add(format!("class 0x{:x}: a bad field", c.obj_id().id())),
                    }
                }
                let mut static_refs = vec![];
                for s in c.static_fields() {
                    match s {
                        Ok(s) => {
                            if let FieldValue::ObjectId(Some(to)) = s.value() {
                                static_refs.push((s.name_id().id(), to.id()));
                            }
                        }
                        Err(_) => v.add(format!("class 0x{:x}: a bad static", c.obj_id().id())),
                    }
                }
                let info = ClassInfo {
                    super_id: c.super_class_obj_id().map(|i| i.id()),
                    fields,
                    static_refs,
                };
                classes.insert(c.obj_id().id(), info);
                c.obj_id().id()
            }
            SubRecord::Instance(i) => i.obj_id().id(),
            SubRecord::ObjectArray(a) => a.obj_id().id(),
            SubRecord::PrimitiveArray(a) => a.obj_id().id(),
            _ => return,
        };
        if object == 0 {
            v.add(format!("a {name} with the null id 0"));
        } else if !objects.insert(object, 0) {
            v.add(format!("id 0x{object:x} is dumped twice ({name})"));
        }
    });
    r.sub_records = sub_records
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    r.roots = root_kinds
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    r.frame_roots = frame_roots;
    r.jni_local_roots = jni_local_roots;
    r.jni_global_roots = jni_global_roots;
    r.thread_objects = thread_objects;
    let class_name = |id: u64| -> Option<String> {
        load_class
            .get(&id)
            .and_then(|name| utf8.get(name))
            .map(|n| java_name(n))
    };
    let resolves = |id: u64| id == 0 || objects.contains(id);
    r.unresolved_roots = roots.iter().filter(|&&id| !resolves(id)).count() as u64;
    // The classes: named, their super classes dumped, their fields named; their statics.
    let mut entries: Vec<ClassEntry> = vec![];
    let mut class_index = IdIndex::with_capacity(classes.len());
    for (&id, c) in &classes {
        let name = class_name(id).unwrap_or_else(|| {
            v.add(format!(
                "CLASS_DUMP 0x{id:x} has no LOAD_CLASS with a UTF8 name"
            ));
            format!("<class 0x{id:x}>")
        });
        if let Some(s) = c.super_id
            && !classes.contains_key(&s)
        {
            v.add(format!(
                "class {name}: its super class 0x{s:x} has no CLASS_DUMP"
            ));
        }
        for (field, _) in &c.fields {
            if !utf8.contains_key(field) {
                v.add(format!(
                    "class {name}: field name id 0x{field:x} has no UTF8"
                ));
            }
        }
        for &(field, to) in &c.static_refs {
            if !resolves(to) {
                r.dangling_static += 1;
                if r.examples.len() < 10 {
                    let field = utf8.get(&field).map_or("?", String::as_str);
                    r.examples
                        .push(format!("{name} 0x{id:x}: static {field} = 0x{to:x}"));
                }
            }
        }
        class_index.insert(id, entries.len() as u32);
        entries.push(ClassEntry {
            name,
            fields: all_fields(id, &classes),
            instances: 0,
        });
    }
    for &id in load_class.keys() {
        if !classes.contains_key(&id) {
            v.add(format!(
                "LOAD_CLASS of 0x{id:x} ({}) without a CLASS_DUMP",
                class_name(id).unwrap_or_default()
            ));
        }
    }
    // Pass 2: instances and arrays against their classes; every reference they hold.
    let mut dangling = |holder: &str, holder_id: u64, field: &str, to: u64| {
        r.dangling += 1;
        if r.examples.len() < 10 {
            r.examples
                .push(format!("{holder} 0x{holder_id:x}: {field} = 0x{to:x}"));
        }
    };
    let mut primitive_arrays: BTreeMap<&'static str, u64> = BTreeMap::new();
    each_sub_record(&hprof, v, |sub, v| match sub {
        SubRecord::Instance(i) => {
            let class = i.class_obj_id().id();
            let Some(k) = class_index.get(class) else {
                v.add(format!(
                    "INSTANCE_DUMP 0x{:x}: its class 0x{class:x} has no CLASS_DUMP",
                    i.obj_id().id()
                ));
                return;
            };
            let entry = &mut entries[k as usize];
            entry.instances += 1;
            let Some(fields) = &entry.fields else {
                return; // the class's chain is broken: said above
            };
            let data: &[u8] = i.fields();
            let want: usize = fields.iter().map(|&(_, t)| field_size(t)).sum();
            if data.len() != want {
                v.add(format!(
                    "INSTANCE_DUMP 0x{:x} of {}: {} bytes of fields, its classes declare {want}",
                    i.obj_id().id(),
                    entry.name,
                    data.len()
                ));
                return;
            }
            let mut rest = data;
            for &(field, t) in fields {
                let Ok((after, value)) = t.parse_value(rest, id_size) else {
                    return;
                };
                rest = after;
                if let FieldValue::ObjectId(Some(to)) = value
                    && !resolves(to.id())
                {
                    let field = utf8.get(&field).map_or("?", String::as_str);
                    dangling(&entry.name, i.obj_id().id(), field, to.id());
                }
            }
        }
        SubRecord::ObjectArray(a) => {
            let class = a.array_class_obj_id().id();
            let Some(k) = class_index.get(class) else {
                v.add(format!(
                    "OBJ_ARRAY_DUMP 0x{:x}: its class 0x{class:x} has no CLASS_DUMP",
                    a.obj_id().id()
                ));
                return;
            };
            let entry = &mut entries[k as usize];
            if !entry.name.ends_with("[]") {
                v.add(format!(
                    "OBJ_ARRAY_DUMP 0x{:x}: its class {} is no array class",
                    a.obj_id().id(),
                    entry.name
                ));
            }
            entry.instances += 1;
            for (n, e) in a.elements(id_size).enumerate() {
                if let Ok(Some(to)) = e
                    && !resolves(to.id())
                {
                    dangling(&entry.name, a.obj_id().id(), &format!("[{n}]"), to.id());
                }
            }
        }
        SubRecord::PrimitiveArray(a) => {
            *primitive_arrays
                .entry(a.primitive_type().java_type_name())
                .or_default() += 1;
        }
        _ => {}
    });
    for e in entries.iter().filter(|e| e.instances > 0) {
        *r.instances.entry(e.name.clone()).or_default() += e.instances;
    }
    for (element, n) in primitive_arrays {
        *r.instances.entry(format!("{element}[]")).or_default() += n;
    }
}

/// The instance fields of class `id` and of its super classes, its own first; `None` when the
/// chain is broken (a class not dumped, or a cycle).
fn all_fields(id: u64, classes: &HashMap<u64, ClassInfo>) -> Option<Vec<(u64, FieldType)>> {
    let mut fields = vec![];
    let mut next = Some(id);
    for _ in 0..1000 {
        let Some(c) = next else {
            return Some(fields);
        };
        let info = classes.get(&c)?;
        fields.extend_from_slice(&info.fields);
        next = info.super_id;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "format\thprofcheck\t1\n\
        class\tjava.lang.String\t100\t3\t24\t72\n\
        class\tint[]\t101\t2\t-1\t48\n\
        class\tFoo\t102\t1\t16\t16\n\
        class\tFoo\t103\t2\t16\t32\n\
        root\tTHREAD_OBJECT\tthread object\t7\n\
        root\tSTICKY_CLASS\tsticky class\t497\n\
        root_unresolved\t0\n\
        instances\t8\n\
        dangling\t1\n\
        dangling_static\t0\n\
        dangling_example\tjava.lang.Object[]\t4293338928\t[21]\t-8674803145768932\n\
        summary\ttime\t1795925962450\n\
        summary\tallocated_bytes\t-1\n\
        field\tjava.lang.Thread\tname\t4291829808\tstr:main\\ttab\\\\\n\
        field\tjava.lang.Thread\tname\t4291829809\tnull\n\
        field\tHeapTarget$Node\tnext\t1\tobj:HeapTarget$Node@2\n\
        field\tHeapTarget$Node\tvalue\t1\tprim:42\n\
        static\tHeapTarget\tbig\tobj:int[]@4227858432\n\
        roots_of\tjava.lang.Thread\t4291829808\tTHREAD_OBJECT,JNI_GLOBAL\n\
        roots_of\tjava.lang.Thread\t4291829809\t-\n\
        absent\t--static\tHeapTarget\tnope\n\
        absent\t--field\tNope\t-\n\
        end\n";

    #[test]
    fn parses_the_checkers_report() {
        let r = HprofReport::parse(REPORT).unwrap();
        assert_eq!(
            r.classes["java.lang.String"],
            ClassCount {
                instances: 3,
                instance_size: 24,
                total: 72,
                classes: 1
            }
        );
        assert_eq!(r.classes["int[]"].instance_size, -1);
        // two classes of one name (two loaders): summed
        assert_eq!(
            r.classes["Foo"],
            ClassCount {
                instances: 3,
                instance_size: 16,
                total: 48,
                classes: 2
            }
        );
        assert_eq!(r.roots["THREAD_OBJECT"], 7);
        assert_eq!(r.root_kinds["STICKY_CLASS"], "sticky class");
        assert_eq!((r.instances, r.dangling, r.dangling_static), (8, 1, 0));
        assert_eq!(
            r.examples,
            vec![Dangling {
                holder: "java.lang.Object[]".into(),
                holder_id: 4293338928,
                field: "[21]".into(),
                id: -8674803145768932i64 as u64,
            }]
        );
        assert_eq!(r.summary["allocated_bytes"], -1);
        assert_eq!(
            r.field_values("java.lang.Thread", "name"),
            vec![&Value::Str("main\ttab\\".into()), &Value::Null]
        );
        assert_eq!(
            r.field_values("HeapTarget$Node", "next"),
            vec![&Value::Object {
                class: "HeapTarget$Node".into(),
                id: 2
            }]
        );
        assert_eq!(
            r.field_values("HeapTarget$Node", "value"),
            vec![&Value::Prim("42".into())]
        );
        assert_eq!(
            r.static_value("HeapTarget", "big"),
            Some(&Value::Object {
                class: "int[]".into(),
                id: 4227858432
            })
        );
        assert_eq!(
            r.roots_of[&("java.lang.Thread".to_string(), 4291829808)],
            vec!["THREAD_OBJECT", "JNI_GLOBAL"]
        );
        assert!(r.roots_of[&("java.lang.Thread".to_string(), 4291829809)].is_empty());
        assert_eq!(
            r.absent,
            vec![
                ("--static".into(), "HeapTarget".into(), Some("nope".into())),
                ("--field".into(), "Nope".into(), None)
            ]
        );
        assert_eq!(r.instance_counts()["Foo"], 3);
    }

    #[test]
    fn refuses_a_cut_or_foreign_report() {
        let cut = REPORT.strip_suffix("end\n").unwrap();
        assert!(HprofReport::parse(cut).unwrap_err().contains("cut short"));
        assert!(HprofReport::parse("class\tx\n").is_err());
        assert!(HprofReport::parse("end\n").unwrap_err().contains("format"));
        let extra = format!("{REPORT}class\tFoo\t1\t1\t1\t1\n");
        assert!(
            HprofReport::parse(&extra)
                .unwrap_err()
                .contains("after the end")
        );
        let bad = REPORT.replace("prim:42", "42");
        assert!(HprofReport::parse(&bad).is_err());
    }

    #[test]
    fn names_as_visualvm_does() {
        assert_eq!(java_name("java/lang/String"), "java.lang.String");
        assert_eq!(java_name("[I"), "int[]");
        assert_eq!(java_name("[[Ljava/lang/Object;"), "java.lang.Object[][]");
        assert_eq!(java_name("[Z"), "boolean[]");
        assert_eq!(
            java_name("HeapTarget$$Lambda$1+0x00007f8d14000c18"),
            "HeapTarget$$Lambda$1+0x00007f8d14000c18"
        );
    }

    /// A small HPROF file made here: one class, one instance, one array holding `element` and
    /// null, one root.
    fn tiny(instance_bytes: u32, array_class: u64, element: u64) -> Vec<u8> {
        let mut f = b"JAVA PROFILE 1.0.2\0".to_vec();
        f.extend(8u32.to_be_bytes());
        f.extend(0u64.to_be_bytes());
        let record = |f: &mut Vec<u8>, tag: u8, body: &[u8]| {
            f.push(tag);
            f.extend(0u32.to_be_bytes());
            f.extend((body.len() as u32).to_be_bytes());
            f.extend(body);
        };
        let id = |v: u64| v.to_be_bytes();
        // UTF8 1 = "Foo", 2 = "x"; LOAD_CLASS serial 1 of class 0x100 named 1
        record(&mut f, 0x01, &[&id(1)[..], b"Foo"].concat());
        record(&mut f, 0x01, &[&id(2)[..], b"x"].concat());
        let load = [
            &1u32.to_be_bytes()[..],
            &id(0x100),
            &0u32.to_be_bytes(),
            &id(1),
        ]
        .concat();
        record(&mut f, 0x02, &load);
        let mut seg = vec![];
        // CLASS_DUMP 0x100: no super, no statics, one int field x
        seg.push(0x20);
        seg.extend(id(0x100));
        seg.extend(0u32.to_be_bytes());
        for _ in 0..6 {
            seg.extend(id(0));
        }
        seg.extend(4u32.to_be_bytes()); // instance size
        seg.extend(0u16.to_be_bytes()); // constant pool
        seg.extend(0u16.to_be_bytes()); // statics
        seg.extend(1u16.to_be_bytes()); // instance fields
        seg.extend(id(2));
        seg.push(0x0A); // int
        // INSTANCE_DUMP 0x200 of 0x100
        seg.push(0x21);
        seg.extend(id(0x200));
        seg.extend(0u32.to_be_bytes());
        seg.extend(id(0x100));
        seg.extend(instance_bytes.to_be_bytes());
        seg.extend(vec![0; instance_bytes as usize]);
        // OBJ_ARRAY_DUMP 0x300 of array_class: [element, null]
        seg.push(0x22);
        seg.extend(id(0x300));
        seg.extend(0u32.to_be_bytes());
        seg.extend(2u32.to_be_bytes());
        seg.extend(id(array_class));
        seg.extend(id(element));
        seg.extend(id(0));
        // ROOT_JNI_GLOBAL 0x300
        seg.push(0x01);
        seg.extend(id(0x300));
        seg.extend(id(0x999));
        record(&mut f, 0x1C, &seg);
        record(&mut f, 0x2C, &[]);
        f
    }

    fn strict(bytes: &[u8]) -> StrictReport {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.hprof");
        std::fs::write(&path, bytes).unwrap();
        strict_check(&path)
    }

    #[test]
    fn strict_reader_on_a_made_file() {
        // the array's class is Foo, no array class: one violation
        let r = strict(&tiny(4, 0x100, 0x200));
        assert_eq!(r.label, "JAVA PROFILE 1.0.2");
        assert_eq!(r.records["UTF8"], 2);
        assert_eq!(r.records["HEAP_DUMP_END"], 1);
        assert_eq!(r.sub_records["INSTANCE_DUMP"], 1);
        assert_eq!(r.roots["JNI_GLOBAL"], 1);
        assert_eq!(r.instances["Foo"], 2);
        assert_eq!((r.dangling, r.unresolved_roots), (0, 0));
        assert_eq!(r.violations.len(), 1, "{:?}", r.violations);
        assert!(r.violations[0].contains("no array class"));
        // an instance of 5 bytes where its class declares 4: the byte count is checked
        let r = strict(&tiny(5, 0x100, 0x200));
        assert!(
            r.violations.iter().any(|v| v.contains("5 bytes of fields")),
            "{:?}",
            r.violations
        );
        // an array of an unknown class
        let r = strict(&tiny(4, 0x555, 0x200));
        assert!(
            r.violations.iter().any(|v| v.contains("no CLASS_DUMP")),
            "{:?}",
            r.violations
        );
        // a reference to nothing: counted, an example, no violation of the format
        let r = strict(&tiny(4, 0x100, 0x777));
        assert_eq!((r.dangling, r.dangling_static), (1, 0));
        assert_eq!(r.examples, vec!["Foo 0x300: [0] = 0x777"]);
        assert_eq!(r.violations.len(), 1, "{:?}", r.violations);
        // cut anywhere: a violation, never a panic
        let whole = tiny(4, 0x100, 0x200);
        for len in [10, 40, whole.len() - 20, whole.len() - 1] {
            let r = strict(&whole[..len]);
            assert!(!r.violations.is_empty(), "cut at {len}");
        }
    }
}
