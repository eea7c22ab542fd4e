//! `reasonix serve`'s routes through a real HTTP client against a real
//! server on 127.0.0.1: every route, status and error code of
//! PLUGIN_PACKAGES §a.13, the token, Host and Origin refusals, body bounds,
//! bad names, reload while a turn runs, and the export headers.

#[path = "examples_support.rs"]
mod examples;
#[path = "serve_support/mod.rs"]
mod support;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Answer, Kit, write};

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

/// `GET /extensions` → the plugins whose runtimes run now.
async fn running(kit: &Kit) -> (u64, Vec<String>) {
    let status = kit.get("/extensions").await.json();
    let plugins = status["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["plugin"].as_str().unwrap().to_string())
        .collect();
    (status["generation"].as_u64().unwrap(), plugins)
}

fn starter_copy(kit: &Kit) -> &'static str {
    examples::built_copy(
        "starter",
        examples::Kind::Native,
        &kit.work.path().join("starter"),
    );
    "./starter"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_host_and_origin_are_checked_before_anything_else() {
    let kit = Kit::start().await;
    let url = kit.url("/plugins");
    let bare = |m: Method, u: &str| kit.client.request(m, u);

    let none = Answer::of(bare(Method::GET, &url).send().await.unwrap()).await;
    let body = none.refused(401, "auth.unauthorized");
    assert!(
        body["params"]["detail"]
            .as_str()
            .unwrap()
            .contains("serve.token")
    );
    assert_eq!(
        none.header("www-authenticate").as_deref(),
        Some("Bearer realm=\"reasonix serve\"")
    );
    let wrong = Answer::of(
        bare(Method::GET, &url)
            .bearer_auth("0".repeat(64))
            .send()
            .await
            .unwrap(),
    )
    .await;
    wrong.refused(401, "auth.unauthorized");
    // Never from a query string or a cookie.
    let query = format!("{url}?token={}", kit.token);
    Answer::of(bare(Method::GET, &query).send().await.unwrap())
        .await
        .refused(401, "auth.unauthorized");
    let cookie = Answer::of(
        bare(Method::GET, &url)
            .header(
                "cookie",
                format!("token={0}; reasonix_token={0}", kit.token),
            )
            .send()
            .await
            .unwrap(),
    )
    .await;
    cookie.refused(401, "auth.unauthorized");
    let lower = Answer::of(
        bare(Method::GET, &url)
            .header("authorization", format!("bearer {}", kit.token))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(lower.status, 200, "{}", lower.text());
    assert_eq!(lower.json(), json!([]));

    // A browser request from another page is refused even with the token.
    let own = format!("http://{}", kit.addr);
    for (origin, ok) in [
        ("http://evil.example", false),
        ("null", false),
        (&format!("http://localhost:{}", kit.addr.port()), false),
        (&format!("https://{}", kit.addr), false),
        (&own, true),
    ] {
        let a = Answer::of(
            kit.req(Method::GET, "/plugins")
                .header("origin", origin)
                .send()
                .await
                .unwrap(),
        )
        .await;
        if ok {
            assert_eq!(a.status, 200, "{origin}: {}", a.text());
        } else {
            a.refused(403, "request.foreign_origin");
        }
    }
    let cross = Answer::of(
        kit.req(Method::POST, "/plugins/enabled")
            .header("sec-fetch-site", "cross-site")
            .header("content-type", "application/json")
            .body(r#"{"name":"x","enabled":true}"#)
            .send()
            .await
            .unwrap(),
    )
    .await;
    cross.refused(403, "request.foreign_origin");
    let preflight = Answer::of(
        bare(Method::OPTIONS, &url)
            .header("origin", "http://evil.example")
            .header("access-control-request-method", "POST")
            .send()
            .await
            .unwrap(),
    )
    .await;
    preflight.refused(403, "request.foreign_origin");
    assert!(preflight.header("access-control-allow-origin").is_none());

    // DNS rebinding: a Host that is not this listener, page included.
    for path in ["/plugins", "/"] {
        let rebound = Answer::of(
            kit.req(Method::GET, path)
                .header("host", format!("evil.example:{}", kit.addr.port()))
                .send()
                .await
                .unwrap(),
        )
        .await;
        rebound.refused(403, "request.bad_host");
    }
    let localhost = Answer::of(
        kit.req(Method::GET, "/plugins")
            .header("host", format!("localhost:{}", kit.addr.port()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(localhost.status, 200, "{}", localhost.text());

    // The page is static and needs no token; it is locked down.
    let page = Answer::of(bare(Method::GET, &kit.url("/")).send().await.unwrap()).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(page.header("x-frame-options").as_deref(), Some("DENY"));
    assert_eq!(
        page.header("referrer-policy").as_deref(),
        Some("no-referrer")
    );
    assert!(page.text().contains("id=\"chat\" data-phase=\"2\""));
    assert!(!page.text().contains(&kit.token));
    let js = Answer::of(
        bare(Method::GET, &kit.url("/assets/app.js"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(js.status, 200);
    assert!(
        js.header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    Answer::of(
        bare(Method::GET, &kit.url("/assets/secret.txt"))
            .send()
            .await
            .unwrap(),
    )
    .await
    .refused(404, "request.not_found");
    // Anything else, even a route that does not exist, needs the token first.
    Answer::of(bare(Method::GET, &kit.url("/nope")).send().await.unwrap())
        .await
        .refused(401, "auth.unauthorized");
    Answer::of(bare(Method::POST, &kit.url("/")).send().await.unwrap())
        .await
        .refused(401, "auth.unauthorized");
    kit.get("/nope").await.refused(404, "request.not_found");
    Answer::of(kit.req(Method::POST, "/").send().await.unwrap())
        .await
        .refused(405, "request.method_not_allowed");
    Answer::of(kit.req(Method::PUT, "/plugins").send().await.unwrap())
        .await
        .refused(405, "request.method_not_allowed");
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_are_bounded_and_typed_and_names_checked_before_the_disk() {
    let kit = Kit::start().await;
    let post_raw = |path: &str, content_type: &str, body: Vec<u8>| {
        kit.req(Method::POST, path)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let a = Answer::of(
        post_raw(
            "/plugins/plan",
            "text/plain",
            br#"{"source":"./x"}"#.to_vec(),
        )
        .await
        .unwrap(),
    )
    .await;
    a.refused(415, "request.bad_content_type");
    // One byte over the limit, and well over it.
    for size in [64 * 1024 + 1, 1024 * 1024] {
        let mut body = br#"{"source":""#.to_vec();
        body.resize(size - 2, b'a');
        body.extend_from_slice(br#""}"#);
        let a = Answer::of(
            post_raw("/plugins/plan", "application/json", body)
                .await
                .unwrap(),
        )
        .await;
        let refusal = a.refused(413, "request.too_large");
        assert_eq!(refusal["params"]["limit"], 65536);
    }
    // Just under the limit is read (and then refused for what it says).
    let mut body = br#"{"source":""#.to_vec();
    body.resize(64 * 1024 - 2, b'a');
    body.extend_from_slice(br#""}"#);
    let a = Answer::of(
        post_raw("/plugins/plan", "application/json; charset=utf-8", body)
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(a.status, 422, "{}", a.text());

    let bad = kit
        .req(Method::POST, "/plugins/plan")
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .unwrap();
    Answer::of(bad).await.refused(400, "request.bad_body");
    let unknown = kit
        .post("/plugins/plan", json!({"source": "./x", "sauce": 1}))
        .await;
    let body = unknown.refused(400, "request.bad_body");
    assert!(
        body["params"]["detail"].as_str().unwrap().contains("sauce"),
        "{body}"
    );
    let typed = kit.post("/plugins/install", json!({"source": 5})).await;
    let body = typed.refused(400, "request.bad_body");
    assert!(
        body["params"]["detail"]
            .as_str()
            .unwrap()
            .starts_with("source"),
        "{body}"
    );
    for body in [json!({}), json!({"source": "  "}), json!({"name": "x"})] {
        let a = kit.post("/plugins/plan", body).await;
        assert_eq!(
            a.refused(400, "request.missing_field")["params"]["field"],
            "source"
        );
    }
    for bad_name in ["../evil", "a b", ".hidden", &"x".repeat(65), "a/b"] {
        kit.post("/plugins/plan", json!({"source": "./x", "name": bad_name}))
            .await
            .refused(400, "plugin.bad_name");
        kit.post(
            "/plugins/install",
            json!({"source": "./x", "name": bad_name}),
        )
        .await
        .refused(400, "plugin.bad_name");
        kit.post(
            "/plugins/enabled",
            json!({"name": bad_name, "enabled": true}),
        )
        .await
        .refused(400, "plugin.bad_name");
    }
    for path in ["..%2F..%2Fetc", ".hidden", "a%20b", &"y".repeat(65)] {
        kit.delete(&format!("/plugins/{path}"))
            .await
            .refused(400, "plugin.bad_name");
        kit.get(&format!("/plugins/{path}/export"))
            .await
            .refused(400, "plugin.bad_name");
    }
    // None of the refusals so far touched the home.
    let left: Vec<_> = std::fs::read_dir(kit.home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    kit.post("/plugins/enabled", json!({"enabled": true}))
        .await
        .refused(400, "request.missing_field");
    let a = kit.post("/plugins/enabled", json!({"name": "ghost"})).await;
    assert_eq!(
        a.refused(400, "request.missing_field")["params"]["field"],
        "enabled"
    );
    kit.post(
        "/plugins/enabled",
        json!({"name": "ghost", "enabled": true}),
    )
    .await
    .refused(404, "plugin.not_installed");
    kit.get("/plugins/ghost/export")
        .await
        .refused(404, "plugin.not_installed");
    let gone = kit.delete("/plugins/ghost").await;
    assert_eq!(gone.status, 200);
    let gone = gone.json();
    assert_eq!(
        (gone["ok"].clone(), gone["status"].clone()),
        (json!(false), json!("blocked"))
    );
    assert_eq!(gone["op"], "uninstall");
    assert!(gone.get("reloadError").is_none());
    kit.post(
        "/skills/enabled",
        json!({"name": "nocolon", "enabled": false}),
    )
    .await
    .refused(400, "skill.bad_name");
    kit.post(
        "/skills/enabled",
        json!({"name": "ghost:hello", "enabled": false}),
    )
    .await
    .refused(404, "skill.not_found");
    kit.post("/skills/enabled", json!({"name": "ghost:hello"}))
        .await
        .refused(400, "request.missing_field");
    // A source that is not there: the backend's own code rides along.
    let missing = kit
        .post("/plugins/plan", json!({"source": "./missing"}))
        .await;
    let body = missing.refused(422, "install.failed");
    assert!(
        body["params"]["errorCode"]
            .as_str()
            .unwrap()
            .starts_with("install."),
        "{body}"
    );
    assert!(body["params"]["next"].is_string(), "{body}");
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starter_plan_install_reload_switch_export_remove() {
    let kit = Kit::start().await;
    let source = starter_copy(&kit);
    assert_eq!(kit.get("/plugins").await.json(), json!([]));
    assert_eq!(running(&kit).await, (1, vec![]));

    let plan = kit.post("/plugins/plan", json!({"source": source})).await;
    assert_eq!(plan.status, 200, "{}", plan.text());
    let plan = plan.json();
    assert_eq!(plan["status"], "planned");
    assert_eq!(plan["applied"], false);
    let plan_id = plan["planId"].as_str().unwrap().to_string();
    assert!(plan_id.starts_with("high:sha256:"), "{plan_id}");
    let digest = plan["contentDigest"].as_str().unwrap();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );
    let action = &plan["actions"][0];
    assert_eq!(action["runtime"]["fullTrust"], true);
    assert!(
        action["riskReasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().starts_with("FULL TRUST")),
        "{action}"
    );
    assert!(!kit.home.path().join("plugin-packages.json").exists());

    // A different plan is refused and nothing is installed.
    let forged = format!("medium:sha256:{}", "0".repeat(32));
    let denied = kit
        .post(
            "/plugins/install",
            json!({"source": source, "planId": forged}),
        )
        .await;
    let body = denied.refused(422, "install.failed");
    assert_eq!(body["params"]["errorCode"], "install.approval_denied");
    assert_eq!(kit.get("/plugins").await.json(), json!([]));

    let installed = kit
        .post(
            "/plugins/install",
            json!({"source": source, "planId": plan_id}),
        )
        .await
        .json();
    assert_eq!(installed["status"], "done", "{installed}");
    assert_eq!(installed["planId"], plan_id);
    assert!(installed.get("reloadError").is_none(), "{installed}");
    // The write reloaded the runtime: the starter's sidecar runs.
    assert_eq!(running(&kit).await, (2, vec!["starter".to_string()]));
    let status = kit.get("/extensions").await.json();
    assert_eq!(status["runtimes"][0]["trust"], "full_trust");

    let row = kit.row("starter").await.unwrap();
    assert_eq!(row["state"], "enabled");
    assert_eq!(row["enabled"], true);
    assert_eq!(row["mode"], "copy");
    assert_eq!(row["compatibility"], "full");
    assert_eq!(row["manifestKind"], "reasonix");
    assert_eq!(row["runtime"]["fullTrust"], true);
    assert_eq!(row["runtime"]["intercepts"], json!(["input.receive"]));
    assert_eq!(row["skills"][0]["invocation"], "/starter:hello");
    assert_eq!(row["themes"][0]["invocation"], "plugin:starter:sunrise");
    assert!(
        row["commands"][0]["invocation"]
            .as_str()
            .unwrap()
            .starts_with("/starter:")
    );
    assert!(row.get("error").is_none(), "{row}");

    // Installing over it needs replace; replace is the update path.
    let again = kit
        .post("/plugins/install", json!({"source": source}))
        .await
        .json();
    assert_eq!(
        (again["ok"].clone(), again["status"].clone()),
        (json!(false), json!("failed"))
    );
    assert_eq!(again["actions"][0]["errorCode"], "install.already_exists");
    let plan = kit
        .post("/plugins/plan", json!({"source": source, "replace": true}))
        .await
        .json();
    let updated = kit
        .post(
            "/plugins/install",
            json!({"source": source, "replace": true, "planId": plan["planId"]}),
        )
        .await
        .json();
    assert_eq!(updated["status"], "done", "{updated}");
    assert_eq!(running(&kit).await, (3, vec!["starter".to_string()]));

    // Skills: listed with their switch, switched off, stored in the home.
    let skills = kit.get("/skills").await.json();
    assert_eq!(skills["skills"][0]["id"], "starter:hello");
    assert_eq!(skills["skills"][0]["active"], true);
    let off = kit
        .post(
            "/skills/enabled",
            json!({"name": "/starter:hello", "enabled": false}),
        )
        .await;
    assert_eq!(off.status, 200, "{}", off.text());
    let off = off.json();
    assert_eq!(
        (off["enabled"].clone(), off["active"].clone()),
        (json!(false), json!(false))
    );
    let stored = std::fs::read_to_string(kit.home.path().join("skill-switches.json")).unwrap();
    assert!(stored.contains("\"starter:hello\""), "{stored}");
    assert_eq!(
        kit.get("/skills").await.json()["skills"][0]["enabled"],
        false
    );
    kit.post(
        "/skills/enabled",
        json!({"name": "starter:hello", "enabled": true}),
    )
    .await;
    assert_eq!(kit.get("/skills").await.json()["skills"][0]["active"], true);

    // Disable: the runtime goes, the row stays.
    let disabled = kit
        .post(
            "/plugins/enabled",
            json!({"name": "starter", "enabled": false}),
        )
        .await;
    assert_eq!(
        disabled.json(),
        json!({"name": "starter", "enabled": false})
    );
    assert_eq!(running(&kit).await.1, Vec::<String>::new());
    assert_eq!(kit.row("starter").await.unwrap()["state"], "disabled");
    assert_eq!(
        kit.get("/skills").await.json()["skills"][0]["pluginEnabled"],
        false
    );
    kit.post(
        "/plugins/enabled",
        json!({"name": "starter", "enabled": true}),
    )
    .await;
    assert_eq!(running(&kit).await.1, vec!["starter".to_string()]);

    // Export: a zip under starter/, no required env for this package.
    let export = kit.get("/plugins/starter/export").await;
    assert_eq!(export.status, 200);
    assert_eq!(
        export.header("content-type").as_deref(),
        Some("application/zip")
    );
    assert_eq!(
        export.header("content-disposition").as_deref(),
        Some("attachment; filename=\"starter.zip\"")
    );
    assert_eq!(export.header("x-reasonix-required-env"), None);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(export.body.clone())).unwrap();
    let entries: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().to_string())
        .collect();
    assert!(
        entries.iter().all(|n| n.starts_with("starter/")),
        "{entries:?}"
    );
    assert!(entries.contains(&"starter/reasonix-plugin.json".to_string()));

    // Remove: the uninstall JSON, the runtime reloaded without it.
    let removed = kit.delete("/plugins/starter").await.json();
    assert_eq!(removed["status"], "done", "{removed}");
    assert_eq!(removed["actions"][0]["action"], "remove_plugin_package");
    assert!(removed.get("reloadError").is_none(), "{removed}");
    assert_eq!(running(&kit).await.1, Vec::<String>::new());
    assert_eq!(kit.get("/plugins").await.json(), json!([]));
    assert!(!kit.home.path().join("plugins/starter").exists());
    assert_eq!(
        kit.delete("/plugins/starter").await.json()["status"],
        "blocked"
    );
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_while_a_turn_runs_is_refused_and_writes_say_so() {
    let kit = Kit::start().await;
    let source = starter_copy(&kit);
    kit.plan_and_install(source).await;
    assert_eq!(running(&kit).await, (2, vec!["starter".to_string()]));

    let host = kit.kernel.host().expect("a runtime host runs");
    let pin = host.begin_turn().expect("idle");
    let busy = kit
        .req(Method::POST, "/extensions/reload")
        .send()
        .await
        .unwrap();
    let body = Answer::of(busy).await.refused(409, "reload.busy");
    assert!(
        body["params"]["detail"].as_str().unwrap().contains("retry"),
        "{body}"
    );
    assert_eq!(kit.get("/extensions").await.json()["busy"], true);

    // The write lands on disk; the running turn keeps its runtime.
    let disabled = kit
        .post(
            "/plugins/enabled",
            json!({"name": "starter", "enabled": false}),
        )
        .await
        .json();
    assert_eq!(disabled["enabled"], false);
    let why = disabled["reloadError"].as_str().unwrap();
    assert!(why.contains("turn is running"), "{why}");
    assert_eq!(kit.row("starter").await.unwrap()["state"], "disabled");
    assert_eq!(running(&kit).await, (2, vec!["starter".to_string()]));

    // Once the turn ends the reload goes through.
    assert_eq!(host.end_turn(pin).await, None, "nothing was queued");
    let swapped = kit
        .req(Method::POST, "/extensions/reload")
        .send()
        .await
        .unwrap();
    let swapped = Answer::of(swapped).await;
    assert_eq!(swapped.status, 200, "{}", swapped.text());
    let swapped = swapped.json();
    assert_eq!(swapped["status"], "swapped");
    assert_eq!(swapped["removed"], json!(["starter"]));
    assert_eq!(running(&kit).await, (3, vec![]));
    kit.stop().await;
}

fn creds_package(dir: &std::path::Path) {
    write(
        &dir.join("reasonix-plugin.json"),
        r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "creds",
  "version": "1.0.0",
  "contributes": {
    "mcpServers": {
      "docs": {"type": "http", "url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer hunter2"}},
      "local": {"command": "bin/server", "env": {"TOKEN": "${DOCS_TOKEN}", "MODE": "fast"}},
      "priv": {"type": "http", "url": "https://user:pa55word@mcp.example/x?key=s3cr3t&v=1"}
    }
  }
}
"#,
    );
    write(&dir.join("bin/server"), "#!/bin/sh\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_names_the_required_env_and_views_mask_credentials() {
    let kit = Kit::start().await;
    creds_package(&kit.work.path().join("creds"));
    kit.plan_and_install("./creds").await;
    let list = kit.get("/plugins").await;
    let text = list.text();
    for secret in ["hunter2", "pa55word", "s3cr3t"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    let row = kit.row("creds").await.unwrap();
    let priv_url = row["mcpServers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "priv")
        .unwrap()["url"]
        .clone();
    assert_eq!(priv_url, "https://***@mcp.example/x?key=***&v=***");

    let export = kit.get("/plugins/creds/export").await;
    assert_eq!(export.status, 200);
    assert_eq!(
        export.header("x-reasonix-required-env").as_deref(),
        Some("DOCS_AUTHORIZATION,DOCS_TOKEN,LOCAL_MODE")
    );
    assert_eq!(
        export.header("content-disposition").as_deref(),
        Some("attachment; filename=\"creds.zip\"")
    );
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(export.body.clone())).unwrap();
    let mut manifest = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("creds/reasonix-plugin.json").unwrap(),
        &mut manifest,
    )
    .unwrap();
    assert!(!manifest.contains("hunter2"), "{manifest}");
    assert!(manifest.contains("${DOCS_AUTHORIZATION}"), "{manifest}");
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_packages_stay_listed_and_an_unreadable_registry_is_a_500() {
    let kit = Kit::start().await;
    let work = kit.work.path();
    support::package(
        &work.join("themed"),
        "themed",
        r#",
  "contributes": {
    "skills": ["skills"],
    "themes": ["themes/*/theme.json"],
    "hooks": {"PreToolUse": [{"command": "echo $REASONIX_SECRET_THING"}]}
  }"#,
    );
    write(
        &work.join("themed/themes/dusk/theme.json"),
        r##"{"name": "Dusk", "colors": {"background": "#000", "accent": "red"}}"##,
    );
    support::package(
        &work.join("fragile"),
        "fragile",
        r#", "contributes": {"skills": ["skills"]}"#,
    );
    support::package(&work.join("vanishing"), "vanishing", "");
    for name in ["themed", "fragile", "vanishing"] {
        kit.plan_and_install(&format!("./{name}")).await;
    }
    // Warnings for a disabled package too: theme tokens and hooks.
    kit.post(
        "/plugins/enabled",
        json!({"name": "themed", "enabled": false}),
    )
    .await;
    let themed = kit.row("themed").await.unwrap();
    let warnings = themed["warnings"].to_string();
    assert!(
        warnings.contains("theme themes/dusk/theme.json: token colors.accent dropped"),
        "{warnings}"
    );
    assert!(warnings.contains("REASONIX_SECRET_THING"), "{warnings}");
    assert!(warnings.contains("PreToolUse hook"), "{warnings}");
    assert_eq!(themed["hooks"][0]["event"], "PreToolUse");

    // A tree that no longer parses and a root that is gone are still rows.
    write(
        &kit.home.path().join("plugins/fragile/reasonix-plugin.json"),
        "{ not json",
    );
    std::fs::remove_dir_all(kit.home.path().join("plugins/vanishing")).unwrap();
    let list = kit.get("/plugins").await.json();
    assert_eq!(names(&list), ["fragile", "themed", "vanishing"]);
    let fragile = kit.row("fragile").await.unwrap();
    assert!(
        fragile["error"]
            .as_str()
            .unwrap()
            .contains("reasonix-plugin.json"),
        "{fragile}"
    );
    assert_eq!(fragile["state"], "disabled_incompatible");
    assert_eq!(fragile["status"], "disabled_incompatible");
    let vanishing = kit.row("vanishing").await.unwrap();
    assert!(
        vanishing["error"].as_str().unwrap().contains("missing"),
        "{vanishing}"
    );
    kit.get("/plugins/vanishing/export")
        .await
        .refused(422, "plugin.export_failed");

    // An unreadable registry fails closed and is never rewritten.
    let registry = kit.home.path().join("plugin-packages.json");
    std::fs::write(&registry, "{ corrupt").unwrap();
    kit.get("/plugins")
        .await
        .refused(500, "plugin.state_unreadable");
    kit.get("/skills")
        .await
        .refused(500, "plugin.state_unreadable");
    kit.post(
        "/plugins/enabled",
        json!({"name": "themed", "enabled": true}),
    )
    .await
    .refused(500, "plugin.state_unreadable");
    kit.delete("/plugins/themed")
        .await
        .refused(500, "plugin.state_unreadable");
    kit.get("/plugins/themed/export")
        .await
        .refused(500, "plugin.state_unreadable");
    assert_eq!(std::fs::read_to_string(&registry).unwrap(), "{ corrupt");
    kit.stop().await;
}

fn needy_package(dir: &std::path::Path) {
    support::package(
        dir,
        "needy",
        r#",
  "runtime": {
    "command": "${REASONIX_PLUGIN_ROOT}/bin/absent",
    "required": true,
    "intercepts": ["input.receive"],
    "capabilities": ["interceptors"]
  }"#,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_that_cannot_start_keeps_the_old_one_and_says_why() {
    let kit = Kit::start().await;
    needy_package(&kit.work.path().join("needy"));
    let installed = kit.plan_and_install("./needy").await;
    let why = installed["reloadError"].as_str().unwrap();
    assert!(
        why.contains("needy") && why.contains("generation 1 keeps running"),
        "{why}"
    );
    assert_eq!(running(&kit).await, (1, vec![]));
    let refused = kit
        .req(Method::POST, "/extensions/reload")
        .send()
        .await
        .unwrap();
    let body = Answer::of(refused).await.refused(422, "reload.failed");
    assert_eq!(body["params"]["keptGeneration"], 1);
    let removed = kit.delete("/plugins/needy").await.json();
    assert!(removed.get("reloadError").is_none(), "{removed}");
    assert_eq!(running(&kit).await, (2, vec![]));
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_first_runtime_fails_still_serves_and_recovers() {
    // Install the broken package before the server starts.
    let home = tempfile::TempDir::new().unwrap();
    let src = tempfile::TempDir::new().unwrap();
    needy_package(&src.path().join("needy"));
    let out = std::process::Command::new(support::REASONIX)
        .env("REASONIX_HOME", home.path())
        .args(["plugin", "install", "--yes", "--json"])
        .arg(src.path().join("needy"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kit = Kit::start_in(home).await;
    let status = kit.get("/extensions").await.json();
    assert_eq!(status["generation"], 0);
    assert!(
        status["bootError"].as_str().unwrap().contains("needy"),
        "{status}"
    );
    assert_eq!(kit.row("needy").await.unwrap()["state"], "enabled");
    let body = Answer::of(
        kit.req(Method::POST, "/extensions/reload")
            .send()
            .await
            .unwrap(),
    )
    .await
    .refused(422, "reload.failed");
    assert_eq!(body["params"]["keptGeneration"], 0);
    // Disabling it is the fix; the write's reload builds the first runtime.
    let fixed = kit
        .post(
            "/plugins/enabled",
            json!({"name": "needy", "enabled": false}),
        )
        .await
        .json();
    assert!(fixed.get("reloadError").is_none(), "{fixed}");
    let status = kit.get("/extensions").await.json();
    assert_eq!(status["generation"], 1, "{status}");
    assert!(status.get("bootError").is_none(), "{status}");
    kit.stop().await;
}
