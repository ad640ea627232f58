//! The verdict of a KAT job, as the harness's `ngcc_kat` reports it: eight statuses ordered by
//! severity, and cyclescope's own two: TAMPERED, the most severe, and NONCONFORM (the files
//! pass but a conformance check failed; the least severe failure, exit code 9). The exit code is the index, the
//! overall status of several files is the worst,
//! each carrying the hint that tells an operator what to do. The TUI, the CLI and the report
//! render these same values; this module never decides a status itself.

use serde::{Deserialize, Serialize};

/// KAT status; the discriminant is the exit code of `ngcc_kat` and of `cyclescope kat`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, strum::EnumIter,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KatStatus {
    /// Every generated file matched its reference.
    #[default]
    Pass = 0,
    /// A generated file differs from its reference.
    Mismatch = 1,
    /// No reference (manifest entry or reference file) for a generated file.
    Nokat = 2,
    /// CryptHash returned non-zero.
    Cryptofail = 3,
    /// CryptHash wrote outside its message or digest buffer.
    Overflow = 4,
    /// The library could not be loaded, or its metadata disagrees with the catalog.
    Loadfail = 5,
    /// The job did not finish within its time limit; the worker was killed.
    Timeout = 6,
    /// The worker died (signal, or exit without a result).
    Crash = 7,
    /// The worker's report cannot be trusted: its protocol stream held lines the worker does
    /// not write, or a file on disk is not what it reported (cyclescope's own status, beyond
    /// the harness's eight).
    Tampered = 8,
    /// The KAT files match (or had nothing to be compared with), but a conformance check
    /// failed (`conform`): the library
    /// changes its input, writes or reads outside its buffers, depends on where they are, on
    /// how often or from how many threads it is called, or disagrees with its oracle.
    Nonconform = 9,
    /// The KAT reference manifest could not be read or does not parse (cyclescope's own
    /// status): nothing was compared, and the library is not to blame.
    #[serde(rename = "BADMANIFEST")]
    BadManifest = 10,
}

impl KatStatus {
    /// Severity: the harness's order, NONCONFORM right after PASS (its files match: any
    /// status of the files themselves says more), TAMPERED last.
    fn severity(self) -> u8 {
        match self {
            KatStatus::Pass => 0,
            KatStatus::Nonconform => 1,
            KatStatus::Mismatch => 2,
            KatStatus::Nokat => 3,
            // Nothing compared at all: more than a missing reference, less than any fault the
            // library itself showed.
            KatStatus::BadManifest => 4,
            KatStatus::Cryptofail => 5,
            KatStatus::Overflow => 6,
            KatStatus::Loadfail => 7,
            KatStatus::Timeout => 8,
            KatStatus::Crash => 9,
            KatStatus::Tampered => 10,
        }
    }
}

impl PartialOrd for KatStatus {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KatStatus {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.severity().cmp(&other.severity())
    }
}

impl KatStatus {
    /// The word in `RESULT` lines and logs (`PASS`, `MISMATCH`, …).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KatStatus::Pass => "PASS",
            KatStatus::Mismatch => "MISMATCH",
            KatStatus::Nokat => "NOKAT",
            KatStatus::Cryptofail => "CRYPTOFAIL",
            KatStatus::Overflow => "OVERFLOW",
            KatStatus::Loadfail => "LOADFAIL",
            KatStatus::Timeout => "TIMEOUT",
            KatStatus::Crash => "CRASH",
            KatStatus::Tampered => "TAMPERED",
            KatStatus::Nonconform => "NONCONFORM",
            KatStatus::BadManifest => "BADMANIFEST",
        }
    }

    /// Parses the word of a `RESULT` line (and of a record's `kat` field).
    pub fn from_word(word: &str) -> Option<Self> {
        <Self as strum::IntoEnumIterator>::iter().find(|s| s.as_str() == word)
    }

    /// The process exit code (= the index).
    pub fn exit_code(self) -> u8 {
        self as u8
    }

    pub fn is_pass(self) -> bool {
        self == KatStatus::Pass
    }

    /// Whether the status says something about the library: not for a pass, nor when there
    /// was nothing to compare with (NOKAT) or the references themselves are broken
    /// (BADMANIFEST). Frontends colour these as warnings, never as the library's fault.
    pub fn blames_library(self) -> bool {
        !matches!(
            self,
            KatStatus::Pass | KatStatus::Nokat | KatStatus::BadManifest
        )
    }

    /// The more severe of two statuses.
    pub fn worst(self, other: Self) -> Self {
        self.max(other)
    }

    /// What to do about it, in one sentence.
    pub fn hint(self) -> &'static str {
        match self {
            KatStatus::Pass => "the library reproduces its known-answer tests; it may be measured",
            KatStatus::Mismatch => {
                "the output differs from the submitted KAT: check the build flags, the instance \
                 (--kat-name, digest width) and endianness, or whether the reference is stale"
            }
            KatStatus::Nokat => {
                "nothing to compare against: add the instance to a kat.sha256 manifest \
                 (--manifest, or --write-manifest from trusted reference files) or pass --kat-dir"
            }
            KatStatus::Cryptofail => {
                "CryptHash returned an error: check that the catalog's digest width is one the \
                 library accepts, and the message length it failed on"
            }
            KatStatus::Overflow => {
                "CryptHash wrote outside its buffers (guard bytes changed): a memory-safety bug \
                 in the candidate; do not measure it until fixed"
            }
            KatStatus::Loadfail => {
                "the library did not load: check the path, that it is an ELF shared object for \
                 this machine exporting CryptHash, its missing dependencies (ldd), and the width"
            }
            KatStatus::Timeout => {
                "the KAT did not finish in time: raise --timeout (kat_timeout_s) for slow \
                 candidates, or look for an endless loop in the KAT file the result names"
            }
            KatStatus::Crash => {
                "the library crashed the worker process: generate the KAT file the result \
                 names under a debugger or sanitizer"
            }
            KatStatus::Tampered => {
                "the library wrote to the worker's protocol channel or changed its KAT files \
                 behind the worker: nothing it reports can be trusted; do not measure it"
            }
            KatStatus::Nonconform => {
                "a conformance check failed (the detail names it, the KAT log has its evidence): \
                 the library misbehaves where the KAT does not look; fix it before measuring, \
                 or time it anyway with --allow-kat-fail"
            }
            KatStatus::BadManifest => {
                "the KAT manifest cannot be read or does not parse (the detail names the file \
                 and line): restore or fix it (kat --write-manifest from trusted reference \
                 files writes a good one) and run the KAT again; the library was not tested"
            }
        }
    }
}

impl std::fmt::Display for KatStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A record's or `build.json`'s `kat` field: one of the eight statuses, or a word only the
/// harness writes there (`BUILDFAIL`, `PARTIAL`), kept verbatim so its files round-trip.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KatVerdict {
    Status(KatStatus),
    Other(String),
}

impl KatVerdict {
    /// True only for `PASS`: anything else is timed only when allowed, and flagged.
    pub fn is_pass(&self) -> bool {
        matches!(self, KatVerdict::Status(KatStatus::Pass))
    }
}

impl From<KatStatus> for KatVerdict {
    fn from(s: KatStatus) -> Self {
        KatVerdict::Status(s)
    }
}

impl std::fmt::Display for KatVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KatVerdict::Status(s) => f.write_str(s.as_str()),
            KatVerdict::Other(word) => f.write_str(word),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    #[test]
    fn exit_codes_are_the_harness_indices() {
        let words: Vec<(u8, &str)> = KatStatus::iter()
            .map(|s| (s.exit_code(), s.as_str()))
            .collect();
        assert_eq!(
            words,
            [
                (0, "PASS"),
                (1, "MISMATCH"),
                (2, "NOKAT"),
                (3, "CRYPTOFAIL"),
                (4, "OVERFLOW"),
                (5, "LOADFAIL"),
                (6, "TIMEOUT"),
                (7, "CRASH"),
                (8, "TAMPERED"),
                (9, "NONCONFORM"),
                (10, "BADMANIFEST")
            ]
        );
    }

    #[test]
    fn worst_is_the_maximum_and_words_round_trip() {
        assert_eq!(KatStatus::Pass.worst(KatStatus::Nokat), KatStatus::Nokat);
        assert_eq!(
            KatStatus::Crash.worst(KatStatus::Mismatch),
            KatStatus::Crash
        );
        assert_eq!(
            KatStatus::Pass.worst(KatStatus::Nonconform),
            KatStatus::Nonconform
        );
        assert_eq!(
            KatStatus::Nonconform.worst(KatStatus::Mismatch),
            KatStatus::Mismatch
        );
        assert_eq!(
            KatStatus::Nonconform.worst(KatStatus::Tampered),
            KatStatus::Tampered
        );
        for s in KatStatus::iter() {
            assert_eq!(KatStatus::from_word(s.as_str()), Some(s));
            assert!(!s.hint().is_empty());
            // Records carry the same word as the RESULT line.
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(
            KatStatus::Nokat.worst(KatStatus::BadManifest),
            KatStatus::BadManifest
        );
        assert_eq!(
            KatStatus::BadManifest.worst(KatStatus::Loadfail),
            KatStatus::Loadfail
        );
        assert!(!KatStatus::BadManifest.blames_library() && KatStatus::Loadfail.blames_library());
    }

    /// A KAT job that met a broken manifest is BADMANIFEST in the manifest's own words; only
    /// what kept the library from running is LOADFAIL.
    #[test]
    fn a_manifest_error_is_badmanifest_and_says_the_manifests_words() {
        use crate::kat::manifest::ManifestError;
        use crate::kat::run::KatError;
        let e = KatError::Manifest(ManifestError::Syntax {
            path: "m.sha256".into(),
            line: 1,
            message: "not a manifest line".into(),
        });
        assert_eq!(e.status(), KatStatus::BadManifest);
        assert_eq!(e.to_string(), "m.sha256:1: not a manifest line");
        let unreadable = KatError::Manifest(ManifestError::Read {
            path: "m.sha256".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        });
        assert_eq!(unreadable.status(), KatStatus::BadManifest);
        let io = KatError::Io {
            what: "cannot create",
            path: "K".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert_eq!(io.status(), KatStatus::Loadfail);
    }

    #[test]
    fn verdicts_keep_harness_only_words() {
        let v: KatVerdict = serde_json::from_str("\"BUILDFAIL\"").unwrap();
        assert_eq!(v, KatVerdict::Other("BUILDFAIL".into()));
        assert!(!v.is_pass());
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"BUILDFAIL\"");
        let pass: KatVerdict = serde_json::from_str("\"PASS\"").unwrap();
        assert_eq!(pass, KatVerdict::Status(KatStatus::Pass));
        assert!(pass.is_pass());
        assert_eq!(pass.to_string(), "PASS");
    }

    #[test]
    fn hints_point_only_at_what_a_result_shows() {
        // A TIMEOUT or CRASH result names the KAT file it stopped in (`… in KAT_2_23_x.txt`),
        // never a message length: the hints must not send the reader looking for one.
        for s in [KatStatus::Timeout, KatStatus::Crash] {
            assert!(!s.hint().contains("length"), "{s}: {}", s.hint());
            assert!(
                s.hint().contains("KAT file the result names"),
                "{s}: {}",
                s.hint()
            );
        }
    }
}
