//! `inspect threads --core` and `inspect histo --core` on the recorded JVM of the fast tier
//! (`testdata/threads/jdk21.core.gz`, issue 39 item 5; made by scripts/record-thread-fixture.sh):
//! the CLI prints exactly the dump and histogram the library printed of the whole gcore at
//! recording time. No JDK, no root.

use std::io::Read;
use std::path::Path;

use crate::support::inspect;

/// The fixture unpacked into `dir`: the path of the core.
fn unpack(dir: &Path) -> std::path::PathBuf {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/threads/jdk21.core.gz");
    let mut core = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).expect("the fixture"))
        .take(64 << 20)
        .read_to_end(&mut core)
        .expect("gunzip the fixture");
    let path = dir.join("jdk21.core");
    std::fs::write(&path, core).expect("write the core");
    path
}

fn reference(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/threads")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn threads_and_histo_of_the_recorded_jvm_print_the_recorded_text() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let core = unpack(dir.path());
    let core = core.to_str().expect("a UTF-8 path");
    let out = inspect(&["threads", "--virtual", "--core", core]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).expect("UTF-8"),
        reference("jdk21.threads.txt")
    );
    let out = inspect(&["histo", "--core", core]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).expect("UTF-8"),
        reference("jdk21.histo.txt")
    );
}
