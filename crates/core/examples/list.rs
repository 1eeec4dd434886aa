//! List every HotSpot JVM on this host, as `inspect list` finds them (Linux and Windows; needs the
//! `discover` feature, on by default).
//!
//! ```sh
//! cargo run -p hsinspect-core --example list
//! ```

#[cfg(all(any(target_os = "linux", windows), feature = "discover"))]
fn main() -> std::process::ExitCode {
    use hsinspect_core::discover::{ScanOptions, scan};
    let scan = match scan(&ScanOptions::default()) {
        Ok(scan) => scan,
        Err(e) => {
            eprintln!("list: {}", hsinspect_core::with_causes(&e));
            return std::process::ExitCode::FAILURE;
        }
    };
    for jvm in &scan.jvms {
        println!(
            "{:>8} {:<12} {:<10} {}",
            jvm.pid, jvm.user, jvm.jvm_version, jvm.main
        );
    }
    std::process::ExitCode::SUCCESS
}

#[cfg(not(all(any(target_os = "linux", windows), feature = "discover")))]
fn main() {
    eprintln!("list: finding JVMs needs Linux or Windows and the `discover` feature");
    std::process::exit(2);
}
