//! `inspect list`, `inspect serve` and `inspect top` on Windows: not available yet (both scan Linux's `/proc`
//! for JVMs). Each says how to do without it.

/// `inspect list` on Windows.
pub mod list {
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
}

/// `inspect serve` on Windows.
pub mod serve {
    use std::process::ExitCode;

    /// The arguments of `inspect serve` (none are used on Windows).
    #[derive(Debug, Default, clap::Args)]
    pub struct ServeArgs {}

    /// Refuses with what works instead.
    pub fn run(_args: &ServeArgs) -> anyhow::Result<ExitCode> {
        anyhow::bail!(
            "`inspect serve` is not available on Windows yet (it finds JVMs by scanning Linux's \
             /proc): sample one JVM with `inspect -F <pid> --interval 15s --format prometheus`"
        )
    }
}

/// `inspect top` on Windows.
pub mod top {
    use std::process::ExitCode;

    /// The arguments of `inspect top` (none are used on Windows).
    #[derive(Debug, Default, clap::Args)]
    pub struct TopArgs {}

    /// Refuses with what works instead.
    pub fn run(_args: &TopArgs) -> anyhow::Result<ExitCode> {
        anyhow::bail!(
            "`inspect top` is not available on Windows yet (it finds JVMs by scanning Linux's \
             /proc): watch one JVM with `inspect stat -gcutil -F <pid> 1s`"
        )
    }
}
