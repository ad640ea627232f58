//! The workbench while another process measures on its CPU (the real binary in tmux): the
//! run queues (the suite lets every run wait), the title says `waiting for CPU N · … s` and
//! names the holder where the run's folder goes, the progress line gives the whole of it, and
//! once the holder lets go the log says when the CPU came free and the run measures. The
//! holder is a `flock(1)` process on the runs folder's lock file (a cyclescope locks its runs
//! folder too), its note written as a cyclescope writes it.

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::tmux::Tmux;

/// A `flock` process holding `dir/.cpu<cpu>.lock`, its note naming it as a cyclescope.
fn hold(dir: &Path, cpu: usize) -> Child {
    std::fs::create_dir_all(dir).unwrap();
    let lock = dir.join(format!(".cpu{cpu}.lock"));
    // In a group of its own: flock's `sleep` child inherits the lock, and `release` ends both.
    let holder = Command::new("flock")
        .args(["-x", "-w", "60"])
        .arg(&lock)
        .args(["sleep", "600"])
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("flock(1) is installed");
    let deadline = Instant::now() + Duration::from_secs(60);
    let listed = format!("WRITE {} ", holder.id());
    while !std::fs::read_to_string("/proc/locks").is_ok_and(|t| t.contains(&listed)) {
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let note = format!(
        "pid {}\ncommand cyclescope run x --cpu {cpu}\nrun elsewhere/a\n",
        holder.id()
    );
    std::fs::write(&lock, note).unwrap();
    holder
}

fn release(holder: &mut Child) {
    let group = nix::unistd::Pid::from_raw(holder.id() as i32);
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = holder.wait();
}

/// The CPU the workbench measures on, from its Host panel's title.
fn host_cpu(screen: &str) -> Option<usize> {
    let after = &screen[screen.find("Host · CPU ")? + "Host · CPU ".len()..];
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[test]
fn a_run_queued_for_its_cpu_says_whom_it_waits_for_and_when_the_cpu_came_free() {
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let cwd = tempfile::tempdir().expect("temp dir");
    let script = format!(
        "{bin} --config {}/config.toml --trial-target 0.05 --allow-unfixed-host; \
         echo \"EXIT:$?\"; sleep 600",
        env!("CARGO_MANIFEST_DIR")
    );
    let t = Tmux::start_in("cpu-wait", 160, 48, cwd.path(), &script);
    let cpu = host_cpu(&t.wait("the host panel", |s| host_cpu(s).is_some())).unwrap();
    // Runs go to `runs/` under the working folder: its lock file is held by another process.
    let mut holder = hold(&cwd.path().join("runs"), cpu);
    t.wait_for("Catalog · 0 selected");
    // sm3hash-256 alone, at 32 B alone.
    t.send(&["j", "Space"]);
    t.wait_for("Catalog · 1 selected");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.send(&["s"]);
    let held_by = format!("held by PID {} (cyclescope run x --cpu {cpu}", holder.id());
    let s = t.wait("the waiting title and progress line", |s| {
        s.contains(&format!("│ waiting for CPU {cpu} · ")) && s.contains(&held_by)
    });
    let title = s.lines().next().unwrap_or("");
    assert!(
        title.contains(&held_by),
        "the title names the holder: {title}"
    );
    assert!(
        s.contains(&format!("⏸ waiting for CPU {cpu} — {held_by}")),
        "the progress line says it all:\n{s}"
    );
    assert!(s.contains("no job yet · the run waits for its CPU"), "{s}");
    assert!(!s.contains("preparing"), "{s}");
    release(&mut holder);
    t.wait_for(&format!("CPU {cpu} free after "));
    t.wait_for("cyclescope │ finished");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
