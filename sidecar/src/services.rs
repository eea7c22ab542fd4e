//! Host-side handlers for extension→host UI requests. The dispatcher
//! implements [`HostServices`]; without one, UI requests are answered
//! `unknown_method` (a host with no UI, §10).

use std::future::Future;
use std::pin::Pin;

use reasonix_protocol::error::{ErrorReason, RpcError};
use reasonix_protocol::types::{
    UIPublishParams, UIPublishResult, UIRequestParams, UIRequestResult,
};

/// A boxed, sendable future (handlers are called from the connection task).
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Serves `host/ui/publish` and `host/ui/request` for one plugin's sidecar.
/// Params arrive strictly decoded and validated; errors go back to the
/// extension as they are (use [`RpcError::from_reason`]).
pub trait HostServices: Send + Sync + 'static {
    fn ui_publish(
        &self,
        plugin: &str,
        params: UIPublishParams,
    ) -> BoxFuture<Result<UIPublishResult, RpcError>> {
        let _ = (plugin, params);
        Box::pin(async { Err(RpcError::from_reason(ErrorReason::UnknownMethod)) })
    }

    fn ui_request(
        &self,
        plugin: &str,
        params: UIRequestParams,
    ) -> BoxFuture<Result<UIRequestResult, RpcError>> {
        let _ = (plugin, params);
        Box::pin(async { Err(RpcError::from_reason(ErrorReason::UnknownMethod)) })
    }
}

/// No UI: every UI request is `unknown_method`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHostServices;

impl HostServices for NoHostServices {}
