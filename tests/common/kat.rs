//! Helpers of the `kat_*` integration tests (`common::kat`, used as `support`): run the real binary's
//! `kat` subcommand and read what it printed and wrote.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The twelve bundled ICCS baseline instances of the default `config.toml`.
pub const BUNDLED: [&str; 12] = [
    "sm3hash-256",
    "pseudohash-512",
    "pseudohash-768",
    "pseudohash-1024",
    "pseudoXOF-256",
    "pseudoXOF-384",
    "pseudoXOF-512",
    "pseudoXOF-768",
    "pseudoXOF-1024",
    "pseudoXOF-1152",
    "pseudoXOF-1280",
    "pseudoXOF-2048",
];

/// `cyclescope kat <args>` in the package folder (so `config.toml` is the default catalog),
/// with `FAULTY_MODE` set to `mode` (or removed).
pub fn kat(args: &[&str], faulty_mode: Option<&str>) -> Output {
    let mut cmd = super::cyclescope();
    cmd.arg("kat")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CYCLESCOPE_WORKER_EXE")
        .env_remove("FAULTY_MODE");
    if let Some(m) = faulty_mode {
        cmd.env("FAULTY_MODE", m);
    }
    cmd.output().expect("cyclescope runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `RESULT` lines printed on stdout.
pub fn results(o: &Output) -> Vec<String> {
    stdout(o)
        .lines()
        .filter(|l| l.starts_with("RESULT "))
        .map(str::to_string)
        .collect()
}

/// The fault-injection library, built next to the test executables.
pub fn faulty() -> PathBuf {
    let lib = cyclescope_core::catalog::bundled_library("faulty");
    assert!(lib.is_file(), "{} not built", lib.display());
    lib
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// The log of an instance in a run directory.
pub fn log_of(run: &Path, candidate: &str, label: &str) -> String {
    let p = run.join("kat").join(candidate).join(format!("{label}.log"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
