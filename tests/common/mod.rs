//! Helpers shared by the integration tests (`mod common;`). Each test crate uses only some of
//! them, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The project's `shared/` folder (spec, reference data): the first ancestor of this crate's
/// folder that holds `shared/reference`. In a worktree that is `/work/shared`; in CI the repo
/// is cloned next to `shared/`, so it is `../shared` of the repo root.
pub fn shared_dir() -> PathBuf {
    let start = Path::new(env!("CARGO_MANIFEST_DIR"));
    start
        .ancestors()
        .map(|dir| dir.join("shared"))
        .find(|shared| shared.join("reference").is_dir())
        .unwrap_or_else(|| {
            panic!(
                "no shared/reference in {} or any parent folder",
                start.display()
            )
        })
}

/// The published ICCS self-test logs (`<label>.log`).
pub fn iccs_selftest_logs() -> PathBuf {
    shared_dir().join("reference/harness-data/performance/data/arm_1/kat/iccs")
}

/// The self-test message of `performance/iccs/selftest.py`: byte i = (7·i + 1) mod 256.
pub fn selftest_message(n: usize) -> Vec<u8> {
    (0..n).map(|i| (7 * i + 1) as u8).collect()
}

/// `shared/reference/harness-data`.
pub fn harness_data() -> PathBuf {
    shared_dir().join("reference").join("harness-data")
}

/// The published arm_1 dataset.
pub fn arm_1() -> PathBuf {
    harness_data().join("performance/data/arm_1")
}
