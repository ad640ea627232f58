//! What the worker says about the library and itself, checked and turned into the record's
//! words: its metadata from `ready`, its reason for not loading, the `ngcc_perf` META block,
//! and the command line the process record shows.

use std::path::Path;

use serde_json::{Map, Value};

use super::WorkerInfo;
use crate::catalog::Instance;
use crate::measure::stats::Trial;
use crate::measure::trial::{LoadStage, TrialSpec};
use crate::plugin::{NgccMeta, PluginError};

/// The library's metadata from the worker's `ready`, decoded and checked here as for any
/// library the engine loads, and held against the catalog's width.
pub(crate) fn worker_meta(
    spec: &TrialSpec,
    block: Option<String>,
    build_flags: Option<String>,
) -> Result<Option<NgccMeta>, PluginError> {
    let Some(block) = block else {
        return Ok(None);
    };
    let bad_hex = |what: &str| PluginError::BadMetadata {
        path: spec.library.clone(),
        detail: format!("the worker sent {what} that is not hex"),
    };
    let block = hex::decode(block).map_err(|_| bad_hex("a block"))?;
    let flags = build_flags
        .map(hex::decode)
        .transpose()
        .map_err(|_| bad_hex("build flags"))?;
    let meta = crate::plugin::meta_from_block(&spec.library, &block, flags.as_deref())?;
    if !spec.any_width {
        crate::plugin::check_digest_bits(&spec.library, Some(&meta), spec.digest_bits)?;
    }
    Ok(Some(meta))
}

/// The worker's reason for not measuring, in the loader's words.
pub(crate) fn load_error(spec: &TrialSpec, stage: LoadStage, detail: String) -> String {
    let path = spec.library.clone();
    match stage {
        LoadStage::Load => PluginError::Dlopen { path, detail }.to_string(),
        LoadStage::Symbol if spec.abi.is_iccs() => PluginError::MissingSymbol { path }.to_string(),
        LoadStage::Symbol => PluginError::MissingSupercopSymbol { path }.to_string(),
        LoadStage::Memory | LoadStage::Sampler | LoadStage::Go | LoadStage::Table => detail,
    }
}

/// The META block of `ngcc_perf`, values as strings, in its order.
pub(super) fn process_meta(
    inst: &Instance,
    spec: &TrialSpec,
    info: Option<&WorkerInfo>,
    trials: &[Trial],
    peak: Option<u64>,
) -> Map<String, Value> {
    let meta = info.and_then(|i| i.meta.as_ref());
    let mut m = Map::new();
    let mut put = |k: &str, v: String| {
        m.insert(k.into(), Value::String(v));
    };
    put("id", inst.candidate.clone());
    put("instance", inst.label.clone());
    put(
        "variant",
        meta.map_or_else(|| inst.variant.clone(), |m| m.variant.clone()),
    );
    put("operation", "hash".into());
    put("input_bytes", spec.input_bytes.to_string());
    put(
        "build_flags",
        meta.map(|m| m.build_flags.clone()).unwrap_or_default(),
    );
    put(
        "baseline_rss_bytes",
        info.map_or(0, |i| i.baseline_rss_bytes).to_string(),
    );
    for k in [
        "pk_bytes",
        "sk_bytes",
        "ct_bytes",
        "ss_bytes",
        "signature_bytes",
    ] {
        put(k, "0".into());
    }
    put("digest_bytes", (inst.digest_bits / 8).to_string());
    put("mode", "fixed_iterations".into());
    let perf = info.is_some_and(|i| i.core_cycles);
    put(
        "cpu_cycles_available",
        if perf { "yes" } else { "no" }.into(),
    );
    put("timing_scope", "loop".into());
    put("warmups", spec.warmups.to_string());
    if let Some(p) = peak {
        let n: u64 = trials.iter().map(|t| t.measurements).sum();
        put("peak_rss_bytes", p.to_string());
        put("measurement_count", n.to_string());
        put(
            "guide_100_measurements",
            if n >= 100 { "met" } else { "not_met" }.into(),
        );
    }
    m
}

/// The worker's command line as the record keeps it: the program by its file name, and the
/// library named as `library` does (relative to the working folder), so the evidence carries
/// no absolute home or temp paths.
pub(super) fn recorded_command(
    exe: &Path,
    library: &Path,
    args: Vec<String>,
    loaded: &Path,
) -> Vec<String> {
    let program = exe
        .file_name()
        .map_or("cyclescope".into(), |n| n.to_string_lossy().into_owned());
    let shown = crate::catalog::display_path(library);
    let mut command = vec![program, "worker".to_string()];
    command.extend(args.into_iter().map(|a| {
        if Path::new(&a) == loaded {
            shown.clone()
        } else {
            a
        }
    }));
    command
}
