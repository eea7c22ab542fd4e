//! `reasonix plugin remove|uninstall <name> --yes [--json]`
use std::process::ExitCode;

use super::common::{EXIT_FAILED, fail, home, usage};
use crate::install::ErrorCode;
use crate::install::uninstall::uninstall;

#[derive(Debug, clap::Args)]
#[command(
    about = "Remove an installed plugin package",
    long_about = "Remove an installed plugin package: its registry entry and its copied tree. \
                  For a linked plugin only the link goes; the source directory is left in \
                  place. Requires --yes because it deletes files."
)]
pub struct RemoveArgs {
    /// Installed plugin name.
    pub name: String,
    /// Confirm the removal.
    #[arg(long)]
    pub yes: bool,
    /// Print only the JSON response.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: RemoveArgs) -> ExitCode {
    if !args.yes {
        return usage(&format!(
            "plugin remove deletes files; re-run with --yes to remove {}",
            args.name
        ));
    }
    let home = match home() {
        Ok(h) => h,
        Err(e) => return fail("uninstall", &e, args.json),
    };
    match uninstall(&home, &args.name) {
        Ok((resp, Some(entry))) => {
            println!("{}", resp.to_json());
            if !args.json {
                eprintln!("removed {}", entry.name);
                if entry.is_link() {
                    eprintln!(
                        "the linked source directory {} was left in place",
                        entry.root
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Ok((resp, None)) => {
            println!("{}", resp.to_json());
            if !args.json {
                eprintln!("error: {} [{}]", resp.error, ErrorCode::NotInstalled);
                eprintln!("next: {}", resp.next);
            }
            ExitCode::from(EXIT_FAILED)
        }
        Err(e) => fail("uninstall", &e, args.json),
    }
}
