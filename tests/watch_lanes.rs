//! `watch --lanes` in a real terminal (tmux) on real runs: one lane per measurement CPU of a
//! run on both CPUs, and a folder of two shard runs, followed until they finish; the watcher
//! then reports its own CPU time.

mod common;

use std::path::Path;
use std::process::{Child, Stdio};

use common::tmux::Tmux;

const EXE: &str = env!("CARGO_BIN_EXE_cyclescope");

/// Both tests measure on both CPUs: one at a time, or each disturbs the other's trials.
static BOTH_CPUS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn both_cpus() -> std::sync::MutexGuard<'static, ()> {
    BOTH_CPUS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A run of two instances at two lengths, long enough to be watched for a few seconds: each
/// lane measures for about 3 s, so a watcher redrawing twice a second sees both lanes in a
/// trial at once even when the host is busy.
/// Where `start_run` keeps the run's stderr (beside the run folder), for a failure's message.
fn stderr_of(out: &Path) -> std::path::PathBuf {
    out.with_extension("stderr")
}

/// Waits until the run has its CPUs and has written campaign.json (it locks its CPUs first):
/// queueing behind another suite's measuring may take longer than a screen's deadline, and is
/// bounded by the suite's lock wait instead. Fails when the run ends before.
fn wait_until_started(run: &Path, child: &mut Child) {
    let bound = std::time::Duration::from_secs(common::SUITE_LOCK_WAIT_S.parse().unwrap());
    let start = std::time::Instant::now();
    while !run.join("campaign.json").is_file() {
        if let Some(status) = child.try_wait().expect("polling the run") {
            panic!(
                "the run ended ({status}) before it started measuring: {}",
                std::fs::read_to_string(stderr_of(run)).unwrap_or_default()
            );
        }
        assert!(start.elapsed() < bound, "the run never got its CPUs");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `t.wait(what, ok)`, and on a timeout also what the run said (queued for a CPU, failed…).
fn wait_naming_the_run(t: &Tmux, run: &Path, what: &str, ok: impl Fn(&str) -> bool) -> String {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.wait(what, ok))) {
        Ok(s) => s,
        Err(e) => {
            let said = std::fs::read_to_string(stderr_of(run)).unwrap_or_default();
            eprintln!("the run's stderr:\n{said}");
            std::panic::resume_unwind(e)
        }
    }
}

fn start_run(out: &Path, extra: &[&str]) -> Child {
    let mut args = vec![
        "run",
        "pseudoXOF-512",
        "sm3hash-256",
        "--no-reference-jobs",
        "--lengths",
        "32,1024",
        "--trial-target",
        "0.25",
        "--trials",
        "3",
        "--allow-unfixed-host",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    common::cyclescope()
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr_of(out)).expect("the run's stderr file"))
        .spawn()
        .expect("starting the run")
}

fn watch(name: &str, target: &Path) -> Tmux {
    let script = format!(
        "{EXE} watch --lanes {}; echo \"EXIT:$?\"; sleep 600",
        target.display()
    );
    Tmux::start(name, 120, 30, &script)
}

#[test]
fn a_run_on_two_cpus_shows_one_lane_per_cpu_until_it_finishes() {
    let _cpus = both_cpus();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("two");
    let mut child = start_run(&run, &["--cpus", "0-1"]);
    // The watcher refuses a folder that is not there yet: it starts once the run has written
    // its campaign (a CI run lost that race and its watcher said so, unseen, for 180 s).
    wait_until_started(&run, &mut child);
    let t = watch("lanes", &run);
    let s = wait_naming_the_run(&t, &run, "both lanes measuring", |s| {
        s.lines()
            .any(|l| l.trim_start().starts_with("CPU 0") && l.contains("trial"))
            && s.lines()
                .any(|l| l.trim_start().starts_with("CPU 1") && l.contains("trial"))
    });
    assert!(s.contains("jobs "), "{s}");
    let s = t.wait_for("EXIT:0");
    assert!(s.contains("finished"), "{s}");
    // A failed job is the run's to explain: its stderr names the job and why.
    let said = std::fs::read_to_string(stderr_of(&run)).unwrap_or_default();
    assert!(
        s.contains("jobs 4/4 done (0 failed)"),
        "{s}\nthe run's stderr:\n{said}"
    );
    assert!(s.contains("watcher: ") && s.contains("getrusage"), "{s}");
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_folder_of_shard_runs_is_followed_run_by_run() {
    let _cpus = both_cpus();
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("shards");
    std::fs::create_dir(&folder).unwrap();
    let t = watch("shards", &folder);
    t.wait_for("waiting for runs in");
    let mut a = start_run(&folder.join("s1"), &["--shard", "1/2", "--cpu", "0"]);
    let mut b = start_run(&folder.join("s2"), &["--shard", "2/2", "--cpu", "1"]);
    wait_until_started(&folder.join("s1"), &mut a);
    wait_until_started(&folder.join("s2"), &mut b);
    let s = t.wait("both shards listed", |s| {
        s.contains("(shard 1/2)") && s.contains("(shard 2/2)")
    });
    assert!(s.contains("CPU 0") && s.contains("CPU 1"), "{s}");
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let s = t.wait_for("EXIT:0");
    assert_eq!(s.matches("jobs 2/2 done (0 failed)").count(), 2, "{s}");
}
