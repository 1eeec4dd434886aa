//! Fuzz target `parse`: any bytes into `hsinspect::perfdata::parse`. It must return, never panic,
//! never allocate more than the input backs, and report errors at an offset inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match hsinspect::perfdata::parse(data) {
        Ok(snapshot) => {
            assert_eq!(snapshot.size, data.len());
            for c in &snapshot.counters {
                if let Some(offset) = c.offset {
                    assert!(offset < data.len(), "counter {} at {offset}", c.name);
                }
            }
        }
        Err(e) => assert!(
            e.offset < data.len().max(1),
            "error offset {} outside the {}-byte input: {e}",
            e.offset,
            data.len()
        ),
    }
});
