//! `inspect list`, `inspect serve` and `inspect top` where they do not exist: on Windows (not available yet) and
//! on any other OS or build without the live backend (both scan Linux's `/proc` for JVMs). Each
//! says how to do without it, and exits with status 2.

/// `inspect list` on Windows.
pub mod list {
    use std::process::ExitCode;

    /// The arguments of `inspect list` (none are used on Windows).
    #[derive(Debug, Default, clap::Args)]
    pub struct ListArgs {}

    /// Refuses with the way to find a JVM's pid.
    pub fn run(_args: &ListArgs) -> anyhow::Result<ExitCode> {
        if cfg!(all(windows, feature = "live")) {
            anyhow::bail!(
                "listing JVMs is not available on Windows yet: give a JVM's pid (`jps -l`, or \
                 `tasklist /fi \"imagename eq java.exe\"`), e.g. `inspect -F <pid>`"
            )
        }
        eprintln!(
            "inspect: listing JVMs is not supported on {}: read a saved hsperfdata file \
             (`inspect <file>`) or a core (`inspect --core <core>`)",
            std::env::consts::OS
        );
        Ok(ExitCode::from(2))
    }
}

/// `inspect serve` on Windows.
pub mod serve {
    use std::process::ExitCode;

    /// The arguments of `inspect serve` (none are used on Windows).
    #[derive(Debug, Default, clap::Args)]
    pub struct ServeArgs {}

    /// Refuses with what works instead.
    pub fn run(_args: &ServeArgs) -> anyhow::Result<ExitCode> {
        if !cfg!(all(windows, feature = "live")) {
            eprintln!(
                "inspect: `inspect serve` is not supported on {}: it reads live JVMs",
                std::env::consts::OS
            );
            return Ok(ExitCode::from(2));
        }
        anyhow::bail!(
            "`inspect serve` is not available on Windows yet (it finds JVMs by scanning Linux's \
             /proc): sample one JVM with `inspect -F <pid> --interval 15s --format prometheus`"
        )
    }
}

/// `inspect top` on Windows and without the live backend.
pub mod top {
    use std::process::ExitCode;

    /// The arguments of `inspect top` (none are used here).
    #[derive(Debug, Default, clap::Args)]
    pub struct TopArgs {}

    /// Refuses with what works instead.
    pub fn run(_args: &TopArgs) -> anyhow::Result<ExitCode> {
        if !cfg!(all(windows, feature = "live")) {
            eprintln!(
                "inspect: `inspect top` is not supported on {}: it reads live JVMs",
                std::env::consts::OS
            );
            return Ok(ExitCode::from(2));
        }
        anyhow::bail!(
            "`inspect top` is not available on Windows yet (it finds JVMs by scanning Linux's \
             /proc): watch one JVM with `inspect stat -gcutil -F <pid> 1s`"
        )
    }
}
