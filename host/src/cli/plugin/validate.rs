//! `reasonix plugin validate <dir> [--json]`
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The plugin root: a directory holding reasonix-plugin.json,
    /// .codex-plugin/plugin.json or .claude-plugin/plugin.json.
    pub dir: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ValidateArgs) -> ExitCode {
    match reasonix_package::load_package(&args.dir) {
        Ok(pkg) => {
            println!("ok: {} ({})", pkg.name, args.dir.display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(1)
        }
    }
}
