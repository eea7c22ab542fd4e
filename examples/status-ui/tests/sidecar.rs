//! status-ui through the host-side transport with a recording UI host:
//! each input publishes a status and a card; the reset action republishes.

use reasonix_protocol::HookPoint;
use reasonix_protocol::error::RpcError;
use reasonix_protocol::types::{
    Decision, SessionContext, UIActionParams, UIPublishParams, UIPublishResult, UISurfaceKind,
    raw_json,
};
use reasonix_sidecar::{
    BoxFuture, Guard, HostServices, LaunchSpec, ManifestCeiling, Sidecar, StartOptions,
};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct RecordingUi {
    published: Mutex<Vec<UIPublishParams>>,
}

impl HostServices for RecordingUi {
    fn ui_publish(
        &self,
        plugin: &str,
        params: UIPublishParams,
    ) -> BoxFuture<Result<UIPublishResult, RpcError>> {
        assert_eq!(plugin, "status-ui");
        self.published.lock().unwrap().push(params);
        Box::pin(async { Ok(UIPublishResult { accepted: true }) })
    }
}

fn payload(p: &UIPublishParams) -> Value {
    serde_json::from_str(p.payload.get()).unwrap()
}

#[tokio::test]
async fn inputs_publish_status_and_card_and_reset_republishes() {
    let ui = Arc::new(RecordingUi::default());
    let spec = LaunchSpec {
        plugin_root: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        name: "status-ui".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        command: env!("CARGO_BIN_EXE_status-ui").into(),
        args: Vec::new(),
        env: Default::default(),
    };
    let ceiling = ManifestCeiling {
        plugin_id: "status-ui".into(),
        intercepts: vec!["input.receive".into()],
        capabilities: vec!["interceptors".into(), "ui".into()],
        ..Default::default()
    };
    let mut options = StartOptions::new(SessionContext {
        session_id: "session-9".into(),
        workspace_root: env!("CARGO_MANIFEST_DIR").into(),
        generation: 3,
        epoch: None,
    });
    options.guard = Guard::Disabled;
    options.host_services = ui.clone();
    let sidecar = Sidecar::start(spec, ceiling, options)
        .await
        .unwrap_or_else(|e| panic!("start: {e}"));
    assert_eq!(sidecar.declaration().ui_actions[0].action_id, "reset");

    for text in ["hello world", "three more words"] {
        let out = sidecar
            .intercept(
                HookPoint::InputReceive,
                raw_json(&json!({ "text": text }).to_string()).unwrap(),
                Duration::from_secs(5),
            )
            .await
            .unwrap();
        assert_eq!(out.decision, Decision::Continue);
    }
    {
        let published = ui.published.lock().unwrap();
        assert_eq!(published.len(), 4, "status + card per input");
        let last_status = &published[2];
        assert_eq!(last_status.kind, UISurfaceKind::Status);
        assert_eq!(last_status.session_id, "session-9");
        assert_eq!(last_status.generation, 3);
        assert_eq!(payload(last_status)["label"], "2 inputs, 5 words");
        let card = &published[3];
        assert_eq!(card.kind, UISurfaceKind::Card);
        assert_eq!(
            payload(card)["actions"],
            json!([{"actionId": "reset", "label": "Reset counters"}])
        );
        assert_eq!(
            payload(card)["fields"][1],
            json!({"key": "words", "value": "5"})
        );
    }

    let reset = sidecar
        .ui_action(
            UIActionParams {
                action_id: "reset".into(),
                session_id: "session-9".into(),
                generation: 3,
                args: Default::default(),
            },
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert!(reset.accepted, "{reset:?}");
    assert_eq!(reset.message.as_deref(), Some("counters reset"));
    let published = ui.published.lock().unwrap();
    assert_eq!(payload(&published[4])["label"], "0 inputs, 0 words");
}
