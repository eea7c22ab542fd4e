//! Keeps `docs/wit-reference.md` true to the WIT package: every interface,
//! type, function, field and case has its entry, and every entry names an
//! item that exists.
//!
//! Page layout this relies on: `## interface `name` (…)` / `## world `name``
//! sections, `### <kind> `name`` entries inside them, and member tables whose
//! rows start with `| `member` |`.

use std::collections::{BTreeMap, BTreeSet};

use wit_parser::{PackageId, Resolve, Type, TypeDefKind, WorldItem};

/// The text between the first pair of backticks.
fn quoted(line: &str) -> Option<&str> {
    let start = line.find('`')? + 1;
    let end = start + line[start..].find('`')?;
    Some(&line[start..end])
}

/// `"## interface `x` …"` sections → (kind, name) → entries → rows.
type Page = BTreeMap<(String, String), BTreeMap<(String, String), BTreeSet<String>>>;

fn parse_page(text: &str) -> Page {
    let mut page = Page::new();
    let mut section: Option<(String, String)> = None;
    let mut entry: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            let kind = heading.split_whitespace().next().unwrap_or_default();
            section = quoted(heading).map(|name| (kind.to_string(), name.to_string()));
            entry = None;
            if let Some(key) = &section {
                page.entry(key.clone()).or_default();
            }
        } else if let Some(heading) = line.strip_prefix("### ") {
            let kind = heading.split_whitespace().next().unwrap_or_default();
            entry = quoted(heading).map(|name| (kind.to_string(), name.to_string()));
            if let (Some(section), Some(entry)) = (&section, &entry) {
                page.entry(section.clone())
                    .or_default()
                    .entry(entry.clone())
                    .or_default();
            }
        } else if let Some(row) = line.strip_prefix("| ") {
            let cells: Vec<&str> = row.split(" | ").collect();
            let Some(section) = &section else { continue };
            // World rows are `| import | `x` |`; member rows `| `x` | … |`.
            let (key, member) = if section.0 == "world" {
                (
                    Some((cells[0].to_string(), String::new())),
                    cells.get(1).and_then(|c| quoted(c)),
                )
            } else {
                (
                    entry.clone(),
                    quoted(cells[0]).filter(|_| cells[0].starts_with('`')),
                )
            };
            if let (Some(key), Some(member)) = (key, member) {
                page.entry(section.clone())
                    .or_default()
                    .entry(key)
                    .or_default()
                    .insert(member.to_string());
            }
        }
    }
    page
}

/// The same shape, built from the WIT package.
fn parse_package(resolve: &Resolve, package: PackageId) -> Page {
    let mut page = Page::new();
    let pkg = &resolve.packages[package];
    for (name, &id) in &pkg.interfaces {
        let interface = &resolve.interfaces[id];
        let entries = page
            .entry(("interface".to_string(), name.clone()))
            .or_default();
        for (type_name, &type_id) in &interface.types {
            let def = &resolve.types[type_id];
            let (kind, members): (&str, Vec<String>) = match &def.kind {
                TypeDefKind::Type(Type::Id(_)) => continue, // a `use`
                TypeDefKind::Type(_) => ("type", vec![]),
                TypeDefKind::Record(r) => {
                    ("record", r.fields.iter().map(|f| f.name.clone()).collect())
                }
                TypeDefKind::Enum(e) => ("enum", e.cases.iter().map(|c| c.name.clone()).collect()),
                TypeDefKind::Variant(v) => {
                    ("variant", v.cases.iter().map(|c| c.name.clone()).collect())
                }
                other => ("unexpected", vec![format!("{other:?}")]),
            };
            entries.insert(
                (kind.to_string(), type_name.clone()),
                members.into_iter().collect(),
            );
        }
        for function in interface.functions.keys() {
            entries.insert(("func".to_string(), function.clone()), BTreeSet::new());
        }
    }
    for (name, &id) in &pkg.worlds {
        let world = &resolve.worlds[id];
        let entries = page.entry(("world".to_string(), name.clone())).or_default();
        for (side, items) in [("import", &world.imports), ("export", &world.exports)] {
            let names: BTreeSet<String> = items
                .values()
                .filter_map(|item| match item {
                    WorldItem::Interface { id, .. } => resolve.interfaces[*id].name.clone(),
                    _ => None,
                })
                .collect();
            entries.insert((side.to_string(), String::new()), names);
        }
    }
    page
}

/// Every way the reference page and the package disagree.
pub fn differences(resolve: &Resolve, package: PackageId, page_text: &str) -> Vec<String> {
    let page = parse_page(page_text);
    let wit = parse_package(resolve, package);
    let mut out = Vec::new();
    for (section, entries) in &wit {
        let Some(documented) = page.get(section) else {
            out.push(format!(
                "reference has no section for {} `{}`",
                section.0, section.1
            ));
            continue;
        };
        for (entry, members) in entries {
            let Some(documented_members) = documented.get(entry) else {
                out.push(format!(
                    "reference {} `{}` has no entry for {} `{}`",
                    section.0, section.1, entry.0, entry.1
                ));
                continue;
            };
            for member in members.difference(documented_members) {
                out.push(format!(
                    "reference entry {} `{}.{}` has no row for `{member}`",
                    entry.0, section.1, entry.1
                ));
            }
            for member in documented_members.difference(members) {
                out.push(format!(
                    "reference entry {} `{}.{}` has a row for `{member}`, which WIT does not have",
                    entry.0, section.1, entry.1
                ));
            }
        }
        for entry in documented.keys().filter(|e| !entries.contains_key(*e)) {
            out.push(format!(
                "reference {} `{}` documents {} `{}`, which WIT does not have",
                section.0, section.1, entry.0, entry.1
            ));
        }
    }
    for section in page.keys().filter(|s| !wit.contains_key(*s)) {
        out.push(format!(
            "reference documents {} `{}`, which WIT does not have",
            section.0, section.1
        ));
    }
    out
}
