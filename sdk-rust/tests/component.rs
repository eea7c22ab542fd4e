//! The wasm transport, checked on a real component: `examples/starter-wasm`
//! (the `Starter` extension through `export_extension!`) is built for
//! wasm32-wasip2 and its component type is decoded. It must export the six
//! interfaces of the world `reasonix:extension/extension@2.0.0` and import
//! the host's, exactly as the WIT package declares them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use wit_parser::{Resolve, WorldItem, WorldKey};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Builds the component into a target directory of its own, so the outer
/// `cargo test` (which holds the main one) never waits on itself.
fn build_component() -> Vec<u8> {
    let target = workspace_root().join("target").join("examples-e2e");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(workspace_root())
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "build",
            "-q",
            "--locked",
            "-p",
            "reasonix-example-starter-wasm",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "component",
        ])
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "building the component failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(target.join("wasm32-wasip2/component/reasonix_example_starter_wasm.wasm"))
        .expect("the component was written")
}

type Items = wit_parser::IndexMap<WorldKey, WorldItem>;

/// The interface names (`pkg/iface@version`) among a world's items.
fn names(resolve: &Resolve, items: &Items) -> BTreeSet<String> {
    items
        .iter()
        .filter_map(|(key, item)| match (key, item) {
            (WorldKey::Interface(id), WorldItem::Interface { .. }) => resolve.id_of(*id),
            _ => None,
        })
        .collect()
}

#[test]
fn the_starter_component_exports_the_extension_world() {
    let bytes = build_component();
    assert_eq!(&bytes[..4], b"\0asm");
    let decoded = wit_component::decode(&bytes).expect("a component with a WIT type");
    let wit_component::DecodedWasm::Component(resolve, world) = decoded else {
        panic!("a core module, not a component");
    };
    let world = &resolve.worlds[world];
    let exports = names(&resolve, &world.exports);
    let expected: BTreeSet<String> = [
        "lifecycle",
        "intercept",
        "observation",
        "provider",
        "tool",
        "ui",
    ]
    .iter()
    .map(|i| format!("reasonix:extension/{i}@2.0.0"))
    .collect();
    assert_eq!(exports, expected);
    let imports = names(&resolve, &world.imports);
    for host in ["host-content", "host-ui", "host-provider", "log"] {
        let name = format!("reasonix:extension/{host}@2.0.0");
        assert!(imports.contains(&name), "{name} not imported: {imports:?}");
    }
    // Rust std on wasip2 brings WASI imports; nothing else may appear.
    for other in imports
        .iter()
        .filter(|i| !i.starts_with("reasonix:extension/"))
    {
        assert!(other.starts_with("wasi:"), "unexpected import {other}");
    }
}
