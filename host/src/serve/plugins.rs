//! The plugin routes of PLUGIN_PACKAGES §a.13: list, plan, install,
//! enable/disable, remove, export.
//!
//! Plan and install answer with the install_source JSON itself (what the
//! plan reports, `blocked` and `failed` included, rides in a 200 body);
//! only a request the backend could not carry out at all is a refusal
//! (`install.failed`, 422, its own `errorCode` in `params`).
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::error::{ApiError, json_body, registry_or};
use super::{AppState, WithReload, blocking};
use crate::install::installed::{Installed, find_installed, installed_packages};
use crate::install::plan::InstallResponse;
use crate::install::progress::Progress;
use crate::install::view::{PluginView, plugin_view};
use crate::install::{ErrorCode, InstallRequest, execute_install};
use crate::registry::{PluginRegistry, is_valid_name};

/// `GET /plugins`: every registered package, disabled and unreadable ones
/// included (a registered package whose root is gone is a row with `error`).
pub async fn list(State(state): State<Arc<AppState>>) -> Result<Json<Vec<PluginView>>, ApiError> {
    let home = state.home.clone();
    let views = blocking(move || -> Result<Vec<PluginView>, ApiError> {
        let (installed, _) = installed_packages(&home).map_err(|e| ApiError::state_unreadable(&e))?;
        let registry = PluginRegistry::load(&home).map_err(|e| ApiError::state_unreadable(&e))?;
        let mut views: Vec<PluginView> = installed.iter().map(plugin_view).collect();
        for entry in registry.plugins {
            if views.iter().any(|v| v.name == entry.name) {
                continue;
            }
            let root = home.resolve_root(&entry.root);
            let why = format!(
                "registered root {} is missing or not a directory; reinstall it with replace, or remove it",
                root.display()
            );
            views.push(plugin_view(&Installed {
                entry,
                root,
                package: Err(why),
            }));
        }
        views.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(views)
    })
    .await??;
    Ok(Json(views))
}

/// The install_source JSON, plus `reloadError` after a write.
type InstallAnswer = WithReload<InstallResponse>;

/// The body of `POST /plugins/plan` and `POST /plugins/install`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InstallBody {
    source: Option<String>,
    name: Option<String>,
    link: Option<bool>,
    replace: Option<bool>,
    /// The plan the user approved (install only; ignored by plan).
    plan_id: Option<String>,
}

fn install_request(body: InstallBody, apply: bool) -> Result<InstallRequest, ApiError> {
    let source = body
        .source
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ApiError::missing_field("source"))?;
    let name = body
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty());
    if let Some(n) = &name
        && !is_valid_name(n)
    {
        return Err(ApiError::bad_name(n));
    }
    Ok(InstallRequest {
        source,
        name,
        replace: body.replace.unwrap_or(false),
        link: body.link.unwrap_or(false),
        apply,
        plan_id: if apply {
            body.plan_id
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
        } else {
            None
        },
        expect_digest: None,
    })
}

async fn run_install(
    state: &AppState,
    req: InstallRequest,
) -> Result<Json<InstallAnswer>, ApiError> {
    let home = state.home.clone();
    let sources = state.sources.clone();
    let resp = blocking(move || execute_install(&home, &sources, &req, &Progress::hidden()))
        .await?
        .map_err(|e| {
            ApiError::backend(
                StatusCode::UNPROCESSABLE_ENTITY,
                "install.failed",
                "the package could not be installed",
                &e,
            )
        })?;
    // Only a write has something to reload for (a plan, or an apply whose
    // every action failed, changed nothing).
    let wrote = resp.applied && resp.actions.iter().any(|a| a.status == "done");
    let reload_error = if wrote {
        state.reload_after_write().await
    } else {
        None
    };
    Ok(Json(WithReload {
        answer: resp,
        reload_error,
    }))
}

/// `POST /plugins/plan`: read a source and return its plan; writes nothing.
pub async fn plan(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<InstallAnswer>, ApiError> {
    let req = install_request(json_body(&headers, body).await?, false)?;
    run_install(&state, req).await
}

/// `POST /plugins/install`: apply; with `planId`, only exactly that plan.
pub async fn install(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<InstallAnswer>, ApiError> {
    let req = install_request(json_body(&headers, body).await?, true)?;
    let _write = state.writes.lock().await;
    run_install(&state, req).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnabledBody {
    name: Option<String>,
    enabled: Option<bool>,
}

/// `POST /plugins/enabled`: `{name, enabled}` → `{name, enabled, reloadError?}`.
pub async fn enabled(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<WithReload<Switched>>, ApiError> {
    let body: EnabledBody = json_body(&headers, body).await?;
    let name = body
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| ApiError::missing_field("name"))?;
    let enabled = body
        .enabled
        .ok_or_else(|| ApiError::missing_field("enabled"))?;
    if !is_valid_name(&name) {
        return Err(ApiError::bad_name(&name));
    }
    let _write = state.writes.lock().await;
    let home = state.home.clone();
    let who = name.clone();
    blocking(move || {
        crate::install::publish::recover(&home)?;
        crate::install::publish::set_enabled(&home, &who, enabled)
    })
    .await?
    .map_err(|e| match e.code {
        ErrorCode::NotInstalled => ApiError::not_installed(&name),
        _ => registry_or(
            &e,
            ApiError::backend(
                StatusCode::UNPROCESSABLE_ENTITY,
                "plugin.toggle_failed",
                "the plugin could not be switched",
                &e,
            ),
        ),
    })?;
    Ok(Json(WithReload {
        answer: Switched { name, enabled },
        reload_error: state.reload_after_write().await,
    }))
}

/// The answer of `POST /plugins/enabled`.
#[derive(Debug, serde::Serialize)]
pub struct Switched {
    name: String,
    enabled: bool,
}

/// `DELETE /plugins/{name}`: the uninstall JSON (`blocked` when nothing
/// matched).
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> Result<Json<InstallAnswer>, ApiError> {
    if !is_valid_name(&name) {
        return Err(ApiError::bad_name(&name));
    }
    let _write = state.writes.lock().await;
    let home = state.home.clone();
    let (resp, removed) =
        blocking(move || crate::install::uninstall::uninstall(&home, &name, false))
            .await?
            .map_err(|e| {
                registry_or(
                    &e,
                    ApiError::backend(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "install.failed",
                        "the package could not be removed",
                        &e,
                    ),
                )
            })?;
    let reload_error = if removed.is_some() {
        state.reload_after_write().await
    } else {
        None
    };
    Ok(Json(WithReload {
        answer: resp,
        reload_error,
    }))
}

/// `GET /plugins/{name}/export`: the package as a zip, credentials
/// replaced by `${VAR}` references, the variables in
/// `X-Reasonix-Required-Env`.
pub async fn export(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    if !is_valid_name(&name) {
        return Err(ApiError::bad_name(&name));
    }
    let home = state.home.clone();
    let who = name.clone();
    let export = blocking(move || -> Result<crate::export::Export, ApiError> {
        let found = find_installed(&home, &who).map_err(|e| {
            registry_or(
                &e,
                ApiError::backend(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "plugin.export_failed",
                    "the plugin could not be exported",
                    &e,
                ),
            )
        })?;
        let Some(installed) = found.0 else {
            return Err(ApiError::not_installed(&who));
        };
        crate::export::export_package(&who, &installed.root).map_err(|e| {
            ApiError::backend(
                StatusCode::UNPROCESSABLE_ENTITY,
                "plugin.export_failed",
                "the plugin could not be exported",
                &e,
            )
        })
    })
    .await??;
    let mut response = export.zip.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    // The name passed the plugin name rule: nothing in it needs quoting.
    let disposition = format!("attachment; filename=\"{name}.zip\"");
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    if !export.required_env.is_empty()
        && let Ok(v) = HeaderValue::from_str(&export.required_env.join(","))
    {
        headers.insert("x-reasonix-required-env", v);
    }
    Ok(response)
}
