//! Helpers of the proof-of-work tests (`proof_of_work.rs`, `proof_layouts.rs`, `proof_kat.rs`):
//! how long a run of a `proof_*` fixture may take, where its records are, and its one
//! record's failure.

use std::path::Path;
use std::time::Duration;

/// The bound a run must end within (a hang, not a timing target): it may first queue for its
/// CPU behind every other test on the machine (`common::SUITE_LOCK_WAIT_S`).
pub fn bound() -> Duration {
    let queue: u64 = super::SUITE_LOCK_WAIT_S.parse().unwrap();
    Duration::from_secs(queue + 300)
}

/// The JSON files below `dir`, at any depth (a run's records).
pub fn records(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(records(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out
}

/// Runs `args` (a `run` with `--out`) to its end with `env` set for the library's workers, and
/// returns the one record's failure (None: a complete record) and what the run printed.
pub fn run_failure_with(
    test: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Option<String>, String) {
    use super::hostile::{Sweep, assert_none_left, command, marker, run_bounded, text};
    let m = marker(test);
    let _sweep = Sweep(m.clone());
    let (o, _) = run_bounded(command(args, &m, env), bound());
    let out = text(&o);
    let run = Path::new(args[args.iter().position(|a| *a == "--out").unwrap() + 1]);
    let records = records(&run.join("records"));
    assert_eq!(records.len(), 1, "{out}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&records[0]).unwrap()).unwrap();
    let failure = r["cyclescope"]["failure"].as_str().map(str::to_string);
    match &failure {
        Some(_) => {
            assert_ne!(r["status"], "complete", "{r}");
            assert!(!o.status.success(), "{out}");
        }
        None => assert_eq!(r["status"], "complete", "{r}\n{out}"),
    }
    assert_none_left(&m);
    (failure, out)
}
