//! What every printed table of a run says under its rows, read back from the run folder so
//! `run`'s stdout, the workbench's printout and its export agree: what measured the figures,
//! how the run was made (a trial target other than the guide's, host problems it measured
//! despite), and how each instance was built (profile name with its compiler flags). Reads
//! the folder only; never writes, never measures.

use std::collections::BTreeMap;
use std::path::Path;

use crate::record::run_dir::{list_records, read_campaign};
use crate::vocabulary::JobKey;

/// Profile names the published pages print alone: their flags are the harness's, known.
const PUBLISHED_PROFILES: [&str; 3] = ["guide", "harness-default", "guide-performance"];

/// How an instance was built, as pages and tables show it: a published profile by its name
/// (`guide`), anything else with the flags its library was compiled with
/// (`cflags: -O0 -fPIC`), so a tuning session reads back which build it measured.
pub(crate) fn build_text(profile: &str, build_flags: &str) -> String {
    let flags = build_flags.trim();
    if profile == crate::catalog::UNKNOWN_FLAGS && !flags.is_empty() {
        // cyclescope did not build it: the flags are the library's own claim, not a fact.
        return format!("{profile} (the library says {flags})");
    }
    if PUBLISHED_PROFILES.contains(&profile) || flags.is_empty() || flags == profile {
        profile.to_string()
    } else {
        format!("{profile}: {flags}")
    }
}

/// What measured a run's figures (counter, clock, CPU), from its first record that names a
/// counter.
pub fn measured_by(run_dir: &Path) -> Option<String> {
    list_records(run_dir).into_iter().find_map(|(_, r)| {
        let add = r.cyclescope.as_ref().filter(|a| a.cycle_source.is_some())?;
        Some(super::measured_by(
            &r.environment,
            add.cycle_source_name(),
            add.reference_cycles,
        ))
    })
}

/// What a reader of a run's table must know about how the run was made, from its
/// campaign: a trial target other than the guide's, and the host problems it consented to.
pub fn run_notes(run_dir: &Path) -> Vec<String> {
    let Ok(c) = read_campaign(run_dir) else {
        return vec![];
    };
    let mut out = vec![];
    let guide = crate::catalog::Settings::default().trial_target_s;
    if (c.planning.trial_target_s - guide).abs() > 1e-9 {
        out.push(format!(
            "trial target {} s per trial (the guide's: {guide} s)",
            c.planning.trial_target_s
        ));
    }
    if !c.host_problems().is_empty() {
        out.push(format!(
            "measured despite host problems: {}",
            c.host_problems().join("; ")
        ));
    }
    out
}

/// The `compiler` field of a KAT log in the run folder (what the library's metadata says
/// built it: `gcc 12.2.0`); None without a log inside the folder or without the field.
pub(crate) fn compiler_in_log(run_dir: &Path, kat_log: Option<&str>) -> Option<String> {
    let path = crate::record::safe_path::inside(run_dir, Path::new(kat_log?)).ok()?;
    let text = std::fs::read_to_string(path).ok()?;
    let value = text
        .lines()
        .take_while(|l| !l.starts_with("timing"))
        .find_map(|l| l.strip_prefix("compiler"))?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// Each measured instance's build (`build_text`, with the compiler its KAT log names) by
/// (candidate, label), from its records.
pub fn builds(run_dir: &Path) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for (_, r) in list_records(run_dir) {
        let JobKey {
            candidate, label, ..
        } = r.job_key();
        out.entry((candidate, label)).or_insert_with(|| {
            let text = build_text(&r.flags, &r.build_flags);
            match compiler_in_log(run_dir, r.kat_log()) {
                Some(cc) => format!("{text} ({cc})"),
                None => text,
            }
        });
    }
    out
}

/// The line naming each instance's build: ``built with: `FIXH-256` cflags: -O0 -fPIC; …``
/// (candidate-controlled text escaped for a terminal); None without records.
pub fn built_with_line(run_dir: &Path) -> Option<String> {
    let builds = builds(run_dir);
    if builds.is_empty() {
        return None;
    }
    let parts: Vec<String> = builds
        .iter()
        .map(|((_, label), text)| {
            format!(
                "`{}` {}",
                crate::sanitize::terminal(label),
                crate::sanitize::terminal(text)
            )
        })
        .collect();
    Some(format!("built with: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_profiles_read_alone_and_others_say_their_flags() {
        assert_eq!(build_text("guide", "-std=c99 -O2"), "guide");
        assert_eq!(
            build_text("cflags", "-O0 -fPIC -D_GNU_SOURCE"),
            "cflags: -O0 -fPIC -D_GNU_SOURCE"
        );
        assert_eq!(build_text("o0", "-O0"), "o0: -O0");
        assert_eq!(build_text("cflags", ""), "cflags");
        assert_eq!(build_text("unknown", ""), "unknown");
        assert_eq!(
            build_text("unknown", "-O1"),
            "unknown (the library says -O1)"
        );
    }
}
