//! Read one JVM's PerfData once and print it as `jcmd <pid> PerfCounter.print` does.
//!
//! ```sh
//! cargo run -p hsinspect-core --example read_one -- 4242          # its hsperfdata file
//! cargo run -p hsinspect-core --example read_one -- -F 4242       # its memory (ptrace)
//! cargo run -p hsinspect-core --example read_one -- saved.hsperf  # a saved file, on any OS
//! ```

use std::process::ExitCode;

use hsinspect_core::format::{self, Filter};
use hsinspect_core::{LiveOptions, Pid, Target};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (forced, target) = match args.as_slice() {
        [flag, t] if flag == "-F" => (true, t),
        [t] => (false, t),
        _ => {
            eprintln!("usage: read_one [-F] <pid | hsperfdata file>");
            return ExitCode::from(2);
        }
    };
    let source = match target.parse::<Pid>() {
        Ok(pid) if forced => Target::Live {
            pid,
            opts: LiveOptions::default(),
        },
        Ok(pid) => Target::Hsperfdata {
            pid,
            wait: LiveOptions::default().wait_accessible,
        },
        Err(_) => Target::SavedFile(target.into()),
    };
    match hsinspect_core::Sampler::new(source).sample() {
        Ok(reading) => {
            for detail in &reading.details {
                eprintln!("{detail}");
            }
            let counters = format::sorted(&reading.snapshot, &Filter::default());
            let mut out = std::io::stdout().lock();
            if let Err(e) = format::write_jcmd(&mut out, &counters) {
                eprintln!("read_one: {e}");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("read_one: {}", hsinspect_core::with_causes(&e));
            ExitCode::FAILURE
        }
    }
}
