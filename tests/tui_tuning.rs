//! The tuning loop end to end: the real binary in tmux on a submission's sources (`--src`),
//! built with a real C compiler into a build cache of the test's own, measured, rebuilt with
//! other flags (`p`), KAT-checked again and measured, and the Δ against the earlier build read
//! off the screen. No timing figure is asserted: only that the comparison is there.

mod common;

use std::path::Path;

use common::tmux::Tmux;

#[test]
fn tuning_from_sources_rebuilds_with_new_flags_and_shows_the_delta() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let t = common::tuning::fixh256_workbench("tuning", cwd.path(), "");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    t.wait_for("cyclescope │ finished");
    // New flags for the selection: shown as pending until s rebuilds. (A leading space keeps
    // tmux from reading the flags as its own option; the field trims it.)
    t.send(&["p"]);
    t.wait_for("profile/flags:");
    t.type_text(" -O0");
    t.send(&["Enter"]);
    t.wait_for("FIXH-256 guide → -O0");
    t.send(&["s"]);
    t.wait_for("FIXH-256: rebuilt with -O0");
    t.wait_for("jobs of run #2");
    let s = t.wait_for("cyclescope │ finished");
    // The new build is KAT-checked again and its figure compared with the earlier build's.
    let catalog_row = s
        .lines()
        .find(|l| l.contains("FIXH-256 -O0"))
        .unwrap_or_else(|| panic!("the rebuilt instance shows its flags:\n{s}"));
    assert!(catalog_row.contains("PASS"), "{catalog_row}");
    assert!(s.contains("earlier ×"), "{s}");
    let row = s
        .lines()
        .find(|l| l.contains("#2  FIXH-256 ") && l.contains(" 32 B "))
        .unwrap_or_else(|| panic!("the second run's row:\n{s}"));
    assert!(row.contains("#1 "), "{row}");
    assert!(
        // A ⚠ figure on either side gets no faster/slower but `⚠ doubt` (compare's rule).
        ["faster", "slower", "≈ noise", "⚠ doubt"]
            .iter()
            .any(|w| row.contains(w)),
        "{row}"
    );
    assert!(
        s.contains("FIXH-256 #1"),
        "the curve overlays the earlier build:\n{s}"
    );
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

/// `--id` and `--cc` given at start survive `p` + `s`: the rebuilt instance is still candidate
/// `hash-10`, built by the same compiler, so its second figure is compared with the first
/// (the Δ columns and the curve's earlier build) and every record lands under
/// `records/hash-10/`, none under the folder's name.
#[test]
fn a_rebuild_keeps_the_candidate_id_and_the_compiler() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/submissions/fixhash");
    // A compiler of the test's own: it notes each compile it is given on its stderr, which
    // the build keeps in its logs (as root the jailed compiler works in a private copy the
    // engine deletes, so a note beside its output would go with it), then hands it to cc.
    let cc = cwd.path().join("notingcc");
    std::fs::write(&cc, "#!/bin/sh\necho \"noted: $*\" >&2\nexec cc \"$@\"\n")
        .expect("write the compiler");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "XDG_CACHE_HOME={} {bin} --src {} --id hash-10 --cc {} --trial-target 0.01 --allow-unfixed-host; echo EXIT:$?; sleep 60",
        cwd.path().join("cache").display(),
        src.display(),
        cc.display()
    );
    let t = Tmux::start_in("tuning-id", 160, 48, cwd.path(), &script);
    let screen = t.wait_for("FIXH-256 guide");
    if !screen.contains("Catalog · 0 selected") {
        t.send(&["Space"]);
        t.wait_for("Catalog · 0 selected");
    }
    t.send(&["j", "j", "Space"]);
    t.wait_for("[x] FIXH-256 guide");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("len S1 ·2 ·3 ·4 ·5 ·6 ·7 ·8");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    t.wait_for("cyclescope │ finished");
    t.send(&["p"]);
    t.wait_for("profile/flags:");
    t.type_text(" -O0");
    t.send(&["Enter"]);
    t.wait_for("FIXH-256 guide → -O0");
    t.send(&["s"]);
    t.wait_for("FIXH-256: rebuilt with -O0");
    t.wait_for("jobs of run #2");
    let s = t.wait_for("cyclescope │ finished");
    let row = s
        .lines()
        .find(|l| l.contains("#2  FIXH-256 ") && l.contains(" 32 B "))
        .unwrap_or_else(|| panic!("the second run's row:\n{s}"));
    assert!(
        row.contains("#1 "),
        "the rebuilt figure is compared with the first build's:\n{s}"
    );
    assert!(
        s.contains("FIXH-256 #1"),
        "the curve overlays the earlier build:\n{s}"
    );
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    // The rebuild went through the session's compiler, with the new flags.
    let compiles = noted(cwd.path());
    assert!(
        compiles.lines().any(|l| l.contains("-O0")),
        "the -O0 rebuild used --cc:\n{compiles}"
    );
    // Every run's records of the submission are candidate hash-10's (the baseline's reference
    // job writes beside them under its own candidate).
    let mut candidates = std::collections::BTreeSet::new();
    for run in std::fs::read_dir(cwd.path().join("runs")).expect("runs folder") {
        let records = run.expect("run entry").path().join("records");
        for c in std::fs::read_dir(&records).into_iter().flatten() {
            candidates.insert(c.expect("entry").file_name().to_string_lossy().into_owned());
        }
    }
    assert_eq!(
        candidates
            .into_iter()
            .filter(|c| c != "iccs")
            .collect::<Vec<_>>(),
        ["hash-10"],
        "records of both builds go to records/hash-10/"
    );
}

/// Every line the test's compiler noted on its stderr, from the build logs under `dir`.
fn noted(dir: &Path) -> String {
    let mut all = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            all.push_str(&noted(&p));
        } else if p.extension().is_some_and(|x| x == "log") {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            for line in text.lines().filter(|l| l.contains("noted: ")) {
                all.push_str(line);
                all.push('\n');
            }
        }
    }
    all
}
