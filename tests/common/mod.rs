//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The `shared/` folder next to the repository (walks up from the manifest directory).
pub fn shared_dir() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        let candidate = dir.join("shared");
        if candidate.join("reference").is_dir() {
            return candidate;
        }
        if !dir.pop() {
            panic!(
                "no shared/reference folder above {}",
                env!("CARGO_MANIFEST_DIR")
            );
        }
    }
}

/// `shared/reference/harness-data`.
pub fn harness_data() -> PathBuf {
    shared_dir().join("reference").join("harness-data")
}

/// The published arm_1 dataset.
pub fn arm_1() -> PathBuf {
    harness_data().join("performance/data/arm_1")
}
