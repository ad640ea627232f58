//! No worker reaches the operator's terminal (issue 31): an engine started on a real terminal
//! (a tmux pane) has it on its stdin, stdout and stderr and as its controlling terminal, yet
//! its worker, caught while its candidate sleeps in its first call
//! (`tests/fixtures/hostile/hang_named.c`), holds no descriptor of it or of any other
//! terminal, and leads a session with no controlling terminal (`tty_nr` 0): no `TIOCSTI` into
//! the operator's shell, no job-control signal from its keys.

mod common;

use std::path::Path;

use common::hostile::{EXE, MARKER_VAR, Sweep, build_fixture, marker, path_str, wait_for_process};
use common::outside;
use common::tmux::{DEADLINE, Tmux};

/// The name the fixture gives its thread once it hangs (`/proc/<pid>/comm`).
const HUNG: &str = "comm=hung-in-call";

/// Starts `cyclescope <args>` in a pane of its own (in `cwd`), its fixture hanging in the
/// program `hang_in` (anywhere when empty); waits for the engine (`engine_word` in its
/// command line) and the hung worker, checks both from outside, kills the worker and waits
/// for the engine's end.
fn check_from_a_terminal(name: &str, cwd: &Path, args: &[&str], engine_word: &str, hang_in: &str) {
    let m = marker(name);
    let _sweep = Sweep(m.clone());
    // In the trial worker, the first job to hash the timing message (a measuring one), not a
    // KAT file's.
    let timing = match hang_in {
        "" => "",
        _ => "HANG_ON_TIMING_MESSAGE=1 ",
    };
    let script = format!(
        "env -u CYCLESCOPE_WORKER_EXE {MARKER_VAR}={m} HANG_IN_PROGRAM={hang_in} {timing}{EXE} {}; \
         echo EXIT:$?; sleep 600",
        args.join(" ")
    );
    let t = Tmux::start_in(name, 100, 30, cwd, &script);
    let engine = wait_for_process(&m, engine_word, DEADLINE);
    let worker = wait_for_process(&m, HUNG, DEADLINE);

    // The control: the engine does have the pane's terminal, as its stdin and controlling
    // terminal.
    let terminal = outside::device_of(engine, 0);
    let engine_tty = outside::controlling_terminal(engine);
    let engine_held = outside::terminal_descriptors(engine, terminal.unwrap_or(0));
    let worker_tty = outside::controlling_terminal(worker);
    let worker_held = outside::terminal_descriptors(worker, terminal.unwrap_or(0));
    let worker_fds = outside::descriptors(worker);
    outside::kill(worker);
    let screen = t.wait_for("EXIT:");

    let terminal =
        terminal.unwrap_or_else(|| panic!("the engine's stdin is no terminal: {screen}"));
    assert_eq!(engine_tty as u64, terminal, "{screen}");
    assert!(engine_held.len() >= 3, "{engine_held:?}");
    assert!(
        worker_held.is_empty(),
        "the worker holds a terminal: {worker_held:?} of {worker_fds:?}"
    );
    assert_eq!(worker_tty, 0, "the worker has a controlling terminal");
}

/// `hash`'s worker (`cyclescope worker`).
#[test]
fn a_worker_of_an_engine_on_a_terminal_holds_none_of_it() {
    let t = tempfile::tempdir().unwrap();
    let lib = build_fixture("hang_named", t.path());
    let args = [
        "hash",
        "--lib",
        path_str(&lib),
        "--digest-bits",
        "256",
        "--hex",
        "00",
    ];
    check_from_a_terminal("terminal-hash", t.path(), &args, "hash --lib", "");
}

/// A run's trial worker (`cyclescope-worker`), the first to hash the timing message; the KAT
/// files' trial workers answer.
#[test]
fn a_trial_worker_of_an_engine_on_a_terminal_holds_none_of_it() {
    let t = tempfile::tempdir().unwrap();
    let lib = build_fixture("hang_named", t.path());
    let run = t.path().join("run");
    let args = common::hostile::labelled_run(
        path_str(&lib),
        "hung-256",
        path_str(&run),
        &["--no-reference-jobs"],
    );
    check_from_a_terminal(
        "terminal-trial",
        t.path(),
        &args,
        "run --lib",
        "cyclescope-worker",
    );
}
