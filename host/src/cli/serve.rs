//! `reasonix serve [--listen ADDR] [--open] [--json]`: the Studio kernel
//! routes, the session routes and the plugins page over HTTP
//! (`crate::serve`).
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use crate::home::ReasonixHome;
use crate::install::source::SourceContext;
use crate::serve::auth::{generate_token, remove_token_file, write_token_file};
use crate::serve::kernel::ServeKernel;
use crate::serve::{ServeOptions, Server};

#[derive(Debug, Args)]
#[command(
    about = "Serve the plugin and session routes and the plugins page over HTTP",
    long_about = "Serve the Studio kernel routes (GET /plugins, POST /plugins/plan, \
                  POST /plugins/install, POST /plugins/enabled, DELETE /plugins/{name}, \
                  GET /plugins/{name}/export, POST /extensions/reload, GET /skills, \
                  POST /skills/enabled), the session routes (POST /sessions, \
                  GET /sessions/{id}/events as Server-Sent Events, POST /sessions/{id}/input, \
                  …) and a plugins page with a chat panel at /.\n\n\
                  Every route needs `Authorization: Bearer <token>`: a new token is made at \
                  each launch, printed, and written to $REASONIX_HOME/serve.token (mode \
                  0600). Open the printed page address (it carries the token after `#`, \
                  which the browser never sends to a server), or pass --open. Requests \
                  from other web pages (a foreign Origin) are refused.\n\n\
                  Relative install sources resolve against the current directory, and a \
                  session's workspace must lie inside it. Ctrl-C or SIGTERM stops the \
                  server: running turns are cancelled, sessions closed (SessionEnd hooks \
                  run), requests in flight finish, code extensions are shut down; a second \
                  Ctrl-C exits at once.",
    after_help = "Examples:\n  reasonix serve\n  reasonix serve --open\n  \
                  reasonix serve --listen 127.0.0.1:7420 --json"
)]
pub struct ServeArgs {
    /// Address to listen on: IP:PORT or localhost:PORT. Port 0 picks a free
    /// port. Anything but a loopback address exposes the server to the
    /// network (a warning is printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", value_parser = parse_listen)]
    pub listen: SocketAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Print the address and token as one JSON line instead of text.
    #[arg(long)]
    pub json: bool,
}

fn parse_listen(raw: &str) -> Result<SocketAddr, String> {
    let raw = raw.trim();
    if let Some(port) = raw.strip_prefix("localhost:") {
        let port: u16 = port
            .parse()
            .map_err(|_| format!("{port:?} is not a port number"))?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    raw.parse().map_err(|_| {
        format!("{raw:?} is not IP:PORT (for example 127.0.0.1:7420, [::1]:0 or localhost:7420)")
    })
}

/// A line on stdout; a closed stdout is not an error (the token is in the
/// token file too).
fn out(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

fn fail(json: bool, code: &str, message: &str, next: &str) -> ExitCode {
    if json {
        out(
            &serde_json::json!({"ok": false, "errorCode": code, "error": message, "next": next})
                .to_string(),
        );
    }
    eprintln!("error: {message} [{code}]");
    eprintln!("next: {next}");
    ExitCode::from(1)
}

const OPEN_FILE: &str = "serve-open.html";

/// Open the page without putting the token on a command line (other users
/// can read command lines): a private file in the home redirects the
/// browser to the page address.
fn open_browser(home: &ReasonixHome, url: &str) -> Result<PathBuf, String> {
    let path = home.root().join(OPEN_FILE);
    let quoted = serde_json::to_string(url).unwrap_or_default();
    let html = format!(
        "<!doctype html><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">\
         <title>Reasonix</title><script>location.replace({quoted});</script>\n"
    );
    write_private(&path, html.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = path.to_string_lossy().into_owned();
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![&file])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", &file])
    } else {
        ("xdg-open", vec![&file])
    };
    std::process::Command::new(program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    Ok(path)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".serve-open-")
        .tempfile_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Resolves at the first Ctrl-C or SIGTERM; a second one exits at once
/// (every write is crash-safe: the registry is the only authority).
async fn stop_signal() {
    wait_signal().await;
    eprintln!(
        "reasonix serve: stopping (running turns are cancelled, sessions closed, requests in flight finish; Ctrl-C again to exit now)"
    );
    tokio::spawn(async {
        wait_signal().await;
        eprintln!("reasonix serve: exiting now");
        std::process::exit(130);
    });
}

async fn wait_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub fn run(args: ServeArgs) -> ExitCode {
    let home = match ReasonixHome::from_env() {
        Ok(home) => home,
        Err(e) => {
            return fail(
                args.json,
                "serve.no_home",
                &e.to_string(),
                "Set REASONIX_HOME to a writable directory.",
            );
        }
    };
    let runtime = match crate::cli::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            return fail(
                args.json,
                "serve.io",
                &format!("cannot start the async runtime: {e}"),
                "Check the process limits, then retry.",
            );
        }
    };
    runtime.block_on(serve(args, home))
}

async fn serve(args: ServeArgs, home: ReasonixHome) -> ExitCode {
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "warning: listening on {} exposes this server (which can install code that runs with your full trust) beyond this machine; anyone who obtains the token can use it. Use a loopback address unless you mean it.",
            args.listen
        );
    }
    let token = match generate_token() {
        Ok(t) => t,
        Err(e) => {
            return fail(
                args.json,
                "serve.io",
                &format!("cannot make a token: {e}"),
                "The operating system's random source failed; retry.",
            );
        }
    };
    let sources = SourceContext::from_env();
    if !args.json {
        eprintln!("reasonix serve: starting the code-extension runtime…");
    }
    let kernel = Arc::new(
        ServeKernel::start(
            home.clone(),
            reasonix_sidecar::Guard::CurrentExe,
            sources.workspace.clone(),
        )
        .await,
    );
    let options = ServeOptions {
        home: home.clone(),
        sources,
        listen: args.listen,
        token: token.clone(),
    };
    let server = match Server::bind(options, Arc::clone(&kernel)).await {
        Ok(s) => s,
        Err(e) => {
            kernel.shutdown().await;
            return fail(
                args.json,
                "serve.bind_failed",
                &format!("cannot listen on {}: {e}", args.listen),
                "Choose another --listen address (port 0 picks a free one).",
            );
        }
    };
    let token_file = match write_token_file(&home, &token) {
        Ok(p) => p,
        Err(e) => {
            kernel.shutdown().await;
            return fail(
                args.json,
                "serve.io",
                &format!(
                    "cannot write the token file in {}: {e}",
                    home.root().display()
                ),
                "Make $REASONIX_HOME writable, then retry.",
            );
        }
    };
    let addr = server.local_addr();
    let page = server.page_url();
    let status = kernel.status();
    if args.json {
        out(&serde_json::json!({
            "ok": true,
            "url": format!("http://{addr}/"),
            "pageUrl": page,
            "address": addr.to_string(),
            "token": token,
            "tokenFile": token_file.to_string_lossy(),
            "generation": status.generation,
            "bootError": status.boot_error,
        })
        .to_string());
    } else {
        out(&format!("reasonix serve: listening on http://{addr}/"));
        out(&format!("  page:  {page}"));
        out(&format!(
            "  token: {token} (also in {}, mode 0600)",
            token_file.display()
        ));
        let running: Vec<String> = status.runtimes.iter().map(|r| r.plugin.clone()).collect();
        out(&format!(
            "  runtime: generation {}{}",
            status.generation,
            if running.is_empty() {
                ", no code extensions".to_string()
            } else {
                format!(", running {}", running.join(", "))
            }
        ));
        out("Press Ctrl-C to stop.");
    }
    if let Some(why) = &status.boot_error {
        // Not fatal: the page is where a broken plugin gets fixed.
        eprintln!(
            "warning: the code-extension runtime did not start: {}",
            crate::runtime::redaction::clean_text(why)
        );
    }
    let mut open_file = None;
    if args.open {
        match open_browser(&home, &page) {
            Ok(p) => open_file = Some(p),
            Err(e) => {
                eprintln!("warning: could not open a browser ({e}); open the page address above")
            }
        }
    }
    let served = server.run(stop_signal()).await;
    kernel.shutdown().await;
    remove_token_file(&home, &token);
    if let Some(p) = open_file {
        let _ = std::fs::remove_file(p);
    }
    match served {
        Ok(()) => {
            eprintln!("reasonix serve: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => fail(
            args.json,
            "serve.io",
            &format!("the server stopped: {e}"),
            "Retry; if it recurs, run with another --listen address.",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(parse_listen("127.0.0.1:0").unwrap().port(), 0);
        assert_eq!(
            parse_listen("localhost:7420").unwrap(),
            "127.0.0.1:7420".parse().unwrap()
        );
        assert!(parse_listen("[::1]:9").unwrap().ip().is_loopback());
        for bad in ["", "7420", "localhost:x", "example.com:80", "127.0.0.1"] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
    }
}
