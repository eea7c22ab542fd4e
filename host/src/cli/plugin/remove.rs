//! `reasonix plugin remove|uninstall <name> --yes [--keep-data] [--json]`
use std::process::ExitCode;

use super::common::{fail, home, not_installed, usage};
use crate::cli::output::{self, Failure};
use crate::install::publish::RemovedData;
use crate::install::uninstall::uninstall;
use crate::registry::PluginRegistry;

#[derive(Debug, clap::Args)]
#[command(
    about = "Remove an installed plugin package",
    long_about = "Remove an installed plugin package: its registry entry, its copied tree and \
                  its data directory ($REASONIX_HOME/data/<name>, unless --keep-data). For a \
                  linked plugin only the link goes; the source directory is left in place. \
                  Requires --yes because it deletes files.\n\n\
                  On a terminal the result is a readable line; when stdout is not a terminal, \
                  or with --json, stdout carries the JSON response (failures have ok:false, \
                  errorCode and error)."
)]
pub struct RemoveArgs {
    /// Installed plugin name.
    pub name: String,
    /// Confirm the removal.
    #[arg(long)]
    pub yes: bool,
    /// Keep the plugin's data directory (its path is printed).
    #[arg(long)]
    pub keep_data: bool,
    /// Print the JSON response even on a terminal.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: RemoveArgs) -> ExitCode {
    let json = args.json || !output::stdout_is_terminal();
    let home = match home() {
        Ok(h) => h,
        Err(e) => return fail("uninstall", &e, json),
    };
    if !args.yes {
        // Say that the plugin does not exist before asking for --yes.
        return match PluginRegistry::load(&home) {
            Err(e) => fail("uninstall", &e, json),
            Ok(registry) if registry.get(&args.name).is_none() => {
                fail("uninstall", &not_installed(&args.name), json)
            }
            Ok(_) => usage(
                "uninstall",
                &format!(
                    "plugin remove deletes files; re-run with --yes to remove {}",
                    args.name
                ),
                json,
            ),
        };
    }
    let (resp, removal) = match uninstall(&home, &args.name, args.keep_data) {
        Ok((_, None)) => {
            // Upstream answers an unknown name with status "blocked".
            let failure = Failure::from(&not_installed(&args.name)).with_status("blocked");
            return output::fail("uninstall", &failure, json);
        }
        Ok((resp, Some(removal))) => (resp, removal),
        Err(e) => return fail("uninstall", &e, json),
    };
    let entry = &removal.entry;
    let mut lines = vec![format!("removed {}", entry.name)];
    if entry.is_link() {
        lines.push(format!(
            "the linked source directory {} was left in place",
            entry.root
        ));
    }
    match &removal.data {
        RemovedData::None => {}
        RemovedData::Deleted(path) => {
            lines.push(format!("deleted its data directory {}", path.display()))
        }
        RemovedData::Kept(path) => lines.push(format!(
            "kept its data directory {} (--keep-data); delete it yourself when no longer needed",
            path.display()
        )),
        // The response carries the warning already.
        RemovedData::NotDeleted { .. } => {
            lines.extend(resp.warnings.iter().map(|w| format!("warning: {w}")));
        }
    }
    let text = lines.join("\n") + "\n";
    if json {
        output::raw_line(&resp.to_json());
        if !args.json {
            output::note(&text);
        }
    } else {
        output::text(&text);
    }
    ExitCode::SUCCESS
}
