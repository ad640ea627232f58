//! `cyclescope list`: the catalog with, per instance, whether its library loads and what its
//! `ngcc_meta` says. Libraries are probed in worker processes.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use super::InstanceArgs;
use crate::catalog::display_path;
use crate::cli::worker_cmd;
use crate::plugin::NgccMeta;
use crate::sanitize::terminal;

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Row {
    candidate: String,
    algorithm: String,
    label: String,
    digest_bits: u32,
    /// `iccs` (CryptHash) or `supercop` (crypto_hash).
    abi: crate::plugin::Abi,
    variant: String,
    library: String,
    loads: bool,
    error: Option<String>,
    meta: Option<NgccMeta>,
    kat_manifest: Option<String>,
    /// The folder of reference KAT files its KAT compares with (`--kat-dir`).
    #[serde(skip_serializing_if = "Option::is_none")]
    kat_dir: Option<String>,
}

pub fn run(config: Option<&Path>, args: &ListArgs) -> anyhow::Result<ExitCode> {
    let (catalog, mut instances) = args.select.resolve(config, true)?;
    if args.select.labels.is_empty() {
        // The whole catalog, so the baselines beside --lib/--scan show too.
        instances = catalog.instances().cloned().collect();
    }
    let rows: Vec<Row> = instances
        .iter()
        .map(|i| {
            let probe = worker_cmd::probe_abi(&i.library, i.abi).and_then(|meta| match &meta {
                Some(m) if m.digest_bits != 0 && m.digest_bits != u64::from(i.digest_bits) => {
                    Err(format!(
                        "ngcc_meta says digest_bits = {}, the catalog says {}",
                        m.digest_bits, i.digest_bits
                    ))
                }
                _ => Ok(meta),
            });
            Row {
                candidate: i.candidate.clone(),
                algorithm: i.algorithm.clone(),
                label: i.label.clone(),
                digest_bits: i.digest_bits,
                abi: i.abi,
                variant: i.variant.clone(),
                library: display_path(&i.library),
                loads: probe.is_ok(),
                error: probe.as_ref().err().cloned(),
                meta: probe.ok().flatten(),
                kat_manifest: i.kat_manifest.as_deref().map(display_path),
                kat_dir: i.kat_dir.as_deref().map(display_path),
            }
        })
        .collect();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print_table(&rows);
    }
    Ok(if rows.iter().all(|r| r.loads) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The width of the `ngcc_meta` column: a longer text (a library's id and instance are its
/// own to choose) is cut to it, ending in `…`; `--json` has the whole block.
const META_WIDTH: usize = 28;

fn print_table(rows: &[Row]) {
    let w = rows.iter().map(|r| r.label.len()).max().unwrap_or(5).max(5);
    let c = rows
        .iter()
        .map(|r| r.candidate.len())
        .max()
        .unwrap_or(9)
        .max(9);
    outln!(
        "{:<c$}  {:<w$}  {:>5}  {:<8}  {:<6}  {:<META_WIDTH$}  library",
        "candidate",
        "label",
        "bits",
        "abi",
        "loads",
        "ngcc_meta"
    );
    for r in rows {
        let meta = match &r.meta {
            Some(m) if m.digest_bits == 0 => format!("{} (any width)", m.id),
            Some(m) => format!("{} {} ({} bits)", m.id, m.instance, m.digest_bits),
            None if r.loads => "–".into(),
            None => "".into(),
        };
        let loads = if r.loads { "yes" } else { "NO" };
        outln!(
            "{:<c$}  {:<w$}  {:>5}  {:<8}  {:<6}  {:<META_WIDTH$}  {}",
            terminal(&r.candidate),
            terminal(&r.label),
            r.digest_bits,
            r.abi.name(),
            loads,
            crate::tui::panel::fit(&terminal(&meta), META_WIDTH),
            terminal(&r.library)
        );
        if let Some(e) = &r.error {
            outln!("{:<c$}  {:<w$}  ↳ {}", "", "", terminal(e));
        }
        if let Some(d) = &r.kat_dir {
            outln!("{:<c$}  {:<w$}  ↳ KAT references: {}", "", "", terminal(d));
        }
    }
}
