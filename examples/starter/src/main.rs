//! The starter extension as a native sidecar: the host starts this binary
//! (`${REASONIX_PLUGIN_ROOT}/bin/starter`) and talks to it over stdio.

fn main() -> std::process::ExitCode {
    reasonix_extension_sdk::run_stdio(starter::Starter)
}
