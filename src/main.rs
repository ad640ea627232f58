use std::process::ExitCode;

fn main() -> ExitCode {
    cyclescope::cli::main()
}
