//! `op: "uninstall"` of the install_source backend (§a.2): remove one
//! plugin package and answer with the uninstall JSON.
use super::error::{ErrorCode, InstallResult};
use super::plan::{InstallResponse, KindTally, PluginAction};
use super::publish::{Removal, RemovedData, recover, remove_package};
use crate::home::ReasonixHome;

/// Remove `name` (its data directory too unless `keep_data`). Not
/// installed is an answer (`status: "blocked"`, `ok: false`), not an
/// error; any other failure is `Err` and removes nothing. On success the
/// removal (entry and what became of the data) comes back too.
pub fn uninstall(
    home: &ReasonixHome,
    name: &str,
    keep_data: bool,
) -> InstallResult<(InstallResponse, Option<Removal>)> {
    let mut resp = InstallResponse {
        op: "uninstall".into(),
        name: name.to_string(),
        kind: "plugin".into(),
        scope: "global".into(),
        ..Default::default()
    };
    let removal = match recover(home).and_then(|_| remove_package(home, name, keep_data)) {
        Ok(removal) => removal,
        Err(e) if e.code == ErrorCode::NotInstalled => {
            resp.status = "blocked".into();
            resp.kind = String::new();
            resp.error = e.message;
            resp.next =
                "No installed plugin package matched that name; run `reasonix plugin list`.".into();
            return Ok((resp, None));
        }
        Err(e) => return Err(e),
    };
    let entry = &removal.entry;
    if let RemovedData::NotDeleted { path, why } = &removal.data {
        resp.warnings.push(format!(
            "could not delete its data directory {}: {why}; delete it before installing another \
             plugin named {}",
            path.display(),
            entry.name
        ));
    }
    resp.ok = true;
    resp.status = "done".into();
    resp.applied = true;
    resp.kinds = KindTally {
        plugin: 1,
        ..Default::default()
    };
    resp.actions = vec![PluginAction {
        kind: "plugin".into(),
        action: "remove_plugin_package".into(),
        status: "done".into(),
        risk_level: "medium".into(),
        risk_reasons: vec![
            "removes a plugin package and disables its skills, hooks, and MCP servers".into(),
        ],
        name: entry.name.clone(),
        target: home
            .resolve_root(&entry.root)
            .to_string_lossy()
            .into_owned(),
        config_path: home.registry_path().to_string_lossy().into_owned(),
        scope: "global".into(),
        manifest_kind: entry.manifest_kind.clone().unwrap_or_default(),
        version: entry.version.clone().unwrap_or_default(),
        ..Default::default()
    }];
    resp.next = "Removed.".into();
    Ok((resp, Some(removal)))
}
