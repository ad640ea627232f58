//! The host check's reuse with the real binary: a second run on an unchanged host reuses the
//! first run's clock probe and tool versions, says so and records it (`campaign.json`, every
//! record's environment); a changed input the check reads, a zero age bound or another
//! journal folder probes again, and an age bound that is not a number of seconds is refused by
//! name before anything is measured. The host is a copy of a fixture tree (`--host-root`), so
//! the test can change what it reads; the runs share one `$XDG_DATA_HOME`.

mod common;

use std::path::Path;

const REUSED: &str = "host check cached from ";

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// `run sm3hash-256` at 32 B into `out` on the host `root`, its journal under `data`; the
/// output and `campaign.json`.
fn run(
    dir: &Path,
    root: &Path,
    data: &str,
    out: &str,
    env: &[(&str, &str)],
) -> (std::process::Output, Option<serde_json::Value>) {
    let mut cmd = common::cyclescope();
    cmd.env("XDG_DATA_HOME", dir.join(data))
        .env_remove("CYCLESCOPE_HOST_CACHE_MAX_AGE_S");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd
        .args([
            "--config",
            concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml"),
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--host-root",
            root.to_str().unwrap(),
            "--out",
            out,
        ])
        .current_dir(dir)
        .output()
        .expect("run");
    let campaign = std::fs::read(dir.join(out).join("campaign.json"))
        .ok()
        .map(|b| serde_json::from_slice(&b).unwrap());
    (o, campaign)
}

/// Where `campaign.json` says the host check came from (None: measured by this run).
fn reused_from(campaign: &serde_json::Value) -> Option<String> {
    let found = find(campaign, "host_check_reused_from");
    found.and_then(|v| v.as_str().map(str::to_string))
}

fn find<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m
            .get(key)
            .filter(|x| !x.is_null())
            .or_else(|| m.values().find_map(|x| find(x, key))),
        serde_json::Value::Array(a) => a.iter().find_map(|x| find(x, key)),
        _ => None,
    }
}

#[test]
fn an_unchanged_host_reuses_its_check_and_a_changed_input_probes_again() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let root = dir.join("host");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host/vm-no-cpufreq"),
        &root,
    );

    let (o, c1) = run(dir, &root, "data", "r1", &[]);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(!text.contains(REUSED), "{text}");
    assert_eq!(reused_from(&c1.unwrap()), None);

    let (o, c2) = run(dir, &root, "data", "r2", &[]);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains(REUSED), "{text}");
    let from = reused_from(&c2.unwrap()).expect("campaign.json names the reused check");
    assert!(text.contains(&format!("{REUSED}{from}")), "{from}\n{text}");
    // Every record names it too.
    let rec = std::fs::read_dir(dir.join("r2/records/iccs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let rec: serde_json::Value = serde_json::from_slice(&std::fs::read(rec).unwrap()).unwrap();
    assert_eq!(reused_from(&rec).as_deref(), Some(from.as_str()), "{rec}");

    // Another journal folder knows of no check; a zero bound turns the reuse off.
    let (o, _) = run(dir, &root, "other-data", "r3", &[]);
    assert!(!common::output_text(&o).contains(REUSED));
    let (o, _) = run(
        dir,
        &root,
        "data",
        "r4",
        &[("CYCLESCOPE_HOST_CACHE_MAX_AGE_S", "0")],
    );
    assert!(!common::output_text(&o).contains(REUSED));

    // A file the check reads changes: probed again, and the new result is then reused.
    let paranoid = root.join("proc/sys/kernel/perf_event_paranoid");
    std::fs::write(&paranoid, "1\n").unwrap();
    let (o, c5) = run(dir, &root, "data", "r5", &[]);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(!text.contains(REUSED), "{text}");
    assert_eq!(reused_from(&c5.unwrap()), None);
    let (o, _) = run(dir, &root, "data", "r6", &[]);
    assert!(common::output_text(&o).contains(REUSED));
}

#[test]
fn an_age_bound_that_is_not_seconds_is_refused_by_name() {
    let t = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host/vm-no-cpufreq");
    let (o, campaign) = run(
        t.path(),
        &root,
        "data",
        "r",
        &[("CYCLESCOPE_HOST_CACHE_MAX_AGE_S", "10m")],
    );
    let text = common::output_text(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("CYCLESCOPE_HOST_CACHE_MAX_AGE_S=\"10m\" is not a whole number of seconds"),
        "{text}"
    );
    assert!(campaign.is_none(), "nothing measured: {campaign:?}");
}
