//! `inspect list`, `inspect serve` and `inspect top` where they do not exist (chosen in
//! `os/mod.rs`): on an OS other than Linux and Windows, or in a build without the live backend
//! (feature `live`). Each says what works instead, and exits with status 2.

/// `inspect list` without a live backend.
pub mod list {
    use std::process::ExitCode;

    /// The arguments of `inspect list` (none are used here).
    #[derive(Debug, Default, clap::Args)]
    pub struct ListArgs {}

    /// Refuses with what works instead.
    pub fn run(_args: &ListArgs) -> anyhow::Result<ExitCode> {
        eprintln!(
            "inspect: listing JVMs is not supported on {} (or without the `live` feature): read a \
             saved hsperfdata file (`inspect <file>`) or a core (`inspect --core <core>`)",
            std::env::consts::OS
        );
        Ok(ExitCode::from(2))
    }
}

/// `inspect serve` without a live backend.
pub mod serve {
    use std::process::ExitCode;

    /// The arguments of `inspect serve` (none are used here).
    #[derive(Debug, Default, clap::Args)]
    pub struct ServeArgs {}

    /// Refuses with what works instead.
    pub fn run(_args: &ServeArgs) -> anyhow::Result<ExitCode> {
        eprintln!(
            "inspect: `inspect serve` is not supported on {} (or without the `live` feature): it \
             reads live JVMs",
            std::env::consts::OS
        );
        Ok(ExitCode::from(2))
    }
}

/// `inspect top` without a live backend.
pub mod top {
    use std::process::ExitCode;

    /// The arguments of `inspect top` (none are used here).
    #[derive(Debug, Default, clap::Args)]
    pub struct TopArgs {}

    /// Refuses with what works instead.
    pub fn run(_args: &TopArgs) -> anyhow::Result<ExitCode> {
        eprintln!(
            "inspect: `inspect top` is not supported on {} (or without the `live` feature): it \
             reads live JVMs",
            std::env::consts::OS
        );
        Ok(ExitCode::from(2))
    }
}
