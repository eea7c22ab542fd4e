fn main() -> std::process::ExitCode {
    reasonix::cli::main()
}
