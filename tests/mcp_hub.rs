//! The MCP hub and the capability proxy against real servers: the Python
//! reference SDK over stdio, Streamable HTTP and legacy SSE, a raw broken
//! server, and the rmcp example `mcp-counter`.

mod mcp_support;

use std::time::Duration;

use mcp_support::*;
use reasonix::mcp::{McpError, McpHub, Recovery, ServerState};
use reasonix::proxy::{
    AllowAll, CapabilityProxy, DispatchDecision, PermissionCheck, PermissionQuery,
    PermissionVerdict, ProxyContext, ToolPolicy,
};
use reasonix::runtime::BoxFuture;
use reasonix::runtime::tools::CapabilityCatalog;
use serde_json::{Value, json};

const LONG: Duration = Duration::from_secs(120);

async fn call(
    hub: &McpHub,
    server: &str,
    tool: &str,
    args: Value,
) -> Result<reasonix::mcp::McpCallResult, McpError> {
    let prepared = hub.prepare(server, tool).await?;
    hub.dispatch(prepared, args.as_object().cloned()).await
}

async fn proxy_call(
    hub: &McpHub,
    policy: ToolPolicy,
    request: Value,
) -> reasonix::proxy::ProxyReply {
    let none = CapabilityCatalog::default();
    CapabilityProxy::new(&none, Some(hub))
        .handle(&request.to_string(), &ProxyContext { policy }, &AllowAll)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_caches_the_schema_and_a_cached_server_connects_at_its_first_call() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = hub(home.path(), vec![py_stdio("py", dir.path(), &[])], LONG);
    assert!(
        first.catalog().is_empty(),
        "nothing is known before discovery"
    );
    assert!(first.discover().await.is_empty());
    let live = first.catalog();
    assert!(
        live.iter()
            .any(|t| t.capability == "mcp__py__echo" && t.live)
    );
    first.close().await;

    // A new session: the cached schema lists the tools without a process.
    let second = hub(home.path(), vec![py_stdio("py", dir.path(), &[])], LONG);
    let cached = second.catalog();
    assert_eq!(cached.len(), live.len());
    assert!(cached.iter().all(|t| !t.live));
    let status = &second.servers()[0];
    assert!(status.cached);
    assert_eq!(status.state, ServerState::Idle);
    assert!(second.discover().await.is_empty());
    assert_eq!(
        second.process_group("py").await,
        None,
        "discovery skipped a cached server"
    );
    let reply = proxy_call(
        &second,
        ToolPolicy::Full,
        json!({"action": "call", "name": "mcp__py__echo", "arguments": {"text": "deferred"}}),
    )
    .await;
    assert_eq!(reply.content, "deferred", "{reply:?}");
    assert!(
        second.process_group("py").await.is_some(),
        "connected on demand"
    );
    assert_eq!(second.servers()[0].state, ServerState::Connected);
    second.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_per_server_keeps_state_between_calls() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(
        home.path(),
        vec![counter("counter"), py_stdio("py", dir.path(), &[])],
        LONG,
    );
    for expected in ["2", "4"] {
        let r = call(&hub, "counter", "increment", json!({"by": 2}))
            .await
            .unwrap();
        assert_eq!(r.content, expected);
    }
    assert_eq!(
        call(&hub, "counter", "get", json!({}))
            .await
            .unwrap()
            .content,
        "4"
    );
    call(&hub, "py", "remember", json!({"value": "kept"}))
        .await
        .unwrap();
    let first = call(&hub, "py", "recall", json!({})).await.unwrap().content;
    let second = call(&hub, "py", "recall", json!({})).await.unwrap().content;
    assert!(first.starts_with("kept (pid "), "{first}");
    assert_eq!(first, second, "the same process answered both calls");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_replays_a_read_only_tool_once_and_never_a_destructive_one() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(home.path(), vec![py_stdio("py", dir.path(), &[])], LONG);

    let before = call(&hub, "py", "recall", json!({})).await.unwrap().content;
    let read = call(&hub, "py", "flaky_read", json!({})).await.unwrap();
    assert_eq!(read.recovery, Recovery::Replayed);
    assert!(!read.is_error);
    assert!(
        read.content.starts_with("read after restart"),
        "{}",
        read.content
    );
    assert_eq!(
        marks(dir.path(), "flaky_read"),
        2,
        "sent once more, exactly"
    );
    let after = call(&hub, "py", "recall", json!({})).await.unwrap().content;
    assert_ne!(
        before, after,
        "a new server process answers after the rebuild"
    );

    let write = call(&hub, "py", "flaky_write", json!({})).await.unwrap();
    assert_eq!(write.recovery, Recovery::NotReplayed);
    assert!(write.is_error);
    assert!(
        write.content.contains("not sent again"),
        "{}",
        write.content
    );
    assert_eq!(marks(dir.path(), "flaky_write"), 1, "never replayed");
    // The rebuilt session serves the next call.
    let again = call(&hub, "py", "flaky_write", json!({})).await.unwrap();
    assert_eq!(
        (again.content.as_str(), again.recovery),
        ("written", Recovery::None)
    );

    // Through the proxy the note says what happened.
    let home2 = tempfile::tempdir().unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let hub2 = mcp_support::hub(home2.path(), vec![py_stdio("py", dir2.path(), &[])], LONG);
    let reply = proxy_call(
        &hub2,
        ToolPolicy::Full,
        json!({"action": "call", "name": "mcp__py__flaky_read"}),
    )
    .await;
    assert_eq!(reply.recovery, Some(Recovery::Replayed));
    assert!(
        reply.content.contains("sent once more"),
        "{}",
        reply.content
    );
    hub.close().await;
    hub2.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_call_hits_its_budget_and_the_server_is_told_to_cancel() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(
        home.path(),
        vec![py_stdio("py", dir.path(), &[])],
        Duration::from_millis(1500),
    );
    let err = call(&hub, "py", "hang", json!({})).await.unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("timed out after 1 s"), "{err}");
    eventually("notifications/cancelled reaching the server", || {
        marks(dir.path(), "hang_cancelled") == 1
    })
    .await;
    // The session survives a timed-out call.
    assert_eq!(
        call(&hub, "py", "echo", json!({"text": "still here"}))
            .await
            .unwrap()
            .content,
        "still here"
    );

    // Dropping a call (a cancelled turn) cancels it on the server too.
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        call(&hub, "py", "hang", json!({})),
    )
    .await;
    assert!(dropped.is_err());
    eventually("the dropped call's cancellation", || {
        marks(dir.path(), "hang_cancelled") == 2
    })
    .await;
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_rpc_is_survived() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut raw = server("stdio");
    raw.command = Some("python3".into());
    raw.args = vec![raw_server_py().display().to_string()];
    let hub = hub(
        home.path(),
        vec![spec("raw", raw), py_stdio("py", dir.path(), &[])],
        Duration::from_secs(2),
    );
    // Non-JSON lines before a proper answer are skipped.
    let noisy = call(&hub, "py", "noisy", json!({})).await.unwrap();
    assert_eq!(noisy.content, "answered after noise");
    // A truncated reply never completes the call: it ends at its budget,
    // with a clear error, and the session keeps serving.
    let err = call(&hub, "raw", "broken_reply", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err}");
    // A reply of the wrong shape is a protocol error, not a panic.
    let err = call(&hub, "raw", "wrong_shape", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            McpError::Protocol(_) | McpError::Rejected(_) | McpError::Timeout { .. }
        ),
        "{err}"
    );
    assert_eq!(
        call(&hub, "raw", "ok", json!({})).await.unwrap().content,
        "fine"
    );
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_result_is_refused_and_the_session_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(home.path(), vec![py_stdio("py", dir.path(), &[])], LONG);
    let err = call(&hub, "py", "big", json!({"megabytes": 10}))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("over the 8 MiB limit"), "{err}");
    let fits = call(&hub, "py", "big", json!({"megabytes": 7}))
        .await
        .unwrap();
    assert_eq!(fits.content.len(), 7_000_000);
    assert_eq!(
        call(&hub, "py", "echo", json!({"text": "ok"}))
            .await
            .unwrap()
            .content,
        "ok"
    );
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tools_are_listed_filtered_and_callable() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(
        home.path(),
        vec![py_stdio("many", dir.path(), &[("MCP_TEST_TOOLS", "1000")])],
        LONG,
    );
    let listing = proxy_call(&hub, ToolPolicy::Full, json!({"action": "list"})).await;
    let items: Vec<Value> = serde_json::from_str(&listing.content).unwrap();
    assert!(items.len() >= 1000, "{}", items.len());
    let one = proxy_call(
        &hub,
        ToolPolicy::Full,
        json!({"action": "list", "query": "t0999"}),
    )
    .await;
    let items: Vec<Value> = serde_json::from_str(&one.content).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["name"], "mcp__many__t0999");
    let inspected = proxy_call(
        &hub,
        ToolPolicy::Full,
        json!({"action": "inspect", "name": "mcp__many__t0999"}),
    )
    .await;
    let entry: Value = serde_json::from_str(&inspected.content).unwrap();
    assert_eq!(entry["inputSchema"]["type"], "object");
    let reply = proxy_call(
        &hub,
        ToolPolicy::Full,
        json!({"action": "call", "name": "mcp__many__t0999"}),
    )
    .await;
    assert_eq!(reply.content, "tool 999");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_and_legacy_sse_servers_answer() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let web = HttpServer::start("http", dir.path(), &[]);
    let sse = HttpServer::start("sse", dir.path(), &[]);
    let hub = hub(
        home.path(),
        vec![
            http("web", "http", &web.url("/mcp"), &[]),
            http("old", "sse", &sse.url("/sse"), &[]),
        ],
        LONG,
    );
    for server in ["web", "old"] {
        let r = call(&hub, server, "echo", json!({"text": server}))
            .await
            .unwrap();
        assert_eq!(r.content, server);
        call(
            &hub,
            server,
            "remember",
            json!({"value": format!("{server}-state")}),
        )
        .await
        .unwrap();
        let recalled = call(&hub, server, "recall", json!({}))
            .await
            .unwrap()
            .content;
        assert!(
            recalled.starts_with(&format!("{server}-state")),
            "{recalled}"
        );
    }
    // A lost SSE server is rebuilt like any other: kill it, then a read-only
    // call reconnects (the server is gone for good, so it fails clearly).
    drop(sse);
    let err = call(&hub, "old", "echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(!err.to_string().is_empty());
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_context7_shape_sends_its_header_and_masks_it() {
    // The context7 package from the fixtures, copied, its URL pointed here.
    let fixture = workspace_root()
        .join("../shared/fixtures/real-packages/anthropics__claude-plugins-official/external_plugins/context7");
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("context7");
    copy_dir(&fixture, &pkg);
    let web = HttpServer::start(
        "http",
        dir.path(),
        &[(
            "MCP_TEST_REQUIRE_HEADER",
            "Authorization: Bearer ctx-s3cret",
        )],
    );
    let mcp_json = pkg.join(".mcp.json");
    let text = std::fs::read_to_string(&mcp_json).unwrap();
    assert!(text.contains("https://mcp.context7.com/mcp"));
    std::fs::write(
        &mcp_json,
        text.replace("https://mcp.context7.com/mcp", &web.url("/mcp")),
    )
    .unwrap();
    let package = reasonix_package::load_package(&pkg).unwrap();
    let server = package.inventory.mcp_servers[0].clone();
    assert_eq!(server.headers["Authorization"], "${CONTEXT7_API_KEY:-}");
    assert!(!server.auto_start, "imported servers start disabled");
    let spec = reasonix::mcp::ServerSpec {
        id: server.name.clone(),
        plugin: "context7".into(),
        plugin_root: pkg.clone(),
        tree_digest: None,
        server,
        conflict: None,
    };
    let home = tempfile::tempdir().unwrap();
    let with_key = McpHub::new(
        &reasonix::home::ReasonixHome::at(home.path()),
        vec![spec.clone()],
        options(LONG, &[("CONTEXT7_API_KEY", "Bearer ctx-s3cret")]),
    );
    // Disabled until enabled.
    let err = call(&with_key, "context7", "echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Disabled { .. }), "{err}");
    with_key.set_enabled("context7", true).unwrap();
    let r = call(&with_key, "context7", "echo", json!({"text": "through"}))
        .await
        .unwrap();
    assert_eq!(r.content, "through");
    let listed = serde_json::to_string(&with_key.servers()).unwrap();
    assert!(!listed.contains("ctx-s3cret"));
    assert!(listed.contains("${CONTEXT7_API_KEY:-}"), "{listed}");
    with_key.close().await;

    // Without the variable the header is empty and the server refuses.
    let without = McpHub::new(
        &reasonix::home::ReasonixHome::at(home.path()),
        vec![spec],
        options(LONG, &[]),
    );
    let err = without.connect("context7").await.unwrap_err();
    assert!(!err.to_string().contains("ctx-s3cret"));
    assert_eq!(without.servers()[0].state, ServerState::Failed);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_process_outlives_the_hub_grandchildren_included() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(home.path(), vec![py_stdio("py", dir.path(), &[])], LONG);
    let child: i32 = call(&hub, "py", "spawn_child", json!({}))
        .await
        .unwrap()
        .content
        .parse()
        .unwrap();
    let group = hub.process_group("py").await.unwrap();
    assert!(alive(child) && alive(group));
    hub.close().await;
    eventually("the server and its grandchild dying", || {
        !alive(child) && !alive(group)
    })
    .await;

    // Dropping the hub without closing it kills the group too.
    let dir2 = tempfile::tempdir().unwrap();
    let dropped = mcp_support::hub(home.path(), vec![py_stdio("py", dir2.path(), &[])], LONG);
    let child: i32 = call(&dropped, "py", "spawn_child", json!({}))
        .await
        .unwrap()
        .content
        .parse()
        .unwrap();
    let group = dropped.process_group("py").await.unwrap();
    drop(dropped);
    eventually("the dropped hub's processes dying", || {
        !alive(child) && !alive(group)
    })
    .await;
}

struct Deny;

impl PermissionCheck for Deny {
    fn check<'a>(&'a self, query: &'a PermissionQuery) -> BoxFuture<'a, PermissionVerdict> {
        Box::pin(std::future::ready(PermissionVerdict {
            allow: false,
            reason: Some(format!("no {}", query.capability)),
        }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_permission_and_enablement_are_checked_before_every_dispatch() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = hub(home.path(), vec![py_stdio("py", dir.path(), &[])], LONG);
    let call_of = |tool: &str| json!({"action": "call", "name": format!("mcp__py__{tool}")});

    for tool in ["wipe", "unhinted", "remember"] {
        let reply = proxy_call(&hub, ToolPolicy::ReadOnly, call_of(tool)).await;
        assert!(
            matches!(reply.decision, DispatchDecision::Refused(_)),
            "{tool}: {reply:?}"
        );
        assert!(reply.content.contains("read-only"), "{}", reply.content);
    }
    assert_eq!(
        marks(dir.path(), "wipe") + marks(dir.path(), "unhinted"),
        0,
        "nothing ran"
    );
    let ok = proxy_call(
        &hub,
        ToolPolicy::ReadOnly,
        json!({"action": "call", "name": "mcp__py__echo", "arguments": {"text": "r"}}),
    )
    .await;
    assert_eq!(
        (ok.content.as_str(), &ok.decision),
        ("r", &DispatchDecision::Allowed)
    );
    // Plan mode also admits a tool that says it is not destructive.
    let plan = proxy_call(
        &hub,
        ToolPolicy::Plan,
        json!({"action": "call", "name": "mcp__py__remember", "arguments": {"value": "v"}}),
    )
    .await;
    assert_eq!(plan.decision, DispatchDecision::Allowed, "{plan:?}");
    let plan = proxy_call(&hub, ToolPolicy::Plan, call_of("wipe")).await;
    assert!(plan.content.contains("destructive"), "{}", plan.content);

    // The caller's permission check has the last word.
    let none = CapabilityCatalog::default();
    let denied = CapabilityProxy::new(&none, Some(&hub))
        .handle(
            &call_of("wipe").to_string(),
            &ProxyContext::default(),
            &Deny,
        )
        .await;
    assert_eq!(
        denied.decision,
        DispatchDecision::Denied(Some("no mcp__py__wipe".into()))
    );
    assert_eq!(marks(dir.path(), "wipe"), 0);

    // Disabled from elsewhere mid-session: the next call is refused.
    hub.set_enabled("py", false).unwrap();
    let off = proxy_call(
        &hub,
        ToolPolicy::Full,
        json!({"action": "call", "name": "mcp__py__echo", "arguments": {"text": "x"}}),
    )
    .await;
    assert!(
        off.content.contains("reasonix mcp enable py"),
        "{}",
        off.content
    );
    // Decline records a choice and dispatches nothing.
    hub.set_enabled("py", true).unwrap();
    let declined = proxy_call(
        &hub,
        ToolPolicy::Full,
        json!({"action": "decline", "name": "mcp__py__wipe", "reason": "not needed"}),
    )
    .await;
    assert_eq!(declined.content, "declined `mcp__py__wipe`: not needed");
    assert_eq!(marks(dir.path(), "wipe"), 0);
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serial_server_takes_one_call_at_a_time() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut spec = py_stdio("py", dir.path(), &[]);
    spec.server.serial = true;
    let hub = hub(home.path(), vec![spec], Duration::from_secs(1));
    // A hanging call holds the server; a second call queues behind it and
    // runs only once the first has ended (here: at its budget).
    let first_done = std::sync::atomic::AtomicBool::new(false);
    let (first, second) = tokio::join!(
        async {
            let r = call(&hub, "py", "hang", json!({})).await;
            first_done.store(true, std::sync::atomic::Ordering::SeqCst);
            r
        },
        async {
            eventually("the first call starting", || {
                marks(dir.path(), "hang_started") == 1
            })
            .await;
            let r = call(&hub, "py", "echo", json!({"text": "after"})).await;
            (r, first_done.load(std::sync::atomic::Ordering::SeqCst))
        }
    );
    assert!(matches!(first, Err(McpError::Timeout { .. })));
    let (second, first_had_ended) = second;
    assert_eq!(second.unwrap().content, "after");
    assert!(
        first_had_ended,
        "the second call ran only after the first ended"
    );
    hub.close().await;
}
