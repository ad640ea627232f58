//! The one ETA (`measure::eta`) as `run`'s status line and `watch --lanes` show it, in real
//! terminals (tmux) on one real run: before any job has finished, both show one, from the
//! plans (every job is planned before the first is measured) at the pace the running job has
//! kept so far. Only what noise cannot move is asserted: `watch` names the pace it used, and
//! its seconds are the plans left (between the plans' sum less the running job's plan and the
//! plans' sum, from the run's own journal) at that pace.

mod common;

use std::path::Path;

use common::tmux::Tmux;

const EXE: &str = env!("CARGO_BIN_EXE_cyclescope");

/// The seconds of the last `ETA <n> s` on the screen, if any.
fn eta_seconds(screen: &str) -> Option<f64> {
    let line = screen.lines().rev().find(|l| l.contains("ETA "))?;
    let after = &line[line.rfind("ETA ")? + 4..];
    let number: String = after.chars().take_while(char::is_ascii_digit).collect();
    (!number.is_empty() && after[number.len()..].starts_with(" s"))
        .then(|| number.parse().ok())
        .flatten()
}

/// The pace `watch --lanes` says its ETA used (`the plans × 1.23`).
fn shown_pace(screen: &str) -> Option<f64> {
    let line = screen.lines().rev().find(|l| l.contains("the plans × "))?;
    let after = &line[line.rfind("the plans × ")? + "the plans × ".len()..];
    after.split(',').next()?.trim().parse().ok()
}

/// The seconds a job spends outside its trials that `watch --lanes` says it added to each job
/// not ended (`1.2 s a job outside its trials`; 0 before a job has ended).
fn shown_outside(screen: &str) -> f64 {
    let Some(line) = screen.lines().rev().find(|l| l.contains("the plans × ")) else {
        return 0.0;
    };
    line.split(", ")
        .find_map(|part| part.strip_suffix(" s a job outside its trials"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Every job's planned seconds, from the run's journal.
fn plans(run: &Path) -> Vec<f64> {
    std::fs::read_to_string(run.join("journal.jsonl"))
        .expect("journal")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "job_planned")
        .map(|v| v["plan"]["estimated_s"].as_f64().expect("estimated_s"))
        .collect()
}

#[test]
fn run_and_watch_show_the_plans_eta_before_any_job_finishes() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = tmp.path().join("run");
    // The watcher waits for the run that is starting there.
    std::fs::create_dir_all(&run).expect("run folder");
    let watcher = Tmux::start(
        "eta-watch",
        140,
        20,
        &format!(
            "{EXE} watch --lanes {}; echo EXIT:$?; sleep 60",
            run.display()
        ),
    );
    let runner = Tmux::start(
        "eta-run",
        200,
        20,
        &format!(
            "{EXE} run pseudoXOF-512 --lengths 1024,65536 --trials 3 --trial-target 0.5 \
             --allow-unfixed-host --out {}; echo EXIT:$?; sleep 60",
            run.display()
        ),
    );
    // `run`: a status line with an ETA in seconds while no job has finished (`done …`).
    let shown_by_run = eta_seconds(&runner.wait("run's ETA before a job finished", |s| {
        eta_seconds(s).is_some() && !s.contains("done ")
    }))
    .expect("an ETA");
    // `watch --lanes`: its ETA names the pace of the one job started so far.
    let s = watcher.wait("watch's ETA before a job finished", |s| {
        s.contains("the pace of 1 started job(s)") && eta_seconds(s).is_some()
    });
    let shown_by_watch = eta_seconds(&s).expect("an ETA");
    let pace = shown_pace(&s).expect("the pace it used");
    let outside = shown_outside(&s);
    runner.wait_for("EXIT:0");
    watcher.wait_for("EXIT:0");
    let plans = plans(&run);
    assert_eq!(plans.len(), 2, "both jobs planned: {plans:?}");
    eprintln!("plans {plans:?}, shown: run {shown_by_run} s, watch {shown_by_watch} s");
    let sum: f64 = plans.iter().sum();
    // One lane measures the cheapest plan first.
    let first = plans.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        sum - first >= 1.0,
        "the plans are long enough that an ETA of 0 s would be wrong: {plans:?}"
    );
    // Before a job finished, the ETA is what the plans leave of the run (all of them less the
    // part done of the first, never more than its plan) at the pace it names, shown rounded to
    // a second and the pace to two decimals. Once the first has ended (the watcher may look
    // between the first job's end and the second's start) the time it spent outside its trials,
    // named too, is added for each job not ended (the second).
    let (low, high) = (
        (sum - first) * (pace - 0.005),
        sum * (pace + 0.005) + outside + 0.05,
    );
    // A plan whose calibration call strayed past the other length's (preempted on a busy
    // host) is counted at that bound, and watch says so: the ETA may then be lower.
    let cut = s.contains("plan(s) of a disturbed calibration call");
    assert!(
        (cut || shown_by_watch >= (low - 0.5).floor()) && shown_by_watch <= (high + 0.5).ceil(),
        "watch --lanes shows ETA {shown_by_watch} s at the plans × {pace}; the plans leave \
         {:.2} … {sum:.2} s ({plans:?})",
        sum - first
    );
    assert!(
        shown_by_run > 0.0 && shown_by_watch > 0.0,
        "a plan-derived ETA at the start is not zero: run {shown_by_run} s, watch {shown_by_watch} s"
    );
}
