//! The content-addressed build cache: a library is stored under the SHA-256 of everything
//! that went into it — the compiler's identity and version text, the full argument list, the
//! shim source and export list, and the contents of the sources and of the headers beside
//! them (the instance folder, the include folders, the folders of extra sources). An
//! unchanged instance is taken from the cache instead of compiled again. Entries are written
//! in a private staging folder and renamed into place whole, so a killed build never leaves
//! a half entry; failed builds keep their log under `failed/<key>/`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::compile::{self, Toolchain, Workplace};
use super::stage::Stage;
use super::{BuildError, BuildStatus, FlagProfile, InstanceBuild, InstanceSource, shim};

/// Bumped when the layout of entries or the key's inputs change.
const CACHE_FORMAT: &str = "cyclescope-build-cache-1";
const LIBRARY: &str = "lib.so";
const LOG: &str = "build.log";
/// The compiler's private folder in a staging folder, when it runs unprivileged (`stage`).
const WORK: &str = "work";

/// `build` in cyclescope's cache folder, the one the bundled libraries use
/// (`$CYCLESCOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/cyclescope`, else `~/.cache/cyclescope`).
pub fn default_cache_dir() -> PathBuf {
    crate::catalog::bundled::cache_roots()
        .into_iter()
        .next()
        .unwrap_or_else(std::env::temp_dir)
        .join("build")
}

/// Builds `inst`, or finds it in the cache.
pub(crate) fn build_cached(
    inst: InstanceSource,
    toolchain: &Toolchain,
    profile: &FlagProfile,
    cache_dir: &Path,
) -> InstanceBuild {
    let start = Instant::now();
    let mut found = Found::default();
    let result = build_inner(&inst, toolchain, profile, cache_dir, &mut found);
    let mut out = InstanceBuild {
        source: inst,
        status: BuildStatus::Failed,
        library: found.library,
        log: found.log,
        warnings: Vec::new(),
        error: None,
        key: found.key,
        seconds: 0.0,
    };
    match result {
        Ok(status) => out.status = status,
        Err(e) => out.error = Some(e),
    }
    if let Some(log) = &out.log {
        out.warnings = compile::warnings(&std::fs::read_to_string(log).unwrap_or_default());
    }
    out.seconds = start.elapsed().as_secs_f64();
    out
}

/// What a build left behind, whether it succeeded or not.
#[derive(Default)]
struct Found {
    key: String,
    library: Option<PathBuf>,
    log: Option<PathBuf>,
}

fn build_inner(
    inst: &InstanceSource,
    toolchain: &Toolchain,
    profile: &FlagProfile,
    cache_dir: &Path,
    out: &mut Found,
) -> Result<BuildStatus, BuildError> {
    // A cache folder another user can write could hand root a library of theirs to load.
    crate::owned::own_cache_folder(cache_dir).map_err(|e| BuildError::OutputNotWritable {
        path: cache_dir.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let shim_text = shim::source(inst, toolchain, profile);
    // The key sees the arguments with a placeholder for the staging folder, which differs
    // between runs.
    let placeholder = Path::new("@staging");
    let args = toolchain.arguments(
        inst,
        profile,
        placeholder,
        &placeholder.join(LIBRARY),
        &Path::to_path_buf,
    );
    let key = key(inst, toolchain, &args, &shim_text)?;
    out.key = key.clone();
    let entry = cache_dir.join("objects").join(&key);
    if entry.join(LIBRARY).is_file() && entry.join(LOG).is_file() {
        out.library = Some(entry.join(LIBRARY));
        out.log = Some(entry.join(LOG));
        return Ok(BuildStatus::Cached);
    }
    let staging = staging_dir(cache_dir, &key)?;
    let result = compile_into(inst, toolchain, profile, &staging, &shim_text);
    match result {
        Ok(()) => {
            let parent = cache_dir.join("objects");
            std::fs::create_dir_all(&parent).map_err(super::io_err("cannot create", &parent))?;
            if let Err(e) = std::fs::rename(&staging, &entry) {
                // Another build of the same key won the race: its entry is as good as ours.
                let _ = std::fs::remove_dir_all(&staging);
                if !entry.join(LIBRARY).is_file() {
                    return Err(BuildError::Io {
                        what: "cannot store the build in",
                        path: entry,
                        source: e,
                    });
                }
            }
            out.library = Some(entry.join(LIBRARY));
            out.log = Some(entry.join(LOG));
            Ok(BuildStatus::Built)
        }
        Err(e) => {
            let failed = cache_dir.join("failed").join(&key);
            let _ = std::fs::remove_dir_all(&failed);
            let kept = std::fs::create_dir_all(cache_dir.join("failed")).is_ok()
                && std::fs::rename(&staging, &failed).is_ok();
            if kept {
                out.log = Some(failed.join(LOG));
            } else {
                let _ = std::fs::remove_dir_all(&staging);
            }
            Err(e)
        }
    }
}

fn compile_into(
    inst: &InstanceSource,
    toolchain: &Toolchain,
    profile: &FlagProfile,
    dir: &Path,
    shim_text: &str,
) -> Result<(), BuildError> {
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(super::io_err("cannot write", &p))
    };
    write("ngcc_shim.c", shim_text)?;
    write("exports.map", shim::EXPORTS_MAP)?;
    let args = toolchain.arguments(inst, profile, dir, &dir.join(LIBRARY), &Path::to_path_buf);
    let log = dir.join(LOG);
    // The log names the command as if run in place, whatever the compiler saw (`stage`).
    let mut header = format!("$ {}", toolchain.cc());
    for a in &args {
        header.push(' ');
        header.push_str(a);
    }
    header.push('\n');
    std::fs::write(&log, header).map_err(super::io_err("cannot write", &log))?;
    let Some(identity) = toolchain.staging_identity() else {
        return toolchain.compile(inst, &args, &log, Workplace::InPlace { dir });
    };
    let stage = Stage::create(inst, &dir.join(WORK), identity)?;
    stage.write("ngcc_shim.c", shim_text)?;
    stage.write("exports.map", shim::EXPORTS_MAP)?;
    let mut args = toolchain.arguments(inst, profile, Path::new(""), Path::new(LIBRARY), &|p| {
        stage.path_of(p)
    });
    args.extend(stage.prefix_maps());
    toolchain.compile(inst, &args, &log, Workplace::Staged(&stage))?;
    stage.take(LIBRARY, &dir.join(LIBRARY))
}

fn staging_dir(cache_dir: &Path, key: &str) -> Result<PathBuf, BuildError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = cache_dir
        .join("tmp")
        .join(format!("{key}.{}.{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|source| BuildError::OutputNotWritable {
        path: cache_dir.to_path_buf(),
        source,
    })?;
    Ok(dir)
}

/// The cache key of one build.
fn key(
    inst: &InstanceSource,
    toolchain: &Toolchain,
    args: &[String],
    shim_text: &str,
) -> Result<String, BuildError> {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(CACHE_FORMAT.as_bytes());
    field(toolchain.cc().as_bytes());
    field(toolchain.identity().as_bytes());
    field(toolchain.version_text().as_bytes());
    for a in args {
        field(a.as_bytes());
    }
    field(shim_text.as_bytes());
    field(shim::EXPORTS_MAP.as_bytes());
    for path in inputs(inst) {
        let bytes = std::fs::read(&path).map_err(|source| BuildError::Read {
            path: path.clone(),
            source,
        })?;
        field(path.to_string_lossy().as_bytes());
        field(&Sha256::digest(&bytes));
    }
    Ok(hex::encode(h.finalize()))
}

/// The files a build may read: its sources, and every file directly in the instance folder,
/// the include folders and the folders of its sources (headers are found there).
pub(crate) fn inputs(inst: &InstanceSource) -> Vec<PathBuf> {
    let mut dirs: Vec<&Path> = vec![inst.folder.as_path()];
    dirs.extend(inst.include_dirs.iter().map(PathBuf::as_path));
    dirs.extend(inst.sources.iter().filter_map(|s| s.parent()));
    let mut files: Vec<PathBuf> = inst.sources.clone();
    for d in dirs {
        if let Ok(entries) = std::fs::read_dir(d) {
            files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
        }
    }
    files.sort();
    files.dedup();
    files
}
