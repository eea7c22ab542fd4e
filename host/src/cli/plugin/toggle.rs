//! `reasonix plugin enable|disable <name> [--json]`
use std::process::ExitCode;

use super::common::{fail, home};
use crate::cli::output::{self, outln};
use crate::install::publish::{recover, set_enabled};

#[derive(Debug, clap::Args)]
pub struct ToggleArgs {
    /// Installed plugin name.
    pub name: String,
    /// Print JSON: {"ok":true,"op":…,"name":…,"enabled":…}, or the failure
    /// object {"ok":false,"errorCode":…,"error":…}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ToggleArgs, enabled: bool) -> ExitCode {
    let op = if enabled { "enable" } else { "disable" };
    let result = home().and_then(|h| {
        recover(&h)?;
        set_enabled(&h, &args.name, enabled)
    });
    if let Err(e) = result {
        return fail(op, &e, args.json);
    }
    if args.json {
        output::raw_line(&crate::install::gojson::marshal(&serde_json::json!({
            "ok": true,
            "op": op,
            "name": args.name,
            "enabled": enabled,
        })));
    } else {
        outln!(
            "{} {}",
            if enabled { "enabled" } else { "disabled" },
            args.name
        );
    }
    ExitCode::SUCCESS
}
