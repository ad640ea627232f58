//! `cyclescope slurm` on a real one-node Slurm cluster (`common::slurm`): a 2-task array of a
//! small campaign of the bundled baselines, merged by the job that waits for it, into a
//! dataset `validate` accepts and `report` renders; then an array whose tasks fail, whose
//! merge job never runs and whose failed shards `watch` names. The jobs measure under the
//! suite's CPU locks (the scripts pass CYCLESCOPE_LOCK_DIR/WAIT on). Needs slurm-wlm and munge
//! (`.ci/run` installs them) and root; it fails with Slurm's own words when the cluster cannot
//! start. Short trials; no timings asserted.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::slurm::Cluster;
use serde_json::Value;

/// Longer than any queue for a CPU the suite's other tests hold (`SUITE_LOCK_WAIT_S`).
const JOBS_LIMIT: Duration = Duration::from_secs(1900);

const LABELS: [&str; 4] = [
    "sm3hash-256",
    "pseudoXOF-256",
    "pseudoXOF-512",
    "pseudohash-512",
];

fn slurm(cluster: &Cluster, folder: &Path, labels: &[&str]) -> Output {
    let mut args = vec!["slurm", "--shards", "2", "--submit", "--out"];
    args.push(folder.to_str().unwrap());
    args.push("--");
    args.extend(labels);
    args.extend([
        "--lengths",
        "32,1024",
        "--trial-target",
        "0.01",
        "--trials",
        "2",
        "--allow-unfixed-host",
    ]);
    common::cyclescope()
        .env("SLURM_CONF", cluster.conf())
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cyclescope slurm")
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

fn watch(folder: &Path) -> Output {
    common::cyclescope()
        .arg("watch")
        .arg(folder)
        .output()
        .expect("running cyclescope watch")
}

fn records_in(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("records"))
        .map(|d| {
            d.flatten()
                .map(|c| std::fs::read_dir(c.path()).map_or(0, |f| f.count()))
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn a_two_task_array_is_measured_merged_validated_and_reported_and_a_failed_task_is_named() {
    let started = Instant::now();
    let mut cluster = Cluster::start();
    let up = started.elapsed();
    let tmp = tempfile::tempdir().unwrap();

    let good = tmp.path().join("campaign");
    let array_started = Instant::now();
    let o = slurm(&cluster, &good, &LABELS);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("submitted: array job "), "{said}");
    cluster.wait_empty(JOBS_LIMIT);
    let array_wall = array_started.elapsed();
    let layout = json(&good.join("slurm.json"));
    let merge_job = layout["merge_job"].as_str().unwrap().to_string();
    let merge_log = std::fs::read_to_string(good.join("merge.log")).unwrap_or_default();
    assert_eq!(
        cluster.job_state(&merge_job),
        "COMPLETED",
        "merge job\n{merge_log}\n{}",
        cluster.logs()
    );
    for k in 1..=2 {
        let exit = std::fs::read_to_string(good.join(format!("shard-{k}.exit"))).unwrap();
        let log = std::fs::read_to_string(good.join(format!("shard-{k}.log"))).unwrap();
        assert_eq!(exit.trim(), "0", "shard {k}:\n{log}");
        let c = json(&good.join(format!("shard-{k}/campaign.json")));
        assert_eq!(c["cyclescope"]["shard"], format!("{k}/2"), "{c}");
        // The step is bound to two CPUs: one measures, cyclescope runs on the other.
        assert_eq!(c["cyclescope"]["engine_shared_cpu"], false, "{c}\n{log}");
    }
    let dataset = good.join("dataset");
    assert_eq!(records_in(&dataset), LABELS.len() * 2, "{merge_log}");
    let v = common::cyclescope()
        .arg("validate")
        .arg(&dataset)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", common::output_text(&v));
    let summary = std::fs::read_dir(good.join("pages/performance"))
        .unwrap_or_else(|e| panic!("no pages ({e}):\n{merge_log}"))
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("summary_"));
    assert!(
        summary,
        "the merge job rendered the summary page:\n{merge_log}"
    );
    let w = watch(&good);
    assert!(w.status.success(), "{}", common::output_text(&w));
    assert!(
        String::from_utf8_lossy(&w.stdout).contains("slurm: 2 of 2 shard task(s) ended"),
        "{}",
        common::output_text(&w)
    );

    // Tasks that fail (an instance the catalog lacks): the merge job is cancelled, not run.
    let bad = tmp.path().join("failing");
    let o = slurm(&cluster, &bad, &["no-such-instance"]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    cluster.wait_empty(JOBS_LIMIT);
    let layout = json(&bad.join("slurm.json"));
    let merge_job = layout["merge_job"].as_str().unwrap();
    assert_ne!(cluster.job_state(merge_job), "COMPLETED");
    assert!(!bad.join("merge.log").exists() && !bad.join("dataset").exists());
    let w = watch(&bad);
    let text = String::from_utf8_lossy(&w.stdout);
    assert_eq!(w.status.code(), Some(1), "{}", common::output_text(&w));
    for k in 1..=2 {
        assert!(
            text.contains(&format!(
                "shard {k}/2 failed: its task exited with status 2 (see shard-{k}.log)"
            )),
            "{text}"
        );
    }
    eprintln!(
        "slurm: cluster up in {:.1} s, the 2-task array with its merge in {:.1} s, the whole \
         test in {:.1} s",
        up.as_secs_f64(),
        array_wall.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// `cyclescope slurm` where no Slurm is installed (no sbatch on PATH).
fn without_slurm(folder: &Path, extra: &[&str]) -> Output {
    common::cyclescope()
        .env("PATH", "/nonexistent")
        .args(["slurm", "--shards", "2", "--out"])
        .arg(folder)
        .args(extra)
        .args(["--", "sm3hash-256", "--lengths", "32"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cyclescope slurm")
}

#[test]
fn without_slurm_the_scripts_are_written_and_how_to_submit_them_is_said() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("campaign");
    let o = without_slurm(&folder, &[]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "sbatch is not on PATH (no Slurm here); on a machine that submits to the cluster: sh "
        ) && out.contains("submit.sh"),
        "{out}"
    );
    for f in ["shards.sh", "merge.sh", "submit.sh", "slurm.json"] {
        assert!(folder.join(f).is_file(), "{f}");
    }
    let again = tmp.path().join("again");
    let o = without_slurm(&again, &["--submit"]);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("sbatch is not on PATH (no Slurm here): the scripts are written; on a machine that submits to the cluster run `sh "),
        "{err}"
    );
    assert!(again.join("shards.sh").is_file());
    let typo = common::cyclescope()
        .args(["slurm", "--shards", "2", "--out"])
        .arg(tmp.path().join("typo"))
        .args(["--", "sm3hash-256", "--lenghts", "32"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(
        typo.status.code(),
        Some(2),
        "{}",
        common::output_text(&typo)
    );
    assert!(
        String::from_utf8_lossy(&typo.stderr)
            .contains("the run's arguments (after --) are not ones `cyclescope run` takes"),
        "{}",
        common::output_text(&typo)
    );
    assert!(!tmp.path().join("typo").exists(), "nothing written");
}
