//! A `use_capability` call to a stdio MCP tool, next to its floor measured
//! in the same run over the same kind of pipes: a raw JSON-RPC `tools/call`
//! written to and read from the same server (the rmcp example
//! `mcp-counter`, its `echo` tool) by the same tokio runtime, with no
//! client library in between. The ratio is the cost of the client, the hub
//! and the proxy (parse, enablement, identity and live-hint checks, the
//! permission question, rmcp's service loop).
//!
//! Stdio latency depends on CPU placement (a wake-up across CPUs costs far
//! more than one on the same CPU, by an amount that varies by machine): run
//! it both pinned (`taskset -c 0 cargo bench -p reasonix --bench mcp`) and
//! unpinned and read the ratio. The server is built here (release, into
//! `target/examples-e2e`) when missing, so `cargo bench` alone suffices.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use reasonix::home::ReasonixHome;
use reasonix::mcp::{HubOptions, McpHub, ServerSpec};
use reasonix::proxy::{AllowAll, CapabilityProxy, ProxyContext};
use reasonix::runtime::tools::CapabilityCatalog;
use reasonix_sidecar::Guard;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Build (or find) the release `mcp-counter`.
fn counter() -> PathBuf {
    let target = workspace_root().join("target").join("examples-e2e");
    let bin = target.join("release").join("mcp-counter");
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(workspace_root())
            .env("CARGO_TARGET_DIR", &target)
            .args([
                "build",
                "-q",
                "--release",
                "-p",
                "reasonix-example-mcp-counter",
                "--bin",
                "mcp-counter",
            ])
            .status()
            .expect("run cargo");
    assert!(
        status.success() && bin.is_file(),
        "building mcp-counter failed"
    );
    bin
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let bin = counter();
    let rt = runtime();
    let _enter = rt.enter();
    let mut group = c.benchmark_group("mcp");
    group.measurement_time(Duration::from_secs(5));

    // The floor: raw JSON-RPC over the server's pipes.
    let mut child = Command::new(&bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    rt.block_on(async {
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .unwrap();
        stdout.read_line(&mut line).await.unwrap();
    });
    assert!(line.contains("\"result\""), "{line}");
    let mut id = 0u64;
    group.bench_function("raw_jsonrpc_echo", |b| {
        b.iter(|| {
            rt.block_on(async {
                id += 1;
                let request = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hi\"}}}}}}\n"
                );
                stdin.write_all(request.as_bytes()).await.unwrap();
                line.clear();
                stdout.read_line(&mut line).await.unwrap();
                assert!(line.contains("\"hi\""));
            })
        })
    });
    drop(stdin);

    // The same tool through use_capability.
    let home = tempfile::tempdir().unwrap();
    let spec = ServerSpec {
        id: "counter".into(),
        plugin: "bench".into(),
        plugin_root: workspace_root(),
        tree_digest: None,
        server: reasonix_package::McpServer {
            name: "counter".into(),
            transport: "stdio".into(),
            command: Some(bin.display().to_string()),
            args: Vec::new(),
            url: None,
            env: Default::default(),
            headers: Default::default(),
            display_name: None,
            description: None,
            auto_start: true,
            load: None,
            imported: false,
            serial: false,
        },
        conflict: None,
    };
    let hub = McpHub::new(
        &ReasonixHome::at(home.path()),
        vec![spec],
        HubOptions::new(Guard::Exe(PathBuf::from(env!("CARGO_BIN_EXE_reasonix")))),
    );
    let extensions = CapabilityCatalog::default();
    let proxy = CapabilityProxy::new(&extensions, Some(&hub));
    let ctx = ProxyContext::default();
    let request = r#"{"action":"call","name":"mcp__counter__echo","arguments":{"text":"hi"}}"#;
    rt.block_on(async {
        let warm = proxy.handle(request, &ctx, &AllowAll).await;
        assert_eq!(warm.content, "hi", "{warm:?}");
    });
    group.bench_function("use_capability_echo", |b| {
        b.iter(|| {
            rt.block_on(async {
                let reply = proxy.handle(request, &ctx, &AllowAll).await;
                assert!(!reply.is_error);
            })
        })
    });
    group.finish();
    rt.block_on(hub.close());
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
