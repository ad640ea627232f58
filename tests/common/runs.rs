//! `cyclescope run` from the repository root and what it leaves, for the `run` tests
//! (`run_cli.rs`, `run_faults.rs`): the binary with extra environment, a record read back, and
//! the run checked by `validate`.

use std::path::Path;
use std::process::Output;

use cyclescope_core::record::TimingRecord;

/// cyclescope with `args` in the repository root, `env` added, run to its end.
pub fn cyclescope(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = super::cyclescope();
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("running cyclescope")
}

/// The record of `label` at `bytes` of candidate `cand` in run folder `run`.
pub fn record(run: &Path, cand: &str, label: &str, bytes: u64) -> TimingRecord {
    let p = run.join(format!("records/{cand}/{label}__hash_{bytes}.json"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

/// `cyclescope validate` accepts the run folder `run`.
pub fn validate(run: &Path) {
    let o = cyclescope(&["validate", run.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", super::output_text(&o));
}
