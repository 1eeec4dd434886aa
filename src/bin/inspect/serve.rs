//! `inspect serve`: a Prometheus exporter. (Being built: see the issue.)

use std::process::ExitCode;

/// The arguments of `inspect serve`.
#[derive(Debug, Default, clap::Args)]
pub struct ServeArgs {
    /// Arguments, parsed by the subcommand.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Runs `inspect serve`.
pub fn run(_args: &ServeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`inspect serve` is not built yet")
}
