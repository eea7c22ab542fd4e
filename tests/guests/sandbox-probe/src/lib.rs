//! Probes the sandbox from inside: each intercept runs the probe named in
//! the payload text (`{"text":"<probe> [argument]"}`) and answers `block`
//! with `ok: …` or `err: …`, so the host test sees what the guest could and
//! could not do. Any other payload gets `continue`.

wit_bindgen::generate!({
    world: "extension",
    path: "../../../wit/since_v2.0.0",
});

use exports::reasonix::extension::{intercept, lifecycle, observation, provider, tool, ui};
use reasonix::extension::types::{Decision, ErrorReason, ExtensionError, HookPoint};

struct Probe;

/// Files the `hold` probe keeps open between calls.
static HELD: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());

fn unknown<T>() -> Result<T, ExtensionError> {
    Err(ExtensionError {
        reason: ErrorReason::UnknownMethod,
        message: None,
    })
}

fn outcome<T, E: std::fmt::Display>(result: Result<T, E>, ok: impl FnOnce(T) -> String) -> String {
    match result {
        Ok(value) => format!("ok: {}", ok(value)),
        Err(error) => format!("err: {error}"),
    }
}

/// The text field of an input.receive payload, without a JSON parser:
/// probes use plain ASCII words.
fn payload_text(payload: &str) -> Option<&str> {
    let start = payload.find("\"text\":\"")? + 8;
    let end = payload[start..].find('"')? + start;
    Some(&payload[start..end])
}

fn run(probe: &str, arg: &str) -> String {
    use std::io::Write as _;
    match probe {
        "read" => outcome(std::fs::read_to_string(arg), |text| text),
        "write" => outcome(std::fs::write(arg, b"written by the guest"), |()| "written".into()),
        "list" => outcome(std::fs::read_dir(arg), |entries| {
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names.join(",")
        }),
        "connect" => outcome(std::net::TcpStream::connect(arg), |_| "connected".into()),
        "resolve" => outcome(std::net::ToSocketAddrs::to_socket_addrs(&(arg, 80)), |a| {
            format!("{} addresses", a.count())
        }),
        "env" => outcome(std::env::var(arg), |value| value),
        "env-names" => {
            let mut names: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
            names.sort();
            format!("ok: {}", names.join(","))
        }
        "print" => {
            println!("{arg}");
            let _ = std::io::stdout().flush();
            eprintln!("to stderr: {arg}");
            "ok: printed".into()
        }
        "log" => {
            reasonix::extension::log::log(reasonix::extension::log::Level::Warn, arg);
            "ok: logged".into()
        }
        // `hold N`: open the plugin's README N more times and keep every
        // handle (across calls) — a guest that leaks descriptors.
        "hold" => {
            let n: usize = arg.parse().unwrap_or(0);
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            for i in 0..n {
                match std::fs::File::open("/plugin/README.md") {
                    Ok(file) => held.push(file),
                    Err(e) => return format!("err: after {i} more ({} held): {e}", held.len()),
                }
            }
            format!("ok: {} held", held.len())
        }
        "release" => {
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            let n = held.len();
            held.clear();
            format!("ok: released {n}")
        }
        // `fill N`: write N MiB into /data/fill.bin, 1 MiB at a time.
        "fill" => {
            use std::io::Write as _;
            let n: usize = arg.parse().unwrap_or(0);
            let mut file = match std::fs::File::create("/data/fill.bin") {
                Ok(file) => file,
                Err(e) => return format!("err: create: {e}"),
            };
            let chunk = vec![7u8; 1024 * 1024];
            for i in 0..n {
                if let Err(e) = file.write_all(&chunk).and_then(|()| file.flush()) {
                    return format!("err: after {i} MiB: {e}");
                }
            }
            format!("ok: wrote {n} MiB")
        }
        "panic" => panic!("probe panicked: {arg}"),
        other => format!("err: unknown probe {other}"),
    }
}

impl lifecycle::Guest for Probe {
    fn protocol_version() -> String {
        "2.0.0".into()
    }

    fn initialize(
        _params: lifecycle::InitializeParams,
    ) -> Result<lifecycle::InitializeResult, ExtensionError> {
        Ok(lifecycle::InitializeResult {
            protocol_version: "2".into(),
            name: "sandbox-probe".into(),
            version: "0.1.0".into(),
            state_schema_version: 0,
            component_id: None,
            subscriptions: Some(vec![HookPoint::InputReceive]),
            replaces: None,
            providers: None,
            ui_actions: None,
            requires: None,
            provides: None,
            tools: None,
        })
    }

    fn initialized() {}

    fn shutdown(
        _params: lifecycle::ShutdownParams,
    ) -> Result<lifecycle::ShutdownResult, ExtensionError> {
        Ok(lifecycle::ShutdownResult { accepted: true })
    }
}

impl intercept::Guest for Probe {
    fn intercept(
        params: intercept::InterceptParams,
    ) -> Result<intercept::InterceptResult, ExtensionError> {
        let Some(text) = payload_text(&params.payload) else {
            return Ok(intercept::InterceptResult {
                decision: Decision::Continue,
                reason: None,
                replacement: None,
                externalized: None,
            });
        };
        let (probe, arg) = text.split_once(' ').unwrap_or((text, ""));
        Ok(intercept::InterceptResult {
            decision: Decision::Block,
            reason: Some(run(probe, arg)),
            replacement: None,
            externalized: None,
        })
    }
}

impl observation::Guest for Probe {
    fn event(_params: observation::EventParams) {}

    fn resources_changed(_params: observation::ResourcesChangedParams) {}
}

impl provider::Guest for Probe {
    fn catalog() -> Result<provider::ProviderCatalogResult, ExtensionError> {
        unknown()
    }

    fn stream_open(
        _params: provider::StreamOpenParams,
    ) -> Result<provider::StreamOpenResult, ExtensionError> {
        unknown()
    }

    fn stream_cancel(
        _params: provider::StreamCancelParams,
    ) -> Result<provider::StreamCancelResult, ExtensionError> {
        unknown()
    }
}

impl tool::Guest for Probe {
    fn call(_params: tool::ToolCallParams) -> Result<tool::ToolCallResult, ExtensionError> {
        unknown()
    }
}

impl ui::Guest for Probe {
    fn action(_params: ui::UiActionParams) -> Result<ui::UiActionResult, ExtensionError> {
        unknown()
    }

    fn submit(_params: ui::UiSubmitParams) -> Result<ui::UiSubmitResult, ExtensionError> {
        unknown()
    }
}

export!(Probe);
