//! Builds the bundled ICCS libraries (`plugins/sm3hash`, `plugins/pseudohash`,
//! `plugins/pseudoxof`, on top of `plugins/iccs-sm3`) as cdylibs into OUT_DIR, so that
//! `catalog::bundled` can carry their bytes inside every binary that links the engine: an
//! installed or copied `cyclescope` then measures the very same shared libraries, loaded with
//! dlopen like any candidate, wherever it runs.
//!
//! Cargo offers no stable way to hand one crate the cdylib of another (artifact dependencies
//! are unstable, and `cargo check` never links them), so the sources are compiled here with
//! the same `rustc` Cargo uses, for the same target, with fixed flags: always optimised, one
//! codegen unit, debug info stripped and source paths remapped, so a dev and a release build of
//! one checkout give byte-identical libraries (and the same `library_sha256` in records).
//!
//! It also builds `cyclescope-worker`, the trial process (`crates/cyclescope-worker`): a
//! `no_std` program linked against the C library alone, which must be compiled with
//! `panic=abort` — a setting Cargo gives a whole workspace or nothing. On an architecture it
//! has no counters for it is not built, and measuring there fails with a message saying so.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The bundled libraries: crate name and folder under `plugins/`.
const LIBRARIES: [&str; 3] = ["sm3hash", "pseudohash", "pseudoxof"];

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .parent()
        .and_then(Path::parent)
        .expect("crates/cyclescope-core lies two levels below the workspace")
        .to_path_buf();
    let plugins = workspace.join("plugins");
    let out = PathBuf::from(env("OUT_DIR")).join("bundled");
    std::fs::create_dir_all(&out).expect("creating OUT_DIR/bundled");

    println!(
        "cargo::rerun-if-changed={}",
        plugins.join("iccs-sm3/src").display()
    );
    for name in LIBRARIES {
        println!(
            "cargo::rerun-if-changed={}",
            plugins.join(name).join("src").display()
        );
    }
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");

    build_trial_worker(&workspace);

    let iccs = plugins.join("iccs-sm3/src/lib.rs");
    let out_dir = out.display().to_string();
    let out_args = |extra: &[&str]| -> Vec<String> {
        ["-C", "opt-level=3", "-L", &out_dir, "--out-dir", &out_dir]
            .iter()
            .chain(extra)
            .map(|a| a.to_string())
            .collect()
    };
    rustc(&workspace, "iccs_sm3", "rlib", &iccs, &out_args(&[]));
    let rlib = out.join("libiccs_sm3.rlib");
    for name in LIBRARIES {
        let src = plugins.join(name).join("src/lib.rs");
        let extern_arg = format!("iccs_sm3={}", rlib.display());
        rustc(
            &workspace,
            name,
            "cdylib",
            &src,
            &out_args(&["--extern", &extern_arg]),
        );
    }
}

/// Compiles the trial worker into `OUT_DIR/companion/cyclescope-worker` (an empty file on
/// architectures without a trial worker, so the engine can always embed the path): the counter
/// reads it shares with the engine (`crates/cyclescope-counter-raw`) and its library
/// (`crates/cyclescope-worker`) as rlibs, then the program's root (`src/main.rs`) against
/// them, all with panic=abort.
fn build_trial_worker(workspace: &Path) {
    let out = PathBuf::from(env("OUT_DIR")).join("companion");
    std::fs::create_dir_all(&out).expect("creating OUT_DIR/companion");
    let exe = out.join("cyclescope-worker");
    let raw = workspace.join("crates/cyclescope-counter-raw");
    let worker = workspace.join("crates/cyclescope-worker");
    for dir in [&raw, &worker] {
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    let arch = env("CARGO_CFG_TARGET_ARCH");
    if !matches!(arch.as_str(), "x86_64" | "aarch64") || env("CARGO_CFG_TARGET_OS") != "linux" {
        println!("cargo::warning=no trial worker for {arch}: measuring will be refused");
        std::fs::write(&exe, b"").expect("writing the empty trial worker");
        return;
    }
    let out_dir = out.display().to_string();
    let args = |extra: &[&str]| -> Vec<String> {
        let deps = format!("dependency={out_dir}");
        ["-C", "panic=abort", "-C", "opt-level=2", "-L", &deps]
            .iter()
            .chain(extra)
            .map(|a| a.to_string())
            .collect()
    };
    let rlib_of = |name: &str| format!("{name}={}", out.join(format!("lib{name}.rlib")).display());
    rustc(
        workspace,
        "cyclescope_counter_raw",
        "rlib",
        &raw.join("src/lib.rs"),
        &args(&["--out-dir", &out_dir]),
    );
    let raw_rlib = rlib_of("cyclescope_counter_raw");
    rustc(
        workspace,
        "cyclescope_worker",
        "rlib",
        &worker.join("src/lib.rs"),
        &args(&["--extern", &raw_rlib, "--out-dir", &out_dir]),
    );
    let worker_rlib = rlib_of("cyclescope_worker");
    let exe = exe.display().to_string();
    rustc(
        workspace,
        "cyclescope_worker",
        "bin",
        &worker.join("src/main.rs"),
        &args(&["--extern", &worker_rlib, "-o", &exe]),
    );
}

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("cargo sets {key} for build scripts"))
}

/// One rustc invocation with the flags every artefact built here shares (one codegen unit,
/// no debug info, source paths remapped, the target's linker and RUSTFLAGS), plus `args`.
fn rustc(workspace: &Path, crate_name: &str, kind: &str, src: &Path, args: &[String]) {
    let mut cmd = Command::new(env("RUSTC"));
    cmd.args(["--edition", "2024", "--crate-name", crate_name])
        .args(["--crate-type", kind, "--target", &env("TARGET")])
        .args([
            "-C",
            "codegen-units=1",
            "-C",
            "debuginfo=0",
            "-C",
            "strip=debuginfo",
        ])
        .arg(format!("--remap-path-prefix={}=.", workspace.display()))
        .args(args)
        .arg(src);
    // A cross build names its linker for the target; these artefacts must be linked by it too.
    if let Ok(linker) = std::env::var("RUSTC_LINKER") {
        cmd.arg(format!("-Clinker={linker}"));
    }
    // RUSTFLAGS (e.g. `-C target-cpu=native`) apply here as they would to a Cargo-built crate.
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run rustc for {crate_name}: {e}"));
    assert!(
        status.success(),
        "rustc failed building {crate_name} ({status})"
    );
}
