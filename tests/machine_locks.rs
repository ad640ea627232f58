//! One measuring process per CPU machine-wide by default: without `CYCLESCOPE_LOCK_DIR`, the
//! CPU locks live in `/run/cyclescope` (root) or `$XDG_RUNTIME_DIR/cyclescope` whatever runs
//! folder a process writes to, and the host check's busy-CPU line names the cyclescope that
//! holds the CPU. The holder here is a real `flock(1)` process on the machine-wide lock file,
//! which then writes the note a cyclescope writes; the refused run never measures.

mod common;

use std::os::unix::process::CommandExt;
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
    // In a group of its own: flock's `sleep` child inherits the lock, and `release` ends both.
    let holder = Command::new("flock")
        .args(["-x", "-w", "1800"])
        .arg(&lock)
        .args(["sleep", "600"])
        .stdin(Stdio::null())
        .process_group(0)
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

/// Ends the holder and its `sleep`, which holds the lock too (killing flock alone left it held
/// for ten minutes).
fn release(holder: &mut Child) {
    let group = nix::unistd::Pid::from_raw(holder.id() as i32);
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = holder.wait();
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
        .args(common::QUICK_BUNDLED_RUN)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let check = unqueued(&xdg)
        .args(["check", "--cpu", "0"])
        .output()
        .unwrap();
    release(&mut holder);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", common::output_text(&o));
    assert!(
        err.contains(&format!("CPU 0 is taken: process {} (", holder.id()))
            && err.contains("writing elsewhere/a")
            && err.contains("queue for it with CYCLESCOPE_LOCK_WAIT=<seconds>"),
        "the refusal names the holder and the way to queue: {err}"
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

/// A shard's runs folder is the campaign's, shared by every machine its slices run on: a lock
/// held there (by a shard of CPU 0 on another node, say) must not stop a shard here, while a
/// plain run into that folder still takes the harness's lock there and is refused.
#[test]
fn a_shard_locks_machine_wide_only_never_in_the_shared_runs_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg");
    let campaign = tmp.path().join("campaign");
    let mut holder = hold_cpu0(&campaign);
    // Its own machine-wide folder (as root the default is the real /run/cyclescope, which
    // the test above holds).
    let machine = tmp.path().join("machine");
    let run = |out: &str, extra: &[&str]| {
        unqueued(&xdg)
            .env(LOCK_DIR_ENV, &machine)
            .args(common::QUICK_BUNDLED_RUN)
            .args(extra)
            .arg("--out")
            .arg(campaign.join(out))
            .output()
            .unwrap()
    };
    let plain = run("plain", &[]);
    let shard = run("shard-1", &["--shard", "1/2"]);
    release(&mut holder);
    assert!(
        !plain.status.success()
            && String::from_utf8_lossy(&plain.stderr).contains("CPU 0 is taken"),
        "{}",
        common::output_text(&plain)
    );
    assert!(
        shard.status.success(),
        "the shard was held back by the shared folder's lock:\n{}",
        common::output_text(&shard)
    );
}
