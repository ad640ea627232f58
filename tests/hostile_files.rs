//! Honest verdicts on files: `validate`, `report` and `compare` refuse what is not a run
//! directory or dataset, name every record they cannot use (truncated, garbled, a link to
//! `/etc/passwd` or `/dev/zero`) instead of dropping it, never follow a link out of the run or
//! read without limit, and a run whose directory is deleted under it fails.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Runs cyclescope, killing it (and failing) if it takes more than a minute: reading
/// `/dev/zero` without limit must show up as a failure, not as a hung test.
fn cyclescope(dir: &Path, args: &[&str]) -> Output {
    let mut child = common::cyclescope()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running cyclescope");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("cyclescope {args:?} did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

use common::output_text as text;

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

#[test]
fn folders_that_are_not_runs_are_refused_by_name() {
    let t = tempfile::tempdir().unwrap();
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let unrelated = t.path().join("unrelated");
    std::fs::create_dir_all(unrelated.join("src")).unwrap();
    std::fs::write(unrelated.join("README.md"), "# a project\n").unwrap();
    for dir in ["empty", "unrelated"] {
        for args in [
            vec!["validate", dir],
            vec!["report", dir, "--out", "pages"],
            vec!["compare", dir, dir],
        ] {
            let o = cyclescope(t.path(), &args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            assert!(
                text(&o).contains("is not a run directory or"),
                "{args:?}: {}",
                text(&o)
            );
            assert!(!text(&o).contains("valid\n"), "{args:?}: {}", text(&o));
        }
    }
    assert!(!t.path().join("pages").exists());
}

#[test]
fn unusable_records_are_named_and_links_are_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    copy_dir(&common::arm_1(), &a);
    let recs = a.join("records/iccs");
    let truncated = recs.join("pseudoXOF-512__hash_1024.json");
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(recs.join("pseudoXOF-512__hash_32.json"), b"\x00\xffgarbage").unwrap();
    for (name, target) in [
        ("pseudoXOF-512__hash_128.json", "/etc/passwd"),
        ("pseudoXOF-512__hash_512.json", "/dev/zero"),
    ] {
        std::fs::remove_file(recs.join(name)).unwrap();
        std::os::unix::fs::symlink(target, recs.join(name)).unwrap();
    }
    std::os::unix::fs::symlink("/dev/zero", a.join("journal.jsonl")).unwrap();
    let named = [
        "records/iccs/pseudoXOF-512__hash_1024.json",
        "records/iccs/pseudoXOF-512__hash_32.json",
        "records/iccs/pseudoXOF-512__hash_128.json: a symbolic link",
        "records/iccs/pseudoXOF-512__hash_512.json: a symbolic link",
    ];

    let v = cyclescope(t.path(), &["validate", "a"]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    for n in named.iter().chain(&["journal.jsonl: a symbolic link"]) {
        assert!(text(&v).contains(&format!("FAIL {n}")), "{n}: {}", text(&v));
    }

    let r = cyclescope(t.path(), &["report", "a", "--out", "pages"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(
        text(&r).contains("4 file(s) under records/ cannot be used"),
        "{}",
        text(&r)
    );

    let b = t.path().join("b");
    copy_dir(&common::arm_1(), &b);
    let c = cyclescope(t.path(), &["compare", "a", "b"]);
    assert_eq!(c.status.code(), Some(2), "{}", text(&c));
    assert!(!text(&c).contains("only in"), "{}", text(&c));

    for o in [&v, &r, &c] {
        for n in &named[..2] {
            assert!(text(o).contains(n), "{n}: {}", text(o));
        }
        assert!(
            !text(o).contains("root:"),
            "/etc/passwd quoted: {}",
            text(o)
        );
    }
    assert!(!t.path().join("pages").exists());
}

#[test]
fn a_campaign_linked_to_dev_zero_is_refused_quickly() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    copy_dir(&common::arm_1(), &a);
    std::fs::remove_file(a.join("campaign.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", a.join("campaign.json")).unwrap();
    for args in [
        vec!["validate", "a"],
        vec!["report", "a", "--out", "p"],
        vec!["run", "--resume", "a"],
    ] {
        let o = cyclescope(t.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("campaign.json is a symbolic link"),
            "{args:?}: {}",
            text(&o)
        );
    }
}

#[test]
fn a_run_whose_directory_is_deleted_fails() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    let mut child = common::cyclescope()
        .args([
            "run",
            "pseudoXOF-256",
            "--out",
            run.to_str().unwrap(),
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
        ])
        // The catalog's KAT manifests are relative to the repository.
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first record, then pull the directory away.
    // Whichever length is measured first (the cheapest by a noisy calibration).
    let records = run.join("records/iccs");
    let first_written = || {
        std::fs::read_dir(&records).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
    };
    let started = Instant::now();
    while !first_written() {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "the run ended before its first record: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no first record"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::remove_dir_all(&run).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("was deleted or replaced while this run was writing it"),
        "{stderr}"
    );
    assert!(!run.exists(), "the run recreated its deleted directory");
}

#[test]
fn a_dataset_whose_record_names_a_path_writes_no_page() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("data/a");
    copy_dir(&common::arm_1(), &a);
    let rec = a.join("records/hash-05/uHash-1024__hash_32.json");
    let json = std::fs::read_to_string(&rec).unwrap();
    std::fs::write(
        &rec,
        json.replacen(
            "\"candidate\": \"hash-05\"",
            "\"candidate\": \"../../x\"",
            1,
        ),
    )
    .unwrap();
    let o = cyclescope(t.path(), &["report", "data/a", "--out", "out/pages"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("candidate id \"../../x\" starts with '.'"),
        "{}",
        text(&o)
    );
    assert!(!t.path().join("out").exists() && !t.path().join("x").exists());
    let o = cyclescope(
        t.path(),
        &["report", "data/a", "--system", "../up", "--out", "p"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("\"../up\" starts with '.'"),
        "{}",
        text(&o)
    );
}
