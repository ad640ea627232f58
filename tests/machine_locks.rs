//! One measuring process per CPU machine-wide by default: without `CYCLESCOPE_LOCK_DIR`, the
//! CPU locks live in `/run/cyclescope` (root) or `$XDG_RUNTIME_DIR/cyclescope` whatever runs
//! folder a process writes to, and the host check's busy-CPU line names the cyclescope that
//! holds the CPU. The holder here is a real `flock(1)` process on the machine-wide lock file,
//! which then writes the note a cyclescope writes; the refused run never measures.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cyclescope_core::cpu::lock::{LOCK_DIR_ENV, LOCK_WAIT_ENV};

/// The machine-wide lock folder this user's cyclescope takes by default.
fn machine_dir(xdg: &Path) -> PathBuf {
    if nix::unistd::geteuid().is_root() {
        PathBuf::from("/run/cyclescope")
    } else {
        xdg.join("cyclescope")
    }
}

/// A `flock` process holding CPU 0's machine-wide lock, its note (written once the kernel
/// lists the lock, as a cyclescope writes it) naming it as a cyclescope writing `elsewhere/a`.
fn hold_cpu0(dir: &Path) -> Child {
    std::fs::create_dir_all(dir).unwrap();
    let lock = dir.join(".cpu0.lock");
    // A real run of someone else's holding it is waited for, never written over.
    let holder = Command::new("flock")
        .args(["-x", "-w", "1800"])
        .arg(&lock)
        .args(["sleep", "600"])
        .stdin(Stdio::null())
        .spawn()
        .expect("flock(1) is installed");
    let deadline = Instant::now() + Duration::from_secs(1800);
    let listed = format!("WRITE {} ", holder.id());
    while !std::fs::read_to_string("/proc/locks").is_ok_and(|t| t.contains(&listed)) {
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let note = format!(
        "pid {}\ncommand cyclescope run x --cpu 0 --out elsewhere/a\nrun elsewhere/a\n",
        holder.id()
    );
    std::fs::write(&lock, note).unwrap();
    holder
}

/// cyclescope with the machine's default lock folder: the suite's folder and wait taken away,
/// the runtime folder pointed at `xdg`.
fn unqueued(xdg: &Path) -> Command {
    let mut cmd = common::cyclescope();
    cmd.env_remove(LOCK_DIR_ENV)
        .env_remove(LOCK_WAIT_ENV)
        .env("XDG_RUNTIME_DIR", xdg)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

#[test]
fn a_run_into_another_runs_folder_is_refused_a_cpu_another_cyclescope_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg");
    let mut holder = hold_cpu0(&machine_dir(&xdg));
    let out = tmp.path().join("other-runs/b");
    let o = unqueued(&xdg)
        .args([
            "run",
            "pseudohash-512",
            "--lengths",
            "1024",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--cpu",
            "0",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let check = unqueued(&xdg)
        .args(["check", "--cpu", "0"])
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", common::output_text(&o));
    assert!(
        err.contains(&format!("CPU 0 is taken: process {} (", holder.id()))
            && err.contains("writing elsewhere/a"),
        "{err}"
    );
    assert!(
        !out.join("campaign.json").exists(),
        "the refused run opened"
    );
    let text = common::output_text(&check);
    assert!(
        text.contains(&format!(
            "another cyclescope is measuring on CPU 0: process {} (cyclescope run x",
            holder.id()
        )),
        "{text}"
    );
}
