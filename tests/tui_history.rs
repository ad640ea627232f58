//! The tuning journal through the workbench's tuning loop, end to end in tmux: three builds of
//! the fixture instance FIXH-256 (the guide's flags, then `p -O0`, then `p -O1`, each `s`)
//! land in the journal, `cyclescope history` prints them with their flags and verdicts, and
//! the History panel (`H`) shows them, the highlighted build's flags, and pins an earlier
//! build as the Δ baseline (`b`). No timing figure is asserted, only that each verdict is one
//! of compare's.

mod common;

use serde_json::Value;

#[test]
fn three_builds_of_the_tuning_loop_are_in_history_and_in_the_panel() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let t = common::tuning::fixh256_workbench("history", cwd.path(), "");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    t.wait_for("cyclescope │ finished");
    for (n, flags) in [(2, "-O0"), (3, "-O1")] {
        t.send(&["p"]);
        t.wait_for("profile/flags:");
        t.type_text(&format!(" {flags}"));
        t.send(&["Enter"]);
        t.wait_for(&format!("→ {flags}"));
        t.send(&["s"]);
        t.wait_for(&format!("FIXH-256: rebuilt with {flags}"));
        t.wait_for(&format!("jobs of run #{n}"));
        t.wait("the run ends", |s| {
            s.contains("cyclescope │ finished") && s.contains(&format!("of run #{n}"))
        });
    }

    // The journal, read headless: three builds with their flags and verdicts.
    let o = common::cyclescope()
        .env("XDG_DATA_HOME", cwd.path().join("data"))
        .args(["history", "FIXH-256", "--length", "32", "--json"])
        .current_dir(cwd.path())
        .output()
        .expect("history");
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    let rows: Vec<Value> = serde_json::from_slice::<Value>(&o.stdout)
        .expect(&text)
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        rows.len(),
        3,
        "{text}\n{}\n{}",
        t.capture(),
        runs_said(cwd.path())
    );
    assert_eq!(rows[0]["verdict"], "first");
    let words = [
        "faster",
        "slower",
        "within_noise",
        "doubtful",
        "not_comparable",
    ];
    for r in &rows[1..] {
        assert!(words.contains(&r["verdict"].as_str().unwrap_or("")), "{r}");
    }
    assert!(rows.iter().all(|r| r["origin"] == "workbench"), "{text}");
    assert!(
        rows[1]["build_flags"]
            .as_str()
            .unwrap_or("")
            .contains("-O0"),
        "{text}"
    );
    assert!(
        rows[2]["build_flags"]
            .as_str()
            .unwrap_or("")
            .contains("-O1"),
        "{text}"
    );
    assert_ne!(
        rows[0]["library_sha256"], rows[1]["library_sha256"],
        "{text}"
    );

    // The panel: the cursor is on FIXH-256 (the catalog's), three builds, the last highlighted.
    t.send(&["H"]);
    let s = t.wait_for("History · FIXH-256 · 32 B · 3 builds");
    assert!(s.contains("build 3 "), "{s}");
    let line = s
        .lines()
        .find(|l| l.contains("build 3 "))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(
        line.contains("-O1"),
        "the highlighted build's flags: {line}"
    );
    assert!(
        s.contains("vs build 2:"),
        "its verdict against the build before: {s}"
    );
    // The chart marks each build's mean (its interval's bar around it).
    assert!(s.matches('●').count() >= 3, "a mark per build: {s}");
    // The first build as the Δ baseline: the results' Δ names it.
    t.send(&["Up", "Up"]);
    let s = t.wait_for("build 1 ");
    assert!(s.contains("first build"), "{s}");
    t.send(&["b"]);
    t.wait_for("Δ baseline: build 1 of FIXH-256 at 32 B");
    t.wait_for("b1 ");
    // The export carries the tuning history: one CSV line per build, flags whole.
    t.send(&["e"]);
    t.wait_for("exported ");
    let history = common::run_folders(&cwd.path().join("runs"))
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("run folder"))
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("history-"))
        })
        .unwrap_or_else(|| panic!("no history CSV exported\n{}", t.capture()));
    let csv = std::fs::read_to_string(&history).expect("the history CSV");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "a header and three builds: {csv}");
    assert!(
        lines[0].starts_with("instance,message_bytes,build,"),
        "{csv}"
    );
    for (n, flags) in [(2, "-O0"), (3, "-O1")] {
        assert!(
            lines[n].starts_with(&format!("FIXH-256,32,{n},")) && lines[n].contains(flags),
            "build {n}: {csv}"
        );
    }
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

/// Each run folder's records (status and failure) and failed-job lines, for a failure's message.
fn runs_said(cwd: &std::path::Path) -> String {
    let mut said = String::new();
    let mut stack = vec![cwd.join("runs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let v: Value = std::fs::read(&p)
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or_default();
                said.push_str(&format!(
                    "{}: status {} failure {} flags {}\n",
                    p.display(),
                    v["status"],
                    v["cyclescope"]["failure"],
                    v["build_flags"]
                ));
            }
        }
    }
    said
}
