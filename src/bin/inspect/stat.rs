//! `inspect stat`: jstat's views. (Being built: see the issue.)

use std::process::ExitCode;

/// The arguments of `inspect stat`.
#[derive(Debug, Default, clap::Args)]
pub struct StatArgs {
    /// Arguments, parsed by the subcommand.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Runs `inspect stat`.
pub fn run(_args: &StatArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`inspect stat` is not built yet")
}
