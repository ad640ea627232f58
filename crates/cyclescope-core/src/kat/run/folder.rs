//! The KAT output folder's budget: the folder the engine writes a job's KAT text into holds,
//! once the job is over, the files the generator writes there and nothing else, each no larger
//! than the generator's text for that file (its length is known from the width alone), so the
//! folder's byte budget is their sum plus a small margin per file. The job lists the folder
//! before (entries left by earlier jobs are not this one's) and after; a new or changed entry
//! that is not one of the job's files, or a folder over its byte budget, is named with its
//! size. No worker may write there (Landlock); this is the check that none did. Reads only;
//! it never deletes evidence.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::kat::generate::KatFile;

/// Slack on top of the generator's text: a file may be no larger than its text plus this.
const MARGIN_BYTES: u64 = 64 << 10;

/// An entry of the folder as the parent saw it: size, modification time and inode.
type Seen = (u64, i64, i64, u64);

/// The folder's entries by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Listing(BTreeMap<String, Seen>);

impl Listing {
    /// What `dir` holds now (nothing when it cannot be read; the job then finds that out).
    pub(super) fn of(dir: &Path) -> Self {
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        Self(
            entries
                .filter_map(|e| {
                    // Not followed: a link counts as what it is.
                    let m = e.path().symlink_metadata().ok()?;
                    let seen = (m.len(), m.mtime(), m.mtime_nsec(), m.ino());
                    Some((e.file_name().to_string_lossy().into_owned(), seen))
                })
                .collect(),
        )
    }
}

/// What a job may leave in its folder.
#[derive(Debug, Clone)]
pub(super) struct Budget {
    files: Vec<KatFile>,
    digest_bits: u32,
}

impl Budget {
    pub(super) fn new(files: &[KatFile], digest_bits: u32) -> Self {
        Self {
            files: files.to_vec(),
            digest_bits,
        }
    }

    /// Why the folder, as `after` lists it, is not what the job may leave (None: it is).
    /// `kat_name` is the name the worker generated under (None: it never said, so no file
    /// is the generator's).
    pub(super) fn breach(
        &self,
        before: &Listing,
        after: &Listing,
        kat_name: Option<&str>,
    ) -> Option<String> {
        let allowed: BTreeMap<String, u64> = kat_name.map_or_else(BTreeMap::new, |name| {
            self.files
                .iter()
                .map(|f| (f.file_name(name), f.expected_bytes(self.digest_bits)))
                .collect()
        });
        after.0.iter().find_map(|(name, seen)| {
            if before.0.get(name) == Some(seen) {
                return None; // an earlier job's, untouched
            }
            let shown = crate::format::bytes(seen.0);
            match allowed.get(name) {
                None => Some(format!(
                    "the KAT folder holds {name} ({shown}), which the generator did not write"
                )),
                Some(&expected) if seen.0 > expected + MARGIN_BYTES => Some(format!(
                    "the KAT folder holds {name} of {shown}, but the generator writes {}",
                    crate::format::bytes(expected)
                )),
                Some(_) => None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_generators_files_may_appear_and_only_at_their_size() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("KAT_2_12_old.txt");
        std::fs::write(&old, b"an earlier job's text").unwrap();
        let before = Listing::of(dir.path());
        let budget = Budget::new(&[KatFile::Kat2_12, KatFile::Kat2_23], 256);
        let kat = dir.path().join("KAT_2_12_x.txt");
        std::fs::write(&kat, vec![b'x'; 2_542_614]).unwrap();
        // An earlier job's file is not this job's doing.
        assert_eq!(
            budget.breach(&before, &Listing::of(dir.path()), Some("x")),
            None
        );
        // Without a KAT name no file is the generator's.
        let why = budget
            .breach(&before, &Listing::of(dir.path()), None)
            .unwrap();
        assert!(why.contains("KAT_2_12_x.txt (2.4 MiB), which the generator did not write"));
        std::fs::write(dir.path().join("junk.bin"), vec![0u8; 3000]).unwrap();
        let why = budget
            .breach(&before, &Listing::of(dir.path()), Some("x"))
            .unwrap();
        assert!(why.contains("junk.bin (3 KiB)"), "{why}");
        std::fs::remove_file(dir.path().join("junk.bin")).unwrap();
        std::fs::write(&kat, vec![b'x'; 3 << 20]).unwrap();
        let why = budget
            .breach(&before, &Listing::of(dir.path()), Some("x"))
            .unwrap();
        assert!(why.contains("KAT_2_12_x.txt of 3.0 MiB"), "{why}");
        // An earlier job's file that changed is this job's doing.
        std::fs::remove_file(&kat).unwrap();
        std::fs::write(&old, b"y").unwrap();
        let why = budget
            .breach(&before, &Listing::of(dir.path()), Some("x"))
            .unwrap();
        assert!(why.contains("KAT_2_12_old.txt"), "{why}");
    }
}
