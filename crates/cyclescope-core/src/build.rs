//! Building instances from NGCC submission sources, the harness's way: find every instance
//! folder of a submission tree (`discover`), pick its sources by the harness's rule plus the
//! candidate's configured extras (`sources`, `config`), compile each into a shared library with
//! the system C compiler and a metadata shim cyclescope writes itself (`shim`, `compile`),
//! reuse an unchanged build from a content-addressed cache (`cache`), and lay the libraries out
//! as an ngcc-harness tree with its `build.json` and a KAT manifest made from the submission's
//! own KAT files (`tree`). It never runs a submission's Makefile or any code of the submission:
//! the compiler is the only program it starts, always in a process group of its own, bounded
//! in time and killed whole.
//!
//! The surface used by the frontends: [`BuildConfig`] (from `config.toml`), [`discover`],
//! [`FlagProfile`], [`Toolchain`], [`build_all`] (one [`InstanceBuild`] per instance) and
//! [`write_tree`]; [`build_tree`] does all of it for `cyclescope build` and `--src`.

mod cache;
pub(crate) mod compile;
pub mod config;
mod discover;
mod header;
pub mod iccs_api;
mod jail;
mod links;
mod profile;
mod shim;
mod shipped_kat;
mod sources;
mod stage;
mod tree;

pub use cache::default_cache_dir;
pub use compile::Toolchain;
pub use config::{BuildConfig, SubmissionSettings, load_build_config};
pub use discover::{InstanceSource, Unusable, discover};
pub use jail::{CompilerUser, DEFAULT_MEMORY_MIB, JailGap};
pub use profile::{FlagProfile, ProfileChoice};
pub use tree::{GivenReferences, TreeSummary, write_tree};

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::name::NameError;

/// Why an instance (or a whole build) could not be built. Per-instance errors end that
/// instance only; the others are still built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{0} does not exist or is not a folder")]
    NoSuchSource(PathBuf),
    #[error("no instance under {0}: no folder holds CryptHash_AlgorithmInstance.h")]
    NoInstances(PathBuf),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{header}: no `#define {name}` (the ICCS instance header must define it)")]
    MissingDefine { header: PathBuf, name: &'static str },
    #[error("{header}: `#define {name} {value}` is not usable: {why}")]
    BadDefine {
        header: PathBuf,
        name: &'static str,
        value: String,
        why: String,
    },
    #[error("{folder}: no source files (*.c *.cpp *.cc *.S after the harness's exclusions)")]
    NoSources { folder: PathBuf },
    #[error("{folder}: {source}")]
    BadName { folder: PathBuf, source: NameError },
    #[error("{first} and {second} both give instance label {label:?}")]
    DuplicateLabel {
        label: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("source glob {pattern:?}: {detail}")]
    BadGlob { pattern: String, detail: String },
    #[error("configured instance {name:?} of candidate {id} matches no instance folder")]
    UnknownOverride { id: String, name: String },
    #[error("unknown flag profile {name:?} (known: {known})")]
    UnknownProfile { name: String, known: String },
    #[error("flags {flags:?} cannot be split into words: unbalanced quotes")]
    BadFlags { flags: String },
    #[error("C compiler {cc:?} cannot be run: {source}")]
    CompilerMissing { cc: String, source: std::io::Error },
    #[error(
        "C compiler {cc:?} cannot be run as uid {uid} (as root, cyclescope runs the compiler \
         as an unprivileged user: install it where every user may read and run it): {source}"
    )]
    CompilerDenied {
        cc: String,
        uid: u32,
        source: std::io::Error,
    },
    #[error("C compiler {cc:?} does not work: {detail}")]
    CompilerUnusable { cc: String, detail: String },
    #[error("{label}: the compiler failed (exit {code}):\n{excerpt}")]
    CompileFailed {
        label: String,
        code: String,
        excerpt: String,
    },
    #[error(
        "{label}: the compiler ran out of memory (its limit is {limit_mib} MiB per process: \
         --max-compiler-memory or [build] max_compiler_memory_mib raise it):\n{excerpt}"
    )]
    CompileOutOfMemory {
        label: String,
        limit_mib: u64,
        excerpt: String,
    },
    #[error("{label}: the compiler could not be jailed: {detail}")]
    Jail { label: String, detail: String },
    #[error(
        "{link} links to a file outside the submission tree (in {target_folder}): refused, \
         the compiler reads only the submission's own files"
    )]
    LinkOutOfTree {
        link: PathBuf,
        target_folder: PathBuf,
    },
    #[error("{label}: the compiler ran longer than {} s and was killed", .limit.as_secs())]
    CompileTimeout { label: String, limit: Duration },
    #[error("output folder {path} cannot be written: {source}")]
    OutputNotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {detail}")]
    Config { path: PathBuf, detail: String },
}

pub(crate) fn io_err(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BuildError {
    let path = path.to_path_buf();
    move |source| BuildError::Io { what, path, source }
}

/// How an instance's library came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BuildStatus {
    /// Compiled now.
    Built,
    /// Taken from the cache: same sources, compiler, flags and shim as an earlier build.
    Cached,
    /// Not built; `InstanceBuild::error` says why.
    Failed,
}

/// The outcome of one instance.
#[derive(Debug)]
pub struct InstanceBuild {
    pub source: InstanceSource,
    pub status: BuildStatus,
    /// The library (in the cache) when built or cached.
    pub library: Option<PathBuf>,
    /// The compiler's full output, kept next to the library.
    pub log: Option<PathBuf>,
    /// The compiler's warning lines (`warning:`), in order.
    pub warnings: Vec<String>,
    pub error: Option<BuildError>,
    /// The cache key (sha256 over sources, compiler, flags and shim), hex.
    pub key: String,
    pub seconds: f64,
}

impl InstanceBuild {
    /// The first lines of the compiler's complaint (error or warnings), for one-screen views.
    pub fn excerpt(&self, lines: usize) -> Vec<String> {
        match &self.error {
            Some(e) => e
                .to_string()
                .lines()
                .take(lines)
                .map(String::from)
                .collect(),
            None => self.warnings.iter().take(lines).cloned().collect(),
        }
    }
}

/// What to build and where.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// Submission trees (or instance folders).
    pub sources: Vec<PathBuf>,
    /// Candidate id (`--id`); else the configured submission's, else the tree's folder name.
    pub id: Option<String>,
    pub profile: ProfileChoice,
    /// The C compiler command (`--cc`).
    pub cc: String,
    /// The ngcc-harness tree to write.
    pub out: PathBuf,
    /// Run the default KAT of every built instance and record it in build.json.
    pub kat: bool,
    /// An ICCS API folder (`auxfunc.c`/`auxfunc.h`): also build candidate `iccs-c` from it.
    pub iccs_api: Option<PathBuf>,
    /// A kat.sha256 manifest (`--manifest`) written into each candidate's manifest in the
    /// tree, beside what the shipped KAT files give.
    pub manifest: Option<PathBuf>,
    /// A folder of reference KAT files (`--kat-dir`): the files it holds for an instance
    /// (at DIR/<label>/ or DIR/) are digested into its candidate's manifest, as shipped ones.
    pub kat_dir: Option<PathBuf>,
}

/// Builds every instance of `instances` with `toolchain` and `profile`, one compiler job per
/// core, reusing the cache under `cache_dir`. `on_done` sees each instance as it finishes
/// (from a build thread). A failing instance never stops the others.
pub fn build_all(
    instances: Vec<InstanceSource>,
    toolchain: &Toolchain,
    profile: &FlagProfile,
    cache_dir: &Path,
    on_done: &(dyn Fn(&InstanceBuild) + Sync),
) -> Vec<InstanceBuild> {
    let jobs = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(instances.len().max(1));
    let queue = Mutex::new(instances.into_iter().enumerate().collect::<Vec<_>>());
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    // A poisoned lock means another build thread panicked: stop taking work.
                    let next = match queue.lock() {
                        Ok(mut q) => q.pop(),
                        Err(_) => None,
                    };
                    let Some((index, inst)) = next else { break };
                    let built = cache::build_cached(inst, toolchain, profile, cache_dir);
                    on_done(&built);
                    if let Ok(mut d) = done.lock() {
                        d.push((index, built));
                    }
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_default();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, b)| b).collect()
}

/// The tree `--src` builds into: `<cache>/trees/<hash>`, one per source folder, candidate
/// id, flag choice and compiler, so that switching between them keeps each tree.
pub fn src_tree_dir(
    cache_dir: &Path,
    src: &Path,
    id: Option<&str>,
    profile: &ProfileChoice,
    cc: &str,
) -> PathBuf {
    use sha2::Digest as _;
    let canonical = std::fs::canonicalize(src).unwrap_or_else(|_| src.to_path_buf());
    let tag = sha2::Sha256::digest(
        format!("{}\0{id:?}\0{profile:?}\0{cc}", canonical.display()).as_bytes(),
    );
    cache_dir.join("trees").join(&hex::encode(tag)[..16])
}

/// Everything `cyclescope build` does: discover, build, write the tree (and KAT-check it when
/// asked). Discovery problems of single folders come back in `unusable`; only a
/// problem that stops everything (no compiler, no instance at all, an unwritable output
/// folder) is an `Err`.
pub fn build_tree(
    request: &BuildRequest,
    config: &BuildConfig,
    cache_dir: &Path,
    on_done: &(dyn Fn(&InstanceBuild) + Sync),
) -> Result<TreeSummary, BuildError> {
    let profile = FlagProfile::choose(&request.profile, config)?;
    let toolchain = Toolchain::probe(
        &request.cc,
        config.compile_timeout(),
        config.max_compiler_memory_mib(),
    )?;
    tree::check_writable(&request.out)?;
    let mut found = Vec::new();
    let mut unusable = Vec::new();
    for src in &request.sources {
        let (ok, bad) = discover(src, request.id.as_deref(), config)?;
        found.extend(ok);
        unusable.extend(bad);
    }
    if let Some(api) = &request.iccs_api {
        found.extend(iccs_api::iccs_instances(
            api,
            &cache_dir.join(iccs_api::ICCS_C_ID),
        )?);
    }
    let (found, duplicates) = discover::unique_labels(found);
    unusable.extend(duplicates);
    let builds = build_all(found, &toolchain, &profile, cache_dir, on_done);
    let mut summary = write_tree(
        &request.out,
        builds,
        unusable,
        &profile,
        &toolchain,
        request.kat,
        tree::GivenReferences {
            manifest: request.manifest.as_deref(),
            kat_dir: request.kat_dir.as_deref(),
        },
    )?;
    summary.jail_gaps = toolchain.jail_gaps().to_vec();
    summary.compiler_user = Some(toolchain.compiler_user());
    Ok(summary)
}
