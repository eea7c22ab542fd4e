//! `reasonix plugin export <name> [-o file.zip] [--json]`
use std::path::PathBuf;
use std::process::ExitCode;

use super::common::{fail, home, not_installed};
use crate::cli::output::{self, outln};
use crate::export::export_package;
use crate::install::InstallError;
use crate::install::installed::find_installed;

#[derive(Debug, clap::Args)]
#[command(
    about = "Pack an installed plugin as a .zip, credentials stripped",
    long_about = "Pack an installed plugin as a .zip for another machine. Every value under \
                  env/headers in its manifests, .mcp.json and .claude/settings.json is replaced \
                  by a ${VAR} reference and the variables are listed. Re-install it with \
                  `reasonix plugin install ./<name>.zip --dry-run`, then --yes."
)]
pub struct ExportArgs {
    /// Installed plugin name.
    pub name: String,
    /// Output file (default: ./<name>.zip).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print JSON {"name","path","files","requiredEnv"}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ExportArgs) -> ExitCode {
    let result = home().and_then(|h| find_installed(&h, &args.name));
    let found = match result {
        Ok((f, _)) => f,
        Err(e) => return fail("export", &e, args.json),
    };
    let Some(installed) = found else {
        return fail("export", &not_installed(&args.name), args.json);
    };
    let export = match export_package(&args.name, &installed.root) {
        Ok(x) => x,
        Err(e) => return fail("export", &e, args.json),
    };
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.zip", args.name)));
    // Write beside the destination and rename, so a failed export never
    // leaves a truncated archive behind.
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let write = std::fs::create_dir_all(&dir).and_then(|_| {
        tempfile::Builder::new()
            .prefix(".reasonix-export-")
            .tempfile_in(&dir)
            .and_then(|mut tmp| {
                use std::io::Write;
                tmp.write_all(&export.zip)?;
                tmp.as_file().sync_all()?;
                tmp.persist(&out).map_err(|e| e.error)?;
                Ok(())
            })
    });
    if let Err(e) = write {
        return fail("export", &InstallError::io("write", &out, e), args.json);
    }
    if args.json {
        let v = serde_json::json!({
            "name": args.name,
            "path": out.to_string_lossy(),
            "files": export.files,
            "requiredEnv": export.required_env,
        });
        output::raw_line(&crate::install::gojson::marshal(&v));
    } else {
        outln!(
            "exported {} to {} ({} files)",
            args.name,
            out.display(),
            export.files
        );
        if export.required_env.is_empty() {
            outln!("required environment variables: none");
        } else {
            outln!(
                "required environment variables: {}",
                export.required_env.join(", ")
            );
        }
        outln!(
            "next: on the other machine, `reasonix plugin install {} --dry-run`, then --yes",
            out.display()
        );
    }
    ExitCode::SUCCESS
}
