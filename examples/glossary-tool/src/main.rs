//! glossary-tool: one runtime tool, `lookup`, that the model sees as
//! `ext__glossary-tool__lookup`. Its arguments follow the manifest's
//! `inputSchema` (`{"term": "<string>"}`); the answer is the definition, or
//! an `isError` result the model can read and recover from.

use reasonix_extension_sdk::prelude::*;
use serde::Deserialize;

/// The glossary: term, definition. Sorted by term.
const GLOSSARY: &[(&str, &str)] = &[
    (
        "component",
        "a plugin runtime compiled to WebAssembly and run sandboxed inside the host",
    ),
    (
        "content-ref",
        "a handle to a value over 64 KiB that the host keeps and the extension pages in with host/content/read",
    ),
    (
        "interceptor",
        "an extension handler that sees a hook point's payload and continues, blocks or replaces it",
    ),
    (
        "manifest",
        "reasonix-plugin.json: what a plugin package contains and what its runtime may do",
    ),
    (
        "provider",
        "an extension that streams model responses; addressed as plugin/<plugin>/<provider>/<model>",
    ),
    (
        "sidecar",
        "a plugin runtime run as a native child process speaking JSON-RPC over stdio",
    ),
    (
        "slot",
        "a host strategy (system_prompt, tool:<name>, ...) that exactly one extension may own",
    ),
];

/// The tool's arguments, as the manifest's input schema describes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LookupArgs {
    term: String,
}

fn lookup(term: &str) -> ToolOutput {
    let wanted = term.trim().to_lowercase();
    match GLOSSARY.iter().find(|(t, _)| *t == wanted) {
        Some((t, definition)) => ToolOutput::text(format!("{t}: {definition}")),
        None => {
            let known: Vec<&str> = GLOSSARY.iter().map(|(t, _)| *t).collect();
            ToolOutput::error(format!(
                "no glossary entry for {term:?}; known terms: {}",
                known.join(", ")
            ))
        }
    }
}

struct Glossary;

impl Extension for Glossary {
    fn initialize(&self, _init: &InitializeParams) -> Result<Declaration, Error> {
        Ok(Declaration::new("glossary-tool", env!("CARGO_PKG_VERSION")).tool("lookup"))
    }

    fn call_tool(
        &self,
        _ctx: &Context,
        name: &str,
        arguments: &RawJson,
    ) -> Result<ToolOutput, Error> {
        if name != "lookup" {
            return Err(Error::unknown_method());
        }
        match serde_json::from_str::<LookupArgs>(arguments.get()) {
            Ok(args) => Ok(lookup(&args.term)),
            // Bad arguments are the model's mistake: tell it, as a tool error.
            Err(e) => Ok(ToolOutput::error(format!(
                "lookup takes {{\"term\": \"<string>\"}}: {e}"
            ))),
        }
    }
}

fn main() -> std::process::ExitCode {
    reasonix_extension_sdk::run_stdio(Glossary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_terms_case_insensitively_and_lists_known_ones_otherwise() {
        assert!(
            lookup(" Sidecar ")
                .content
                .starts_with("sidecar: a plugin runtime")
        );
        assert!(!lookup("slot").is_error);
        let miss = lookup("daemon");
        assert!(miss.is_error);
        assert!(miss.content.contains("known terms: component, content-ref"));
        assert!(GLOSSARY.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
    }
}
