//! `reasonix dev reload`: rebuild the extension runtime from the enabled
//! plugins, compare it with the last recorded build and say what changed.
//!
//! The record (`$REASONIX_HOME/cache/runtime-generation.json`) stands for the
//! running runtime of an interactive session: a failed build leaves it (and
//! the generation number) untouched, a successful one replaces it atomically.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::cli::output::{self, Failure, errln, outln};
use crate::home::ReasonixHome;
use crate::runtime::generation::Generation;
use crate::runtime::host::CandidateSource;
use crate::runtime::registry_source::RegistrySource;
use crate::runtime::session_state::write_atomically;
use crate::runtime::ui::{UiAnswers, UiHub};

#[derive(Debug, Args)]
pub struct ReloadArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What the last successful build contained.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GenerationRecord {
    pub generation: u64,
    /// plugin → fingerprint (manifest + installed tree).
    pub plugins: BTreeMap<String, String>,
}

fn record_path(home: &ReasonixHome) -> std::path::PathBuf {
    home.cache_dir().join("runtime-generation.json")
}

fn read_record(home: &ReasonixHome) -> Option<GenerationRecord> {
    let text = std::fs::read_to_string(record_path(home)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The generation number the next runtime start should use.
pub fn recorded_generation(home: &ReasonixHome) -> u64 {
    read_record(home).map(|r| r.generation.max(1)).unwrap_or(1)
}

/// The result of a reload, as printed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "status"
)]
pub enum ReloadResult {
    Swapped {
        from_generation: u64,
        to_generation: u64,
        added: Vec<String>,
        removed: Vec<String>,
        changed: Vec<String>,
        unchanged: Vec<String>,
        degraded: Vec<crate::runtime::generation::Degraded>,
    },
    Failed {
        kept_generation: u64,
        why: String,
    },
}

pub fn run(args: ReloadArgs) -> ExitCode {
    let home = match ReasonixHome::from_env() {
        Ok(home) => home,
        Err(e) => {
            return output::fail(
                "dev.reload",
                &Failure::new("install.io", format!("{e}; set REASONIX_HOME")),
                args.json,
            );
        }
    };
    let runtime = match crate::cli::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            return output::fail(
                "dev.reload",
                &Failure::new("install.io", format!("cannot start the async runtime: {e}")),
                args.json,
            );
        }
    };
    let previous = read_record(&home).unwrap_or_default();
    let from = previous.generation.max(1);
    let result = runtime.block_on(async {
        let hub = Arc::new(UiHub::new(UiAnswers::Headless));
        let source = RegistrySource::new(home.clone(), reasonix_sidecar::Guard::CurrentExe, hub);
        let candidates = source.candidates()?;
        let fingerprints: BTreeMap<String, String> = candidates
            .iter()
            .map(|c| (c.plugin_id.clone(), c.fingerprint.clone()))
            .collect();
        let workspace = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| ".".into());
        let generation = Generation::build(from + 1, candidates, "dev-reload", &workspace)
            .await
            .map_err(|e| e.to_string())?;
        let degraded = generation.degraded.clone();
        let started: Vec<String> = generation
            .runtimes
            .iter()
            .map(|r| r.plugin_id.clone())
            .collect();
        generation.retire().await;
        Ok::<_, String>((fingerprints, started, degraded))
    });
    let outcome = match result {
        Err(why) => ReloadResult::Failed {
            kept_generation: from,
            why,
        },
        Ok((fingerprints, started, degraded)) => {
            let mut added = Vec::new();
            let mut changed = Vec::new();
            let mut unchanged = Vec::new();
            for plugin in &started {
                match previous.plugins.get(plugin) {
                    None => added.push(plugin.clone()),
                    Some(old) if Some(old) != fingerprints.get(plugin) => {
                        changed.push(plugin.clone())
                    }
                    Some(_) => unchanged.push(plugin.clone()),
                }
            }
            let removed = previous
                .plugins
                .keys()
                .filter(|p| !started.contains(p))
                .cloned()
                .collect();
            let record = GenerationRecord {
                generation: from + 1,
                plugins: started
                    .iter()
                    .filter_map(|p| fingerprints.get(p).map(|f| (p.clone(), f.clone())))
                    .collect(),
            };
            let saved = std::fs::create_dir_all(home.cache_dir())
                .map_err(|e| e.to_string())
                .and_then(|_| {
                    write_atomically(
                        &record_path(&home),
                        &serde_json::to_vec_pretty(&record).unwrap_or_default(),
                    )
                    .map_err(|e| e.to_string())
                });
            match saved {
                Ok(()) => ReloadResult::Swapped {
                    from_generation: from,
                    to_generation: from + 1,
                    added,
                    removed,
                    changed,
                    unchanged,
                    degraded,
                },
                Err(why) => ReloadResult::Failed {
                    kept_generation: from,
                    why: format!("could not record the new generation: {why}"),
                },
            }
        }
    };
    if args.json {
        let mut value = serde_json::to_value(&outcome).unwrap_or_default();
        if let Some(object) = value.as_object_mut() {
            let why = match &outcome {
                ReloadResult::Failed { why, .. } => Some(why.clone()),
                ReloadResult::Swapped { .. } => None,
            };
            object.insert("ok".into(), why.is_none().into());
            if let Some(why) = why {
                object.insert("errorCode".into(), "runtime.reload_failed".into());
                object.insert("error".into(), why.into());
            }
        }
        output::json_pretty(&value);
    } else {
        match &outcome {
            ReloadResult::Swapped {
                from_generation,
                to_generation,
                added,
                removed,
                changed,
                unchanged,
                degraded,
            } => {
                outln!("reloaded: generation {from_generation} → {to_generation}");
                let list = |label: &str, items: &[String]| {
                    if !items.is_empty() {
                        outln!("  {label:<10} {}", items.join(", "));
                    }
                };
                list("added", added);
                list("removed", removed);
                list("changed", changed);
                list("unchanged", unchanged);
                for d in degraded {
                    outln!("  {:<10} {}: {}", "degraded", d.plugin, d.why);
                }
                if added.is_empty() && removed.is_empty() && changed.is_empty() {
                    outln!("  nothing changed: the provider-visible prefix stays byte-identical");
                }
            }
            ReloadResult::Failed {
                kept_generation,
                why,
            } => {
                errln!("reload failed; generation {kept_generation} keeps running unchanged");
                errln!("  why: {why}");
            }
        }
    }
    match outcome {
        ReloadResult::Swapped { .. } => ExitCode::SUCCESS,
        ReloadResult::Failed { .. } => ExitCode::from(1),
    }
}
