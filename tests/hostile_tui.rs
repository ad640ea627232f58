//! No orphans from the workbench (issue 10, item 2): in the real TUI (tmux), `c` stops a KAT
//! that hangs (the cancel flag reaches the KAT job and its worker's group is killed), and
//! Ctrl-C or SIGTERM while a KAT hangs leave with no worker behind. The candidate is the real
//! fault-injection library hanging in its first KAT record (`FAULTY_MODE=hang@1`). Fails, with
//! the reason, when tmux is missing (CI installs it).

mod common;
use common::hostile as support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use support::*;

const DEADLINE: Duration = Duration::from_secs(60);
/// How long a cancelled worker may take to go (a bound, not a target).
const WIND_DOWN: Duration = Duration::from_secs(20);

struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str, cwd: &Path, script: &str) -> Tmux {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.is_ok_and(|o| o.status.success()),
            "these tests drive the TUI in tmux: install tmux (apt-get install tmux)"
        );
        let t = Tmux {
            socket: format!("cyclescope-hostile-{}-{name}", std::process::id()),
        };
        let cwd = cwd.display().to_string();
        let out = t.tmux(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "36",
            "-c",
            &cwd,
            script,
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        t
    }

    fn tmux(&self, args: &[&str]) -> Output {
        common::suite_locks(&mut Command::new("tmux"))
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("running tmux")
    }

    fn send(&self, key: &str) {
        let out = self.tmux(&["send-keys", key]);
        assert!(out.status.success(), "send-keys {key}: {out:?}");
    }

    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let out = self.tmux(&["capture-pane", "-p"]);
            let screen = String::from_utf8_lossy(&out.stdout).into_owned();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {needle:?}; the pane shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// The workbench on the faulty instance, hanging in its KAT, then its exit status.
fn launch(name: &str, marker: &str, cwd: &Path) -> Tmux {
    let cfg = fault_config(cwd);
    let script = format!(
        "env {MARKER_VAR}={marker} FAULTY_MODE=hang@1 {EXE} --config {} --allow-unfixed-host; \
         echo \"EXIT:$?\"; sleep 600",
        cfg.display()
    );
    let t = Tmux::start(name, cwd, &script);
    t.wait_for("Catalog · 0 selected");
    t.send("Space");
    t.wait_for("Catalog · 1 selected");
    t
}

/// Starts a run and waits for its KAT worker to hang (its library names its thread).
fn start_hanging_kat(t: &Tmux, marker: &str) {
    t.send("s");
    wait_for_process(marker, "comm=faulty-hang", DEADLINE);
}

#[test]
fn c_stops_a_hanging_kat_and_ctrl_c_leaves_without_orphans() {
    let cwd = tempfile::tempdir().unwrap();
    let m = marker("tui-cancel");
    let _sweep = Sweep(m.clone());
    let t = launch("cancel", &m, cwd.path());
    start_hanging_kat(&t, &m);
    t.send("c");
    wait_workers_gone(&m, WIND_DOWN);
    t.wait_for("│ cancelled │");
    start_hanging_kat(&t, &m);
    t.send("C-c");
    t.wait_for("EXIT:0");
    assert_none_left(&m);
}

#[test]
fn sigterm_to_the_workbench_leaves_without_orphans() {
    let cwd = tempfile::tempdir().unwrap();
    let m = marker("tui-sigterm");
    let _sweep = Sweep(m.clone());
    let t = launch("sigterm", &m, cwd.path());
    start_hanging_kat(&t, &m);
    let tui = marked_processes(&m)
        .into_iter()
        .find(|(_, c)| !c.contains(" worker "))
        .expect("the workbench runs")
        .0;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(tui),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    t.wait_for("EXIT:0");
    assert_none_left(&m);
}

/// Closing the terminal (the tmux server killed, as a closed window or a dropped ssh session
/// would) ends the workbench and its workers: nothing keeps spinning on a dead terminal.
#[test]
fn a_closed_terminal_ends_the_workbench_and_its_workers() {
    let cwd = tempfile::tempdir().unwrap();
    let m = marker("tui-hangup");
    let _sweep = Sweep(m.clone());
    let t = launch("hangup", &m, cwd.path());
    start_hanging_kat(&t, &m);
    let _ = t.tmux(&["kill-server"]);
    let started = Instant::now();
    while !marked_processes(&m).is_empty() && started.elapsed() < WIND_DOWN {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_none_left(&m);
}
