//! A stand-in host for the parent-death test (and the guard binary the
//! tests pass as `Guard::Exe`): calls `run_if_requested` first, then, when
//! asked, starts `test_sidecar grandchild` through `Guard::CurrentExe`,
//! prints `READY`, and waits to be killed.
//!
//! Usage: `guard_host <test_sidecar path> <pid file>`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use reasonix_protocol::types::SessionContext;
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling, Sidecar, StartOptions};

fn main() {
    reasonix_sidecar::guard::run_if_requested();
    let mut args = std::env::args().skip(1);
    let (Some(sidecar), Some(pid_file)) = (args.next(), args.next()) else {
        eprintln!("usage: guard_host <test_sidecar> <pid file>");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let spec = LaunchSpec {
            plugin_root: PathBuf::from("/tmp"),
            name: "guarded".into(),
            version: "1.0.0".into(),
            command: sidecar,
            args: vec!["grandchild".into()],
            env: BTreeMap::from([("TEST_PID_FILE".to_owned(), pid_file)]),
        };
        let ceiling = ManifestCeiling {
            plugin_id: "guarded".into(),
            intercepts: vec!["tool.before".into()],
            ..Default::default()
        };
        let mut options = StartOptions::new(SessionContext {
            session_id: "s".into(),
            workspace_root: "/tmp".into(),
            generation: 1,
            epoch: None,
        });
        options.guard = Guard::CurrentExe;
        let sidecar = Sidecar::start(spec, ceiling, options)
            .await
            .unwrap_or_else(|e| panic!("start: {e}"));
        println!("READY {}", sidecar.process_group());
        std::future::pending::<()>().await;
    });
}
