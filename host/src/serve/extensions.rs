//! `POST /extensions/reload` (rebuild the runtime from what is on disk) and
//! `GET /extensions` (what runs now).
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

use super::AppState;
use super::error::ApiError;
use super::kernel::{KernelStatus, ReloadRefused};
use crate::runtime::host::ReloadReport;

/// `GET /extensions`: the serving generation and its runtimes.
pub async fn status(State(state): State<Arc<AppState>>) -> Json<KernelStatus> {
    Json(state.kernel.status())
}

/// `POST /extensions/reload`: 200 with what changed; 409 `reload.busy`
/// while a turn runs (retry once idle, as the seed says for Serve); 422
/// `reload.failed` when the new runtime could not be built (the old one
/// keeps serving).
pub async fn reload(State(state): State<Arc<AppState>>) -> Result<Json<Swapped>, ApiError> {
    // Refuse at once rather than wait behind a write for a turn to end.
    if state.kernel.is_busy() {
        return Err(busy());
    }
    let _write = state.writes.lock().await;
    match state.kernel.reload().await {
        Ok(report) => Ok(Json(Swapped {
            status: "swapped",
            report,
        })),
        Err(ReloadRefused::Busy) => Err(busy()),
        Err(e @ ReloadRefused::Failed { kept, .. }) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "reload.failed",
            "the runtime could not be rebuilt; the running one is unchanged",
        )
        .detail(e.to_string())
        .param("keptGeneration", kept)),
    }
}

/// A reload that swapped: `{status: "swapped", fromGeneration,
/// toGeneration, added, removed, changed, unchanged, degraded}`.
#[derive(Debug, serde::Serialize)]
pub struct Swapped {
    status: &'static str,
    #[serde(flatten)]
    report: ReloadReport,
}

fn busy() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "reload.busy",
        "a turn is running; retry the reload once it ends",
    )
    .detail(ReloadRefused::Busy.to_string())
}
