//! Property tests of the PerfData parser against hostile bytes: it never panics, every error's
//! offset lies inside the buffer, it reads nothing past `used`, and regions written by a small
//! writer here (HotSpot's layout, both byte orders) round-trip exactly.

use std::path::Path;

use hsinspect_core::perfdata::{
    self, ByteOrder, Counter, ENTRY_HEADER_SIZE, MAGIC, PROLOGUE_SIZE, ParseError, Snapshot, Units,
    Value, Variability,
};
use proptest::prelude::*;

/// Parses `buf` and checks what must hold for any input: an error lies inside the buffer (offset
/// 0 for an empty one) and says something; a snapshot describes this buffer.
fn parse_checked(buf: &[u8]) -> Result<Snapshot, ParseError> {
    let r = perfdata::parse(buf);
    match &r {
        Ok(s) => {
            assert_eq!(s.size, buf.len());
            let used = s.prologue.used as usize;
            assert!(used <= buf.len());
            for c in &s.counters {
                if let Some(at) = c.offset {
                    assert!(at + ENTRY_HEADER_SIZE <= used, "{} at {at}", c.name);
                }
            }
        }
        Err(e) => {
            assert!(
                e.offset < buf.len().max(1),
                "offset {} outside the {}-byte buffer: {e}",
                e.offset,
                buf.len()
            );
            assert!(!e.reason.is_empty());
        }
    }
    r
}

fn capture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (see testdata/README.md: scripts/capture-testdata.sh)",
            path.display()
        )
    })
}

/// Real regions of both byte orders: JDK 17 Serial, its big-endian rewrite, JDK 21 G1.
fn real_regions() -> Vec<(&'static str, Vec<u8>)> {
    [
        "captures/jdk17-serial.hsperf",
        "derived/jdk17-serial.be.hsperf",
        "captures/jdk21-g1.hsperf",
    ]
    .into_iter()
    .map(|n| (n, capture(n)))
    .collect()
}

fn used_of(buf: &[u8]) -> usize {
    perfdata::parse(buf).unwrap().prologue.used as usize
}

#[test]
fn every_truncation_of_a_real_region_is_handled() {
    for (name, buf) in real_regions() {
        let used = used_of(&buf);
        let mut ok = 0;
        for len in 0..=buf.len() {
            let r = parse_checked(&buf[..len]);
            // The prologue says `used` bytes are in use: fewer is an error, more is fine.
            match r {
                Ok(_) => ok += 1,
                Err(e) if len >= PROLOGUE_SIZE => {
                    assert!(len < used, "{name} cut to {len}: {e}");
                    assert_eq!(e.offset, 8, "{name} cut to {len}: {e}");
                }
                Err(e) => assert_eq!(e.offset, 0, "{name} cut to {len}: {e}"),
            }
        }
        assert_eq!(ok, buf.len() - used + 1, "{name}");
    }
}

/// A region cut at every offset within its entries with `used` set to the cut, as if the VM had
/// got only that far: the error lies at the entry the cut falls in, or at `num_entries` when no
/// entry_length fits before the cut, never at or past the buffer's end.
#[test]
fn every_cut_with_used_at_the_cut_is_reported_where_it_falls() {
    for name in [
        "captures/jdk17-serial.hsperf",
        "derived/jdk17-serial.be.hsperf",
    ] {
        let buf = capture(name);
        let s = perfdata::parse(&buf).unwrap();
        let used = s.prologue.used as usize;
        let starts: Vec<usize> = s.counters.iter().filter_map(|c| c.offset).collect();
        for cut in PROLOGUE_SIZE..used {
            let mut copy = buf[..cut].to_vec();
            apply(
                &mut copy,
                &Mutation::Field {
                    at: 8,
                    value: cut as i32,
                },
                s.prologue.byte_order,
            );
            let e = parse_checked(&copy).expect_err("entries past used");
            // The entry the cut falls in (or starts at).
            let start = *starts.iter().rev().find(|&&a| a <= cut).unwrap();
            if cut - start < 4 {
                assert_eq!(e.offset, 28, "{name} cut at {cut}: {e}");
                assert!(e.reason.starts_with("num_entries = "), "{e}");
            } else {
                assert_eq!(e.offset, start, "{name} cut at {cut}: {e}");
            }
        }
    }
}

/// Replacement values tried at every position: bit flips and the extremes of a byte.
fn byte_variants(b: u8) -> [u8; 6] {
    [b ^ 0x01, b ^ 0x80, b ^ 0xff, 0x00, 0x7f, 0xff]
}

/// Every byte in use (prologue, headers, names, values), each set to six other values.
fn every_single_byte_mutation_is_handled(name: &str) {
    let buf = capture(name);
    {
        let used = used_of(&buf);
        let mut copy = buf.clone();
        let (mut ok, mut errors) = (0usize, 0usize);
        for at in 0..used {
            let orig = buf[at];
            for v in byte_variants(orig) {
                if v == orig {
                    continue;
                }
                copy[at] = v;
                match parse_checked(&copy) {
                    Ok(_) => ok += 1,
                    Err(_) => errors += 1,
                }
            }
            copy[at] = orig;
        }
        // Both outcomes occur: string bytes may change freely, header bytes may not.
        assert!(
            ok > 0 && errors > 0,
            "{name}: {ok} parsed, {errors} refused"
        );
    }
}

#[test]
fn every_single_byte_mutation_of_a_little_endian_region_is_handled() {
    every_single_byte_mutation_is_handled("captures/jdk17-serial.hsperf");
}

#[test]
fn every_single_byte_mutation_of_a_big_endian_region_is_handled() {
    every_single_byte_mutation_is_handled("derived/jdk17-serial.be.hsperf");
}

#[test]
fn bytes_past_used_are_never_read() {
    for (name, buf) in real_regions() {
        let used = used_of(&buf);
        let reference = perfdata::parse(&buf).unwrap();
        let mut copy = buf.clone();
        for (i, b) in copy[used..].iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151).wrapping_add(7);
        }
        assert_eq!(perfdata::parse(&copy).unwrap(), reference, "{name}");
    }
}

/// Interesting 32-bit values for a length, offset or count field.
fn hostile_i32() -> impl Strategy<Value = i32> {
    prop_oneof![
        Just(0),
        Just(-1),
        Just(i32::MIN),
        Just(i32::MAX),
        Just(1),
        Just(3),
        Just(19),
        Just(20),
        Just(32),
        Just(0x8000),
        Just(0x8001),
        any::<i32>(),
        -64..64i32,
    ]
}

/// A mutation: some bytes anywhere, or a hostile value in a 4-byte field of the prologue or of an
/// entry header.
#[derive(Debug, Clone)]
enum Mutation {
    Byte { at: usize, value: u8 },
    Field { at: usize, value: i32 },
}

fn mutation(len: usize, fields: Vec<usize>) -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0..len, any::<u8>()).prop_map(|(at, value)| Mutation::Byte { at, value }),
        (proptest::sample::select(fields), hostile_i32())
            .prop_map(|(at, value)| Mutation::Field { at, value }),
    ]
}

/// Offsets of every 4-byte field of the prologue and of every entry header of a real region.
fn field_offsets(buf: &[u8]) -> Vec<usize> {
    let s = perfdata::parse(buf).unwrap();
    let mut out = vec![8, 12, 16, 20, 24, 28];
    for c in &s.counters {
        if let Some(at) = c.offset {
            out.extend([at, at + 4, at + 8, at + 12, at + 16]);
        }
    }
    out
}

fn apply(buf: &mut [u8], m: &Mutation, order: ByteOrder) {
    match *m {
        Mutation::Byte { at, value } => buf[at] = value,
        Mutation::Field { at, value } => {
            let bytes = match order {
                ByteOrder::Big => value.to_be_bytes(),
                ByteOrder::Little => value.to_le_bytes(),
            };
            buf[at..at + 4].copy_from_slice(&bytes);
        }
    }
}

fn multi_byte_mutations_are_handled(name: &str) {
    let buf = capture(name);
    let order = perfdata::parse(&buf).unwrap().prologue.byte_order;
    let fields = field_offsets(&buf);
    let config = ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ms in proptest::collection::vec(mutation(buf.len(), fields.clone()), 1..12),
                        cut in proptest::option::of(0..buf.len()))| {
        let mut copy = buf.clone();
        for m in &ms {
            apply(&mut copy, m, order);
        }
        let end = cut.unwrap_or(copy.len());
        let _ = parse_checked(&copy[..end]);
    });
}

#[test]
fn multi_byte_mutations_of_a_little_endian_region_are_handled() {
    multi_byte_mutations_are_handled("captures/jdk17-g1.hsperf");
}

#[test]
fn multi_byte_mutations_of_a_big_endian_region_are_handled() {
    multi_byte_mutations_are_handled("derived/jdk17-serial.be.hsperf");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_are_handled(buf in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse_checked(&buf);
    }

    /// Arbitrary bytes behind a valid magic, byte order and version, so the walk gets past the
    /// first checks, with hostile prologue fields.
    #[test]
    fn arbitrary_regions_with_a_valid_header_are_handled(
        little in any::<bool>(),
        used in hostile_i32(),
        entry_offset in hostile_i32(),
        num_entries in hostile_i32(),
        body in proptest::collection::vec(any::<u8>(), 0..2048),
    ) {
        let order = if little { ByteOrder::Little } else { ByteOrder::Big };
        let mut buf = MAGIC.to_vec();
        buf.extend([u8::from(little), 2, 0, 1]);
        buf.extend([0u8; 24]);
        buf.extend(body);
        let len = buf.len() as i32;
        // Half the time make `used` and `entry_offset` plausible, to reach the entries.
        let used = if used % 2 == 0 { len } else { used };
        let entry_offset = if entry_offset % 2 == 0 { 32 } else { entry_offset };
        apply(&mut buf, &Mutation::Field { at: 8, value: used }, order);
        apply(&mut buf, &Mutation::Field { at: 24, value: entry_offset }, order);
        apply(&mut buf, &Mutation::Field { at: 28, value: num_entries }, order);
        let _ = parse_checked(&buf);
    }
}

// ---- A small PerfData writer (perfData.cpp `PerfData::create_entry` layout) -------------------

#[derive(Debug, Clone)]
enum Data {
    Long(i64),
    /// A `'B'` vector: its bytes and how many spare zero bytes follow (a `PerfString`'s capacity).
    Bytes(Vec<u8>, usize),
}

#[derive(Debug, Clone)]
struct EntrySpec {
    name: String,
    data: Data,
    units: Units,
    variability: Variability,
    supported: bool,
}

fn units_code(u: Units) -> u8 {
    match u {
        Units::None => 1,
        Units::Bytes => 2,
        Units::Ticks => 3,
        Units::Events => 4,
        Units::String => 5,
        Units::Hertz => 6,
    }
}

fn variability_code(v: Variability) -> u8 {
    match v {
        Variability::Constant => 1,
        Variability::Monotonic => 2,
        Variability::Variable => 3,
    }
}

struct Writer {
    buf: Vec<u8>,
    order: ByteOrder,
}

impl Writer {
    fn i32(&mut self, v: i32) {
        self.buf.extend(match self.order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        });
    }

    fn i64(&mut self, v: i64) {
        self.buf.extend(match self.order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        });
    }

    fn put_i32(&mut self, at: usize, v: i32) {
        let b = match self.order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        };
        self.buf[at..at + 4].copy_from_slice(&b);
    }
}

/// Writes a region of `entries` with `spare` zero bytes after `used`; returns the bytes and the
/// counters a reader must find (entries only, in order, with their offsets).
fn write_region(
    order: ByteOrder,
    time_stamp: i64,
    overflow: i32,
    entries: &[EntrySpec],
    spare: usize,
) -> (Vec<u8>, Vec<Counter>) {
    let mut w = Writer {
        buf: MAGIC.to_vec(),
        order,
    };
    w.buf
        .extend([u8::from(order == ByteOrder::Little), 2, 0, 1]);
    w.i32(0); // used, patched below
    w.i32(overflow);
    w.i64(time_stamp);
    w.i32(PROLOGUE_SIZE as i32);
    w.i32(entries.len() as i32);
    let mut expected = Vec::new();
    for e in entries {
        let at = w.buf.len();
        let (dsize, dlen) = match &e.data {
            Data::Long(_) => (8, 1),
            Data::Bytes(b, spare) => (1, b.len() + spare),
        };
        let name_len = e.name.len() + 1;
        let mut size = ENTRY_HEADER_SIZE + name_len;
        size += (dsize - size % dsize) % dsize;
        let data_offset = size;
        size += dsize * dlen;
        size = (size + 7) & !7;
        w.i32(size as i32);
        w.i32(ENTRY_HEADER_SIZE as i32);
        w.i32(match &e.data {
            Data::Long(_) => 0,
            Data::Bytes(..) => dlen as i32,
        });
        w.buf.push(match e.data {
            Data::Long(_) => b'J',
            Data::Bytes(..) => b'B',
        });
        w.buf.push(u8::from(e.supported));
        w.buf.push(units_code(e.units));
        w.buf.push(variability_code(e.variability));
        w.i32(data_offset as i32);
        w.buf.extend(e.name.as_bytes());
        w.buf.resize(at + data_offset, 0);
        let value = match &e.data {
            Data::Long(v) => {
                w.i64(*v);
                Value::Long(*v)
            }
            Data::Bytes(b, spare) => {
                let mut vector = b.clone();
                vector.resize(b.len() + spare, 0);
                w.buf.extend(&vector);
                if e.units == Units::String {
                    let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
                    Value::String(String::from_utf8_lossy(&b[..end]).into_owned())
                } else {
                    Value::Bytes(vector)
                }
            }
        };
        w.buf.resize(at + size, 0);
        expected.push(Counter {
            name: e.name.clone(),
            value,
            units: e.units,
            variability: e.variability,
            supported: e.supported,
            offset: Some(at),
        });
    }
    let used = w.buf.len();
    w.put_i32(8, used as i32);
    w.buf.resize(used + spare, 0);
    (w.buf, expected)
}

fn units() -> impl Strategy<Value = Units> {
    proptest::sample::select(vec![
        Units::None,
        Units::Bytes,
        Units::Ticks,
        Units::Events,
        Units::String,
        Units::Hertz,
    ])
}

fn variability() -> impl Strategy<Value = Variability> {
    proptest::sample::select(vec![
        Variability::Constant,
        Variability::Monotonic,
        Variability::Variable,
    ])
}

fn entry_spec() -> impl Strategy<Value = EntrySpec> {
    let name = prop_oneof![
        "[a-z][a-zA-Z0-9_]{0,12}(\\.[a-zA-Z0-9_]{1,12}){0,4}",
        "[^\\x00]{1,24}",
    ];
    let data = prop_oneof![
        any::<i64>().prop_map(Data::Long),
        // Strings: any text without NUL, or raw bytes (cut at a NUL, invalid UTF-8 replaced).
        ("[^\\x00]{1,40}", 0..64usize).prop_map(|(s, spare)| Data::Bytes(s.into_bytes(), spare)),
        (proptest::collection::vec(any::<u8>(), 1..40), 0..8usize)
            .prop_map(|(b, spare)| Data::Bytes(b, spare)),
    ];
    (name, data, units(), variability(), any::<bool>()).prop_map(
        |(name, data, units, variability, supported)| EntrySpec {
            name,
            data,
            units,
            variability,
            supported,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn written_regions_round_trip_exactly(
        little in any::<bool>(),
        time_stamp in any::<i64>(),
        overflow in 0..=i32::MAX,
        entries in proptest::collection::vec(entry_spec(), 0..40),
        spare in 0..512usize,
    ) {
        let order = if little { ByteOrder::Little } else { ByteOrder::Big };
        let (buf, expected) = write_region(order, time_stamp, overflow, &entries, spare);
        let s = parse_checked(&buf).unwrap();
        prop_assert_eq!(s.prologue.byte_order, order);
        prop_assert_eq!((s.prologue.major_version, s.prologue.minor_version), (2, 0));
        prop_assert!(s.prologue.accessible);
        prop_assert_eq!(s.prologue.used as usize, buf.len() - spare);
        prop_assert_eq!(s.prologue.overflow, overflow);
        prop_assert_eq!(s.prologue.mod_time_stamp, time_stamp);
        prop_assert_eq!(s.prologue.num_entries as usize, entries.len());
        prop_assert!(!s.tail_in_progress);
        prop_assert_eq!(&s.counters[..entries.len()], &expected[..]);
        // Then jvmstat's pseudo counters, from the prologue.
        let pseudo: Vec<(&str, Value)> = s.counters[entries.len()..]
            .iter()
            .map(|c| (c.name.as_str(), c.value.clone()))
            .collect();
        prop_assert_eq!(pseudo, vec![
            ("sun.perfdata.majorVersion", Value::Long(2)),
            ("sun.perfdata.minorVersion", Value::Long(0)),
            ("sun.perfdata.size", Value::Long(buf.len() as i64)),
            ("sun.perfdata.used", Value::Long((buf.len() - spare) as i64)),
            ("sun.perfdata.overflow", Value::Long(overflow.into())),
            ("sun.perfdata.timestamp", Value::Long(time_stamp)),
        ]);
    }

    /// A region whose newest entry is still being written (`num_entries` counted, `used` bumped,
    /// `entry_length` still 0) yields every finished entry and says the tail is in progress.
    #[test]
    fn written_regions_with_a_tail_in_progress_keep_every_finished_entry(
        little in any::<bool>(),
        entries in proptest::collection::vec(entry_spec(), 0..20),
        reserved in 4..64usize,
    ) {
        let order = if little { ByteOrder::Little } else { ByteOrder::Big };
        let (mut buf, expected) = write_region(order, 1, 0, &entries, reserved);
        let used = buf.len() - reserved;
        let mut w = Writer { buf: std::mem::take(&mut buf), order };
        w.put_i32(8, (used + reserved) as i32);
        w.put_i32(28, entries.len() as i32 + 1);
        let s = parse_checked(&w.buf).unwrap();
        prop_assert!(s.tail_in_progress);
        prop_assert_eq!(&s.counters[..entries.len()], &expected[..]);
        prop_assert_eq!(s.counters.len(), entries.len() + 6);
    }
}
