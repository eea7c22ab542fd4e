//! A real extension built on the SDK, for the transport tests: every kind
//! of handler, with behaviour chosen by the input so a test can drive each
//! path over real pipes.

use reasonix_extension_sdk::chunk_channel;
use reasonix_extension_sdk::prelude::*;

struct TestExtension;

impl Extension for TestExtension {
    fn initialize(&self, _init: &InitializeParams) -> Result<Declaration, Error> {
        Ok(Declaration::new("sdk-test", "0.1.0")
            .intercept(HookPoint::InputReceive)
            .intercept(HookPoint::ToolBefore)
            .tool("echo")
            .tool("ask")
            .provider(ProviderDescriptor {
                reference: "plugin/sdk-test/echo".into(),
                display_name: Some("Echo".into()),
                model: Some("one".into()),
                ..Default::default()
            })
            .ui_action("ping", "Ping"))
    }

    fn on_input_receive(&self, _ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
        let input: InputPayload = payload.decode()?;
        if input.text == "block me" {
            return Ok(Verdict::block("blocked by sdk-test"));
        }
        if input.text == "fail me" {
            return Err(Error::failed("a private failure text"));
        }
        let text = if input.text.chars().count() > 100 {
            format!(
                "[sdk] long input of {} chars (externalized: {})",
                input.text.chars().count(),
                payload.was_externalized()
            )
        } else {
            format!("[sdk] {}", input.text)
        };
        Verdict::replace(&InputPayload { text })
    }

    fn on_tool_before(&self, _ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
        let call: ToolBeforePayload = payload.decode()?;
        if call.name == "panic" {
            panic!("the test extension panics on purpose");
        }
        Ok(Verdict::Continue)
    }

    fn call_tool(
        &self,
        ctx: &Context,
        name: &str,
        arguments: &RawJson,
    ) -> Result<ToolOutput, Error> {
        match name {
            "echo" if arguments.get().contains("\"fail\"") => {
                Err(Error::failed("the tool failed on purpose"))
            }
            "echo" => Ok(ToolOutput::text(arguments.get())),
            "ask" => match ctx.ui().request_input("ask", "Your answer?")? {
                Some(answer) => Ok(ToolOutput::text(format!("answer: {answer}"))),
                None => Ok(ToolOutput::text("cancelled")),
            },
            _ => Err(Error::unknown_method()),
        }
    }

    fn open_stream(&self, _ctx: &Context, request: StreamRequest) -> Result<ChunkStream, Error> {
        let last = request
            .request
            .messages
            .last()
            .and_then(|m| m.content.clone())
            .unwrap_or_default();
        match request.model.as_deref() {
            Some("refuse") => Err(Error::failed("no such model")),
            Some("fail") => Ok(Box::new(
                vec![chunk::text("partial"), chunk::error("the model fell over")].into_iter(),
            )),
            Some("endless") => {
                let (tx, rx) = chunk_channel();
                let cancel = request.cancel.clone();
                std::thread::spawn(move || {
                    let mut n = 0u64;
                    while !cancel.is_cancelled() && tx.send(chunk::text(format!("tick {n} "))) {
                        n += 1;
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                });
                Ok(Box::new(rx))
            }
            _ => Ok(Box::new(
                vec![
                    chunk::text("echo: "),
                    chunk::text(last),
                    chunk::usage(3, 2),
                    chunk::done(),
                ]
                .into_iter(),
            )),
        }
    }

    fn ui_action(&self, ctx: &Context, action: &UIActionParams) -> Result<Option<String>, Error> {
        if action.action_id != "ping" {
            return Err(Error::failed(format!("no action {}", action.action_id)));
        }
        let accepted = ctx
            .ui()
            .publish_status("status", &Status::new("pong").detail("from sdk-test"))?;
        Ok(Some(format!("published: {accepted}")))
    }

    fn shutdown(&self, ctx: &Context) {
        ctx.log(LogLevel::Info, "shutdown hook ran");
    }
}

#[cfg(not(target_family = "wasm"))]
fn main() -> std::process::ExitCode {
    reasonix_extension_sdk::run_stdio(TestExtension)
}

// This fixture is a native sidecar only; on wasm the package's library is
// what matters, and the binary just has to build.
#[cfg(target_family = "wasm")]
fn main() {
    let _ = TestExtension;
}
