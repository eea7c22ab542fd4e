//! Extension components written as WAT core modules and wrapped with
//! `wit-component` at test time (no wasm32 target, about a millisecond
//! each). The generator writes the canonical-ABI return areas by hand, so
//! each fixture is a small, readable module whose one export misbehaves.
//!
//! Memory layout: return areas at 1024, static strings from 4096, the bump
//! heap from 65536 (reset after every call by the `cabi_post_*` exports).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use wit_component::{ComponentEncoder, StringEncoding};
use wit_parser::Resolve;

/// What `intercept` does.
#[derive(Debug, Clone)]
pub enum Intercept {
    /// `continue`, without reading the payload.
    Continue,
    /// `block` with this reason.
    Block(String),
    /// `replace` with this JSON text.
    Replace(String),
    /// Any decision by its WIT index (0 continue … 4 deny).
    Decision(u8),
    /// `block` whose reason is the payload text itself (proves the payload
    /// crossed the boundary intact).
    Echo,
    /// Spin forever (on a JSON string payload; `continue` otherwise, as
    /// for the other attacks).
    Loop,
    /// Spin forever on every payload.
    SpinAlways,
    /// Grow memory until the limiter refuses.
    MemoryBomb,
    /// Recurse until the stack overflows.
    Recurse,
    /// Trap with `unreachable`.
    Unreachable,
    /// Answer an `extension-error` with this reason index.
    Error(u8),
}

/// One fixture component.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The WIT package version the component is built against.
    pub package_version: String,
    /// What `lifecycle.protocol-version` returns.
    pub protocol_version: String,
    /// `initialize-result.protocol-version`.
    pub wire_protocol_version: String,
    /// Hook point indices (WIT enum order) it subscribes to.
    pub subscriptions: Vec<u8>,
    /// Tool names it declares and serves.
    pub tools: Vec<String>,
    pub intercept: Intercept,
    /// `initialize` loops forever instead of answering.
    pub initialize_loops: bool,
    /// Initial linear memory in 64 KiB pages.
    pub memory_pages: u32,
}

/// WIT enum index of `input-receive`.
pub const INPUT_RECEIVE: u8 = 5;
/// WIT enum index of `tool-before`.
pub const TOOL_BEFORE: u8 = 11;
/// WIT enum index of `permission-decision`.
pub const PERMISSION_DECISION: u8 = 13;
/// WIT enum index of error reason `internal`.
pub const REASON_INTERNAL: u8 = 8;
/// WIT enum index of error reason `unknown-method`.
const REASON_UNKNOWN_METHOD: u8 = 18;

impl Fixture {
    /// A well-behaved 2.0.0 component subscribed to `input.receive`.
    pub fn new(intercept: Intercept) -> Fixture {
        Fixture {
            package_version: "2.0.0".into(),
            protocol_version: "2.0.0".into(),
            wire_protocol_version: "2".into(),
            subscriptions: vec![INPUT_RECEIVE],
            tools: Vec::new(),
            intercept,
            initialize_loops: false,
            memory_pages: 2,
        }
    }

    /// The component binary.
    pub fn build(&self) -> Vec<u8> {
        let wat = self.wat();
        let mut module = wat::parse_str(&wat).unwrap_or_else(|e| panic!("{e}\n{wat}"));
        let wit = wit_dir_for(&self.package_version);
        let mut resolve = Resolve::default();
        let (package, _) = resolve.push_dir(&wit).expect("the WIT package parses");
        let world = resolve
            .select_world(&[package], Some("extension"))
            .expect("world extension");
        wit_component::embed_component_metadata(
            &mut module,
            &resolve,
            world,
            StringEncoding::UTF8,
            false,
        )
        .expect("metadata embeds");
        ComponentEncoder::default()
            .validate(true)
            .module(&module)
            .and_then(|encoder| encoder.encode())
            .unwrap_or_else(|e| panic!("{e:#}\n{wat}"))
    }

    /// Write the component to `dir/name`.
    pub fn write_to(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, self.build()).expect("write the component");
        path
    }

    fn wat(&self) -> String {
        let v = &self.package_version;
        let mut data = Data::default();
        let mut out = String::new();
        let wire_version = data.string(&self.wire_protocol_version);
        let name = data.string("wat-fixture");
        let version = data.string("1.0.0");
        let package = data.string(&self.protocol_version);
        let subscriptions = data.bytes(&self.subscriptions);
        let tool_names: Vec<(u32, u32)> = self.tools.iter().map(|t| data.string(t)).collect();
        let mut tool_list = Vec::new();
        for (ptr, len) in &tool_names {
            tool_list.extend_from_slice(&ptr.to_le_bytes());
            tool_list.extend_from_slice(&len.to_le_bytes());
        }
        let tools = data.aligned_bytes(&tool_list, 4);
        let tool_reply = data.string("served by wat");

        // initialize → result<initialize-result, extension-error>, payload at 8.
        let mut init = Stores::default();
        init.u8(0, 0);
        init.pair(8, wire_version);
        init.pair(16, name);
        init.pair(24, version);
        init.u32(32, 0);
        init.u32(36, 0);
        for disc in [40, 52, 64, 76, 88, 100, 112, 124] {
            init.u8(disc, 0);
        }
        if !self.subscriptions.is_empty() {
            init.u8(52, 1);
            init.pair(56, subscriptions);
        }
        if !self.tools.is_empty() {
            init.u8(124, 1);
            init.pair(128, (tools.0, self.tools.len() as u32));
        }
        let init_body = if self.initialize_loops {
            "(loop $spin (br $spin))\n".to_owned()
        } else {
            init.wat()
        };

        let intercept_body = self.intercept_body(&mut data);

        let mut shutdown = Stores::default();
        shutdown.u8(0, 0);
        shutdown.u8(4, 1);

        let mut tool = Stores::default();
        if self.tools.is_empty() {
            tool = unknown_method();
        } else {
            tool.u8(0, 0);
            tool.pair(4, tool_reply);
            tool.u8(12, 0);
        }

        let unknown = unknown_method().wat();
        let _ = writeln!(out, "(module");
        let _ = writeln!(out, "  (memory (export \"memory\") {})", self.memory_pages);
        let _ = writeln!(out, "  (global $heap (mut i32) (i32.const 65536))");
        out.push_str(REALLOC);
        out.push_str(RECURSE);
        let _ = writeln!(out, "{}", data.wat());
        let lifecycle = format!("reasonix:extension/lifecycle@{v}");
        let intercept = format!("reasonix:extension/intercept@{v}");
        let observation = format!("reasonix:extension/observation@{v}");
        let provider = format!("reasonix:extension/provider@{v}");
        let tool_iface = format!("reasonix:extension/tool@{v}");
        let ui = format!("reasonix:extension/ui@{v}");
        let ret = "(i32.const 1024)";
        export(
            &mut out,
            &format!("{lifecycle}#protocol-version"),
            "(result i32)",
            &format!("{}{ret}", {
                let mut s = Stores::default();
                s.pair(0, package);
                s.wat()
            }),
            true,
        );
        export(
            &mut out,
            &format!("{lifecycle}#initialize"),
            "(param i32) (result i32)",
            &format!("{init_body}{ret}"),
            true,
        );
        export(&mut out, &format!("{lifecycle}#initialized"), "", "", false);
        export(
            &mut out,
            &format!("{lifecycle}#shutdown"),
            "(param i64) (result i32)",
            &format!("{}{ret}", shutdown.wat()),
            true,
        );
        export(
            &mut out,
            &format!("{intercept}#intercept"),
            "(param i32 i64 i32 i32 i64 i32 i32 i32) (result i32)",
            &format!("{intercept_body}{ret}"),
            true,
        );
        export(
            &mut out,
            &format!("{observation}#event"),
            "(param i32 i32 i32 i32 i32 i32)",
            "(call $reset)\n",
            false,
        );
        export(
            &mut out,
            &format!("{observation}#resources-changed"),
            "(param i32 i32)",
            "(call $reset)\n",
            false,
        );
        export(
            &mut out,
            &format!("{provider}#catalog"),
            "(result i32)",
            &format!("{unknown}{ret}"),
            true,
        );
        export(
            &mut out,
            &format!("{provider}#stream-open"),
            "(param i32) (result i32)",
            &format!("{unknown}{ret}"),
            true,
        );
        export(
            &mut out,
            &format!("{provider}#stream-cancel"),
            "(param i32 i32) (result i32)",
            &format!("{unknown}{ret}"),
            true,
        );
        export(
            &mut out,
            &format!("{tool_iface}#call"),
            "(param i32 i32 i32 i32 i64) (result i32)",
            &format!("{}{ret}", tool.wat()),
            true,
        );
        export(
            &mut out,
            &format!("{ui}#action"),
            "(param i32 i32 i32 i32 i64 i32 i32 i32) (result i32)",
            &format!("{unknown}{ret}"),
            true,
        );
        export(
            &mut out,
            &format!("{ui}#submit"),
            "(param i32 i32 i32 i32 i64 i32 i32) (result i32)",
            &format!("{unknown}{ret}"),
            true,
        );
        out.push_str(")\n");
        out
    }

    fn intercept_body(&self, data: &mut Data) -> String {
        // Params: event, seq, payload ptr/len (locals 2, 3), timeout,
        // externalized option.
        let mut s = Stores::default();
        match &self.intercept {
            Intercept::Continue => {
                s.u8(0, 0);
                s.u8(4, 0);
                s.u8(8, 0);
                s.u8(20, 0);
                s.u8(32, 0);
            }
            Intercept::Decision(d) => {
                s.u8(0, 0);
                s.u8(4, *d);
                s.u8(8, 0);
                s.u8(20, 0);
                s.u8(32, 0);
            }
            Intercept::Block(reason) => {
                let reason = data.string(reason);
                s.u8(0, 0);
                s.u8(4, 1);
                s.u8(8, 1);
                s.pair(12, reason);
                s.u8(20, 0);
                s.u8(32, 0);
            }
            Intercept::Echo => {
                s.u8(0, 0);
                s.u8(4, 1);
                s.u8(8, 1);
                s.raw("(i32.store (i32.const 1036) (local.get 2))\n");
                s.raw("(i32.store (i32.const 1040) (local.get 3))\n");
                s.u8(20, 0);
                s.u8(32, 0);
            }
            Intercept::Replace(json) => {
                let json = data.string(json);
                s.u8(0, 0);
                s.u8(4, 2);
                s.u8(8, 0);
                s.u8(20, 1);
                s.pair(24, json);
                s.u8(32, 0);
            }
            Intercept::Error(reason) => {
                s.u8(0, 1);
                s.u8(4, *reason);
                s.u8(8, 0);
            }
            Intercept::Loop => attack(&mut s, "(loop $spin (br $spin))"),
            Intercept::SpinAlways => s.raw("(loop $spin (br $spin))\n"),
            Intercept::MemoryBomb => attack(
                &mut s,
                "(loop $grow (drop (memory.grow (i32.const 16))) (br $grow))",
            ),
            Intercept::Recurse => attack(&mut s, "(drop (call $deep (i32.const 0)))"),
            Intercept::Unreachable => attack(&mut s, "unreachable"),
        }
        s.wat()
    }
}

/// The attack runs when the payload is a JSON string (first byte `"`);
/// any other payload gets `continue`, so one fixture shows both the
/// failure and the host serving the next call.
fn attack(s: &mut Stores, wat: &str) {
    s.raw(&format!(
        "(if (i32.eq (i32.load8_u (local.get 2)) (i32.const 34)) (then {wat}))\n"
    ));
    s.u8(0, 0);
    s.u8(4, 0);
    s.u8(8, 0);
    s.u8(20, 0);
    s.u8(32, 0);
}

fn unknown_method() -> Stores {
    let mut s = Stores::default();
    s.u8(0, 1);
    s.u8(4, REASON_UNKNOWN_METHOD);
    s.u8(8, 0);
    s
}

fn export(out: &mut String, name: &str, signature: &str, body: &str, post_return: bool) {
    let _ = writeln!(
        out,
        "  (func (export \"{name}\") {signature}\n{body}{}  )",
        if post_return { "" } else { "(call $reset)\n" }
    );
    if post_return {
        let _ = writeln!(
            out,
            "  (func (export \"cabi_post_{name}\") (param i32) (call $reset))"
        );
    }
}

const REALLOC: &str = r#"
  (func $reset (global.set $heap (i32.const 65536)))
  (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    (local $ptr i32) (local $end i32) (local $have i32)
    (local.set $ptr
      (i32.and
        (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
        (i32.sub (i32.const 0) (local.get $align))))
    (local.set $end (i32.add (local.get $ptr) (local.get $size)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow
                (i32.shr_u
                  (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535))
                  (i32.const 16)))
              (i32.const -1))
          (then unreachable))))
    (if (local.get $old)
      (then (memory.copy (local.get $ptr) (local.get $old) (local.get $old_size))))
    (global.set $heap (local.get $end))
    (local.get $ptr))
"#;

const RECURSE: &str = r#"
  (func $deep (param i32) (result i32)
    (i32.add (call $deep (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))
"#;

/// Static data from 4096 up.
#[derive(Default)]
struct Data {
    next: u32,
    segments: Vec<(u32, Vec<u8>)>,
}

impl Data {
    fn aligned_bytes(&mut self, bytes: &[u8], align: u32) -> (u32, u32) {
        let base = 4096 + self.next.next_multiple_of(align);
        self.next = base - 4096 + bytes.len() as u32;
        self.segments.push((base, bytes.to_vec()));
        (base, bytes.len() as u32)
    }

    fn bytes(&mut self, bytes: &[u8]) -> (u32, u32) {
        self.aligned_bytes(bytes, 1)
    }

    fn string(&mut self, text: &str) -> (u32, u32) {
        self.bytes(text.as_bytes())
    }

    fn wat(&self) -> String {
        let mut out = String::new();
        for (at, bytes) in &self.segments {
            let escaped: String = bytes.iter().map(|b| format!("\\{b:02x}")).collect();
            let _ = writeln!(out, "  (data (i32.const {at}) \"{escaped}\")");
        }
        out
    }
}

/// Stores into the return area at 1024.
#[derive(Default)]
struct Stores(String);

impl Stores {
    fn u8(&mut self, offset: u32, value: u8) {
        let _ = writeln!(
            self.0,
            "(i32.store8 (i32.const {}) (i32.const {value}))",
            1024 + offset
        );
    }

    fn u32(&mut self, offset: u32, value: u32) {
        let _ = writeln!(
            self.0,
            "(i32.store (i32.const {}) (i32.const {value}))",
            1024 + offset
        );
    }

    fn pair(&mut self, offset: u32, (ptr, len): (u32, u32)) {
        self.u32(offset, ptr);
        self.u32(offset + 4, len);
    }

    fn raw(&mut self, wat: &str) {
        self.0.push_str(wat);
    }

    fn wat(&self) -> String {
        self.0.clone()
    }
}

/// The workspace's WIT package, or a copy whose package version is
/// rewritten (for the wrong-major fixture).
pub fn wit_dir_for(version: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/since_v2.0.0");
    if version == "2.0.0" {
        return source;
    }
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("wit-{version}"));
    std::fs::create_dir_all(&target).expect("temp wit dir");
    for entry in std::fs::read_dir(&source).expect("read wit dir") {
        let entry = entry.expect("wit entry");
        let text = std::fs::read_to_string(entry.path()).expect("read wit file");
        let text = text.replace(
            "package reasonix:extension@2.0.0;",
            &format!("package reasonix:extension@{version};"),
        );
        std::fs::write(target.join(entry.file_name()), text).expect("write wit file");
    }
    target
}
