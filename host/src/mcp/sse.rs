//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp 3 no longer
//! ships, on rmcp's [`Transport`] trait:
//!
//! 1. `GET <url>` with `Accept: text/event-stream` opens the event stream;
//! 2. its first `endpoint` event names the URL to POST to (resolved against
//!    the stream URL, and refused unless it has the same origin: the
//!    configured headers must not travel to another host);
//! 3. each client message is one `POST` of JSON to that endpoint;
//! 4. every server message arrives as a `message` event on the stream.
//!
//! Events are parsed by `reasonix-sse` (bounded, fuzzed). A message that is
//! not JSON-RPC is skipped, as the official SDKs do; the stream ending ends
//! the transport.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

/// The largest event accepted from the stream (one JSON-RPC message).
pub const MAX_EVENT_BYTES: usize = 16 << 20;

#[derive(Debug, thiserror::Error)]
pub enum SseTransportError {
    #[error("{0}")]
    Http(String),
    #[error("the server's SSE stream ended before it named its message endpoint")]
    NoEndpoint,
    #[error("the server named a message endpoint on another origin ({0}); refused")]
    OtherOrigin(String),
    #[error("the SSE connection is closed")]
    Closed,
}

/// A connected legacy SSE transport.
pub struct SseTransport {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl SseTransport {
    /// Open the stream and wait for the `endpoint` event (bounded by
    /// `timeout`).
    pub async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: HeaderMap,
        timeout: Duration,
    ) -> Result<SseTransport, SseTransportError> {
        let base = Url::parse(url).map_err(|e| SseTransportError::Http(e.to_string()))?;
        let response = tokio::time::timeout(
            timeout,
            client
                .get(base.clone())
                .headers(headers.clone())
                .header(ACCEPT, "text/event-stream")
                .send(),
        )
        .await
        .map_err(|_| SseTransportError::Http("opening the SSE stream timed out".into()))?
        .map_err(|e| SseTransportError::Http(http_error(e)))?;
        if !response.status().is_success() {
            return Err(SseTransportError::Http(format!(
                "opening the SSE stream answered HTTP {}",
                response.status().as_u16()
            )));
        }
        let (endpoint_tx, endpoint_rx) =
            tokio::sync::oneshot::channel::<Result<Url, SseTransportError>>();
        let (tx, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(read_stream(response, base, endpoint_tx, tx));
        let endpoint = match tokio::time::timeout(timeout, endpoint_rx).await {
            Ok(Ok(Ok(endpoint))) => endpoint,
            Ok(Ok(Err(e))) => {
                reader.abort();
                return Err(e);
            }
            Ok(Err(_)) => {
                reader.abort();
                return Err(SseTransportError::NoEndpoint);
            }
            Err(_) => {
                reader.abort();
                return Err(SseTransportError::Http(
                    "the server did not name its message endpoint in time".into(),
                ));
            }
        };
        Ok(SseTransport {
            client,
            endpoint,
            headers,
            incoming,
            reader,
        })
    }
}

fn http_error(e: reqwest::Error) -> String {
    // reqwest's text may contain the URL (and so its credentials).
    e.without_url().to_string()
}

async fn read_stream(
    mut response: reqwest::Response,
    base: Url,
    endpoint_tx: tokio::sync::oneshot::Sender<Result<Url, SseTransportError>>,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
) {
    let mut parser = reasonix_sse::Parser::new(MAX_EVENT_BYTES);
    let mut endpoint_tx = Some(endpoint_tx);
    let mut events = Vec::new();
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => {
                tracing::debug!("MCP SSE stream failed: {}", http_error(e));
                break;
            }
        };
        if let Err(e) = parser.push(&chunk, &mut events) {
            tracing::warn!("MCP SSE stream refused: {e}");
            break;
        }
        for event in events.drain(..) {
            match event.event.as_str() {
                "endpoint" => {
                    let Some(sender) = endpoint_tx.take() else {
                        continue;
                    };
                    let resolved = base
                        .join(event.data.trim())
                        .map_err(|e| SseTransportError::Http(format!("bad endpoint: {e}")))
                        .and_then(|url| {
                            if url.origin() == base.origin() {
                                Ok(url)
                            } else {
                                Err(SseTransportError::OtherOrigin(
                                    reasonix_package::mask::mask_url(url.as_str()),
                                ))
                            }
                        });
                    let failed = resolved.is_err();
                    let _ = sender.send(resolved);
                    if failed {
                        return;
                    }
                }
                "message" => match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
                    Ok(message) => {
                        if tx.send(message).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => tracing::debug!("ignoring a malformed MCP SSE message: {e}"),
                },
                _ => {}
            }
        }
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseTransportError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = self.endpoint.clone();
        let headers = self.headers.clone();
        async move {
            let body =
                serde_json::to_vec(&item).map_err(|e| SseTransportError::Http(e.to_string()))?;
            let response = client
                .post(endpoint)
                .headers(headers)
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body)
                .send()
                .await
                .map_err(|e| SseTransportError::Http(http_error(e)))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseTransportError::Http(format!(
                    "posting a message answered HTTP {}",
                    response.status().as_u16()
                )))
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.incoming.close();
        Ok(())
    }
}
