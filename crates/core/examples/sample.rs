//! Sample one live JVM every second without stopping it, and print its young collections and
//! heap use as they change; each sample waits no longer than the next tick
//! ([`Sampler::sample_until`]).
//!
//! ```sh
//! cargo run -p hsinspect-core --example sample -- 4242 [seconds]
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use hsinspect_core::{LiveOptions, Sampler, Target};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(Ok(pid)) = args.next().map(|a| a.parse::<hsinspect_core::Pid>()) else {
        eprintln!("usage: sample <pid> [seconds]");
        return ExitCode::from(2);
    };
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let mut sampler = Sampler::new(Target::Live {
        pid,
        opts: LiveOptions {
            stop: false,
            ..LiveOptions::default()
        },
    });
    let tick = Duration::from_secs(1);
    let mut next = Instant::now();
    for _ in 0..seconds {
        next += tick;
        match sampler.sample_until(next) {
            Ok(reading) => {
                let s = &reading.snapshot;
                let young = s.long("sun.gc.collector.0.invocations");
                let eden = s.long("sun.gc.generation.0.space.0.used");
                let old = s.long("sun.gc.generation.1.space.0.used");
                println!("young GCs {young:?}, eden used {eden:?} B, old used {old:?} B");
                sampler.recycle(reading);
            }
            Err(e) => {
                eprintln!("sample: {}", hsinspect_core::with_causes(&e));
                return ExitCode::FAILURE;
            }
        }
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    ExitCode::SUCCESS
}
