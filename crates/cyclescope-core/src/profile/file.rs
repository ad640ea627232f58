//! `profiles.json` of a run directory: the profiles `cyclescope profile --out RUN_DIR` took,
//! one per instance, length and event (a newer one replaces an older), which the candidate page
//! shows in a section of its own (`report::profile_section`). Written atomically under the run
//! directory's lock; read through the run directory's safe reader.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Profile, ProfileError};

pub const FILE_NAME: &str = "profiles.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileFile {
    pub profiles: Vec<Profile>,
}

/// Reads `profiles.json` of `run_dir` (None when the run holds no profile).
pub fn read(run_dir: &Path) -> Option<ProfileFile> {
    let bytes = crate::record::read::read_inside(run_dir, Path::new(FILE_NAME), 64 << 20).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Adds `new` to `run_dir`'s profiles, replacing one of the same candidate, instance, length
/// and event.
pub fn add(run_dir: &Path, new: &[Profile]) -> Result<(), ProfileError> {
    std::fs::create_dir_all(run_dir).map_err(ProfileError::Scratch)?;
    let _dir = crate::record::RunDir::open_for_writing(run_dir)
        .map_err(|e| ProfileError::Scratch(std::io::Error::other(e.to_string())))?;
    let mut file = read(run_dir).unwrap_or_default();
    for p in new {
        file.profiles.retain(|q| {
            (&q.candidate, &q.label, q.input_bytes, &q.event)
                != (&p.candidate, &p.label, p.input_bytes, &p.event)
        });
        file.profiles.push(p.clone());
    }
    crate::record::pyjson::write_json_atomic(&run_dir.join(FILE_NAME), &file)
        .map_err(ProfileError::Scratch)
}
