//! Claude Code mods: a Claude plugin whose `hooks/hooks.json` names one ES
//! module (`"modules": ["./register.js"]`) exporting `register(on, options)`.
//!
//! This module recognises the declaration (which file, which language, or
//! why it cannot run) and, in [`preview`], reads the module's syntax tree
//! for the install preview. Running a mod is the host's business
//! (`host/src/mods/`): it is full trust and off by default.

pub mod preview;

use serde_json::Value;

use crate::SkippedCapability;
use crate::compat::{json, paths};

/// What the package's mod module is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModLanguage {
    /// `.js`, `.mjs`, `.cjs`: runs on every supported Node.
    JavaScript,
    /// `.ts`, `.mts`, `.cts`: runs only where Node strips types.
    TypeScript,
}

/// The one module a mod declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModModule {
    /// Relative to the package root, cleaned (`register.js`).
    pub path: String,
    pub language: ModLanguage,
}

/// The events a mod may register for with `on(event, handler)`.
pub const SERVED_EVENTS: &[&str] = &[
    "tool.call",
    "tool.check",
    "prompt.submit",
    "session.start",
    "session.end",
    "turn.start",
    "command.run",
    "ui.press",
    "ui.render",
];

/// The members of `$` the host serves (a use of a longer chain, such as
/// `$.plugin.name`, counts as its served prefix).
pub const SERVED_CALLS: &[&str] = &[
    "plugin",
    "store.get",
    "store.set",
    "store.delete",
    "store.keys",
    "clock.now",
    "env.get",
    "fs.read",
    "fs.write",
    "fs.exists",
    "fs.list",
    "process.run",
    "http.fetch",
    "state.atom",
    "state.read",
    "state.update",
    "state.derive",
    "state.memberOf",
    "session.id",
    "session.cwd",
    "session.root",
    "session.messages",
    "session.usage",
    "prompt.submit",
    "tool.register",
    "tool.call",
    "tool.list",
    "command.register",
    "command.run",
    "command.list",
    "ui.toast",
    "ui.status",
    "ui.notice",
    "ui.log",
    "ui.ask",
    "ui.resolve",
    "ui.invalidate",
];

/// The `$` calls that read the session's transcript or usage.
pub const READS_SESSION: &[&str] = &["session.messages", "session.usage"];

/// The module mods import the state functions from.
pub const STATE_MODULE: &str = "claude-code";

/// The hook file that may declare a mod.
pub const MOD_HOOKS_FILE: &str = "hooks/hooks.json";

/// Extensions of modules that never run, and why.
const REFUSED: &[(&str, &str)] = &[
    (
        "jsx",
        "JSX is not JavaScript Node can load: build the module to .js (or .mjs) and name that",
    ),
    (
        "tsx",
        "TSX does not run: Node strips TypeScript types but does not transform JSX; build the module to .js (or .mjs) and name that",
    ),
];

/// The language of a module path, or why it cannot be a mod module.
pub fn language_of(path: &str) -> Result<ModLanguage, String> {
    let ext = path
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "js" | "mjs" | "cjs" => Ok(ModLanguage::JavaScript),
        "ts" | "mts" | "cts" => Ok(ModLanguage::TypeScript),
        other => match REFUSED.iter().find(|(e, _)| *e == other) {
            Some((_, why)) => Err(format!("module {path:?} is refused: {why}")),
            None => Err(format!(
                "module {path:?} is not a JavaScript or TypeScript module (.js .mjs .cjs, or .ts .mts .cts where Node strips types)"
            )),
        },
    }
}

/// Read the `modules` member of a parsed `hooks/hooks.json`. `Ok(None)` when
/// there is none; an error (recorded as a skipped `mod` capability) when it
/// is malformed, names more or fewer than one module, a file that is not in
/// the package, or a module that cannot run.
pub fn recognize(
    root: &std::path::Path,
    doc: &Value,
    skipped: &mut Vec<SkippedCapability>,
) -> Option<ModModule> {
    let Value::Object(top) = doc else {
        return None;
    };
    let raw = json::get(top, "modules")?;
    let refuse = |skipped: &mut Vec<SkippedCapability>, reason: String| {
        skipped.push(SkippedCapability {
            capability: "mod".into(),
            path: Some(MOD_HOOKS_FILE.into()),
            reason,
        });
        None
    };
    let list: Vec<&str> = match raw {
        Value::Null => return None,
        Value::Array(items) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => out.push(s.as_str()),
                    _ => {
                        return refuse(skipped, format!("modules[{i}] must be a string path"));
                    }
                }
            }
            out
        }
        _ => {
            return refuse(
                skipped,
                "\"modules\" must be an array naming one module".into(),
            );
        }
    };
    match list.len() {
        0 => return None,
        1 => {}
        n => {
            return refuse(
                skipped,
                format!("a mod names exactly one module; \"modules\" names {n}"),
            );
        }
    }
    let path = match paths::clean_relative(list[0]) {
        Ok(p) if p != "." => p,
        Ok(_) => return refuse(skipped, "modules[0] names the plugin root".into()),
        Err(e) => return refuse(skipped, format!("modules[0]: {e}")),
    };
    let language = match language_of(&path) {
        Ok(l) => l,
        Err(why) => return refuse(skipped, why),
    };
    if !crate::paths::is_in_tree_file(root, &path) {
        return refuse(
            skipped,
            format!(
                "module {path:?} is not a file inside the plugin (paths are relative to the plugin root)"
            ),
        );
    }
    Some(ModModule { path, language })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(files: &[(&str, &str)], doc: Value) -> (Option<ModModule>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let mut skipped = Vec::new();
        let m = recognize(dir.path(), &doc, &mut skipped);
        (m, skipped.into_iter().map(|s| s.reason).collect())
    }

    #[test]
    fn one_js_module_is_a_mod() {
        for (file, lang) in [
            ("register.js", ModLanguage::JavaScript),
            ("lib/m.mjs", ModLanguage::JavaScript),
            ("m.cjs", ModLanguage::JavaScript),
            ("m.ts", ModLanguage::TypeScript),
            ("m.mts", ModLanguage::TypeScript),
            ("m.CTS", ModLanguage::TypeScript),
        ] {
            let (m, why) = read(
                &[(file, "export function register() {}")],
                json!({"modules": [format!("./{file}")]}),
            );
            assert_eq!(
                m,
                Some(ModModule {
                    path: file.into(),
                    language: lang
                }),
                "{why:?}"
            );
        }
    }

    #[test]
    fn jsx_tsx_and_others_are_refused_with_a_reason() {
        let (m, why) = read(&[("m.tsx", "")], json!({"modules": ["./m.tsx"]}));
        assert!(m.is_none());
        assert!(why[0].contains("TSX does not run"), "{why:?}");
        let (_, why) = read(&[("m.jsx", "")], json!({"modules": ["m.jsx"]}));
        assert!(why[0].contains("JSX is not JavaScript"), "{why:?}");
        let (_, why) = read(&[("m.py", "")], json!({"modules": ["m.py"]}));
        assert!(
            why[0].contains("not a JavaScript or TypeScript module"),
            "{why:?}"
        );
    }

    #[test]
    fn shape_errors_are_skipped_capabilities() {
        let (m, why) = read(&[], json!({"hooks": {}}));
        assert!(m.is_none() && why.is_empty());
        let (_, why) = read(
            &[("a.js", ""), ("b.js", "")],
            json!({"modules": ["a.js", "b.js"]}),
        );
        assert!(why[0].contains("exactly one module"), "{why:?}");
        let (_, why) = read(&[], json!({"modules": "a.js"}));
        assert!(why[0].contains("must be an array"), "{why:?}");
        let (_, why) = read(&[], json!({"modules": [3]}));
        assert!(why[0].contains("modules[0] must be a string"), "{why:?}");
        let (_, why) = read(&[], json!({"modules": ["../x.js"]}));
        assert!(why[0].contains("stay inside the plugin root"), "{why:?}");
        let (_, why) = read(&[], json!({"modules": ["missing.js"]}));
        assert!(why[0].contains("not a file inside the plugin"), "{why:?}");
        let (m, why) = read(&[], json!({"modules": []}));
        assert!(m.is_none() && why.is_empty());
    }
}
