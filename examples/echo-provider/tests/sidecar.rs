//! echo-provider through the host-side transport: catalog, then a stream
//! whose chunks arrive in order with a usage chunk and one end.

use reasonix_protocol::types::{
    ProviderMessage, ProviderRequest, ProviderRole, SessionContext, StreamOpenParams,
};
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling, Sidecar, StartOptions, StreamEvent};
use std::path::PathBuf;
use std::time::Duration;

async fn start() -> Sidecar {
    let spec = LaunchSpec {
        plugin_root: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        name: "echo-provider".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        command: env!("CARGO_BIN_EXE_echo-provider").into(),
        args: Vec::new(),
        env: Default::default(),
    };
    let ceiling = ManifestCeiling {
        plugin_id: "echo-provider".into(),
        capabilities: vec!["providers".into()],
        ..Default::default()
    };
    let mut options = StartOptions::new(SessionContext {
        session_id: "s".into(),
        workspace_root: env!("CARGO_MANIFEST_DIR").into(),
        generation: 1,
        epoch: None,
    });
    options.guard = Guard::Disabled;
    Sidecar::start(spec, ceiling, options)
        .await
        .unwrap_or_else(|e| panic!("start: {e}"))
}

fn open(model: &str, text: &str) -> StreamOpenParams {
    StreamOpenParams {
        stream_id: String::new(),
        provider_ref: "plugin/echo-provider/echo".into(),
        model: Some(model.into()),
        effort: None,
        request: ProviderRequest {
            messages: vec![ProviderMessage {
                role: Some(ProviderRole::User),
                content: Some(text.into()),
                ..Default::default()
            }],
            tools: Vec::new(),
            temperature: None,
            max_tokens: 64,
            response_format: None,
        },
        seq_base: 1,
        generation: None,
        epoch: None,
    }
}

#[tokio::test]
async fn streams_the_echo_with_usage_then_one_end() {
    let sidecar = start().await;
    let catalog = sidecar
        .provider_catalog(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(catalog.providers.len(), 1);
    assert_eq!(catalog.providers[0].reference, "plugin/echo-provider/echo");
    assert_eq!(catalog.providers[0].model.as_deref(), Some("echo-1"));

    let mut stream = sidecar
        .stream_open(open("echo-1", "streams are fun"), Duration::from_secs(5))
        .await
        .unwrap();
    let mut text = String::new();
    let mut seqs = Vec::new();
    let mut usage = None;
    let end = loop {
        match stream.events.recv().await.expect("the stream ends") {
            StreamEvent::Chunk(c) => {
                seqs.push(c.seq);
                if let Some(t) = &c.chunk.text {
                    text.push_str(t);
                }
                if c.chunk.usage.is_some() {
                    usage = c.chunk.usage.clone();
                }
            }
            StreamEvent::End(end) => break end,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(text, "streams are fun");
    assert_eq!(seqs, (1..=5).collect::<Vec<u64>>());
    let usage = usage.expect("a usage chunk");
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (3, 3));
    assert_eq!((end.last_seq, end.error, end.interrupted), (5, None, None));
}

#[tokio::test]
async fn an_unknown_model_is_refused() {
    let sidecar = start().await;
    let err = match sidecar
        .stream_open(open("gpt-9", "hi"), Duration::from_secs(5))
        .await
    {
        Ok(_) => panic!("an unknown model was accepted"),
        Err(e) => e,
    };
    assert_eq!(
        err.reason(),
        Some(reasonix_protocol::ErrorReason::ProviderFailed),
        "{err}"
    );
}
