//! The install preview of a mod: its events and `$` calls, read from the
//! module's syntax tree (oxc), and what could not be listed.
//!
//! The listing is an aid, not a guarantee. It follows `on` as the first
//! parameter of `register`, and `$` by that name, as the second parameter of
//! an inline handler, as `options.$` (or `{ $ }` destructured from the
//! options) and through plain aliases (`const api = $`). Everything else —
//! code the module imports, names built at run time, `$` handed to other
//! code — is named in `not_listed` instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    Argument, BindingPattern, CallExpression, Expression, FormalParameters, Function,
    ImportDeclaration, ImportDeclarationSpecifier, ImportExpression, MemberExpression,
    ModuleExportName, PropertyKey, VariableDeclarator,
};
use oxc_ast_visit::{Visit, walk};
use oxc_parser::Parser;
use oxc_span::{GetSpan, SourceType, Span};
use oxc_syntax::scope::ScopeFlags;
use serde::Serialize;

use super::{ModLanguage, ModModule, READS_SESSION, SERVED_CALLS, SERVED_EVENTS, STATE_MODULE};

/// The largest module the preview reads (a mod is one hand-written file).
pub const MAX_MODULE_BYTES: usize = 2 * 1024 * 1024;
/// Stack for the reader thread: deeply nested code must not overflow it.
const READER_STACK: usize = 256 * 1024 * 1024;
/// Notes kept per kind before the rest are counted.
const MAX_NOTES: usize = 20;

/// What the preview found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModPreview {
    /// The module, relative to the package root.
    pub module: String,
    pub language: String,
    /// Served events the module registers for (`on("tool.call", …)`).
    pub events: Vec<String>,
    /// Served `$` members it uses (`fs.read`, `session.messages`, …).
    pub calls: Vec<String>,
    /// Events and `$` members it uses that the host does not serve.
    pub unserved: Vec<String>,
    /// It calls `$.session.messages` or `$.session.usage`.
    pub reads_session: bool,
    /// Module specifiers it imports (`node:fs`, `./lib.js`, `claude-code`).
    pub imports: Vec<String>,
    /// What the listing cannot show, with the line where it happens.
    pub not_listed: Vec<String>,
    /// The module could not be read or parsed (the listing is then partial).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Read the module of `module` inside the package at `root`.
pub fn read(root: &Path, module: &ModModule) -> ModPreview {
    let base = ModPreview {
        module: module.path.clone(),
        language: match module.language {
            ModLanguage::JavaScript => "javascript",
            ModLanguage::TypeScript => "typescript",
        }
        .into(),
        ..ModPreview::default()
    };
    let path = root.join(&module.path);
    let bytes = match std::fs::metadata(&path) {
        Ok(meta) if meta.len() > MAX_MODULE_BYTES as u64 => {
            return ModPreview {
                error: Some(format!(
                    "{} is {} bytes; the preview reads at most {MAX_MODULE_BYTES}",
                    module.path,
                    meta.len()
                )),
                ..base
            };
        }
        _ => match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                return ModPreview {
                    error: Some(format!("cannot read {}: {e}", module.path)),
                    ..base
                };
            }
        },
    };
    let source_type = SourceType::from_path(&module.path).unwrap_or_else(|_| SourceType::mjs());
    let found = preview_source(&bytes, source_type);
    ModPreview {
        module: base.module,
        language: base.language,
        ..found
    }
}

/// Read module source text (bytes that are not UTF-8 are an error, not a
/// panic). Runs on a thread with a large stack.
pub fn preview_source(bytes: &[u8], source_type: SourceType) -> ModPreview {
    if bytes.len() > MAX_MODULE_BYTES {
        return ModPreview {
            error: Some(format!(
                "the module is {} bytes; the preview reads at most {MAX_MODULE_BYTES}",
                bytes.len()
            )),
            ..ModPreview::default()
        };
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(e) => {
            return ModPreview {
                error: Some(format!("the module is not UTF-8 text: {e}")),
                ..ModPreview::default()
            };
        }
    };
    let worker = std::thread::Builder::new()
        .name("mod-preview".into())
        .stack_size(READER_STACK)
        .spawn(move || preview_text(&text, source_type));
    match worker.map(|h| h.join()) {
        Ok(Ok(preview)) => preview,
        _ => ModPreview {
            error: Some("the module could not be read (the reader stopped)".into()),
            ..ModPreview::default()
        },
    }
}

fn preview_text(text: &str, source_type: SourceType) -> ModPreview {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, text, source_type).parse();
    let lines = LineIndex::new(text);
    let mut reader = Reader::new(&lines);
    let mut finder = RegisterFinder::default();
    finder.visit_program(&parsed.program);
    reader.adopt(finder);
    reader.visit_program(&parsed.program);
    let mut preview = reader.finish();
    if let Some(first) = parsed.diagnostics.first() {
        let at = first
            .labels
            .first()
            .map(|l| format!(" at line {}", lines.line(l.offset())))
            .unwrap_or_default();
        preview.error = Some(format!(
            "the module does not parse{at}: {}{}",
            first.message,
            if parsed.diagnostics.len() > 1 {
                format!(" (and {} more errors)", parsed.diagnostics.len() - 1)
            } else {
                String::new()
            }
        ));
    } else if parsed.panicked {
        preview.error = Some("the module does not parse".into());
    }
    preview
}

/// Byte offset → 1-based line.
struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        LineIndex { starts }
    }

    fn line(&self, offset: u32) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

/// Pass 1: the parameters of `register` (declared as a function or as a
/// function bound to `register`).
#[derive(Default)]
struct RegisterFinder {
    found: bool,
    on: Option<String>,
    options: Option<String>,
    /// `{ $ }` (or `{ $: api }`) destructured from the options.
    dollar: Option<String>,
}

impl RegisterFinder {
    fn params(&mut self, params: &FormalParameters<'_>) {
        self.found = true;
        if let Some(BindingPattern::BindingIdentifier(id)) =
            params.items.first().map(|p| &p.pattern)
        {
            self.on = Some(id.name.to_string());
        }
        match params.items.get(1).map(|p| &p.pattern) {
            Some(BindingPattern::BindingIdentifier(id)) => self.options = Some(id.name.to_string()),
            Some(BindingPattern::ObjectPattern(pattern)) => {
                for property in &pattern.properties {
                    if static_key(&property.key).as_deref() == Some("$")
                        && let BindingPattern::BindingIdentifier(id) = &property.value
                    {
                        self.dollar = Some(id.name.to_string());
                    }
                }
            }
            _ => {}
        }
    }
}

impl<'a> Visit<'a> for RegisterFinder {
    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        if !self.found && it.id.as_ref().is_some_and(|id| id.name == "register") {
            self.params(&it.params);
        }
        walk::walk_function(self, it, flags);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if !self.found
            && let BindingPattern::BindingIdentifier(id) = &it.id
            && id.name == "register"
        {
            match &it.init {
                Some(Expression::ArrowFunctionExpression(f)) => self.params(&f.params),
                Some(Expression::FunctionExpression(f)) => self.params(&f.params),
                _ => {}
            }
        }
        walk::walk_variable_declarator(self, it);
    }
}

/// One step of a member chain.
enum Segment {
    Name(String),
    /// A computed name that is not a literal.
    Dynamic,
}

/// Pass 2: events, `$` uses, imports and what cannot be listed.
struct Reader<'l> {
    lines: &'l LineIndex,
    register_found: bool,
    on_names: BTreeSet<String>,
    options_names: BTreeSet<String>,
    dollar_names: BTreeSet<String>,
    /// Local name → imported name, for the state functions of `claude-code`.
    state_imports: BTreeMap<String, String>,
    events: BTreeSet<String>,
    calls: BTreeSet<String>,
    unserved: BTreeSet<String>,
    imports: BTreeSet<String>,
    not_listed: Vec<String>,
    dropped_notes: usize,
}

impl<'l> Reader<'l> {
    fn new(lines: &'l LineIndex) -> Reader<'l> {
        Reader {
            lines,
            register_found: false,
            on_names: BTreeSet::new(),
            options_names: BTreeSet::new(),
            dollar_names: BTreeSet::from(["$".to_string()]),
            state_imports: BTreeMap::new(),
            events: BTreeSet::new(),
            calls: BTreeSet::new(),
            unserved: BTreeSet::new(),
            imports: BTreeSet::new(),
            not_listed: Vec::new(),
            dropped_notes: 0,
        }
    }

    fn adopt(&mut self, finder: RegisterFinder) {
        self.register_found = finder.found;
        self.on_names
            .insert(finder.on.unwrap_or_else(|| "on".to_string()));
        self.options_names.extend(finder.options);
        self.dollar_names.extend(finder.dollar);
    }

    fn line(&self, span: Span) -> usize {
        self.lines.line(span.start)
    }

    fn note(&mut self, text: String) {
        if self.not_listed.contains(&text) {
            return;
        }
        if self.not_listed.len() < MAX_NOTES {
            self.not_listed.push(text);
        } else {
            self.dropped_notes += 1;
        }
    }

    fn finish(mut self) -> ModPreview {
        if !self.register_found {
            self.note(
                "no `register` function was found: what the module registers cannot be listed"
                    .to_string(),
            );
        }
        if self.dropped_notes > 0 {
            let more = self.dropped_notes;
            self.not_listed.push(format!("… and {more} more"));
        }
        ModPreview {
            reads_session: self
                .calls
                .iter()
                .any(|c| READS_SESSION.contains(&c.as_str())),
            events: self.events.into_iter().collect(),
            calls: self.calls.into_iter().collect(),
            unserved: self.unserved.into_iter().collect(),
            imports: self.imports.into_iter().collect(),
            not_listed: self.not_listed,
            ..ModPreview::default()
        }
    }

    /// `name` as a served `$` member (its longest served prefix), else
    /// unserved.
    fn record_call(&mut self, segments: &[String]) {
        if segments.is_empty() {
            return;
        }
        for n in (1..=segments.len()).rev() {
            let name = segments[..n].join(".");
            if SERVED_CALLS.contains(&name.as_str()) {
                self.calls.insert(name);
                return;
            }
        }
        let shown = segments[..segments.len().min(2)].join(".");
        self.unserved.insert(format!("$.{shown}"));
    }

    fn record_event(&mut self, arg: Option<&Argument<'_>>, span: Span) {
        match arg.and_then(literal_argument) {
            Some(name) if SERVED_EVENTS.contains(&name.as_str()) => {
                self.events.insert(name);
            }
            Some(name) => {
                self.unserved.insert(format!("event {name}"));
            }
            None => {
                let line = self.line(span);
                self.note(format!("an event name computed at run time (line {line})"));
            }
        }
    }

    fn import(&mut self, source: &str, span: Span, dynamic: bool) {
        self.imports.insert(source.to_string());
        if source == STATE_MODULE || is_builtin(source) {
            return;
        }
        let line = self.line(span);
        let how = if dynamic {
            "loaded at run time"
        } else {
            "imported"
        };
        self.note(format!(
            "code {how} from {source:?} (line {line}) is not read"
        ));
    }

    /// Whether `expr` is a `$` root: a `$` name, or `options.$`.
    fn dollar_root(&self, expr: &Expression<'_>) -> bool {
        match strip(expr) {
            Expression::Identifier(id) => self.dollar_names.contains(id.name.as_str()),
            Expression::StaticMemberExpression(m) => {
                m.property.name == "$"
                    && matches!(strip(&m.object), Expression::Identifier(id) if self.options_names.contains(id.name.as_str()))
            }
            _ => false,
        }
    }

    /// The segments after a `$` root, when `member` is rooted at one.
    fn dollar_chain(&self, member: &MemberExpression<'_>) -> Option<Vec<Segment>> {
        let mut segments = Vec::new();
        let mut current = member;
        loop {
            segments.push(member_segment(current));
            let object = current.object();
            if self.dollar_root(object) {
                segments.reverse();
                return Some(segments);
            }
            match strip(object).as_member_expression() {
                Some(inner) => current = inner,
                None => return None,
            }
        }
    }
}

impl<'a> Visit<'a> for Reader<'_> {
    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if let Expression::Identifier(callee) = strip(&it.callee) {
            let name = callee.name.as_str();
            if self.on_names.contains(name) {
                self.record_event(it.arguments.first(), it.span);
                // The handler's second parameter is its `$`.
                if let Some(handler) = it.arguments.get(1) {
                    let params = match handler {
                        Argument::ArrowFunctionExpression(f) => Some(&f.params),
                        Argument::FunctionExpression(f) => Some(&f.params),
                        _ => None,
                    };
                    match params.and_then(|p| p.items.get(1)).map(|p| &p.pattern) {
                        Some(BindingPattern::BindingIdentifier(id)) => {
                            self.dollar_names.insert(id.name.to_string());
                        }
                        Some(_) => {
                            let line = self.line(handler.span());
                            self.note(format!(
                                "a handler takes `$` apart in its parameters (line {line}): those calls are not listed"
                            ));
                        }
                        None => {}
                    }
                }
                self.visit_arguments(&it.arguments);
                return;
            }
            if let Some(imported) = self.state_imports.get(name).cloned() {
                self.record_call(&["state".to_string(), imported]);
            }
            if name == "require" {
                match it.arguments.first().and_then(literal_argument) {
                    Some(source) => self.import(&source, it.span, false),
                    None => {
                        let line = self.line(it.span);
                        self.note(format!(
                            "a require() of a name computed at run time (line {line})"
                        ));
                    }
                }
            }
        }
        walk::walk_call_expression(self, it);
    }

    fn visit_member_expression(&mut self, it: &MemberExpression<'a>) {
        // `options.$` itself, not the object of a longer chain: a value.
        if let MemberExpression::StaticMemberExpression(m) = it
            && m.property.name == "$"
            && matches!(strip(&m.object), Expression::Identifier(id) if self.options_names.contains(id.name.as_str()))
        {
            let line = self.line(it.span());
            self.note(format!(
                "`options.$` handed to other code (line {line}): what is done with it there is not listed"
            ));
            return;
        }
        let Some(segments) = self.dollar_chain(it) else {
            walk::walk_member_expression(self, it);
            return;
        };
        let mut names = Vec::new();
        let mut complete = true;
        for segment in segments {
            match segment {
                Segment::Name(name) => names.push(name),
                Segment::Dynamic => {
                    let line = self.line(it.span());
                    let known = if names.is_empty() {
                        "$".to_string()
                    } else {
                        format!("$.{}", names.join("."))
                    };
                    self.note(format!(
                        "a member of {known} computed at run time (line {line})"
                    ));
                    complete = false;
                    break;
                }
            }
        }
        if complete {
            self.record_call(&names);
        }
        // Computed keys may hold code of their own.
        if let MemberExpression::ComputedMemberExpression(c) = it {
            self.visit_expression(&c.expression);
        }
    }

    fn visit_identifier_reference(&mut self, it: &oxc_ast::ast::IdentifierReference<'a>) {
        let name = it.name.as_str();
        let line = self.line(it.span);
        if self.dollar_names.contains(name) {
            self.note(format!(
                "`{name}` handed to other code (line {line}): what is done with it there is not listed"
            ));
        } else if self.on_names.contains(name) {
            self.note(format!(
                "`{name}` handed to other code (line {line}): events registered there are not listed"
            ));
        }
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if let Some(init) = &it.init
            && self.dollar_root(init)
        {
            match &it.id {
                BindingPattern::BindingIdentifier(id) => {
                    self.dollar_names.insert(id.name.to_string());
                }
                _ => {
                    let line = self.line(it.span);
                    self.note(format!(
                        "`$` taken apart (line {line}): the calls on its parts are not listed"
                    ));
                }
            }
            return;
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
        if it.import_kind.is_type() {
            return;
        }
        let source = it.source.value.as_str();
        if source == STATE_MODULE {
            for specifier in it.specifiers.iter().flatten() {
                match specifier {
                    ImportDeclarationSpecifier::ImportSpecifier(s) => {
                        let imported = module_export_name(&s.imported);
                        if SERVED_CALLS.contains(&format!("state.{imported}").as_str()) {
                            self.state_imports
                                .insert(s.local.name.to_string(), imported);
                        } else {
                            self.unserved.insert(format!("{STATE_MODULE}: {imported}"));
                        }
                    }
                    _ => {
                        let line = self.line(it.span);
                        self.note(format!(
                            "{STATE_MODULE:?} imported as a whole (line {line}): its calls are not listed"
                        ));
                    }
                }
            }
        }
        self.import(source, it.span, false);
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        match literal_expression(&it.source) {
            Some(source) => self.import(&source, it.span, true),
            None => {
                let line = self.line(it.span);
                self.note(format!(
                    "an import() of a name computed at run time (line {line})"
                ));
            }
        }
        walk::walk_import_expression(self, it);
    }

    fn visit_export_all_declaration(&mut self, it: &oxc_ast::ast::ExportAllDeclaration<'a>) {
        self.import(it.source.value.as_str(), it.span, false);
    }

    fn visit_export_from_declaration(&mut self, it: &oxc_ast::ast::ExportFromDeclaration<'a>) {
        self.import(it.source.value.as_str(), it.span, false);
    }
}

/// Parentheses, `!` and `as` casts do not change what an expression names.
fn strip<'b, 'a>(mut expr: &'b Expression<'a>) -> &'b Expression<'a> {
    loop {
        expr = match expr {
            Expression::ParenthesizedExpression(p) => &p.expression,
            Expression::TSNonNullExpression(e) => &e.expression,
            Expression::TSAsExpression(e) => &e.expression,
            Expression::TSSatisfiesExpression(e) => &e.expression,
            _ => return expr,
        };
    }
}

fn member_segment(member: &MemberExpression<'_>) -> Segment {
    match member {
        MemberExpression::StaticMemberExpression(m) => Segment::Name(m.property.name.to_string()),
        MemberExpression::ComputedMemberExpression(m) => match literal_expression(&m.expression) {
            Some(name) => Segment::Name(name),
            None => Segment::Dynamic,
        },
        MemberExpression::PrivateFieldExpression(_) => Segment::Dynamic,
    }
}

/// A string known before run time: a string literal or a template without
/// substitutions.
fn literal_expression(expr: &Expression<'_>) -> Option<String> {
    match strip(expr) {
        Expression::StringLiteral(s) => Some(s.value.to_string()),
        Expression::TemplateLiteral(t) if t.expressions.is_empty() => Some(
            t.quasis
                .iter()
                .map(|q| q.value.cooked.as_ref().unwrap_or(&q.value.raw).to_string())
                .collect(),
        ),
        _ => None,
    }
}

fn literal_argument(arg: &Argument<'_>) -> Option<String> {
    arg.as_expression().and_then(literal_expression)
}

fn static_key(key: &PropertyKey<'_>) -> Option<String> {
    match key {
        PropertyKey::StaticIdentifier(id) => Some(id.name.to_string()),
        PropertyKey::StringLiteral(s) => Some(s.value.to_string()),
        _ => None,
    }
}

fn module_export_name(name: &ModuleExportName<'_>) -> String {
    match name {
        ModuleExportName::IdentifierName(n) => n.name.to_string(),
        ModuleExportName::IdentifierReference(n) => n.name.to_string(),
        ModuleExportName::StringLiteral(s) => s.value.to_string(),
    }
}

/// Node's own modules (`node:fs`, or a bare `fs`): not the mod's code.
fn is_builtin(source: &str) -> bool {
    const BUILTINS: &[&str] = &[
        "assert",
        "buffer",
        "child_process",
        "crypto",
        "events",
        "fs",
        "fs/promises",
        "http",
        "https",
        "net",
        "os",
        "path",
        "process",
        "stream",
        "string_decoder",
        "timers",
        "url",
        "util",
        "zlib",
        "readline",
        "worker_threads",
    ];
    source.starts_with("node:") || BUILTINS.contains(&source)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preview(text: &str) -> ModPreview {
        preview_source(text.as_bytes(), SourceType::mjs())
    }

    #[test]
    fn lists_events_calls_and_what_reads_the_session() {
        let p = preview(
            r#"
import { atom, read } from "claude-code";
const count = atom(0);
export function register(on, options) {
  on("tool.call", (call, $) => {
    if (call.name === "bash" && call.arguments.command.includes("rm -rf")) {
      $.ui.toast("refused");
      return { deny: "no rm -rf" };
    }
  });
  on('prompt.submit', async (prompt, api) => {
    const last = await api.session.messages({ limit: 5 });
    read(count);
    return { context: [api.session.id] };
  });
  options.$.store.set("k", 1);
}
"#,
        );
        assert_eq!(p.error, None);
        assert_eq!(p.events, ["prompt.submit", "tool.call"]);
        assert_eq!(
            p.calls,
            [
                "session.id",
                "session.messages",
                "state.atom",
                "state.read",
                "store.set",
                "ui.toast"
            ]
        );
        assert!(p.reads_session);
        assert!(p.unserved.is_empty(), "{:?}", p.unserved);
        assert!(p.not_listed.is_empty(), "{:?}", p.not_listed);
        assert_eq!(p.imports, ["claude-code"]);
    }

    #[test]
    fn names_what_it_cannot_list() {
        let p = preview(
            r#"
import { helper } from "./helper.js";
import fs from "node:fs";
import { everything } from "claude-code";
const name = "tool." + "call";
export const register = (on, { $ }) => {
  on(name, () => {});
  on(`ui.${"render"}`, () => {});
  on("tool.explode", () => {});
  $.ui[pick()]("x");
  $.prompt.submitAsUser("hi");
  helper($);
  const { fs: f } = $;
  import("./late.js");
  import(dynamicName);
};
"#,
        );
        assert_eq!(p.events, Vec::<String>::new());
        assert_eq!(
            p.unserved,
            [
                "$.prompt.submitAsUser",
                "claude-code: everything",
                "event tool.explode"
            ]
        );
        assert_eq!(
            p.imports,
            ["./helper.js", "./late.js", "claude-code", "node:fs"]
        );
        let notes = p.not_listed.join("\n");
        for expected in [
            "code imported from \"./helper.js\" (line 2) is not read",
            "an event name computed at run time (line 7)",
            "an event name computed at run time (line 8)",
            "a member of $.ui computed at run time (line 10)",
            "`$` handed to other code (line 12)",
            "`$` taken apart (line 13)",
            "code loaded at run time from \"./late.js\" (line 14) is not read",
            "an import() of a name computed at run time (line 15)",
        ] {
            assert!(notes.contains(expected), "missing {expected:?} in\n{notes}");
        }
        assert!(!notes.contains("node:fs"), "{notes}");
        assert!(!p.reads_session);
    }

    #[test]
    fn typescript_and_commonjs_parse() {
        let p = preview_source(
            b"export function register(on: any): void { on(\"turn.start\", (e: unknown, $: any) => $.clock.now()); }",
            SourceType::ts(),
        );
        assert_eq!(p.error, None);
        assert_eq!(p.events, ["turn.start"]);
        assert_eq!(p.calls, ["clock.now"]);
        let p = preview_source(
            b"const lib = require('./lib.cjs'); exports.register = function register(on) { on('session.start', () => {}); };",
            SourceType::cjs(),
        );
        assert_eq!(p.error, None, "{p:?}");
        assert_eq!(p.events, ["session.start"]);
        assert!(p.not_listed[0].contains("./lib.cjs"), "{:?}", p.not_listed);
    }

    #[test]
    fn missing_register_and_syntax_errors_are_said() {
        let p = preview("on('tool.call', () => {})");
        assert_eq!(p.events, ["tool.call"]);
        assert!(
            p.not_listed
                .iter()
                .any(|n| n.contains("no `register` function"))
        );
        let p = preview("export function register(on) {\n on('tool.call', () => {\n");
        assert!(
            p.error
                .as_deref()
                .unwrap()
                .starts_with("the module does not parse"),
            "{p:?}"
        );
        let p = preview_source(&[0xff, 0xfe, b'a'], SourceType::mjs());
        assert!(p.error.as_deref().unwrap().contains("not UTF-8"));
    }

    #[test]
    fn deep_nesting_and_size_are_bounded() {
        let deep = format!("{}1{}", "[".repeat(50_000), "]".repeat(50_000));
        let p = preview(&deep);
        assert!(
            p.not_listed.iter().any(|n| n.contains("no `register`")),
            "{p:?}"
        );
        let big = vec![b' '; MAX_MODULE_BYTES + 1];
        let p = preview_source(&big, SourceType::mjs());
        assert!(p.error.unwrap().contains("at most"));
    }

    #[test]
    fn notes_are_capped() {
        let body: String = (0..40)
            .map(|i| format!("on(n{i}, () => {{}});\n"))
            .collect();
        let p = preview(&format!("export function register(on) {{\n{body}}}"));
        assert_eq!(p.not_listed.len(), MAX_NOTES + 1);
        assert_eq!(p.not_listed.last().unwrap(), "… and 20 more");
    }
}
