//! `inspect list` on Windows: not available yet (the Linux one scans `/proc`). Says how to find a
//! JVM's pid instead.

use std::process::ExitCode;

/// The arguments of `inspect list` (none are used on Windows).
#[derive(Debug, Default, clap::Args)]
pub struct ListArgs {}

/// Refuses with the way to find a JVM's pid.
pub fn run(_args: &ListArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "listing JVMs is not available on Windows yet: give a JVM's pid (`jps -l`, or \
         `tasklist /fi \"imagename eq java.exe\"`), e.g. `inspect -F <pid>`"
    )
}
