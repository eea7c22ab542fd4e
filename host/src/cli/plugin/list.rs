//! `reasonix plugin list [--json]`
use std::process::ExitCode;

use super::common::{fail, home};
use crate::cli::output::{self, errln, outln};
use crate::install::installed::installed_packages;

#[derive(Debug, clap::Args)]
#[command(
    about = "List installed plugin packages",
    long_about = "List installed plugin packages: one line per plugin, \
                  name<TAB>state<TAB>version<TAB>source<TAB>contributes, where state is enabled, \
                  disabled or disabled_incompatible, and contributes counts what the package adds \
                  and flags a code runtime as FULL TRUST (native) or SANDBOXED (wasm) with the \
                  tools it serves. The registry is the only authority: directories it does not \
                  name are never shown, and interrupted installs are rolled back first."
)]
pub struct ListArgs {
    /// Print JSON: {"plugins":[…],"warnings":[…]}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ListArgs) -> ExitCode {
    let result = home().and_then(|h| installed_packages(&h));
    let (installed, warnings) = match result {
        Ok(v) => v,
        Err(e) => return fail("list", &e, args.json),
    };
    if args.json {
        let plugins: Vec<serde_json::Value> = installed
            .iter()
            .map(|i| {
                let mut v = serde_json::to_value(&i.entry).unwrap_or_default();
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("state".into(), i.state().into());
                    obj.insert(
                        "resolvedRoot".into(),
                        i.root.to_string_lossy().into_owned().into(),
                    );
                    obj.insert("summary".into(), i.summary().into());
                    if let Some(rt) = i
                        .package
                        .as_ref()
                        .ok()
                        .and_then(crate::install::plan::runtime_info)
                    {
                        let trust = if rt.sandbox.is_some() {
                            "sandboxed"
                        } else {
                            "full_trust"
                        };
                        obj.insert("runtime".into(), trust.into());
                        obj.insert("tools".into(), rt.tools.into());
                    }
                }
                v
            })
            .collect();
        let out = serde_json::json!({ "plugins": plugins, "warnings": warnings });
        output::raw_line(&crate::install::gojson::marshal(&out));
    } else {
        if installed.is_empty() {
            outln!("no plugins installed");
        }
        for i in &installed {
            outln!(
                "{}\t{}\t{}\t{}\t{}",
                i.entry.name,
                i.state(),
                i.entry
                    .version
                    .as_deref()
                    .filter(|v| !v.is_empty())
                    .unwrap_or("-"),
                i.entry.source.as_deref().unwrap_or(""),
                i.summary()
            );
        }
        for w in &warnings {
            errln!("warning: {w}");
        }
    }
    ExitCode::SUCCESS
}
