//! `inspect list`: every JVM on the host. (Being built: see the issue.)

use std::process::ExitCode;

/// The arguments of `inspect list`.
#[derive(Debug, Default, clap::Args)]
pub struct ListArgs {
    /// Arguments, parsed by the subcommand.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Runs `inspect list`.
pub fn run(_args: &ListArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`inspect list` is not built yet")
}
