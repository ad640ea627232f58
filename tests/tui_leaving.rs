//! What the real workbench prints after leaving, driven in tmux: every run of the session left
//! unfinished — cancelled with `c` earlier, or still running when `q` leaves — gets its
//! `incomplete k/n — resume with …` line, and each named folder resumes.

mod common;

use std::path::Path;

use common::tmux::Tmux;

/// The binary, then its exit status.
fn script(args: &str) -> String {
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    assert!(Path::new(bin).exists());
    format!("{bin} {args}; echo \"EXIT:$?\"; sleep 600")
}

/// Selects pseudoXOF-512 and sm3hash-256, keeps 32 B and 1 KiB: four jobs a run.
fn select_four_jobs(t: &Tmux) {
    t.wait_for("Catalog · 0 selected");
    t.send(&["j", "Space", "j", "j", "j", "j", "j", "j", "Space"]);
    t.wait_for("Catalog · 2 selected");
    for k in ["2", "3", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("32 B · 1 KiB");
}

#[test]
fn a_run_cancelled_with_c_keeps_its_resume_line_after_q_leaves_another() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let args = format!(
        "--config {}/config.toml --trial-target 0.5 --allow-unfixed-host",
        env!("CARGO_MANIFEST_DIR")
    );
    let t = Tmux::start_in("cancelled", 120, 36, cwd.path(), &script(&args));
    select_four_jobs(&t);
    t.send(&["s"]);
    t.wait_for("· trial ");
    t.send(&["c"]);
    t.wait_for("cancelled ·");
    // The second run is left while it measures.
    t.send(&["s"]);
    t.wait("the second run measuring", |s| {
        s.contains("run #2") && s.contains("· trial ")
    });
    t.send(&["q"]);
    t.wait_for("y leave (the run stops");
    t.send(&["y"]);
    t.wait_for("EXIT:0");
    let out = t.tmux(&["capture-pane", "-p", "-J", "-S", "-400"]);
    let s = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = s.lines().filter(|l| l.starts_with("incomplete ")).collect();
    assert_eq!(lines.len(), 2, "one line per unfinished run:\n{s}");
    let dirs: Vec<&str> = lines
        .iter()
        .map(|l| {
            l.split(" — resume with `cyclescope run --resume ")
                .nth(1)
                .and_then(|r| r.strip_suffix('`'))
                .unwrap_or_else(|| panic!("no folder in {l:?}"))
        })
        .collect();
    assert_ne!(dirs[0], dirs[1], "{s}");
    for (line, dir) in lines.iter().zip(&dirs) {
        let (done, total) = line["incomplete ".len()..]
            .split_once(' ')
            .and_then(|(c, _)| c.split_once('/'))
            .unwrap_or_else(|| panic!("no k/n in {line:?}"));
        let (done, total): (usize, usize) = (done.parse().unwrap(), total.parse().unwrap());
        assert!(done < total && total == 4, "{line}");
        // The folder is real, and holds exactly the records the line counts as done.
        let records =
            std::fs::read_dir(cwd.path().join(dir).join("records/iccs")).map_or(0, |d| d.count());
        assert_eq!(records, done, "{line}");
    }
}
