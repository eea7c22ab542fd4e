//! Shared by the `serve_*` tests: a real server on 127.0.0.1 (in this
//! process, so a test can pin a turn through its runtime host, or the
//! `reasonix serve` binary) and a real HTTP client.
#![allow(dead_code)] // each test file uses part of this

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use reasonix::home::ReasonixHome;
use reasonix::install::source::SourceContext;
use reasonix::serve::kernel::{Kernel, RuntimeKernel};
use reasonix::serve::{ServeOptions, Server};
use reqwest::header::HeaderMap;
use serde_json::Value;
use tempfile::TempDir;

pub const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");

/// A plain-HTTP client that ignores proxy settings.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// One answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub async fn of(response: reqwest::Response) -> Answer {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.unwrap().to_vec();
        Answer {
            status,
            headers,
            body,
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}), status {}: {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    }

    /// Assert a refusal: status, `code`, and the `params.detail` every
    /// refusal carries.
    #[track_caller]
    pub fn refused(&self, status: u16, code: &str) -> Value {
        let body = self.json();
        assert_eq!(self.status, status, "{body}");
        assert_eq!(body["code"], code, "{body}");
        assert!(
            body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{body}"
        );
        assert!(body["params"]["detail"].is_string(), "{body}");
        body
    }
}

/// A server running in this process on 127.0.0.1, over a fresh home.
pub struct Kit {
    pub home: TempDir,
    /// The workspace: relative sources resolve here.
    pub work: TempDir,
    pub addr: SocketAddr,
    pub token: String,
    pub kernel: Arc<RuntimeKernel>,
    pub client: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Kit {
    pub async fn start() -> Kit {
        Kit::start_in(TempDir::new().unwrap()).await
    }

    /// A server over an existing home.
    pub async fn start_in(home: TempDir) -> Kit {
        let work = TempDir::new().unwrap();
        let reasonix_home = ReasonixHome::at(home.path());
        let kernel = Arc::new(
            RuntimeKernel::start(
                reasonix_home.clone(),
                reasonix_sidecar::Guard::Exe(PathBuf::from(REASONIX)),
                work.path().to_path_buf(),
            )
            .await,
        );
        let token = reasonix::serve::auth::generate_token().unwrap();
        let server = Server::bind(
            ServeOptions {
                home: reasonix_home,
                sources: SourceContext {
                    workspace: work.path().to_path_buf(),
                    user_home: None,
                },
                listen: "127.0.0.1:0".parse().unwrap(),
                token: token.clone(),
            },
            Arc::clone(&kernel) as Arc<dyn Kernel>,
        )
        .await
        .unwrap();
        let addr = server.local_addr();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Kit {
            home,
            work,
            addr,
            token,
            kernel,
            client: client(),
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A request carrying the token.
    pub fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(&self.token)
    }

    pub async fn get(&self, path: &str) -> Answer {
        Answer::of(self.req(reqwest::Method::GET, path).send().await.unwrap()).await
    }

    pub async fn delete(&self, path: &str) -> Answer {
        Answer::of(
            self.req(reqwest::Method::DELETE, path)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn post(&self, path: &str, body: Value) -> Answer {
        Answer::of(
            self.req(reqwest::Method::POST, path)
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Plan `source`, then install exactly that plan; returns the install answer.
    pub async fn plan_and_install(&self, source: &str) -> Value {
        let plan = self
            .post("/plugins/plan", serde_json::json!({"source": source}))
            .await;
        assert_eq!(plan.status, 200, "{}", plan.text());
        let plan = plan.json();
        assert_eq!(plan["status"], "planned", "{plan}");
        let installed = self
            .post(
                "/plugins/install",
                serde_json::json!({"source": source, "planId": plan["planId"]}),
            )
            .await;
        assert_eq!(installed.status, 200, "{}", installed.text());
        let installed = installed.json();
        assert_eq!(installed["status"], "done", "{installed}");
        installed
    }

    /// The row of `name` in `GET /plugins`.
    pub async fn row(&self, name: &str) -> Option<Value> {
        let list = self.get("/plugins").await;
        assert_eq!(list.status, 200, "{}", list.text());
        list.json()
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
    }

    /// Stop the server gracefully and retire the runtimes.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
        self.kernel.shutdown().await;
    }
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A native package with a skill and a theme, and optionally more manifest
/// fields (`extra` is spliced into the top-level object).
pub fn package(dir: &Path, name: &str, extra: &str) {
    write(
        &dir.join("reasonix-plugin.json"),
        &format!(
            r#"{{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "{name}",
  "version": "1.0.0",
  "description": "Test plugin {name}"{extra}
}}
"#
        ),
    );
    write(
        &dir.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Say hello\n---\nSay hello to the user.\n",
    );
}
