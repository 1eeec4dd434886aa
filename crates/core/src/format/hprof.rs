//! The HPROF binary heap dump format, "JAVA PROFILE 1.0.2", as HotSpot's own dumper writes it
//! (`openjdk/jdk:src/hotspot/share/services/heapDumper.cpp`, whose header comment is the
//! format's specification): a header, then records `u1 tag, u4 µs since the header's time, u4
//! body length, body`; the heap itself in `HEAP_DUMP_SEGMENT` records of sub-records, closed by
//! `HEAP_DUMP_END`. Every integer is big-endian; identifiers are 8 bytes (`oopSize` of a 64-bit
//! VM, compressed oops or not).
//!
//! [`HprofWriter`] is a streaming encoder: it keeps one segment (at most [`SEGMENT_BYTES`]) in
//! memory and writes it out when the next sub-record does not fit, record header and body in one
//! `write_all` (an output buffer smaller than a segment passes it through without a copy); a
//! sub-record larger than that (a big array) gets a segment of its own, its body streamed in
//! pieces. Peak memory is the segment, whatever the heap's size.

use std::io::{self, Write};

pub use crate::heap::classes::BasicType;
pub use crate::heap::dump::{ClassDump, HeapDumpSink, Root, StaticField};

/// The format's name and version, NUL-terminated in the header.
pub const MAGIC: &[u8] = b"JAVA PROFILE 1.0.2\0";
/// Identifier size in bytes (addresses of a 64-bit VM).
pub const ID_SIZE: u32 = 8;
/// The largest segment kept in memory (HotSpot's `io_buffer_max_size`, 1 MiB).
pub const SEGMENT_BYTES: usize = 1 << 20;

/// Top-level record tags (`hprofTag`, heapDumper.cpp).
pub mod tag {
    /// `HPROF_UTF8`: id, then the bytes (no NUL).
    pub const UTF8: u8 = 0x01;
    /// `HPROF_LOAD_CLASS`: u4 class serial, id class, u4 stack trace serial, id name.
    pub const LOAD_CLASS: u8 = 0x02;
    /// `HPROF_FRAME`: id frame, id method name, id signature, id source file, u4 class serial,
    /// i4 line (-1 unknown, -2 compiled, -3 native).
    pub const FRAME: u8 = 0x04;
    /// `HPROF_TRACE`: u4 serial, u4 thread serial, u4 frame count, ids of the frames.
    pub const TRACE: u8 = 0x05;
    /// `HPROF_HEAP_DUMP_SEGMENT`: sub-records.
    pub const HEAP_DUMP_SEGMENT: u8 = 0x1C;
    /// `HPROF_HEAP_DUMP_END`: empty.
    pub const HEAP_DUMP_END: u8 = 0x2C;
}

/// Heap dump sub-record tags (`hprofTag`, heapDumper.cpp).
pub mod sub {
    /// `HPROF_GC_ROOT_JNI_GLOBAL`: id object, id JNI global ref.
    pub const ROOT_JNI_GLOBAL: u8 = 0x01;
    /// `HPROF_GC_ROOT_JNI_LOCAL`: id object, u4 thread serial, u4 frame depth.
    pub const ROOT_JNI_LOCAL: u8 = 0x02;
    /// `HPROF_GC_ROOT_JAVA_FRAME`: id object, u4 thread serial, u4 frame depth.
    pub const ROOT_JAVA_FRAME: u8 = 0x03;
    /// `HPROF_GC_ROOT_STICKY_CLASS`: id class object.
    pub const ROOT_STICKY_CLASS: u8 = 0x05;
    /// `HPROF_GC_ROOT_THREAD_OBJ`: id thread object, u4 thread serial, u4 stack trace serial.
    pub const ROOT_THREAD_OBJ: u8 = 0x08;
    /// `HPROF_GC_CLASS_DUMP`.
    pub const CLASS_DUMP: u8 = 0x20;
    /// `HPROF_GC_INSTANCE_DUMP`.
    pub const INSTANCE_DUMP: u8 = 0x21;
    /// `HPROF_GC_OBJ_ARRAY_DUMP`.
    pub const OBJ_ARRAY_DUMP: u8 = 0x22;
    /// `HPROF_GC_PRIM_ARRAY_DUMP`.
    pub const PRIM_ARRAY_DUMP: u8 = 0x23;
}

/// Counts of what was written, for `-v`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Bytes written.
    pub bytes: u64,
    /// Top-level records.
    pub records: u64,
    /// Heap dump sub-records.
    pub sub_records: u64,
    /// Heap dump segments.
    pub segments: u64,
}

/// A record's header: tag, time, body length.
const RECORD_HEADER: usize = 9;

/// A streaming HPROF encoder over `out` (see the module documentation).
pub struct HprofWriter<W: Write> {
    out: W,
    /// The segment being filled: its record header's room ([`RECORD_HEADER`] bytes), then
    /// its sub-records.
    seg: Vec<u8>,
    /// Bytes still owed to the sub-record begun.
    owed: u64,
    /// Whether that sub-record is streamed straight to `out` (a segment of its own).
    direct: bool,
    /// Elements turned big-endian, reused.
    scratch: Vec<u8>,
    written: Written,
}

impl<W: Write> HprofWriter<W> {
    /// Writes the header (`millis` since the epoch as the dump's time) and returns the writer.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn new(mut out: W, millis: u64) -> io::Result<Self> {
        out.write_all(MAGIC)?;
        out.write_all(&ID_SIZE.to_be_bytes())?;
        out.write_all(&millis.to_be_bytes())?;
        Ok(HprofWriter {
            out,
            seg: {
                let mut seg = Vec::with_capacity(RECORD_HEADER + SEGMENT_BYTES);
                seg.resize(RECORD_HEADER, 0);
                seg
            },
            owed: 0,
            direct: false,
            scratch: Vec::new(),
            written: Written {
                bytes: (MAGIC.len() + 12) as u64,
                ..Written::default()
            },
        })
    }

    /// What has been written so far.
    pub fn written(&self) -> Written {
        self.written
    }

    fn record(&mut self, tag: u8, body: &[u8]) -> io::Result<()> {
        if self.owed != 0 {
            return Err(io::Error::other("a sub-record was left short"));
        }
        self.flush_segment()?;
        let len = u32::try_from(body.len())
            .map_err(|_| io::Error::other("an HPROF record over 4 GiB"))?;
        self.out.write_all(&[tag])?;
        self.out.write_all(&0u32.to_be_bytes())?;
        self.out.write_all(&len.to_be_bytes())?;
        self.out.write_all(body)?;
        self.written.bytes += 9 + u64::from(len);
        self.written.records += 1;
        Ok(())
    }

    /// A `UTF8` record: `id` names `text`.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn utf8(&mut self, id: u64, text: &[u8]) -> io::Result<()> {
        let mut b = Vec::with_capacity(8 + text.len());
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(text);
        self.record(tag::UTF8, &b)
    }

    /// A `LOAD_CLASS` record.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn load_class(&mut self, serial: u32, class: u64, trace: u32, name: u64) -> io::Result<()> {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&serial.to_be_bytes());
        b.extend_from_slice(&class.to_be_bytes());
        b.extend_from_slice(&trace.to_be_bytes());
        b.extend_from_slice(&name.to_be_bytes());
        self.record(tag::LOAD_CLASS, &b)
    }

    /// A `FRAME` record: method name, signature and source file ids, the class's serial and
    /// the line (-1 unknown, -2 compiled, -3 native).
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn frame(
        &mut self,
        id: u64,
        method: u64,
        signature: u64,
        source: u64,
        class_serial: u32,
        line: i32,
    ) -> io::Result<()> {
        let mut b = Vec::with_capacity(40);
        for v in [id, method, signature, source] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(&class_serial.to_be_bytes());
        b.extend_from_slice(&line.to_be_bytes());
        self.record(tag::FRAME, &b)
    }

    /// A `TRACE` record: the frames (ids of `FRAME` records) of thread `thread` (0: none).
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn trace(&mut self, serial: u32, thread: u32, frames: &[u64]) -> io::Result<()> {
        let mut b = Vec::with_capacity(12 + 8 * frames.len());
        b.extend_from_slice(&serial.to_be_bytes());
        b.extend_from_slice(&thread.to_be_bytes());
        b.extend_from_slice(&(frames.len() as u32).to_be_bytes());
        for f in frames {
            b.extend_from_slice(&f.to_be_bytes());
        }
        self.record(tag::TRACE, &b)
    }

    fn flush_segment(&mut self) -> io::Result<()> {
        debug_assert_eq!(self.owed, 0, "a sub-record was left short");
        let len = self.seg.len() - RECORD_HEADER;
        if len == 0 {
            return Ok(());
        }
        // At most SEGMENT_BYTES: a u32.
        let len = len as u32;
        self.seg[0] = tag::HEAP_DUMP_SEGMENT;
        self.seg[1..5].copy_from_slice(&0u32.to_be_bytes());
        self.seg[5..9].copy_from_slice(&len.to_be_bytes());
        self.out.write_all(&self.seg)?;
        self.written.bytes += 9 + u64::from(len);
        self.written.records += 1;
        self.written.segments += 1;
        self.seg.truncate(RECORD_HEADER);
        Ok(())
    }

    /// Starts a sub-record of `len` bytes in all (its tag included), to be given with
    /// [`Self::put`]: in the current segment when it fits, else in the next one, or in a
    /// segment of its own streamed to the output when it is larger than [`SEGMENT_BYTES`].
    ///
    /// # Errors
    /// The output's I/O error; a sub-record of 4 GiB or more.
    pub fn begin(&mut self, len: u64) -> io::Result<()> {
        if self.owed != 0 {
            return Err(io::Error::other("a sub-record was left short"));
        }
        self.written.sub_records += 1;
        self.direct = false;
        if (self.seg.len() - RECORD_HEADER) as u64 + len > SEGMENT_BYTES as u64 {
            self.flush_segment()?;
        }
        self.owed = len;
        if len <= SEGMENT_BYTES as u64 {
            return Ok(());
        }
        let len32 =
            u32::try_from(len).map_err(|_| io::Error::other("an HPROF sub-record over 4 GiB"))?;
        self.out.write_all(&[tag::HEAP_DUMP_SEGMENT])?;
        self.out.write_all(&0u32.to_be_bytes())?;
        self.out.write_all(&len32.to_be_bytes())?;
        self.written.bytes += 9;
        self.written.records += 1;
        self.written.segments += 1;
        self.direct = true;
        Ok(())
    }

    /// Bytes of the sub-record begun with [`Self::begin`].
    ///
    /// # Errors
    /// The output's I/O error.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        let n = bytes.len() as u64;
        if n > self.owed {
            return Err(io::Error::other("a sub-record longer than begun"));
        }
        self.owed -= n;
        if self.direct {
            self.out.write_all(bytes)?;
            self.written.bytes += n;
        } else {
            self.seg.extend_from_slice(bytes);
        }
        Ok(())
    }

    /// A `u1` of the current sub-record.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn u1(&mut self, v: u8) -> io::Result<()> {
        self.put(&[v])
    }

    /// A `u2` of the current sub-record.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn u2(&mut self, v: u16) -> io::Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// A `u4` of the current sub-record.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn u4(&mut self, v: u32) -> io::Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// An id (`u8`) of the current sub-record.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn id(&mut self, v: u64) -> io::Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// A root sub-record of tag `kind` for object `id`, with `extra` u4s after it (thread
    /// serial and trace or frame, as the kind has them) or, for `ROOT_JNI_GLOBAL`, the
    /// handle's address as `Some`.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn root(
        &mut self,
        kind: u8,
        id: u64,
        extra: &[u32],
        handle: Option<u64>,
    ) -> io::Result<()> {
        let len = 9 + 4 * extra.len() as u64 + handle.map_or(0, |_| 8);
        self.begin(len)?;
        self.u1(kind)?;
        self.id(id)?;
        if let Some(h) = handle {
            self.id(h)?;
        }
        for e in extra {
            self.u4(*e)?;
        }
        Ok(())
    }

    /// A `CLASS_DUMP` sub-record (no constant pool entries, no signers or protection domain).
    ///
    /// # Errors
    /// The output's I/O error; more than 65535 fields.
    pub fn class_dump(&mut self, c: &ClassDump) -> io::Result<()> {
        let too_many = || io::Error::other("a class with more than 65535 fields");
        let n_statics = u16::try_from(c.statics.len()).map_err(|_| too_many())?;
        let n_fields = u16::try_from(c.fields.len()).map_err(|_| too_many())?;
        let statics: u64 = c.statics.iter().map(|s| 9 + u64::from(s.ty.size())).sum();
        let len = 1 + 8 + 4 + 8 * 6 + 4 + 2 + 2 + statics + 2 + 9 * c.fields.len() as u64;
        self.begin(len)?;
        self.u1(sub::CLASS_DUMP)?;
        self.id(c.class)?;
        self.u4(0)?;
        self.id(c.super_class)?;
        self.id(c.loader)?;
        for _ in 0..4 {
            self.id(0)?; // signers, protection domain, two reserved
        }
        self.u4(c.instance_size)?;
        self.u2(0)?; // constant pool entries
        self.u2(n_statics)?;
        for s in &c.statics {
            self.id(s.name)?;
            self.u1(s.ty as u8)?;
            let bytes = s.value.to_be_bytes();
            self.put(&bytes[8 - s.ty.size() as usize..])?;
        }
        self.u2(n_fields)?;
        for (name, ty) in &c.fields {
            self.id(*name)?;
            self.u1(*ty as u8)?;
        }
        Ok(())
    }

    /// Closes the heap dump (`HEAP_DUMP_END`) and returns the output, flushed.
    ///
    /// # Errors
    /// The output's I/O error.
    pub fn finish(mut self) -> io::Result<(W, Written)> {
        if self.owed != 0 {
            return Err(io::Error::other("a sub-record was left short"));
        }
        self.record(tag::HEAP_DUMP_END, &[])?;
        self.out.flush()?;
        Ok((self.out, self.written))
    }
}

impl<W: Write> HeapDumpSink for HprofWriter<W> {
    fn utf8(&mut self, id: u64, text: &[u8]) -> io::Result<()> {
        HprofWriter::utf8(self, id, text)
    }

    fn load_class(&mut self, serial: u32, class: u64, trace: u32, name: u64) -> io::Result<()> {
        HprofWriter::load_class(self, serial, class, trace, name)
    }

    fn frame(
        &mut self,
        id: u64,
        method: u64,
        signature: u64,
        source: u64,
        class_serial: u32,
        line: i32,
    ) -> io::Result<()> {
        HprofWriter::frame(self, id, method, signature, source, class_serial, line)
    }

    fn trace(&mut self, serial: u32, thread: u32, frames: &[u64]) -> io::Result<()> {
        HprofWriter::trace(self, serial, thread, frames)
    }

    fn class_dump(&mut self, c: &ClassDump) -> io::Result<()> {
        HprofWriter::class_dump(self, c)
    }

    fn root(&mut self, root: Root) -> io::Result<()> {
        match root {
            Root::StickyClass(id) => HprofWriter::root(self, sub::ROOT_STICKY_CLASS, id, &[], None),
            Root::ThreadObj { id, thread, trace } => {
                HprofWriter::root(self, sub::ROOT_THREAD_OBJ, id, &[thread, trace], None)
            }
            Root::JavaFrame { id, thread, depth } => {
                HprofWriter::root(self, sub::ROOT_JAVA_FRAME, id, &[thread, depth], None)
            }
            Root::JniGlobal { id, handle } => {
                HprofWriter::root(self, sub::ROOT_JNI_GLOBAL, id, &[], Some(handle))
            }
            Root::JniLocal { id, thread, depth } => {
                HprofWriter::root(self, sub::ROOT_JNI_LOCAL, id, &[thread, depth], None)
            }
        }
    }

    fn instance(&mut self, id: u64, class: u64, values: &[(BasicType, u64)]) -> io::Result<()> {
        let bytes: u32 = values.iter().map(|(t, _)| t.size()).sum();
        let len = 1 + 8 + 4 + 8 + 4 + u64::from(bytes);
        self.begin(len)?;
        if !self.direct {
            // Straight into the segment: it has room (`begin`).
            let b = &mut self.seg;
            b.push(sub::INSTANCE_DUMP);
            b.extend_from_slice(&id.to_be_bytes());
            b.extend_from_slice(&STACK_TRACE.to_be_bytes());
            b.extend_from_slice(&class.to_be_bytes());
            b.extend_from_slice(&bytes.to_be_bytes());
            for &(ty, v) in values {
                let be = v.to_be_bytes();
                b.extend_from_slice(&be[8 - ty.size() as usize..]);
            }
            self.owed = 0;
            return Ok(());
        }
        let mut b = std::mem::take(&mut self.scratch);
        b.clear();
        b.push(sub::INSTANCE_DUMP);
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&STACK_TRACE.to_be_bytes());
        b.extend_from_slice(&class.to_be_bytes());
        b.extend_from_slice(&bytes.to_be_bytes());
        for &(ty, v) in values {
            let be = v.to_be_bytes();
            b.extend_from_slice(&be[8 - ty.size() as usize..]);
        }
        let put = self.put(&b);
        self.scratch = b;
        put
    }

    fn begin_object_array(&mut self, id: u64, class: u64, len: u32) -> io::Result<()> {
        self.begin(1 + 8 + 4 + 4 + 8 + 8 * u64::from(len))?;
        if !self.direct {
            let b = &mut self.seg;
            b.push(sub::OBJ_ARRAY_DUMP);
            b.extend_from_slice(&id.to_be_bytes());
            b.extend_from_slice(&STACK_TRACE.to_be_bytes());
            b.extend_from_slice(&len.to_be_bytes());
            b.extend_from_slice(&class.to_be_bytes());
            self.owed -= 25;
            return Ok(());
        }
        self.u1(sub::OBJ_ARRAY_DUMP)?;
        self.id(id)?;
        self.u4(STACK_TRACE)?;
        self.u4(len)?;
        self.id(class)
    }

    fn object_elements(&mut self, ids: &[u64]) -> io::Result<()> {
        let n = 8 * ids.len() as u64;
        if !self.direct && n <= self.owed {
            self.owed -= n;
            for id in ids {
                self.seg.extend_from_slice(&id.to_be_bytes());
            }
            return Ok(());
        }
        let mut b = std::mem::take(&mut self.scratch);
        b.clear();
        for id in ids {
            b.extend_from_slice(&id.to_be_bytes());
        }
        let put = self.put(&b);
        self.scratch = b;
        put
    }

    fn begin_primitive_array(&mut self, id: u64, ty: BasicType, len: u32) -> io::Result<()> {
        self.begin(1 + 8 + 4 + 4 + 1 + u64::from(ty.size()) * u64::from(len))?;
        if !self.direct {
            let b = &mut self.seg;
            b.push(sub::PRIM_ARRAY_DUMP);
            b.extend_from_slice(&id.to_be_bytes());
            b.extend_from_slice(&STACK_TRACE.to_be_bytes());
            b.extend_from_slice(&len.to_be_bytes());
            b.push(ty as u8);
            self.owed -= 18;
            return Ok(());
        }
        self.u1(sub::PRIM_ARRAY_DUMP)?;
        self.id(id)?;
        self.u4(STACK_TRACE)?;
        self.u4(len)?;
        self.u1(ty as u8)
    }

    fn primitive_elements(&mut self, ty: BasicType, le: &[u8]) -> io::Result<()> {
        let size = ty.size() as usize;
        if size == 1 {
            return self.put(le);
        }
        let n = le.len() as u64;
        if !self.direct && n <= self.owed {
            self.owed -= n;
            let from = self.seg.len();
            self.seg.extend_from_slice(le);
            for e in self.seg[from..].chunks_exact_mut(size) {
                e.reverse();
            }
            return Ok(());
        }
        let mut b = std::mem::take(&mut self.scratch);
        b.clear();
        b.extend_from_slice(le);
        for e in b.chunks_exact_mut(size) {
            e.reverse();
        }
        let put = self.put(&b);
        self.scratch = b;
        put
    }
}

/// The stack trace serial objects are written with: the empty trace every dump has
/// (HotSpot's `STACK_TRACE_ID`).
pub const STACK_TRACE: u32 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    fn be32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn header_records_and_segments_are_framed() {
        let mut w = HprofWriter::new(Vec::new(), 0x0102_0304_0506_0708).unwrap();
        w.utf8(7, b"java/lang/Object").unwrap();
        w.root(sub::ROOT_STICKY_CLASS, 0x1000, &[], None).unwrap();
        w.root(sub::ROOT_THREAD_OBJ, 0x2000, &[1, 2], None).unwrap();
        let (out, written) = w.finish().unwrap();
        assert_eq!(&out[..19], MAGIC);
        assert_eq!(be32(&out, 19), 8);
        assert_eq!(&out[23..31], &0x0102_0304_0506_0708u64.to_be_bytes());
        let utf8 = 31;
        assert_eq!(out[utf8], tag::UTF8);
        assert_eq!(be32(&out, utf8 + 5), 8 + 16);
        let seg = utf8 + 9 + 24;
        assert_eq!(out[seg], tag::HEAP_DUMP_SEGMENT);
        assert_eq!(be32(&out, seg + 5), 9 + 17);
        let end = seg + 9 + 26;
        assert_eq!(out[end], tag::HEAP_DUMP_END);
        assert_eq!(out.len(), end + 9);
        assert_eq!(written.bytes, out.len() as u64);
        assert_eq!(
            (written.records, written.sub_records, written.segments),
            (3, 2, 1)
        );
    }

    #[test]
    fn a_big_sub_record_gets_its_own_segment_streamed() {
        let mut w = HprofWriter::new(Vec::new(), 0).unwrap();
        w.root(sub::ROOT_STICKY_CLASS, 1, &[], None).unwrap();
        let big = SEGMENT_BYTES as u64 + 10;
        w.begin(big).unwrap();
        w.put(&vec![0xAB; big as usize - 1]).unwrap();
        w.put(&[0xCD]).unwrap();
        assert!(w.put(&[0]).is_err(), "longer than begun");
        let (out, written) = w.finish().unwrap();
        let first = MAGIC.len() + 12;
        assert_eq!(be32(&out, first + 5), 9);
        let second = first + 9 + 9;
        assert_eq!(out[second], tag::HEAP_DUMP_SEGMENT);
        assert_eq!(u64::from(be32(&out, second + 5)), big);
        assert_eq!(out[second + 9 + big as usize - 1], 0xCD);
        assert_eq!(written.segments, 2);
    }

    #[test]
    fn class_dump_length_matches_its_body() {
        let mut w = HprofWriter::new(Vec::new(), 0).unwrap();
        w.class_dump(&ClassDump {
            class: 1,
            super_class: 2,
            loader: 0,
            instance_size: 12,
            statics: vec![
                StaticField {
                    name: 3,
                    ty: BasicType::Int,
                    value: 0xfffffffe,
                },
                StaticField {
                    name: 4,
                    ty: BasicType::Object,
                    value: 0x55,
                },
            ],
            fields: vec![(5, BasicType::Long), (6, BasicType::Int)],
        })
        .unwrap();
        let (out, _) = w.finish().unwrap();
        let seg = MAGIC.len() + 12;
        let len = be32(&out, seg + 5) as usize;
        assert_eq!(len, 1 + 8 + 4 + 48 + 4 + 2 + 2 + (9 + 4) + (9 + 8) + 2 + 18);
        let body = &out[seg + 9..seg + 9 + len];
        assert_eq!(body[0], sub::CLASS_DUMP);
        // The int static's value: its 4 low bytes.
        let statics = 1 + 8 + 4 + 48 + 4 + 2 + 2;
        assert_eq!(&body[statics + 9..statics + 13], &[0xff, 0xff, 0xff, 0xfe]);
    }

    #[test]
    fn types_follow_signatures_and_basic_types() {
        assert_eq!(BasicType::of_signature("[I"), Some(BasicType::Object));
        assert_eq!(
            BasicType::of_signature("Ljava/lang/String;"),
            Some(BasicType::Object)
        );
        assert_eq!(BasicType::of_signature("J"), Some(BasicType::Long));
        assert_eq!(BasicType::of_signature("V"), None);
        assert_eq!(BasicType::of_basic_type(10), Some(BasicType::Int));
        assert_eq!(BasicType::of_basic_type(12), None);
        assert_eq!(BasicType::Object.size(), 8);
    }
}
