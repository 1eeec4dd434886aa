//! The recorded JVM of the fast tier (issue 39 item 5): `testdata/threads/jdk21.core.gz`, a
//! minimal ELF core of a small JDK 21 (`tests/java/FixtureTarget.java`) that holds only the
//! pages a thread dump (with `--virtual`) and a class histogram of it read, so that plain
//! `cargo test` walks threads, frames, locks, a deadlock, virtual threads and the heap with no
//! JDK.
//!
//! The file is an ordinary ELF core (read by [`crate::read::CoreMemory`], nothing of its own):
//! the ELF header, one `PT_NOTE` with the gcore's `CORE` notes the pipelines read (`NT_PRSTATUS`
//! of every thread, `NT_PRPSINFO`, `NT_AUXV`, `NT_FILE`: libjvm's mappings come from it), and a
//! read-only `PT_LOAD` for every run of recorded pages, their bytes after the notes: 926 pages
//! of 4 KiB in 225 runs (mostly the heap), 3.8 MB, 0.8 MB gzipped (flate2). Beside it, the references taken at recording time: our
//! own dump (`jdk21.threads.txt`, `inspect threads --virtual --core` of the whole gcore),
//! our histogram (`jdk21.histo.txt`) and jcmd's `Thread.print -l` and
//! `GC.class_histogram -all` of the JVM just before the gcore (`jdk21.jcmd-*.txt`, for the
//! record: `scripts/record-thread-fixture.sh` compares them with ours).
//!
//! [`record`] (an ignored test, run by `scripts/record-thread-fixture.sh` on a gcore) makes it:
//! the same reads as `dump_threads_core` and `heap_histogram_core` through a [`Recorder`], the
//! pages noted, then written out ([`minimal_core`]) and read back by the normal pipelines, which
//! must print exactly what they print from the whole gcore.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

// The stages a recording reads through, by their paths today (one place to change).
use crate::heap::histogram::histogram;
use crate::locate::core_libjvm::libjvm_from_nt_file;
use crate::locate::{LoadedImage, exported_in_memory};
use crate::memory::{MemoryError, ReadMemory};
use crate::read::CoreMemory;
use crate::threads::dump::{Dump, walk};
use crate::vm::VmModel;
use crate::vm::paged::Paged;
use crate::vm::tables::all_symbols;

/// The fixture's directory in the repository (tests read it there; the package has no testdata).
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/threads");

/// Largest uncompressed fixture accepted (it is a file: its length is not trusted).
const MAX_CORE: u64 = 64 << 20;

/// A [`ReadMemory`] that passes every read to `inner` and notes the pages it touched.
struct Recorder<'a> {
    inner: &'a (dyn ReadMemory + Sync),
    pages: std::sync::Mutex<BTreeSet<u64>>,
}

impl<'a> Recorder<'a> {
    fn new(inner: &'a (dyn ReadMemory + Sync)) -> Self {
        Recorder {
            inner,
            pages: std::sync::Mutex::new(BTreeSet::new()),
        }
    }

    /// The page numbers of `[addr, addr + len)`.
    fn span(&self, addr: u64, len: usize) -> std::ops::RangeInclusive<u64> {
        let page = self.inner.page_size();
        let last = addr.saturating_add(len.max(1) as u64 - 1);
        (addr / page)..=(last / page)
    }
}

impl ReadMemory for Recorder<'_> {
    fn page_size(&self) -> u64 {
        self.inner.page_size()
    }

    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let result = self.inner.read_exact_at(addr, buf);
        let page = self.inner.page_size();
        let mut pages = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        for p in self.span(addr, buf.len()) {
            // A failed read keeps the pages that did read, so the replay fails where it did.
            if result.is_ok() || self.inner.read_vec(p * page, 1, 1).is_ok() {
                pages.insert(p);
            }
        }
        result
    }
}

/// `CORE` notes the pipelines read (`NT_PRSTATUS`, `NT_PRPSINFO`, `NT_AUXV`, `NT_FILE`).
const KEPT_NOTES: [u32; 4] = [1, 3, 6, 0x4649_4c45];

/// An ELF core of `machine` holding `notes` (raw note records) and `segments` (address, bytes),
/// each a read-only `PT_LOAD`.
fn minimal_core(machine: u16, notes: &[u8], segments: &[(u64, Vec<u8>)]) -> Vec<u8> {
    const EHDR: usize = 64;
    const PHDR: usize = 56;
    let phnum = 1 + segments.len();
    let notes_at = EHDR + PHDR * phnum;
    let mut data_at = (notes_at + notes.len()).next_multiple_of(16);
    let mut out = Vec::new();
    // Elf64_Ehdr: ELFCLASS64, ELFDATA2LSB, EV_CURRENT; ET_CORE.
    out.extend(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    out.extend(4u16.to_le_bytes());
    out.extend(machine.to_le_bytes());
    out.extend(1u32.to_le_bytes());
    out.extend(0u64.to_le_bytes()); // e_entry
    out.extend((EHDR as u64).to_le_bytes()); // e_phoff
    out.extend(0u64.to_le_bytes()); // e_shoff
    out.extend(0u32.to_le_bytes()); // e_flags
    out.extend((EHDR as u16).to_le_bytes());
    out.extend((PHDR as u16).to_le_bytes());
    out.extend(
        u16::try_from(phnum)
            .expect("fewer than 65535 runs")
            .to_le_bytes(),
    );
    out.extend([0u8; 6]); // e_shentsize, e_shnum, e_shstrndx
    let phdr = |out: &mut Vec<u8>, p_type: u32, flags: u32, off: usize, vaddr: u64, len: usize| {
        out.extend(p_type.to_le_bytes());
        out.extend(flags.to_le_bytes());
        out.extend((off as u64).to_le_bytes());
        out.extend(vaddr.to_le_bytes());
        out.extend(0u64.to_le_bytes()); // p_paddr
        out.extend((len as u64).to_le_bytes()); // p_filesz
        out.extend((len as u64).to_le_bytes()); // p_memsz
        out.extend(1u64.to_le_bytes()); // p_align
    };
    phdr(&mut out, 4, 4, notes_at, 0, notes.len());
    for (vaddr, bytes) in segments {
        phdr(&mut out, 1, 4, data_at, *vaddr, bytes.len());
        data_at += bytes.len();
    }
    out.extend(notes);
    out.resize(out.len().next_multiple_of(16), 0);
    for (_, bytes) in segments {
        out.extend(bytes);
    }
    out
}

/// The kept notes of the core at `path`, as raw records.
fn kept_notes(path: &Path) -> Vec<u8> {
    let map = std::fs::read(path).expect("read the gcore");
    let header = crate::elf::parse_header(&map).expect("an ELF header");
    let phdrs = crate::elf::coredump::program_headers(&map, &header).expect("program headers");
    let mut out = Vec::new();
    for p in phdrs.iter().filter(|p| p.p_type == 4) {
        let bytes = &map[p.p_offset as usize..(p.p_offset + p.p_filesz) as usize];
        for n in crate::elf::notes(bytes) {
            if n.name == "CORE" && KEPT_NOTES.contains(&n.n_type) {
                out.extend(crate::elf::note(b"CORE\0", n.n_type, n.desc));
            }
        }
    }
    out
}

/// The gzipped core `gz` decompressed into `dir`: the path of the core.
///
/// # Errors
/// A sentence when the file is missing, not gzip, or larger than [`MAX_CORE`] unpacked.
fn unpack(gz: &Path, dir: &Path) -> Result<PathBuf, String> {
    let file = std::fs::File::open(gz).map_err(|e| format!("{}: {e}", gz.display()))?;
    let mut core = Vec::new();
    flate2::read::GzDecoder::new(file)
        .take(MAX_CORE + 1)
        .read_to_end(&mut core)
        .map_err(|e| format!("{}: {e}", gz.display()))?;
    if core.len() as u64 > MAX_CORE {
        return Err(format!("{}: more than {MAX_CORE} bytes", gz.display()));
    }
    let name = gz
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("fixture.core.gz");
    let out = dir.join(name.trim_end_matches(".gz"));
    std::fs::write(&out, core).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(out)
}

fn reference(name: &str) -> String {
    let path = Path::new(DIR).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The options of `inspect threads --virtual`.
fn virtual_threads() -> super::ThreadsOptions {
    super::ThreadsOptions {
        virtual_threads: true,
        ..Default::default()
    }
}

fn threads_text(core: &Path) -> Result<(String, super::ThreadDump), crate::error::Error> {
    let dump = super::dump_threads_core(core, None, None, &virtual_threads())?;
    Ok((crate::format::thread_dump::to_jcmd_text(&dump.dump), dump))
}

fn histo_text(core: &Path) -> Result<String, crate::error::Error> {
    let h = super::heap_histogram_core(core, None, None)?;
    let mut out = Vec::new();
    crate::format::histogram::write_histogram(&mut out, &h.histogram, true)
        .expect("writing to a Vec");
    Ok(String::from_utf8(out).expect("UTF-8"))
}

/// Records the fixture from the gcore `$HSINSPECT_FIXTURE_GCORE` into `testdata/threads/`
/// (`scripts/record-thread-fixture.sh` makes the gcore and runs this). Without the variable
/// (`scripts/test.sh` runs the ignored tests too) it does nothing.
#[test]
#[ignore = "needs a gcore of FixtureTarget: run scripts/record-thread-fixture.sh"]
fn record() {
    let Some(gcore) = std::env::var_os("HSINSPECT_FIXTURE_GCORE").map(PathBuf::from) else {
        eprintln!("HSINSPECT_FIXTURE_GCORE not set: nothing recorded");
        return;
    };
    let name = "jdk21";
    let mut core = CoreMemory::open(&gcore).expect("open the gcore");
    let module = libjvm_from_nt_file(&core, None, None).expect("libjvm in the gcore");
    super::coredump::back_with_library(&mut core, &module);
    let arch = crate::registers::Arch::from_elf_machine(core.machine()).expect("x86_64/aarch64");
    let rec = Recorder::new(&core);
    // The reads of `threads::open_core` (the build-id check of `back_with_library` included) ...
    let _ = LoadedImage::read(&module, &rec);
    let names: Vec<&'static str> = all_symbols().collect();
    let (_, symbols) = exported_in_memory(&module, &rec, &names).expect("libjvm's symbols");
    let paged = Paged::new(&rec);
    let vm = VmModel::read(&paged, &|n| symbols.get(n).copied())
        .expect("the VM model")
        .with_arch(arch);
    // ... of `dump_threads_core` with `--virtual` ...
    let paged = Paged::new(&rec);
    let mut dump = walk(&vm, &paged, &|tid| core.thread_registers(tid)).expect("the walk");
    dump.read_virtual_threads(&vm, &paged);
    // ... and of `heap_histogram_core` (the model again: it is read the same way).
    histogram(&vm, &rec).expect("the histogram");
    let pages = rec.pages.into_inner().unwrap_or_else(|e| e.into_inner());
    let page = core.page_size();
    let mut segments: Vec<(u64, Vec<u8>)> = Vec::new();
    for p in pages {
        let bytes = core
            .read_vec(p * page, page as usize, page as usize)
            .unwrap_or_else(|e| panic!("page {:#x} noted but not whole: {e}", p * page));
        match segments.last_mut() {
            Some((at, run)) if *at + run.len() as u64 == p * page => run.extend(bytes),
            _ => segments.push((p * page, bytes)),
        }
    }
    let image = minimal_core(core.machine(), &kept_notes(&gcore), &segments);
    let dir = Path::new(DIR);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let minimal = tmp.path().join(format!("{name}.core"));
    std::fs::write(&minimal, &image).expect("write the minimal core");
    // The minimal core must print what the whole gcore prints.
    let (whole, _) = threads_text(&gcore).expect("the gcore's dump");
    let (replayed, _) = threads_text(&minimal).expect("the minimal core's dump");
    assert_eq!(
        replayed, whole,
        "the minimal core's dump differs from the gcore's"
    );
    let whole_histo = histo_text(&gcore).expect("the gcore's histogram");
    assert_eq!(
        histo_text(&minimal).expect("the minimal core's histogram"),
        whole_histo
    );
    let gz = std::fs::File::create(dir.join(format!("{name}.core.gz"))).expect("create");
    let mut enc = flate2::write::GzEncoder::new(gz, flate2::Compression::best());
    std::io::Write::write_all(&mut enc, &image).expect("compress");
    enc.finish().expect("compress");
    std::fs::write(dir.join(format!("{name}.threads.txt")), whole).expect("write");
    std::fs::write(dir.join(format!("{name}.histo.txt")), whole_histo).expect("write");
    eprintln!(
        "{}: {} runs, {} bytes of pages, {} bytes in all",
        minimal.display(),
        segments.len(),
        segments.iter().map(|(_, b)| b.len()).sum::<usize>(),
        image.len()
    );
}

/// The recorded JVM unpacked into a temporary directory (kept alive with it).
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let core =
        unpack(&Path::new(DIR).join("jdk21.core.gz"), dir.path()).unwrap_or_else(|e| panic!("{e}"));
    (dir, core)
}

/// The thread walk on the recorded JVM, with no JDK: the same text as at recording time
/// (itself checked against jcmd's `Thread.print -l` then), and the structure it must have.
#[test]
fn recorded_jvm_walks_threads_frames_locks_a_deadlock_and_virtual_threads() {
    let (_dir, core) = fixture();
    let (text, taken) = threads_text(&core).expect("the recorded JVM's thread dump");
    let dump = &taken.dump;
    // Every byte came from the fixture, none from a libjvm on this machine.
    assert!(
        !taken
            .details
            .iter()
            .any(|d| matches!(d, super::Detail::CoreBytesFromFile { .. })),
        "{:?}",
        taken.details
    );
    let names: Vec<&str> = dump
        .threads
        .iter()
        .filter_map(|t| t.java.as_ref().map(|j| j.name.as_str()))
        .collect();
    for want in [
        "main",
        "Reference Handler",
        "fx-object-wait",
        "fx-deadlock-1",
        "fx-deadlock-2",
        "fx-sleep-holding",
        "fx-blocked",
        "fx-park",
    ] {
        assert!(names.contains(&want), "{want} not among {names:?}");
    }
    // The deadlock: one cycle, the two threads waiting for each other's monitor.
    assert_eq!(dump.deadlocks.len(), 1, "{:?}", dump.deadlocks);
    let mut cycle: Vec<&str> = dump.deadlocks[0]
        .iter()
        .map(|l| names_of(dump, l.thread))
        .collect();
    cycle.sort_unstable();
    assert_eq!(cycle, ["fx-deadlock-1", "fx-deadlock-2"]);
    assert!(text.contains("Found one Java-level deadlock:"), "{text}");
    assert!(text.contains("Found 1 deadlock."), "{text}");
    // Frames of the test program with their lines, and lock lines under them.
    let thread = |name: &str| {
        let start = text
            .find(&format!("\"{name}\" #"))
            .unwrap_or_else(|| panic!("{name} not in the dump"));
        let end = text[start..].find("\n\n").map_or(text.len(), |e| start + e);
        &text[start..end]
    };
    let waiter = thread("fx-object-wait");
    assert!(waiter.contains("WAITING (on object monitor)"), "{waiter}");
    assert!(
        waiter.contains("\tat FixtureTarget.objectWait(FixtureTarget.java:39)\n"),
        "{waiter}"
    );
    assert!(waiter.contains("\t- waiting on <0x"), "{waiter}");
    assert_eq!(
        waiter.matches("\t- locked <0x").count(),
        2,
        "both monitors held: {waiter}"
    );
    let d1 = thread("fx-deadlock-1");
    assert!(d1.contains("BLOCKED (on object monitor)"), "{d1}");
    assert!(
        d1.contains("\tat FixtureTarget.lockBoth(FixtureTarget.java:56)\n\t- waiting to lock <0x"),
        "{d1}"
    );
    assert!(d1.contains("(a java.lang.Object)\n\t- locked <0x"), "{d1}");
    let holder = thread("fx-sleep-holding");
    let blocked = thread("fx-blocked");
    let held = lock_address(holder, "\t- locked <");
    assert_eq!(
        lock_address(blocked, "\t- waiting to lock <"),
        held,
        "{blocked}"
    );
    assert!(
        holder.contains("\tat FixtureTarget.sleepHolding(FixtureTarget.java:71)\n"),
        "{holder}"
    );
    let park = thread("fx-park");
    assert!(park.contains("\t- parking to wait for  <0x"), "{park}");
    assert!(
        park.contains("\tat FixtureTarget.parkForever(FixtureTarget.java:83)\n"),
        "{park}"
    );
    // Virtual threads: "vt-pinned" mounted on its carrier (JDK 21 pins a synchronized sleep),
    // three unmounted.
    let carriers = dump
        .threads
        .iter()
        .filter(|t| t.virtual_thread.is_some())
        .count();
    assert_eq!(carriers, 1);
    assert!(
        text.contains("\tat FixtureTarget.pinned(FixtureTarget.java:89)\n"),
        "{text}"
    );
    let unmounted = dump.virtual_threads.as_ref().expect("virtual threads read");
    let mut vnames: Vec<&str> = unmounted.threads.iter().map(|t| t.name.as_str()).collect();
    vnames.sort_unstable();
    assert_eq!(vnames, ["vt-sleep-0", "vt-sleep-1", "vt-sleep-2"]);
    assert!(
        text.contains("\tat FixtureTarget.sleepForever(FixtureTarget.java:63)\n"),
        "{text}"
    );
    // And the whole text as the recording printed it.
    assert_eq!(text, reference("jdk21.threads.txt"));
}

fn names_of(dump: &Dump, i: usize) -> &str {
    dump.threads[i]
        .java
        .as_ref()
        .map_or("?", |j| j.name.as_str())
}

/// The `0x…` after `prefix` in `text`.
fn lock_address<'t>(text: &'t str, prefix: &str) -> &'t str {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} in {text}"))
        + prefix.len();
    &text[at..at + 18]
}

/// The heap walk on the recorded JVM: the histogram printed at recording time.
#[test]
fn recorded_jvm_histogram_equals_the_recorded_one() {
    let (_dir, core) = fixture();
    let text = histo_text(&core).expect("the recorded JVM's histogram");
    assert!(
        text.contains(" java.lang.Thread (java.base@21.0.8)\n"),
        "{text}"
    );
    assert_eq!(text, reference("jdk21.histo.txt"));
}

/// The fixture is a file: cut short or with its program headers damaged it gives errors (or a
/// dump of what is left), never a panic; a damaged gzip is an error.
#[test]
fn a_cut_or_damaged_fixture_is_an_error_not_a_panic() {
    let (dir, core) = fixture();
    let bytes = std::fs::read(&core).expect("the unpacked fixture");
    let damaged = dir.path().join("damaged.core");
    let mut variants: Vec<Vec<u8>> = [0, 20, 64, 64 + 56, 64 + 56 * 3, bytes.len() / 2]
        .iter()
        .map(|&n| bytes[..n].to_vec())
        .collect();
    // The first PT_LOAD's p_offset, p_filesz and p_memsz made huge; the notes' p_filesz too.
    for field in [64 + 56 + 8, 64 + 56 + 32, 64 + 56 + 40, 64 + 32] {
        let mut b = bytes.clone();
        b[field..field + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        variants.push(b);
    }
    for (i, v) in variants.iter().enumerate() {
        std::fs::write(&damaged, v).expect("write");
        // Either result is fine; a panic fails the test.
        let threads = super::dump_threads_core(&damaged, None, None, &virtual_threads());
        let _ = super::heap_histogram_core(&damaged, None, None);
        if i < 4 {
            assert!(threads.is_err(), "variant {i} read as a dump");
        }
    }
    let gz = std::fs::read(Path::new(DIR).join("jdk21.core.gz")).expect("the fixture");
    let cut = dir.path().join("cut.core.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).expect("write");
    let err = unpack(&cut, &dir.path().join("out")).expect_err("a cut gzip unpacked");
    assert!(err.contains("cut.core.gz"), "{err}");
}
