//! Names the build for `cyclescope --version`: the crate version, the git commit of the
//! checkout it was built from (when there is one), the Cargo profile and the target triple.
//! Reads git through its command line only; no network, nothing written but Cargo's env.

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo::rustc-env=CYCLESCOPE_BUILD_COMMIT={commit}");
    println!("cargo::rustc-env=CYCLESCOPE_BUILD_PROFILE={profile}");
    println!("cargo::rustc-env=CYCLESCOPE_BUILD_TARGET={target}");
    // A new commit changes HEAD or the branch it points at: build.rs runs again then, and
    // not on every source edit.
    println!("cargo::rerun-if-changed=build.rs");
    for name in ["HEAD", "packed-refs"] {
        watch(git(&["rev-parse", "--git-path", name]));
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(git(&["rev-parse", "--git-path", &branch]));
    }
}

fn watch(path: Option<String>) {
    if let Some(p) = path.filter(|p| Path::new(p).exists()) {
        println!("cargo::rerun-if-changed={p}");
    }
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(std::env::var("CARGO_MANIFEST_DIR").ok()?)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}
