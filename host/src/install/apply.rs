//! `install`: plan (snapshot, digests, planId), then — with approval —
//! apply exactly the planned bytes.
use std::path::{Path, PathBuf};

use reasonix_package::{LoadedPackage, load_package};

use super::digest::is_content_digest;
use super::error::{ErrorCode, InstallError, InstallResult};
use super::pause::pause_at;
use super::plan::{
    ActionInput, Counts, InstallResponse, KindTally, PlanRequest, PluginAction, common_scope,
    compute_plan_id, manifest_kind_str, package_error, plan_content_digest, plugin_action,
};
use super::progress::Progress;
use super::publish::{CopyPublication, check_replace, publish_copy, publish_link, recover};
use super::snapshot::{CopyOptions, copy_tree, estimate_bytes};
use super::source::{Candidate, ResolvedSource, SourceContext, SourceKind, resolve_source_for};
use crate::home::ReasonixHome;
use crate::registry::{PluginRegistry, RegistryEntry, is_valid_name};

/// A `reasonix plugin install` request.
#[derive(Debug, Clone, Default)]
pub struct InstallRequest {
    pub source: String,
    /// `--name`: overrides the manifest name.
    pub name: Option<String>,
    pub replace: bool,
    pub link: bool,
    /// `--yes`: write. Without it only a plan is returned.
    pub apply: bool,
    /// A planId from an earlier `--dry-run`; apply refuses a different plan.
    pub plan_id: Option<String>,
    /// A contentDigest from an earlier `--dry-run`; apply refuses other material.
    pub expect_digest: Option<String>,
}

impl InstallRequest {
    fn plan_request(&self) -> PlanRequest {
        PlanRequest {
            op: "install".into(),
            source: self.source.trim().to_string(),
            name: self.name.as_deref().unwrap_or_default().trim().to_string(),
            mode: if self.link { "link" } else { "copy" }.into(),
            replace: self.replace,
        }
    }
}

/// A planned action plus what apply needs to verify it.
struct Planned {
    action: PluginAction,
    counts: Counts,
    description: Option<String>,
    /// The approval snapshot, removed once the install is done: deleting
    /// its files before the staged copy creates as many makes ext4 scan the
    /// freshly freed inodes for every new one (measured: most of the time
    /// of a 10 000-file install).
    _snapshot: Option<tempfile::TempDir>,
}

fn load(root: &Path) -> InstallResult<LoadedPackage> {
    load_package(root).map_err(package_error)
}

/// Read a candidate; errors name its source, never the temporary clone or
/// extraction directory it was read from.
fn load_candidate(cand: &Candidate) -> InstallResult<LoadedPackage> {
    load(&cand.root).map_err(|mut e| {
        let root = cand.root.to_string_lossy();
        if root != cand.source.as_str() {
            e.message = e.message.replace(root.as_ref(), &cand.source);
        }
        e
    })
}

fn plan_candidate(
    home: &ReasonixHome,
    req: &InstallRequest,
    cand: &Candidate,
    warnings: &mut Vec<String>,
    progress: &Progress,
) -> InstallResult<Planned> {
    let pkg = load_candidate(cand)?;
    let name = match (&cand.expected_name, &req.name) {
        (Some(fixed), _) => fixed.clone(),
        (None, Some(n)) => n.trim().to_string(),
        (None, None) => pkg.name.clone(),
    };
    if let Some(fixed) = &cand.expected_name
        && pkg.name != *fixed
    {
        return Err(InstallError::new(
            ErrorCode::NameMismatch,
            format!("plugin {fixed:?} points to a manifest named {:?}", pkg.name),
        ));
    }
    if !is_valid_name(&name) {
        return Err(InstallError::new(
            ErrorCode::InvalidName,
            format!("invalid plugin name {name:?}"),
        ));
    }
    warnings.extend(pkg.warnings.iter().cloned());
    // The snapshot stays on disk until the install is done: the mods
    // preview reads the module from exactly the bytes the plan pins.
    let (snapshot_pkg, digest, snapshot) = if req.link {
        (pkg, String::new(), None)
    } else {
        // Copy-mode preview parses a bounded, materialised snapshot; its
        // hashes are what the approval pins.
        let snap = tempfile::Builder::new()
            .prefix("reasonix-plugin-preview-")
            .tempdir()
            .map_err(|e| {
                InstallError::new(ErrorCode::Io, format!("create temporary directory: {e}"))
            })?;
        progress.start_copy(&format!("reading {name}"), || estimate_bytes(&cand.root));
        let copied = copy_tree(&cand.root, snap.path(), &CopyOptions::new(progress));
        progress.finish();
        let report = copied?;
        let snap_pkg = load(snap.path()).map_err(|e| {
            if report.skipped.is_empty() {
                e
            } else {
                InstallError::new(
                    ErrorCode::UnsafePath,
                    format!(
                        "the copied snapshot cannot be read ({}) because copy mode skipped symlinks it cannot materialize safely: {}",
                        e.message,
                        report.skipped.join("; ")
                    ),
                )
                .with_next("Replace those symlinks with real files inside the package, or install with --link.")
            }
        })?;
        let digest = report.digest;
        warnings.extend(report.skipped);
        let (src, copy) = (Counts::of(&pkg), Counts::of(&snap_pkg));
        if src != copy {
            return Err(InstallError::new(
                ErrorCode::UnsafePath,
                format!(
                    "the package's copy holds {} skills / {} agents / {} commands / {} hooks / {} MCP servers but the source declares {}/{}/{}/{}/{}: it uses symlinks that copy mode cannot materialize safely (links leaving the package, broken links or links to directories)",
                    copy.skills, copy.agents, copy.commands, copy.hooks, copy.mcp,
                    src.skills, src.agents, src.commands, src.hooks, src.mcp
                ),
            )
            .with_next("Replace those symlinks with real files inside the package, or install with --link."));
        }
        let mut snap_pkg = snap_pkg;
        let snap_root = snap.path().to_string_lossy().into_owned();
        for s in &mut snap_pkg.compatibility.skipped {
            s.reason = s.reason.replace(&snap_root, ".");
        }
        (snap_pkg, digest, Some(snap))
    };
    let counts = Counts::of(&snapshot_pkg);
    let description = snapshot_pkg.description.clone();
    let action = plugin_action(ActionInput {
        pkg: &snapshot_pkg,
        name: &name,
        source: &cand.source,
        commit: cand.commit.as_deref(),
        target: home.plugin_dir(&name).to_string_lossy().into_owned(),
        config_path: home.registry_path().to_string_lossy().into_owned(),
        link: req.link,
        tree_digest: digest,
    })?;
    Ok(Planned {
        action,
        counts,
        description,
        _snapshot: snapshot,
    })
}

fn base_response(req: &InstallRequest) -> InstallResponse {
    let pr = req.plan_request();
    InstallResponse {
        op: pr.op,
        source: pr.source,
        mode: pr.mode,
        kind: "plugin".into(),
        ..Default::default()
    }
}

/// Plan, and with `req.apply` install. Errors before any action exists are
/// returned as `Err`; failures while applying come back as a `failed`
/// response carrying the action's `errorCode`.
pub fn execute_install(
    home: &ReasonixHome,
    ctx: &SourceContext,
    req: &InstallRequest,
    progress: &Progress,
) -> InstallResult<InstallResponse> {
    let resolved = resolve_source_for(
        &req.source,
        ctx,
        req.link,
        None,
        req.name.as_deref(),
        progress,
    )?;
    let mut warnings = resolved.warnings.clone();
    let mut planned = Vec::new();
    for cand in &resolved.candidates {
        match plan_candidate(home, req, cand, &mut warnings, progress) {
            Ok(p) => planned.push(p),
            Err(e) if e.code == ErrorCode::NoCompatibleCapabilities => {
                let mut resp = base_response(req);
                resp.status = "blocked".into();
                resp.warnings = warnings;
                resp.error = e.message.clone();
                resp.error_code = e.code.as_str().into();
                resp.next = e.next.clone();
                return Ok(resp);
            }
            Err(e) => return Err(e),
        }
    }
    let actions: Vec<PluginAction> = planned.iter().map(|p| p.action.clone()).collect();
    let pr = req.plan_request();
    let plan_id = compute_plan_id(&pr, &actions);
    let content = plan_content_digest(&actions);

    let mut resp = base_response(req);
    resp.kinds = KindTally {
        plugin: actions.len(),
        ..Default::default()
    };
    resp.scope = common_scope(&actions);
    resp.plan_id = plan_id.clone();
    resp.warnings = warnings;

    if let Some(d) = &req.expect_digest {
        if !is_content_digest(d) {
            return Err(InstallError::new(
                ErrorCode::NotPinnable,
                format!("expected digest {d:?} is not sha256:<64 hex>"),
            ));
        }
        if content.is_empty() {
            return Err(InstallError::new(
                ErrorCode::NotPinnable,
                "this source resolves to material that cannot be pinned by content",
            ));
        }
        if &content != d {
            return Err(InstallError::new(
                ErrorCode::DigestMismatch,
                format!("source now resolves to {content}, the pinned version is {d}"),
            ));
        }
    }

    if !req.apply {
        resp.ok = true;
        resp.status = "planned".into();
        resp.actions = actions
            .into_iter()
            .map(|mut a| {
                a.status = "planned".into();
                a
            })
            .collect();
        resp.next = "Review the plan (especially each action's riskLevel and any FULL TRUST reason). Re-run with --yes to install exactly this plan; pass --plan-id to refuse anything else.".into();
        resp.content_digest = content;
        return Ok(resp);
    }

    if let Some(id) = req.plan_id.as_deref().filter(|s| !s.trim().is_empty())
        && id.trim() != plan_id
    {
        return Err(InstallError::new(
            ErrorCode::ApprovalDenied,
            format!("planId mismatch (got {id}, expected {plan_id}); re-plan and re-approve"),
        ));
    }

    // Recovery may write; a plan-only run never reaches this point.
    let notes = recover(home)?;
    resp.warnings.extend(notes);
    pause_at("after_plan");

    // Re-resolve through the same function as the plan, once for every
    // action (one clone serves a whole marketplace); a moved git HEAD is
    // pinned back to the approved commit. A git clone is keyed by its
    // commit: the plan's clone already is the approved commit, so it serves
    // the apply as well (a second clone would check out the same tree).
    let pinned = planned
        .first()
        .map(|p| p.action.commit.clone())
        .filter(|c| !c.is_empty());
    let resolved = match resolved {
        reused @ ResolvedSource {
            kind: SourceKind::Git(_),
            ..
        } => Ok(reused),
        local => {
            drop(local);
            resolve_source_for(
                &req.source,
                ctx,
                req.link,
                pinned.as_deref(),
                req.name.as_deref(),
                progress,
            )
        }
    };
    let mut ok = true;
    let mut any = false;
    let mut done = Vec::new();
    let mut snapshots = Vec::new();
    for p in planned {
        snapshots.push(p._snapshot);
        let mut action = p.action;
        let applied = resolved.as_ref().map_err(Clone::clone).and_then(|r| {
            apply_action(
                home,
                ctx,
                req,
                r,
                &action,
                p.counts,
                p.description,
                progress,
            )
        });
        match applied {
            Ok(root) => {
                action.status = "done".into();
                action.target = root.to_string_lossy().into_owned();
                any = true;
                if let Some(warning) = precompile(home, &action.name, &root, progress) {
                    resp.warnings.push(warning);
                }
            }
            Err(e) => {
                ok = false;
                action.status = "failed".into();
                action.error = e.message.clone();
                action.error_code = e.code.as_str().into();
                action.next = e.next.clone();
            }
        }
        done.push(action);
    }
    // `applied` says something was installed: a run whose every action
    // failed changed nothing.
    resp.applied = any;
    resp.ok = ok;
    if let Some(first) = done.iter().find(|a| a.status == "failed") {
        resp.error = first.error.clone();
        resp.error_code = first.error_code.clone();
    }
    resp.status = if ok {
        "done"
    } else if any {
        "partial"
    } else {
        "failed"
    }
    .into();
    resp.next = if ok {
        "Installed and verified.".into()
    } else {
        "No action succeeded. Fix the first failed action[] entry and retry.".into()
    };
    if !ok && any {
        resp.next = "Some actions succeeded; the failed ones are listed in actions[].status=failed. Re-plan those and retry.".into();
    }
    resp.actions = done;
    Ok(resp)
}

/// Compile an installed plugin's wasm component into the home's cache, so
/// that no session start (no turn) compiles it. A component that does not
/// compile is only a warning here: the session that starts it reports it.
fn precompile(home: &ReasonixHome, name: &str, root: &Path, progress: &Progress) -> Option<String> {
    let pkg = load(root).ok()?;
    let runtime = pkg.native.as_ref()?.runtime.as_ref()?;
    if !runtime.is_wasm() {
        return None;
    }
    let component = PathBuf::from(runtime.expand_runtime_command(root).program);
    progress.start_step(&format!("compiling {name}"));
    let compiled = crate::runtime::wasm::cache::precompile(home.root(), &component);
    progress.finish();
    compiled.err().map(|e| {
        format!(
            "plugin {name}: its component could not be precompiled ({}); a session will report it when it starts the plugin",
            crate::runtime::redaction::clean_text(&e.message)
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn apply_action(
    home: &ReasonixHome,
    ctx: &SourceContext,
    req: &InstallRequest,
    resolved: &ResolvedSource,
    action: &PluginAction,
    counts: Counts,
    description: Option<String>,
    progress: &Progress,
) -> InstallResult<PathBuf> {
    let registry = PluginRegistry::load(home)?;
    check_replace(home, &registry, &action.name, req.replace)?;
    let cand = resolved
        .candidates
        .iter()
        .find(|c| c.source == action.source)
        .ok_or_else(|| {
            InstallError::new(
                ErrorCode::DigestMismatch,
                format!(
                    "the source no longer resolves to the planned package {:?} ({})",
                    action.name, action.source
                ),
            )
        })?;
    if let Some(commit) = &cand.commit
        && !action.commit.is_empty()
        && !commit.eq_ignore_ascii_case(&action.commit)
    {
        return Err(InstallError::new(
            ErrorCode::ApprovalDenied,
            format!(
                "plugin source changed since the approved plan (approved commit {}, found {commit})",
                action.commit
            ),
        ));
    }
    let pkg = load_candidate(cand)?;
    if pkg.kind != reasonix_package::ManifestKind::Reasonix && Counts::of(&pkg).mapped_total() == 0
    {
        return Err(InstallError::new(
            ErrorCode::InvalidManifest,
            format!(
                "plugin {:?} no longer has any compatible capabilities",
                action.name
            ),
        ));
    }
    let renamed = req.name.is_some() && cand.expected_name.is_none();
    if !renamed && pkg.name != action.name {
        return Err(InstallError::new(
            ErrorCode::NameMismatch,
            format!(
                "planned plugin name {:?} but the source now reports {:?}",
                action.name, pkg.name
            ),
        ));
    }
    let entry = RegistryEntry {
        name: action.name.clone(),
        source: Some(action.source.clone()),
        root: String::new(),
        version: pkg.version.clone(),
        description: description.or(pkg.description.clone()),
        manifest_kind: Some(manifest_kind_str(pkg.kind).into()),
        enabled: true,
        commit: cand.commit.clone().filter(|c| !c.is_empty()),
        status: None,
        status_reason: None,
        tree_digest: None,
        unknown: Default::default(),
    };
    if req.link {
        let source = std::fs::canonicalize(&cand.root).map_err(|e| {
            InstallError::new(
                ErrorCode::SourceUnreadable,
                format!("{}: {e}", cand.root.display()),
            )
        })?;
        let inside = |base: &Option<PathBuf>| {
            base.as_ref()
                .and_then(|b| std::fs::canonicalize(b).ok())
                .is_some_and(|b| source.starts_with(b))
        };
        if !inside(&ctx.user_home) && !inside(&Some(ctx.workspace.clone())) {
            return Err(InstallError::new(
                ErrorCode::UnsafeLink,
                format!(
                    "plugin source {} is outside {} and your home directory",
                    source.display(),
                    ctx.workspace.display()
                ),
            ));
        }
        return publish_link(home, &action.name, &source, req.replace, entry);
    }
    if action.tree_digest.is_empty() {
        return Err(InstallError::new(
            ErrorCode::ApprovalDenied,
            "copy installation requires an approved content snapshot",
        ));
    }
    let verify = |root: &Path| -> InstallResult<Counts> { Ok(Counts::of(&load(root)?)) };
    publish_copy(
        home,
        CopyPublication {
            name: &action.name,
            source_root: &cand.root,
            approved_digest: &action.tree_digest,
            approved_counts: counts,
            replace: req.replace,
            entry,
        },
        &verify,
        progress,
    )
}
