//! The WIT ↔ schema drift checker: loads the WIT package with `wit-parser`
//! and lists every difference from the JSON schema. It returns differences
//! instead of asserting, so `wit_drift.rs` can prove each check fires on a
//! mutated copy.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;
use wit_parser::{Docs, InterfaceId, PackageId, Resolve, Type, TypeDefKind, TypeId, WorldItem};

/// The WIT package name and world checked here.
pub const PACKAGE_NAMESPACE: &str = "reasonix";
pub const PACKAGE_NAME: &str = "extension";
pub const WORLD: &str = "extension";
/// The interface holding the shared vocabulary.
const TYPES_INTERFACE: &str = "types";

/// WIT functions that no JSON-RPC method has, with the reason.
pub const WIT_ONLY_FUNCTIONS: &[(&str, &str, &str)] = &[
    (
        "lifecycle",
        "protocol-version",
        "a wasm host asks for the package version before initialize",
    ),
    (
        "log",
        "log",
        "a native sidecar logs to stderr, which is no JSON-RPC method",
    ),
];

/// WIT records that are no schema `$defs` entry.
pub const WIT_ONLY_RECORDS: &[&str] = &["extension-error", "limits"];

/// Fields whose schema type is `string[]` but whose WIT type is a typed
/// list, because the host already validates those strings against a
/// closed set before they cross the boundary: (def, wire field, WIT item
/// type).
pub const TYPED_STRING_LISTS: &[(&str, &str, &str)] = &[
    ("InitializeResult", "subscriptions", "hook-point"),
    ("InitializeResult", "replaces", "replacement-slot"),
    ("ManifestExpectation", "intercepts", "hook-point"),
    ("ManifestExpectation", "replaces", "replacement-slot"),
];

/// What was compared, so a caller can see the checker was not vacuous.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub methods: usize,
    pub hook_points: usize,
    pub error_reasons: usize,
    pub limits: usize,
    pub dtos: usize,
    pub fields: usize,
}

/// Loads the WIT package in `dir` (one folder, no deps).
pub fn load(dir: &Path) -> Result<(Resolve, PackageId), String> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_dir(dir)
        .map_err(|error| format!("{error:#}"))?;
    Ok((resolve, package))
}

/// Every difference between the WIT package and the schema.
pub fn check(resolve: &Resolve, package: PackageId, schema: &Value) -> (Vec<String>, Coverage) {
    let mut checker = Checker {
        resolve,
        package,
        schema,
        differences: Vec::new(),
        coverage: Coverage::default(),
    };
    checker.package_identity();
    checker.hook_points();
    checker.error_reasons();
    checker.limits();
    checker.methods();
    checker.dtos();
    (checker.differences, checker.coverage)
}

/// `UIActionDecl` → `ui-action-decl`, `ProviderToolCall` → `provider-tool-call`.
pub fn type_name(def: &str) -> String {
    let chars: Vec<char> = def.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let previous = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if previous.is_ascii_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_ascii_uppercase() && next_is_lower)
            {
                out.push('-');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// `timeoutMillis` → `timeout-millis`, `tool_call_id` → `tool-call-id`,
/// `system_prompt.build` → `system-prompt-build`.
pub fn kebab(wire: &str) -> String {
    let mut out = String::new();
    for c in wire.chars() {
        match c {
            '_' | '.' => out.push('-'),
            c if c.is_ascii_uppercase() => {
                out.push('-');
                out.push(c.to_ascii_lowercase());
            }
            c => out.push(c),
        }
    }
    out
}

/// Where a schema method lives in WIT: (interface, function).
pub fn wit_location(method: &str, class: &str, direction: &str) -> Option<(String, String)> {
    let mut segments: Vec<&str> = method.split('/').collect();
    if !matches!(segments.first(), Some(&"extension") | Some(&"host")) {
        return None;
    }
    segments.remove(0);
    if segments.len() > 1 && segments[0] == class {
        segments.remove(0);
    }
    if segments.is_empty() {
        return None;
    }
    let function = segments.join("-");
    let interface = if direction.starts_with("extension_to_host") {
        format!("host-{class}")
    } else {
        class.to_string()
    };
    Some((interface, function))
}

/// A type, reduced to what the schema can say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    Bool,
    U64,
    S64,
    F64,
    Str,
    /// The `json` alias: JSON text for a schema "any".
    Json,
    List(Box<Shape>),
    Option(Box<Shape>),
    Tuple(Vec<Shape>),
    /// A record or variant, by WIT name.
    Named(String),
    /// An enum; the name is `None` when the schema gives only the cases.
    Enum(Option<String>, BTreeSet<String>),
    Result(Option<Box<Shape>>, Option<Box<Shape>>),
    Other(String),
}

impl Shape {
    /// `expected` comes from the schema, `self` from WIT.
    fn satisfies(&self, expected: &Shape) -> bool {
        match (self, expected) {
            (Shape::Enum(name, cases), Shape::Enum(expected_name, expected_cases)) => {
                cases == expected_cases && (expected_name.is_none() || expected_name == name)
            }
            (Shape::List(a), Shape::List(b)) | (Shape::Option(a), Shape::Option(b)) => {
                a.satisfies(b)
            }
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.satisfies(y))
            }
            (a, b) => a == b,
        }
    }

    fn describe(&self) -> String {
        match self {
            Shape::Bool => "bool".into(),
            Shape::U64 => "u64".into(),
            Shape::S64 => "s64".into(),
            Shape::F64 => "f64".into(),
            Shape::Str => "string".into(),
            Shape::Json => "json".into(),
            Shape::List(t) => format!("list<{}>", t.describe()),
            Shape::Option(t) => format!("option<{}>", t.describe()),
            Shape::Tuple(ts) => format!(
                "tuple<{}>",
                ts.iter()
                    .map(Shape::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Shape::Named(n) => n.clone(),
            Shape::Enum(Some(n), _) => n.clone(),
            Shape::Enum(None, cases) => format!(
                "enum{{{}}}",
                cases.iter().cloned().collect::<Vec<_>>().join("|")
            ),
            Shape::Result(ok, err) => format!(
                "result<{}, {}>",
                ok.as_ref().map_or("_".into(), |t| t.describe()),
                err.as_ref().map_or("_".into(), |t| t.describe())
            ),
            Shape::Other(s) => s.clone(),
        }
    }
}

struct Checker<'a> {
    resolve: &'a Resolve,
    package: PackageId,
    schema: &'a Value,
    differences: Vec<String>,
    coverage: Coverage,
}

impl Checker<'_> {
    fn differ(&mut self, text: String) {
        self.differences.push(text);
    }

    fn interface(&self, name: &str) -> Option<InterfaceId> {
        self.resolve.packages[self.package]
            .interfaces
            .get(name)
            .copied()
    }

    /// The type `name` defined (not merely `use`d) in any interface of
    /// the package.
    fn defined_types(&self) -> BTreeMap<String, Vec<TypeId>> {
        let mut found: BTreeMap<String, Vec<TypeId>> = BTreeMap::new();
        for &interface in self.resolve.packages[self.package].interfaces.values() {
            for (name, &id) in &self.resolve.interfaces[interface].types {
                if matches!(self.resolve.types[id].kind, TypeDefKind::Type(Type::Id(_))) {
                    continue; // a `use` of a type defined elsewhere
                }
                found.entry(name.clone()).or_default().push(id);
            }
        }
        found
    }

    fn type_in(&self, interface: &str, name: &str) -> Option<TypeId> {
        let id = self.interface(interface)?;
        self.resolve.interfaces[id].types.get(name).copied()
    }

    fn shape(&self, ty: &Type) -> Shape {
        match ty {
            Type::Bool => Shape::Bool,
            Type::U64 => Shape::U64,
            Type::S64 => Shape::S64,
            Type::F64 => Shape::F64,
            Type::String => Shape::Str,
            Type::Id(id) => {
                let def = &self.resolve.types[*id];
                match &def.kind {
                    TypeDefKind::Type(Type::String) if def.name.as_deref() == Some("json") => {
                        Shape::Json
                    }
                    TypeDefKind::Type(inner) => self.shape(inner),
                    TypeDefKind::Record(_) | TypeDefKind::Variant(_) => {
                        Shape::Named(def.name.clone().unwrap_or_default())
                    }
                    TypeDefKind::Enum(e) => Shape::Enum(
                        def.name.clone(),
                        e.cases.iter().map(|c| c.name.clone()).collect(),
                    ),
                    TypeDefKind::List(inner) => Shape::List(Box::new(self.shape(inner))),
                    TypeDefKind::Option(inner) => Shape::Option(Box::new(self.shape(inner))),
                    TypeDefKind::Tuple(t) => {
                        Shape::Tuple(t.types.iter().map(|t| self.shape(t)).collect())
                    }
                    TypeDefKind::Result(r) => Shape::Result(
                        r.ok.as_ref().map(|t| Box::new(self.shape(t))),
                        r.err.as_ref().map(|t| Box::new(self.shape(t))),
                    ),
                    other => Shape::Other(format!("{other:?}")),
                }
            }
            other => Shape::Other(format!("{other:?}")),
        }
    }

    fn package_identity(&mut self) {
        let name = &self.resolve.packages[self.package].name;
        if name.namespace != PACKAGE_NAMESPACE || name.name != PACKAGE_NAME {
            self.differ(format!(
                "package is `{}:{}`, expected `{PACKAGE_NAMESPACE}:{PACKAGE_NAME}`",
                name.namespace, name.name
            ));
        }
        let major = self.schema["protocolMajor"].as_u64();
        match (&name.version, major) {
            (Some(version), Some(major)) if version.major == major => {}
            (version, major) => self.differ(format!(
                "package version {version:?} does not have the schema's protocolMajor {major:?}"
            )),
        }
        let protocol_id = self.schema["protocolID"].as_str().unwrap_or_default();
        let mentions_id = self
            .interface(TYPES_INTERFACE)
            .and_then(|id| self.resolve.interfaces[id].docs.contents.clone())
            .is_some_and(|docs| docs.contains(&format!("`{protocol_id}`")));
        if !mentions_id {
            self.differ(format!(
                "interface `{TYPES_INTERFACE}` docs do not name protocolID `{protocol_id}`"
            ));
        }
    }

    /// The cases of enum `name` in the `types` interface with their docs.
    fn enum_cases(&mut self, name: &str) -> Option<Vec<(String, Docs)>> {
        let cases =
            self.type_in(TYPES_INTERFACE, name)
                .and_then(|id| match &self.resolve.types[id].kind {
                    TypeDefKind::Enum(e) => Some(
                        e.cases
                            .iter()
                            .map(|c| (c.name.clone(), c.docs.clone()))
                            .collect(),
                    ),
                    _ => None,
                });
        if cases.is_none() {
            self.differ(format!("enum `{TYPES_INTERFACE}.{name}` is missing"));
        }
        cases
    }

    fn hook_points(&mut self) {
        let schema_points: BTreeSet<String> = self.schema["interceptEvents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect();
        let Some(cases) = self.enum_cases("hook-point") else {
            return;
        };
        let wit: BTreeMap<String, Option<String>> = cases
            .iter()
            .map(|(name, docs)| (name.clone(), wire_name(docs)))
            .collect();
        for point in &schema_points {
            match wit.get(&kebab(point)) {
                None => self.differ(format!(
                    "hook point `{point}` is in the schema but not in WIT enum `hook-point`"
                )),
                Some(wire) if wire.as_deref() != Some(point) => self.differ(format!(
                    "hook point `{}` documents wire name {wire:?}, schema has `{point}`",
                    kebab(point)
                )),
                Some(_) => self.coverage.hook_points += 1,
            }
        }
        let expected: BTreeSet<String> = schema_points.iter().map(|p| kebab(p)).collect();
        for case in wit.keys().filter(|c| !expected.contains(*c)) {
            self.differ(format!(
                "hook point `{case}` is in WIT enum `hook-point` but not in the schema's interceptEvents"
            ));
        }
    }

    fn error_reasons(&mut self) {
        let mut schema_errors = BTreeMap::new();
        for entry in self.schema["errors"].as_array().into_iter().flatten() {
            let reason = entry["reason"].as_str().unwrap_or_default().to_string();
            schema_errors.insert(
                reason,
                ErrorDoc {
                    code: entry["jsonRpcCode"].as_i64(),
                    retryable: entry["retryable"].as_bool(),
                    message: entry["message"].as_str().map(str::to_string),
                },
            );
        }
        let Some(cases) = self.enum_cases("error-reason") else {
            return;
        };
        let wit: BTreeMap<String, Docs> = cases.into_iter().collect();
        for (reason, expected) in &schema_errors {
            let Some(docs) = wit.get(&kebab(reason)) else {
                self.differ(format!(
                    "error reason `{reason}` is in the schema but not in WIT enum `error-reason`"
                ));
                continue;
            };
            let documented = error_doc(docs);
            if wire_name(docs).as_deref() != Some(reason) || documented != *expected {
                self.differ(format!(
                    "error reason `{reason}`: WIT docs say {:?} {documented:?}, schema says {expected:?}",
                    wire_name(docs)
                ));
            } else {
                self.coverage.error_reasons += 1;
            }
        }
        let expected: BTreeSet<String> = schema_errors.keys().map(|r| kebab(r)).collect();
        for case in wit.keys().filter(|c| !expected.contains(*c)) {
            self.differ(format!(
                "error reason `{case}` is in WIT enum `error-reason` but not in the schema's errors"
            ));
        }
    }

    fn limits(&mut self) {
        let schema_limits: BTreeMap<String, Option<u64>> = self.schema["limits"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_u64()))
            .collect();
        let record = self.type_in(TYPES_INTERFACE, "limits").and_then(|id| {
            match &self.resolve.types[id].kind {
                TypeDefKind::Record(r) => Some(r.fields.clone()),
                _ => None,
            }
        });
        let Some(fields) = record else {
            self.differ(format!("record `{TYPES_INTERFACE}.limits` is missing"));
            return;
        };
        let wit: BTreeMap<String, (Option<u64>, Shape)> = fields
            .iter()
            .map(|f| (f.name.clone(), (limit_value(&f.docs), self.shape(&f.ty))))
            .collect();
        for (name, value) in &schema_limits {
            match wit.get(&kebab(name)) {
                None => self.differ(format!(
                    "limit `{name}` is in the schema but not in WIT record `limits`"
                )),
                Some((documented, shape)) if documented != value || *shape != Shape::U64 => self
                    .differ(format!(
                        "limit `{name}`: WIT documents {documented:?} as {}, schema says {value:?}",
                        shape.describe()
                    )),
                Some(_) => self.coverage.limits += 1,
            }
        }
        let expected: BTreeSet<String> = schema_limits.keys().map(|l| kebab(l)).collect();
        for field in wit.keys().filter(|f| !expected.contains(*f)) {
            self.differ(format!(
                "limit `{field}` is in WIT record `limits` but not in the schema's limits"
            ));
        }
    }

    /// Interfaces of this package the world imports / exports.
    fn world_interfaces(&mut self) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
        let Some(&world) = self.resolve.packages[self.package].worlds.get(WORLD) else {
            self.differ(format!("world `{WORLD}` is missing"));
            return None;
        };
        let names = |items: &mut dyn Iterator<Item = &WorldItem>| -> BTreeSet<String> {
            items
                .filter_map(|item| match item {
                    WorldItem::Interface { id, .. } => {
                        let interface = &self.resolve.interfaces[*id];
                        (interface.package == Some(self.package))
                            .then(|| interface.name.clone())
                            .flatten()
                    }
                    _ => None,
                })
                .collect()
        };
        let world = &self.resolve.worlds[world];
        Some((
            names(&mut world.imports.values()),
            names(&mut world.exports.values()),
        ))
    }

    fn def(&self, reference: &Value) -> Option<(String, &Value)> {
        let name = reference["$ref"].as_str()?.strip_prefix("#/$defs/")?;
        Some((name.to_string(), &self.schema["$defs"][name]))
    }

    fn methods(&mut self) {
        let Some((imports, exports)) = self.world_interfaces() else {
            return;
        };
        let mut mapped: BTreeSet<(String, String)> = BTreeSet::new();
        let methods = self.schema["methods"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (method, spec) in &methods {
            let class = spec["class"].as_str().unwrap_or_default();
            let direction = spec["direction"].as_str().unwrap_or_default();
            let Some((interface, function)) = wit_location(method, class, direction) else {
                self.differ(format!(
                    "method `{method}` has no WIT name under the naming rule"
                ));
                continue;
            };
            mapped.insert((interface.clone(), function.clone()));
            let before = self.differences.len();
            self.method(
                method, spec, direction, &interface, &function, &imports, &exports,
            );
            if self.differences.len() == before {
                self.coverage.methods += 1;
            }
        }
        for interface in imports.iter().chain(&exports) {
            let Some(id) = self.interface(interface) else {
                continue;
            };
            for function in self.resolve.interfaces[id].functions.keys() {
                let key = (interface.clone(), function.clone());
                let allowed = WIT_ONLY_FUNCTIONS
                    .iter()
                    .any(|(i, f, _)| *i == interface && *f == function);
                if !mapped.contains(&key) && !allowed {
                    self.differ(format!(
                        "WIT function `{interface}.{function}` corresponds to no schema method"
                    ));
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn method(
        &mut self,
        method: &str,
        spec: &Value,
        direction: &str,
        interface: &str,
        function: &str,
        imports: &BTreeSet<String>,
        exports: &BTreeSet<String>,
    ) {
        let host_to_extension = direction.starts_with("host_to_extension");
        let (in_world, side) = if host_to_extension {
            (exports.contains(interface), "export")
        } else {
            (imports.contains(interface), "import")
        };
        if !in_world {
            self.differ(format!(
                "method `{method}` ({direction}) needs world `{WORLD}` to {side} interface `{interface}`"
            ));
        }
        let Some(id) = self.interface(interface) else {
            self.differ(format!(
                "method `{method}`: interface `{interface}` is missing"
            ));
            return;
        };
        let Some(func) = self.resolve.interfaces[id].functions.get(function) else {
            self.differ(format!(
                "method `{method}` is in the schema but WIT function `{interface}.{function}` is missing"
            ));
            return;
        };
        let params: Vec<(String, Shape)> = func
            .params
            .iter()
            .map(|p| (p.name.clone(), self.shape(&p.ty)))
            .collect();
        let result = func.result.as_ref().map(|t| self.shape(t));

        let expected_params = match self.def(&spec["params"]) {
            Some((_, def)) if properties(def).is_empty() => vec![],
            Some((name, _)) => vec![("params".to_string(), Shape::Named(type_name(&name)))],
            None => {
                self.differ(format!(
                    "method `{method}`: params are not a $defs reference"
                ));
                return;
            }
        };
        if params != expected_params {
            self.differ(format!(
                "WIT function `{interface}.{function}` takes {}, method `{method}` needs {}",
                describe_params(&params),
                describe_params(&expected_params)
            ));
        }
        let notification = spec["notification"].as_bool().unwrap_or(false);
        let expected_result = if notification {
            None
        } else {
            match self.def(&spec["result"]) {
                Some((name, _)) => Some(Shape::Result(
                    Some(Box::new(Shape::Named(type_name(&name)))),
                    Some(Box::new(Shape::Named("extension-error".into()))),
                )),
                None => {
                    self.differ(format!(
                        "method `{method}`: result is not a $defs reference"
                    ));
                    return;
                }
            }
        };
        if result != expected_result {
            self.differ(format!(
                "WIT function `{interface}.{function}` returns {}, method `{method}` needs {}",
                result.as_ref().map_or("nothing".into(), Shape::describe),
                expected_result
                    .as_ref()
                    .map_or("nothing".into(), Shape::describe)
            ));
        }
    }

    fn dtos(&mut self) {
        let defined = self.defined_types();
        let defs = self.schema["$defs"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut expected_records = BTreeSet::new();
        for (def_name, def) in &defs {
            let wit_name = type_name(def_name);
            let props = properties(def);
            let found = defined.get(&wit_name).cloned().unwrap_or_default();
            if props.is_empty() {
                // WIT has no empty records: an empty params object is a
                // function without parameters (checked with the method).
                if !found.is_empty() {
                    self.differ(format!(
                        "$defs `{def_name}` has no properties, so WIT must not define `{wit_name}`"
                    ));
                } else {
                    self.coverage.dtos += 1;
                }
                continue;
            }
            expected_records.insert(wit_name.clone());
            let fields = match found.as_slice() {
                [id] => match &self.resolve.types[*id].kind {
                    TypeDefKind::Record(r) => r.fields.clone(),
                    _ => {
                        self.differ(format!(
                            "WIT type `{wit_name}` ($defs `{def_name}`) is not a record"
                        ));
                        continue;
                    }
                },
                [] => {
                    self.differ(format!(
                        "$defs `{def_name}` is in the schema but WIT record `{wit_name}` is missing"
                    ));
                    continue;
                }
                _ => {
                    self.differ(format!("WIT defines `{wit_name}` more than once"));
                    continue;
                }
            };
            let required: BTreeSet<&str> = def["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let wit_fields: BTreeMap<String, Shape> = fields
                .iter()
                .map(|f| (f.name.clone(), self.shape(&f.ty)))
                .collect();
            let before = self.differences.len();
            for (wire, property) in &props {
                let field = kebab(wire);
                let Some(actual) = wit_fields.get(&field) else {
                    self.differ(format!(
                        "field `{def_name}.{wire}` is in the schema but WIT record `{wit_name}` has no `{field}`"
                    ));
                    continue;
                };
                let mut expected = match schema_shape(property) {
                    Ok(shape) => shape,
                    Err(why) => {
                        self.differ(format!("field `{def_name}.{wire}`: {why}"));
                        continue;
                    }
                };
                if let Some((_, _, item)) = TYPED_STRING_LISTS
                    .iter()
                    .find(|(d, f, _)| d == def_name && f == wire)
                {
                    if expected != Shape::List(Box::new(Shape::Str)) {
                        self.differ(format!(
                            "field `{def_name}.{wire}` is no longer string[] in the schema; its typed WIT list needs review"
                        ));
                    }
                    expected = Shape::List(Box::new(self.named_shape(item)));
                }
                if !required.contains(wire.as_str()) {
                    expected = Shape::Option(Box::new(expected));
                }
                if actual.satisfies(&expected) {
                    self.coverage.fields += 1;
                } else {
                    let presence = if required.contains(wire.as_str()) {
                        "required"
                    } else {
                        "optional"
                    };
                    self.differ(format!(
                        "field `{wit_name}.{field}` is {} in WIT, but `{def_name}.{wire}` ({presence}) needs {}",
                        actual.describe(),
                        expected.describe()
                    ));
                }
            }
            let expected_fields: BTreeSet<String> = props.keys().map(|w| kebab(w)).collect();
            for field in wit_fields.keys().filter(|f| !expected_fields.contains(*f)) {
                self.differ(format!(
                    "field `{wit_name}.{field}` is in WIT but `{def_name}` has no such property"
                ));
            }
            if self.differences.len() == before {
                self.coverage.dtos += 1;
            }
        }
        for (name, ids) in &defined {
            let is_record = ids
                .iter()
                .any(|id| matches!(self.resolve.types[*id].kind, TypeDefKind::Record(_)));
            if is_record
                && !expected_records.contains(name)
                && !WIT_ONLY_RECORDS.contains(&name.as_str())
            {
                self.differ(format!(
                    "WIT record `{name}` corresponds to no schema $defs entry"
                ));
            }
        }
    }

    /// The shape of a named WIT type defined anywhere in the package.
    fn named_shape(&self, name: &str) -> Shape {
        match self.defined_types().get(name).map(Vec::as_slice) {
            Some([id]) => self.shape(&Type::Id(*id)),
            _ => Shape::Other(format!("missing type `{name}`")),
        }
    }
}

fn properties(def: &Value) -> serde_json::Map<String, Value> {
    def["properties"].as_object().cloned().unwrap_or_default()
}

fn describe_params(params: &[(String, Shape)]) -> String {
    if params.is_empty() {
        return "no parameters".into();
    }
    params
        .iter()
        .map(|(n, s)| format!("{n}: {}", s.describe()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What WIT type a schema property must have (before `option<…>`).
pub fn schema_shape(property: &Value) -> Result<Shape, String> {
    if property == &Value::Bool(true) {
        return Ok(Shape::Json);
    }
    let Some(object) = property.as_object() else {
        return Err(format!("unsupported schema {property}"));
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let name = reference
            .strip_prefix("#/$defs/")
            .ok_or_else(|| format!("unsupported $ref {reference}"))?;
        return Ok(Shape::Named(type_name(name)));
    }
    let Some(kind) = object.get("type").and_then(Value::as_str) else {
        return Ok(Shape::Json); // no type constraint: "any"
    };
    match kind {
        "string" => match object.get("enum").and_then(Value::as_array) {
            Some(values) => Ok(Shape::Enum(
                None,
                values
                    .iter()
                    .map(|v| kebab(v.as_str().unwrap_or_default()))
                    .collect(),
            )),
            None => Ok(Shape::Str),
        },
        "integer" => {
            let unsigned = object
                .get("minimum")
                .and_then(Value::as_i64)
                .is_some_and(|m| m >= 0);
            Ok(if unsigned { Shape::U64 } else { Shape::S64 })
        }
        "number" => Ok(Shape::F64),
        "boolean" => Ok(Shape::Bool),
        "array" => Ok(Shape::List(Box::new(schema_shape(
            object.get("items").unwrap_or(&Value::Bool(true)),
        )?))),
        "object" => match object.get("additionalProperties") {
            Some(Value::Bool(true)) => Ok(Shape::Json),
            Some(values) if values.get("type").and_then(Value::as_str) == Some("string") => {
                Ok(Shape::List(Box::new(Shape::Tuple(vec![
                    Shape::Str,
                    Shape::Str,
                ]))))
            }
            _ => Err(format!("unsupported inline object {property}")),
        },
        other => Err(format!("unsupported schema type `{other}`")),
    }
}

fn doc_lines(docs: &Docs) -> impl Iterator<Item = &str> {
    docs.contents
        .as_deref()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
}

/// The text between backticks after `Wire: ` in a doc comment.
fn wire_name(docs: &Docs) -> Option<String> {
    let contents = docs.contents.as_deref()?;
    let rest = &contents[contents.find("Wire: `")? + "Wire: `".len()..];
    Some(rest[..rest.find('`')?].to_string())
}

/// The number on the `Value:` line.
fn limit_value(docs: &Docs) -> Option<u64> {
    doc_lines(docs)
        .find_map(|line| line.strip_prefix("Value: "))
        .and_then(|value| value.trim().parse().ok())
}

#[derive(Debug, PartialEq, Eq)]
struct ErrorDoc {
    code: Option<i64>,
    retryable: Option<bool>,
    message: Option<String>,
}

/// `Wire: `reason`, code -32000, retryable false` and `Message: "…"`.
fn error_doc(docs: &Docs) -> ErrorDoc {
    let mut doc = ErrorDoc {
        code: None,
        retryable: None,
        message: None,
    };
    for line in doc_lines(docs) {
        if let Some(wire) = line.strip_prefix("Wire: `") {
            for part in wire.split(", ").skip(1) {
                if let Some(code) = part.strip_prefix("code ") {
                    doc.code = code.parse().ok();
                } else if let Some(retryable) = part.strip_prefix("retryable ") {
                    doc.retryable = retryable.parse().ok();
                }
            }
        } else if let Some(message) = line.strip_prefix("Message: ") {
            doc.message = message
                .strip_prefix('"')
                .and_then(|m| m.strip_suffix('"'))
                .map(str::to_string);
        }
    }
    doc
}
