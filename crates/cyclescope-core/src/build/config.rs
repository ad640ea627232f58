//! The build sections of `config.toml` (documented in docs/config.md): `[build]` (compiler,
//! default profile, cache folder, compiler time limit, ICCS API folder), `[profiles]` (named
//! flag sets) and `[[submission]]` (per-candidate source settings: the source root, extra
//! source globs and include folders, each overridable per instance). The catalog parser owns
//! the rest of the file and skips these sections; this module skips the catalog's. Unknown
//! keys inside these sections are refused with their line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::BuildError;

/// The compiler's time limit when the config sets none.
const DEFAULT_COMPILE_TIMEOUT_S: f64 = 300.0;

/// The smallest compiler address-space limit accepted, in MiB.
pub const MIN_COMPILER_MEMORY_MIB: u64 = 64;

/// The build settings of one config file.
#[derive(Debug, Clone, Default)]
pub struct BuildConfig {
    pub build: BuildSection,
    /// Named flag sets, `name = "-O3 -march=native"`.
    pub profiles: BTreeMap<String, String>,
    pub submissions: Vec<SubmissionSettings>,
    /// The config file's folder: relative paths in it resolve against this.
    pub base: PathBuf,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildSection {
    /// The C compiler command (default `cc`); `--cc` overrides.
    pub cc: Option<String>,
    /// The profile used without `--profile`/`--cflags` (default `guide`).
    pub profile: Option<String>,
    /// Where built libraries are cached (default: `$XDG_CACHE_HOME/cyclescope/build`).
    pub cache_dir: Option<PathBuf>,
    /// Seconds one compiler run may take before it is killed (default 300).
    pub timeout_s: Option<f64>,
    /// The address space one compiler process may take, in MiB (default 2048);
    /// `--max-compiler-memory` overrides.
    pub max_compiler_memory_mib: Option<u64>,
    /// A folder holding the official ICCS `auxfunc.c`/`auxfunc.h`: built as candidate `iccs-c`.
    pub iccs_api: Option<PathBuf>,
}

/// How to build one candidate whose instances do not compile on their own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmissionSettings {
    /// The candidate id (`hash-NN`); `--id` selects these settings.
    pub id: String,
    pub algorithm: Option<String>,
    /// The submission's top folder (relative to the config file); building this folder picks
    /// these settings too.
    pub root: Option<PathBuf>,
    /// Extra source globs, relative to the root, compiled into every instance.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Include folders, relative to the root.
    #[serde(default)]
    pub include_dirs: Vec<String>,
    #[serde(default, rename = "instance")]
    pub instances: Vec<InstanceOverride>,
}

/// Settings of one instance, replacing the candidate's list they name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceOverride {
    /// `ALGORITHM_INSTANCE`, or the instance folder relative to the root.
    pub name: String,
    pub sources: Option<Vec<String>>,
    pub include_dirs: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildFile {
    #[serde(default)]
    build: BuildSection,
    #[serde(default)]
    profiles: BTreeMap<String, String>,
    #[serde(default, rename = "submission")]
    submissions: Vec<SubmissionSettings>,
    // The catalog's sections, read by `catalog::config`.
    #[serde(default, rename = "settings")]
    _settings: Option<IgnoredAny>,
    #[serde(default, rename = "candidate")]
    _candidate: Option<IgnoredAny>,
    #[serde(default, rename = "slurm")]
    _slurm: Option<IgnoredAny>,
    // The workbench's key table, read by the binary's keymap.
    #[serde(default, rename = "keys")]
    _keys: Option<IgnoredAny>,
}

/// Reads the build sections of `path` (None: no config file, defaults only).
pub fn load_build_config(path: Option<&Path>) -> Result<BuildConfig, BuildError> {
    let Some(path) = path else {
        return Ok(BuildConfig {
            base: PathBuf::from("."),
            ..BuildConfig::default()
        });
    };
    let text = std::fs::read_to_string(path).map_err(|source| BuildError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    parse_build_config(&text, path, base)
}

pub(crate) fn parse_build_config(
    text: &str,
    path: &Path,
    base: PathBuf,
) -> Result<BuildConfig, BuildError> {
    let invalid = |detail: String| BuildError::Config {
        path: path.to_path_buf(),
        detail,
    };
    let file: BuildFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        invalid(format!("line {line}: {}", e.message().trim_end()))
    })?;
    if let Some(t) = file.build.timeout_s {
        crate::catalog::bounds::KAT_TIMEOUT
            .check(t)
            .map_err(|e| invalid(format!("build.timeout_s: {e}")))?;
    }
    if file
        .build
        .max_compiler_memory_mib
        .is_some_and(|m| m < MIN_COMPILER_MEMORY_MIB)
    {
        return Err(invalid(format!(
            "build.max_compiler_memory_mib: below {MIN_COMPILER_MEMORY_MIB} MiB no compiler starts"
        )));
    }
    for name in file.profiles.keys() {
        crate::name::SafeName::new("profile name", name)
            .map_err(|e| invalid(format!("profiles: {e}")))?;
    }
    for s in &file.submissions {
        crate::name::SafeName::new("candidate id", &s.id)
            .map_err(|e| invalid(format!("submission: {e}")))?;
    }
    Ok(BuildConfig {
        build: file.build,
        profiles: file.profiles,
        submissions: file.submissions,
        base,
    })
}

impl BuildConfig {
    pub(crate) fn compile_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.build.timeout_s.unwrap_or(DEFAULT_COMPILE_TIMEOUT_S))
    }

    /// The compiler's address-space limit in MiB: configured, else the default.
    pub fn max_compiler_memory_mib(&self) -> u64 {
        self.build
            .max_compiler_memory_mib
            .unwrap_or(super::DEFAULT_MEMORY_MIB)
    }

    /// The configured compiler, else `cc`.
    pub fn cc(&self) -> String {
        self.build.cc.clone().unwrap_or_else(|| "cc".into())
    }

    /// The cache folder: configured (relative to the config file), else the default.
    pub fn cache_dir(&self) -> PathBuf {
        match &self.build.cache_dir {
            Some(p) => self.base.join(p),
            None => super::default_cache_dir(),
        }
    }

    /// The configured ICCS API folder, resolved against the config file.
    pub fn iccs_api(&self) -> Option<PathBuf> {
        self.build.iccs_api.as_ref().map(|p| self.base.join(p))
    }

    /// The root folder of a configured submission, resolved.
    pub fn root_of(&self, s: &SubmissionSettings) -> Option<PathBuf> {
        s.root.as_ref().map(|r| self.base.join(r))
    }

    /// The submission settings for `src`: those whose `id` is `id`, else those whose root is
    /// `src` (compared as canonical paths).
    pub(crate) fn submission_for(
        &self,
        src: &Path,
        id: Option<&str>,
    ) -> Option<&SubmissionSettings> {
        if let Some(id) = id
            && let Some(s) = self.submissions.iter().find(|s| s.id == id)
        {
            return Some(s);
        }
        let src = std::fs::canonicalize(src).ok()?;
        self.submissions.iter().find(|s| {
            self.root_of(s)
                .and_then(|r| std::fs::canonicalize(r).ok())
                .is_some_and(|r| r == src)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BuildConfig, BuildError> {
        parse_build_config(text, Path::new("c.toml"), PathBuf::from("/base"))
    }

    #[test]
    fn sections_are_read_and_the_catalog_is_skipped() {
        let c = parse(
            "[settings]\ntrials = 5\n[[candidate]]\nid=\"x\"\nalgorithm=\"X\"\n\
             [build]\ncc = \"gcc\"\ncache_dir = \"cache\"\n[profiles]\nnative = \"-O3 -march=native\"\n\
             [[submission]]\nid = \"hash-97\"\nroot = \"sub\"\nsources = [\"lib/*.c\"]\ninclude_dirs = [\"lib\"]\n\
             [[submission.instance]]\nname = \"SHL-512\"\nsources = [\"lib/w512/*.c\"]\n",
        )
        .unwrap();
        assert_eq!(c.cc(), "gcc");
        assert_eq!(c.cache_dir(), Path::new("/base/cache"));
        assert_eq!(c.profiles["native"], "-O3 -march=native");
        let s = &c.submissions[0];
        assert_eq!(c.root_of(s).unwrap(), Path::new("/base/sub"));
        assert_eq!(
            s.instances[0].sources.as_deref(),
            Some(&["lib/w512/*.c".to_string()][..])
        );
        assert!(s.instances[0].include_dirs.is_none());
    }

    #[test]
    fn unknown_keys_and_bad_names_are_refused() {
        for (text, needle) in [
            ("[build]\ncompiler = \"gcc\"\n", "line 2"),
            ("[profiles]\n\"../x\" = \"-O2\"\n", "profile name"),
            ("[[submission]]\nid = \"a/b\"\n", "candidate id"),
            ("[build]\ntimeout_s = -1.0\n", "build.timeout_s"),
            (
                "[build]\nmax_compiler_memory_mib = 1\n",
                "build.max_compiler_memory_mib",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
