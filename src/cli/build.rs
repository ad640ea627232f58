//! `cyclescope build`: NGCC submission sources → an ngcc-harness tree (libraries, build.json,
//! kat.sha256 from the submission's KAT files, build logs), each instance KAT-checked. Also the
//! `--src` of the instance-taking commands, which builds into the cache first. Building is the
//! engine's (`build`); this frontend chooses config, profile and compiler and prints each
//! instance as it finishes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;

use super::select::SourceArgs;
use super::select::config_path;
use crate::build::{
    self, BuildConfig, BuildRequest, BuildStatus, InstanceBuild, ProfileChoice, TreeSummary,
};

/// Lines of a compiler complaint shown per instance.
const EXCERPT_LINES: usize = 4;

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Submission source trees (every folder with CryptHash_AlgorithmInstance.h is an
    /// instance); may be left out when --id names a [[submission]] with a root.
    #[arg(value_name = "SRC")]
    pub sources: Vec<PathBuf>,
    /// Candidate id (e.g. hash-99); default: the config's [[submission]], else the folder name.
    #[arg(long, value_parser = super::arg_value::name)]
    pub id: Option<String>,
    /// Flag profile: guide (default), harness-default, or a name from [profiles].
    #[arg(long, value_name = "NAME", conflicts_with = "cflags")]
    pub profile: Option<String>,
    /// Compiler flags instead of a profile (recorded as profile "cflags"; -fPIC is added).
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub cflags: Option<String>,
    /// The C compiler (default: [build] cc, else cc).
    #[arg(long, value_name = "CC")]
    pub cc: Option<String>,
    /// The address space one compiler process may take, in MiB (default: [build]
    /// max_compiler_memory_mib, else 2048); a compile that needs more fails as out of memory.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(64..))]
    pub max_compiler_memory: Option<u64>,
    /// The ngcc-harness tree to write (TREE/<id>/lib/lib<label>.so, TREE/build.json).
    #[arg(long, value_name = "TREE")]
    pub out: PathBuf,
    /// Do not run the KAT of the built libraries.
    #[arg(long)]
    pub no_kat: bool,
    /// A folder with the ICCS API's auxfunc.c/auxfunc.h: also build the C baseline, candidate
    /// iccs-c (default without SRC: [build] iccs_api).
    #[arg(long, value_name = "DIR")]
    pub iccs_api: Option<PathBuf>,
    /// References written into the tree's manifest of each candidate, beside the lines its
    /// shipped KAT files give (`--manifest`'s lines; `--kat-dir`'s files, digested as shipped
    /// ones are), so the built instances are KAT-checked against them.
    #[command(flatten)]
    pub kat_refs: super::kat_refs::KatRefArgs,
}

fn choice(profile: Option<&String>, cflags: Option<&String>) -> ProfileChoice {
    match (profile, cflags) {
        (_, Some(f)) => ProfileChoice::Cflags(f.clone()),
        (Some(p), None) => ProfileChoice::Named(p.clone()),
        (None, None) => ProfileChoice::Default,
    }
}

pub fn run(config: Option<&Path>, args: &BuildArgs) -> anyhow::Result<ExitCode> {
    args.kat_refs.check()?;
    let mut build_config = build::load_build_config(config_path(config).as_deref())?;
    if let Some(mib) = args.max_compiler_memory {
        build_config.build.max_compiler_memory_mib = Some(mib);
    }
    let mut sources = args.sources.clone();
    let iccs_api = args.iccs_api.clone().or_else(|| {
        (sources.is_empty() && args.id.is_none())
            .then(|| build_config.iccs_api())
            .flatten()
    });
    if sources.is_empty() && iccs_api.is_none() {
        let root = args
            .id
            .as_ref()
            .and_then(|id| build_config.submissions.iter().find(|s| &s.id == id))
            .and_then(|s| build_config.root_of(s));
        match root {
            Some(r) => sources.push(r),
            None => {
                bail!("name a submission folder (SRC), or --id of a [[submission]] with a root")
            }
        }
    }
    let request = BuildRequest {
        sources,
        id: args.id.clone(),
        profile: choice(args.profile.as_ref(), args.cflags.as_ref()),
        cc: args.cc.clone().unwrap_or_else(|| build_config.cc()),
        out: args.out.clone(),
        kat: !args.no_kat,
        iccs_api,
        manifest: args.kat_refs.manifest.clone(),
        kat_dir: args.kat_refs.kat_dir.clone(),
    };
    let start = Instant::now();
    let summary = build::build_tree(
        &request,
        &build_config,
        &build_config.cache_dir(),
        &print_instance,
    )?;
    print_summary(&summary, start.elapsed().as_secs_f64());
    say_jail_gaps(&summary);
    for (label, manifest) in &summary.without_kat_files {
        eprintln!(
            "cyclescope: WARNING: {} ships no KAT files (KAT_2_12_{0}.txt, KAT_2_23_…, KAT_2_33_…, \
             KAT_Loop_…): {} has no line for it, so its KAT can only be NOKAT and its figures \
             are of unverified output; add the submission's KAT files and build again, or give \
             the reference digests with --manifest FILE (kat.sha256 lines) or --kat-dir DIR \
             (KAT files, in DIR/<label>/ or DIR/)",
            crate::sanitize::terminal(label),
            crate::sanitize::terminal_path(manifest)
        );
    }
    let failed = summary.failures();
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("cyclescope: not built: {}", failed.join(", "));
        Ok(ExitCode::from(1))
    }
}

/// Who the compiler ran as, and what its jail could not enforce here, once per build.
fn say_jail_gaps(summary: &TreeSummary) {
    if let Some(user) = &summary.compiler_user {
        eprintln!("cyclescope: {user}");
    }
    for gap in &summary.jail_gaps {
        eprintln!("cyclescope: WARNING: {gap}");
    }
}

/// One line per instance as it finishes, and the first lines of what the compiler said.
fn print_instance(b: &InstanceBuild) {
    let s = &b.source;
    let what = match b.status {
        BuildStatus::Built => "built ",
        BuildStatus::Cached => "cached",
        BuildStatus::Failed => "FAILED",
    };
    let warned = if b.warnings.is_empty() {
        String::new()
    } else {
        format!(", {} warning(s)", b.warnings.len())
    };
    // One write for the whole block: instances build in parallel, and another's line must not
    // fall between this one's header and its compiler lines.
    let mut block = format!(
        "{what} {}/{} ({}, {} bits) {:.2} s{warned}",
        s.candidate,
        s.label,
        crate::sanitize::terminal(&s.source_dir),
        s.digest_bits,
        b.seconds
    );
    for line in b.excerpt(EXCERPT_LINES) {
        block.push_str(&format!("\n    {}", crate::sanitize::terminal(&line)));
    }
    outln!("{block}");
}

fn print_summary(summary: &TreeSummary, seconds: f64) {
    for (folder, error) in &summary.unusable {
        outln!("FAILED {}", crate::sanitize::terminal_path(folder));
        for line in error.to_string().lines().take(EXCERPT_LINES) {
            outln!("    {}", crate::sanitize::terminal(line));
        }
    }
    for (label, status, detail) in &summary.kat {
        // No trailing space when the verdict has no detail (PASS).
        let line = format!(
            "KAT    {label} {status} {}",
            crate::sanitize::terminal(detail)
        );
        outln!("{}", line.trim_end());
    }
    let count = |st: BuildStatus| summary.builds.iter().filter(|b| b.status == st).count();
    outln!(
        "{} built, {} cached, {} failed in {seconds:.2} s; tree {}",
        count(BuildStatus::Built),
        count(BuildStatus::Cached),
        count(BuildStatus::Failed) + summary.unusable.len(),
        crate::sanitize::path_as_given(&summary.tree)
    );
}

/// `--src DIR`: builds DIR (without KAT: the command's own gate does that) into a tree in the
/// build cache, `<cache>/trees/<hash of folder, id, profile, compiler>`, and returns that tree
/// for scanning. Instances that fail are named on stderr; the others are used.
pub fn src_tree(args: &SourceArgs, src: &Path, config: Option<&Path>) -> anyhow::Result<PathBuf> {
    let build_config: BuildConfig = build::load_build_config(config_path(config).as_deref())?;
    let profile = choice(args.profile.as_ref(), args.cflags.as_ref());
    let cc = args.cc.clone().unwrap_or_else(|| build_config.cc());
    std::fs::canonicalize(src).with_context(|| format!("--src {}", src.display()))?;
    let cache = build_config.cache_dir();
    let tree = build::src_tree_dir(&cache, src, args.id.as_deref(), &profile, &cc);
    let request = BuildRequest {
        sources: vec![src.to_path_buf()],
        id: args.id.clone(),
        profile,
        cc,
        out: tree.clone(),
        kat: false,
        iccs_api: None,
        // The --manifest and --kat-dir of --src apply to its instances in the catalog
        // (`SourceArgs`).
        manifest: None,
        kat_dir: None,
    };
    let summary = build::build_tree(&request, &build_config, &cache, &|b| {
        if b.status == BuildStatus::Failed {
            eprintln!("cyclescope: {}: not built", b.source.label);
            for line in b.excerpt(EXCERPT_LINES) {
                eprintln!("    {}", crate::sanitize::terminal(&line));
            }
        }
    })?;
    say_jail_gaps(&summary);
    for (folder, error) in &summary.unusable {
        eprintln!(
            "cyclescope: {}: {}",
            crate::sanitize::path_as_given(folder),
            crate::sanitize::terminal_message(&error.to_string())
        );
    }
    if summary
        .builds
        .iter()
        .all(|b| b.status == BuildStatus::Failed)
    {
        bail!("no instance of {} could be built", src.display());
    }
    Ok(tree)
}

/// `[build] iccs_api` in the config: the C baseline `iccs-c` joins the catalog as a normal
/// candidate, built into the build cache (its labels are the bundled baseline's, so it is
/// named `iccs-c/<label>` where both are present).
pub fn add_iccs_c(
    catalog: &mut crate::catalog::Catalog,
    config: Option<&Path>,
) -> anyhow::Result<()> {
    let build_config = build::load_build_config(config_path(config).as_deref())?;
    let Some(api) = build_config.iccs_api() else {
        return Ok(());
    };
    let cache = build_config.cache_dir();
    let cc = build_config.cc();
    let tree = build::src_tree_dir(&cache, &api, Some("iccs-c"), &ProfileChoice::Default, &cc);
    let request = BuildRequest {
        sources: Vec::new(),
        id: None,
        profile: ProfileChoice::Default,
        cc,
        out: tree.clone(),
        kat: false,
        iccs_api: Some(api.clone()),
        manifest: None,
        kat_dir: None,
    };
    let summary = build::build_tree(&request, &build_config, &cache, &|b| {
        if b.status == BuildStatus::Failed {
            eprintln!("cyclescope: iccs-c {}: not built", b.source.label);
        }
    })
    .with_context(|| {
        format!(
            "building the ICCS API folder {} ([build] iccs_api)",
            crate::sanitize::path_as_given(&api)
        )
    })?;
    if summary
        .builds
        .iter()
        .all(|b| b.status == BuildStatus::Failed)
    {
        bail!("no iccs-c instance of {} could be built", api.display());
    }
    let (found, skipped) = crate::catalog::scan_dir(&tree, super::worker_cmd::probe)?;
    for s in skipped {
        eprintln!("cyclescope: skipped {}", crate::sanitize::terminal(&s));
    }
    catalog.candidates.extend(found.candidates);
    Ok(())
}
