//! Every worker has a `/tmp` of its own (`jail::namespaces`): a library that looks, on its
//! first call, for a file planted in the engine's `/tmp` (`tmp_peek.c`; any user may see it,
//! and Landlock does not hide a file from `stat`) finds nothing in the `hash` worker (whose
//! message the engine writes under `/tmp`), the `kat` worker (whose output folder is there),
//! and `run`'s workers natively and under valgrind (whose scratch folder is there), while the
//! paths each job names under `/tmp` still work. The same library does find a file planted
//! in `/var/tmp`: what it looks for is seen when it is there.

mod common;
use common::hostile as support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::*;

/// Far beyond what each command needs (valgrind included).
const BOUND: Duration = Duration::from_secs(300);

/// What the fixture prints when it sees the planted file.
const SAW: &str = "tmp_peek fixture: saw";

/// The library and its folder, both under `/tmp`, as the engine's own temporary files are.
struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    lib: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::Builder::new()
            .prefix("cs-tmp-peek")
            .tempdir_in("/tmp")
            .unwrap();
        let dir = tmp.path().to_path_buf();
        let lib = build_fixture("tmp_peek", &dir);
        Setup {
            _tmp: tmp,
            dir,
            lib,
        }
    }

    /// `cyclescope <args>`, the library looking for `planted`.
    fn run(&self, test: &str, args: &[&str], planted: &Path) -> std::process::Output {
        let m = marker(test);
        let _sweep = Sweep(m.clone());
        let env = [("CYCLESCOPE_PEEK", path_str(planted))];
        let (o, _) = run_bounded(command(args, &m, &env), BOUND);
        assert_none_left(&m);
        o
    }

    fn hash(&self, test: &str, planted: &Path) -> std::process::Output {
        let args = [
            "hash",
            "--lib",
            path_str(&self.lib),
            "--digest-bits",
            "256",
            "--hex",
            "616263",
        ];
        self.run(test, &args, planted)
    }
}

/// A file anyone may see, directly in `dir`.
fn plant(dir: &str) -> tempfile::NamedTempFile {
    tempfile::Builder::new()
        .prefix("cs-planted")
        .tempfile_in(dir)
        .unwrap()
}

#[test]
fn a_hash_worker_sees_its_message_and_not_the_engines_tmp() {
    let s = Setup::new();
    let planted = plant("/tmp");
    let o = s.hash("tmp-peek-hash", planted.path());
    // Its message (a file under /tmp) was read: the digest starts with 0, then "bc".
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("006263"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains(SAW), "{}", text(&o));

    // The same worker sees a file planted where its own /tmp does not reach (a folder any
    // user may pass, as /tmp is).
    let outside = plant("/var/tmp");
    let o = s.hash("tmp-peek-hash-outside", outside.path());
    assert!(text(&o).contains("CryptHash returned 1"), "{}", text(&o));
    assert!(!o.status.success(), "{}", text(&o));
}

#[test]
fn a_kat_worker_writes_its_folder_under_tmp_and_sees_nothing_else_there() {
    let s = Setup::new();
    let planted = plant("/tmp");
    let out = s.dir.join("kat-out");
    let args = [
        "kat",
        "--lib",
        path_str(&s.lib),
        "--label",
        "peek-256",
        "--digest-bits",
        "256",
        "--out",
        path_str(&out),
    ];
    let o = s.run("tmp-peek-kat", &args, planted.path());
    let all = format!("{}{}", text(&o), logs_under(&out));
    assert!(!all.contains(SAW), "{all}");
    assert!(!all.contains("CRYPTOFAIL"), "{all}");
    assert!(!logs_under(&out).is_empty(), "{all}");
}

/// Measures: queues for a CPU like every run.
#[test]
fn run_workers_see_nothing_of_the_engines_tmp_natively_and_under_valgrind() {
    let s = Setup::new();
    let planted = plant("/tmp");
    for (name, extra) in [
        ("native", &[][..]),
        ("valgrind", &["--counter", "instructions"][..]),
    ] {
        let out = s.dir.join(format!("run-{name}"));
        let args = labelled_run(path_str(&s.lib), "peek-256", path_str(&out), extra);
        let o = s.run(&format!("tmp-peek-run-{name}"), &args, planted.path());
        let all = format!("{}{}", text(&o), logs_under(&out));
        assert!(all.contains("kat_finished"), "{name}: {all}");
        assert!(!all.contains(SAW), "{name}: {all}");
        for failure in ["CRYPTOFAIL", "CryptHash returned", "CRASH", "LOADFAIL"] {
            assert!(!all.contains(failure), "{name}: {failure}: {all}");
        }
    }
}
