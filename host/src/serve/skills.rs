//! `GET /skills` and `POST /skills/enabled`: the skills of installed
//! packages and the user's switch for each (stored as `crate::skills`
//! describes).
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{ApiError, json_body, registry_or};
use super::{AppState, WithReload, blocking};
use crate::install::ErrorCode;
use crate::skills::{SkillView, installed_skills, parse_skill_id, set_skill_enabled};

/// `GET /skills` → `{"skills": [...]}`.
pub async fn list(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let home = state.home.clone();
    let (skills, _) = blocking(move || installed_skills(&home))
        .await?
        .map_err(|e| ApiError::state_unreadable(&e))?;
    Ok(Json(json!({ "skills": skills })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillEnabledBody {
    name: Option<String>,
    enabled: Option<bool>,
}

/// `POST /skills/enabled`: `{name: "<plugin>:<skill>", enabled}` → the
/// skill's row, plus `reloadError?`.
pub async fn enabled(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<WithReload<SkillView>>, ApiError> {
    let body: SkillEnabledBody = json_body(&headers, body).await?;
    let name = body
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| ApiError::missing_field("name"))?;
    let enabled = body
        .enabled
        .ok_or_else(|| ApiError::missing_field("enabled"))?;
    if parse_skill_id(&name).is_none() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "skill.bad_name",
            "that is not a skill id",
        )
        .detail(format!(
            "{name:?} is not <plugin>:<skill> with a valid plugin name"
        )));
    }
    let _write = state.writes.lock().await;
    let home = state.home.clone();
    let id = name.clone();
    let view = blocking(move || set_skill_enabled(&home, &id, enabled))
        .await?
        .map_err(|e| match e.code {
            ErrorCode::NotInstalled => ApiError::new(
                StatusCode::NOT_FOUND,
                "skill.not_found",
                "no installed package contributes that skill",
            )
            .detail(e.message.clone()),
            _ => registry_or(
                &e,
                ApiError::backend(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "skill.toggle_failed",
                    "the skill could not be switched",
                    &e,
                ),
            ),
        })?;
    Ok(Json(WithReload {
        answer: view,
        reload_error: state.reload_after_write().await,
    }))
}
