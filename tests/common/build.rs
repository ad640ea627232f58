//! Helpers of the `cyclescope build` tests (tests/build_*.rs): the fixture folders, and the
//! real binary run with its build cache inside the test's own folder.

use std::path::{Path, PathBuf};
use std::process::Output;

/// `tests/fixtures/submissions`.
pub fn submissions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/submissions")
}

/// `tests/fixtures/iccs-api`, our own stand-in for the ICCS API folder.
pub fn iccs_api() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/iccs-api")
}

/// The binary run in `dir` with `args`, its build cache in `dir/cache` (never the user's).
pub fn cyclescope(dir: &Path, args: &[&str]) -> Output {
    super::cyclescope()
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("running cyclescope")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The tree's build.json.
pub fn build_json(tree: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(tree.join("build.json")).expect("build.json"))
        .expect("build.json is JSON")
}
