//! `reasonix plugin remove|uninstall <name> --yes [--json]`
use std::process::ExitCode;

use super::common::{EXIT_FAILED, fail, home, usage};
use crate::install::ErrorCode;
use crate::install::plan::{InstallResponse, KindTally, PluginAction};
use crate::install::publish::{recover, remove_package};

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
    let result = recover(&home).and_then(|_| remove_package(&home, &args.name));
    let mut resp = InstallResponse {
        op: "uninstall".into(),
        name: args.name.clone(),
        kind: "plugin".into(),
        scope: "global".into(),
        ..Default::default()
    };
    match result {
        Ok(entry) => {
            let link = entry.is_link();
            resp.ok = true;
            resp.status = "done".into();
            resp.applied = true;
            resp.kinds = KindTally {
                plugin: 1,
                ..Default::default()
            };
            resp.actions = vec![PluginAction {
                kind: "plugin".into(),
                action: "remove_plugin_package".into(),
                status: "done".into(),
                risk_level: "medium".into(),
                risk_reasons: vec![
                    "removes a plugin package and disables its skills, hooks, and MCP servers"
                        .into(),
                ],
                name: entry.name.clone(),
                target: home
                    .resolve_root(&entry.root)
                    .to_string_lossy()
                    .into_owned(),
                config_path: home.registry_path().to_string_lossy().into_owned(),
                scope: "global".into(),
                manifest_kind: entry.manifest_kind.clone().unwrap_or_default(),
                version: entry.version.clone().unwrap_or_default(),
                ..Default::default()
            }];
            resp.next = "Removed.".into();
            println!("{}", resp.to_json());
            if !args.json {
                eprintln!("removed {}", entry.name);
                if link {
                    eprintln!(
                        "the linked source directory {} was left in place",
                        entry.root
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) if e.code == ErrorCode::NotInstalled => {
            resp.status = "blocked".into();
            resp.kind = String::new();
            resp.next =
                "No installed plugin package matched that name; run `reasonix plugin list`.".into();
            println!("{}", resp.to_json());
            if !args.json {
                eprintln!("error: {} [{}]", e.message, e.code);
                eprintln!("next: {}", resp.next);
            }
            ExitCode::from(EXIT_FAILED)
        }
        Err(e) => fail("uninstall", &e, args.json),
    }
}
