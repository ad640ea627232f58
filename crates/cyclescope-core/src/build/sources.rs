//! Which files an instance is compiled from: the harness's rule (spec §1.2: every `*.c *.cpp
//! *.cc *.S` directly in the instance folder, minus the names of test drivers, KAT generators
//! and benchmarks) plus the candidate's configured extra globs and include folders, with a
//! per-instance override. Only lists paths; it never reads or compiles them.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::BuildError;
use super::config::SubmissionSettings;

/// The harness's excluded names (`api/link_rules.mk`), as it writes them.
static EXCLUDED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(KAT_|PQCgenKAT|main|test|bench|speed|cpucycles|osfreq|run_bench|selftest|self_test|example|demo|kat\.c|kat_)|(_test|test_|_bench|bench_|_main|_kat)\.",
    )
    .expect("the exclusion pattern is a valid regex")
});

/// Source suffixes the harness compiles.
const SUFFIXES: [&str; 4] = [".c", ".cpp", ".cc", ".S"];

/// True when the harness compiles a file of this name found directly in an instance folder.
pub(crate) fn harness_compiles(name: &str) -> bool {
    SUFFIXES.iter().any(|s| name.ends_with(s)) && !EXCLUDED.is_match(name)
}

/// The files and include folders of one instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SourceSet {
    pub(crate) files: Vec<PathBuf>,
    pub(crate) include_dirs: Vec<PathBuf>,
}

/// The harness's files of `folder`, then the configured extras (globs and folders relative to
/// `root`; an instance entry named by `instance` or by its folder relative to `root` replaces
/// the candidate's list it sets).
pub(crate) fn select(
    folder: &Path,
    root: &Path,
    instance: &str,
    settings: Option<&SubmissionSettings>,
) -> Result<SourceSet, BuildError> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(folder).map_err(|source| BuildError::Read {
        path: folder.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| BuildError::Read {
            path: folder.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // Metadata follows a link: a linked source file counts, a linked folder does not.
        if harness_compiles(name) && entry.path().is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    let mut include_dirs = Vec::new();
    if let Some(s) = settings {
        let rel = folder
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let own = s
            .instances
            .iter()
            .find(|o| o.name == instance || o.name == rel);
        let globs = own.and_then(|o| o.sources.as_ref()).unwrap_or(&s.sources);
        for pattern in globs {
            let mut matched = expand(root, pattern)?;
            matched.retain(|p| !files.contains(p));
            files.extend(matched);
        }
        let dirs = own
            .and_then(|o| o.include_dirs.as_ref())
            .unwrap_or(&s.include_dirs);
        include_dirs = dirs.iter().map(|d| root.join(d)).collect();
    }
    if files.is_empty() {
        return Err(BuildError::NoSources {
            folder: folder.to_path_buf(),
        });
    }
    Ok(SourceSet {
        files,
        include_dirs,
    })
}

/// The files `pattern` (relative to `root`) matches, sorted. A pattern that matches nothing is
/// an error: a silently smaller library would fail later with an undefined symbol.
fn expand(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, BuildError> {
    let bad = |detail: String| BuildError::BadGlob {
        pattern: pattern.to_string(),
        detail,
    };
    if Path::new(pattern).is_absolute() {
        return Err(bad("must be relative to the submission's root".into()));
    }
    let full = root.join(pattern);
    let full = full.to_str().ok_or_else(|| bad("not UTF-8".into()))?;
    let mut out = Vec::new();
    for entry in glob::glob(full).map_err(|e| bad(e.to_string()))? {
        let path = entry.map_err(|e| bad(e.to_string()))?;
        if path.is_file() {
            out.push(path);
        }
    }
    if out.is_empty() {
        return Err(bad(format!("matches no file under {}", root.display())));
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_rule_keeps_sources_and_drops_drivers() {
        for keep in ["hash.c", "impl.cpp", "x.cc", "asm.S", "kat2.c", "contest.c"] {
            assert!(harness_compiles(keep), "{keep}");
        }
        for drop in [
            "main.c",
            "KAT_CryptHash.c",
            "PQCgenKAT_sign.c",
            "test.c",
            "testing.c",
            "bench.c",
            "speed.c",
            "fixh_test.c",
            "test_vectors.c",
            "x_bench.c",
            "run_main.c",
            "kat.c",
            "my_kat.c",
            "hash.h",
            "hash.s",
        ] {
            assert!(!harness_compiles(drop), "{drop}");
        }
    }
}
