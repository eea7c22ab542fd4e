fn main() -> std::process::ExitCode {
    reasonix_sidecar::guard::run_if_requested();
    reasonix::cli::main()
}
