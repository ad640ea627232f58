//! `cyclescope tune` on writable copies of fixture sysfs/procfs trees, driven through the real
//! binary: apply, SIGKILL the process holding the tuning, start cyclescope again → every file
//! of the tree is byte-identical to the original; the same after a signal, at the end of
//! `run --tune`, and the refusal for a user who is not root (a real uid switch, no seam).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::host_tree::{fixture_copy, snapshot};
use common::output_text;

fn governor(tree: &Path) -> String {
    std::fs::read_to_string(tree.join("sys/devices/system/cpu/cpu3/cpufreq/scaling_governor"))
        .unwrap()
}

/// Starts `tune --apply --hold` and returns once it says it holds the tuning.
fn hold(tree: &Path) -> std::process::Child {
    let mut child = common::cyclescope()
        .args(["tune", "--cpu", "3", "--apply", "--hold", "--root"])
        .arg(tree)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut said = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        said += &line;
        said.push('\n');
        if line.starts_with("holding") {
            return child;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("tune --hold ended without holding:\n{said}");
}

/// Waits (at most 30 s) until a killed, unreaped child is a zombie.
fn wait_until_zombie(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the parenthesised name, which may itself hold ") ".
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        if state == Some('Z') {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "pid {pid} not a zombie after 30 s: {stat}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn a_killed_holder_is_restored_by_the_next_start_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = fixture_copy("untuned-laptop", tmp.path());
    let original = snapshot(&tree);
    let mut child = hold(&tree);
    // Applied, and the restore file names the holder.
    assert_eq!(governor(&tree), "performance");
    let saved: serde_json::Value = serde_json::from_slice(
        &std::fs::read(tree.join("run/cyclescope/tune-restore.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["owner"]["pid"], child.id());
    assert_eq!(saved["files"].as_array().unwrap().len(), 7, "{saved:#}");
    let tuned = snapshot(&tree);
    let changed: Vec<&PathBuf> = original
        .iter()
        .filter(|(p, b)| tuned.get(*p) != Some(b))
        .map(|(p, _)| p)
        .collect();
    assert_eq!(changed.len(), 7, "{changed:?}");
    // SIGKILL: no chance to restore. Not reaped yet: the holder is a zombie, which is gone too.
    child.kill().unwrap();
    // The kill is delivered before it is done: on a loaded machine the holder can still be
    // running when the next start looks, and a live holder is rightly left alone.
    wait_until_zombie(child.id());
    assert_eq!(governor(&tree), "performance", "nothing restored yet");
    // Any command that reads this root restores it as it starts.
    let o = common::cyclescope()
        .args(["check", "--cpu", "3", "--root"])
        .arg(&tree)
        .output()
        .unwrap();
    child.wait().unwrap();
    let text = output_text(&o);
    assert!(
        text.contains(&format!(
            "restored the host tuning left by pid {}",
            saved["owner"]["pid"]
        )) && text.contains("7 setting(s)"),
        "{text}"
    );
    assert_eq!(snapshot(&tree), original, "the tree is not what it was");
}

#[test]
fn a_signal_to_the_holder_restores_and_a_live_holder_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = fixture_copy("amd-boost", tmp.path());
    let original = snapshot(&tree);
    let mut child = common::cyclescope()
        .args(["tune", "--cpu", "15", "--apply", "--hold", "--root"])
        .arg(&tree)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.unwrap().starts_with("holding")),
        "never held"
    );
    assert_ne!(snapshot(&tree), original);
    // Another start sees a live owner: nothing restored, and a second apply is refused.
    let o = common::cyclescope()
        .args(["tune", "--cpu", "15", "--apply", "--root"])
        .arg(&tree)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(
        output_text(&o).contains("already tuned"),
        "{}",
        output_text(&o)
    );
    assert_ne!(snapshot(&tree), original);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(snapshot(&tree), original);
}

#[test]
fn apply_then_restore_by_command() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = fixture_copy("untuned-laptop", tmp.path());
    let original = snapshot(&tree);
    let run = |args: &[&str]| {
        let o = common::cyclescope()
            .args(args)
            .arg("--root")
            .arg(&tree)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", output_text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let plan = run(&["tune", "--cpu", "3"]);
    assert!(plan.contains("powersave → performance"), "{plan}");
    assert_eq!(
        snapshot(&tree),
        original,
        "showing the plan changed something"
    );
    run(&["tune", "--cpu", "3", "--apply"]);
    // Held until --restore: a later start does not undo it, and the checks see the tuning.
    let o = common::cyclescope()
        .args(["check", "--cpu", "3", "--root"])
        .arg(&tree)
        .output()
        .unwrap();
    let checked = output_text(&o);
    assert!(!checked.contains("restored"), "{checked}");
    for line in ["turbo/boost       pass", "governor          pass"] {
        assert!(checked.contains(line), "{checked}");
    }
    assert_eq!(governor(&tree), "performance");
    let out = run(&["tune", "--restore"]);
    assert!(out.contains("restored 7 setting(s)"), "{out}");
    assert_eq!(snapshot(&tree), original);
    let o = common::cyclescope()
        .args(["tune", "--restore", "--root"])
        .arg(&tree)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(output_text(&o).contains("nothing to restore"));
}

#[test]
fn a_run_that_tuned_restores_at_its_end() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let tree = fixture_copy("untuned-laptop", tmp.path());
    let original = snapshot(&tree);
    let o = common::cyclescope()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32",
            "--trials",
            "1",
        ])
        .args([
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--tune",
            "--cpu",
            "1",
        ])
        .arg("--out")
        .arg(tmp.path().join("run"))
        .arg("--host-root")
        .arg(&tree)
        .output()
        .unwrap();
    let text = output_text(&o);
    assert!(o.status.success(), "{text}");
    // CPU 1 of this tree: no cpufreq, so IRQs are what moves (0-3 → 0,2-3, 0-1 → 0, mask f → d) and turbo is switched off.
    assert!(
        text.contains("/proc/irq/0/smp_affinity_list 0-3 → 0,2-3") && text.contains("applied 4"),
        "{text}"
    );
    assert!(text.contains("restored 4 setting(s)"), "{text}");
    assert_eq!(snapshot(&tree), original);
}

/// Root's `run/cyclescope` (its CPU locks live there too) is closed to other users: a command
/// of theirs reads nothing there, and says nothing of a tuning it cannot see.
#[test]
fn a_user_who_cannot_read_roots_folder_is_told_of_no_tuning() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let tree = fixture_copy("untuned-laptop", tmp.path());
    let o = Command::new("chmod")
        .arg("-R")
        .arg("a+rX")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    let closed = tree.join("run/cyclescope");
    std::fs::create_dir_all(&closed).unwrap();
    std::fs::write(closed.join(".cpu1.lock"), "").unwrap();
    std::fs::set_permissions(&closed, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let o = common::cyclescope_as_nobody(tmp.path())
        .args(["check", "--cpu", "3", "--root"])
        .arg(&tree)
        .output()
        .expect("setpriv (util-linux) runs the binary as nobody");
    let text = output_text(&o);
    assert!(!text.contains("left behind"), "{text}");
    assert!(text.contains("CPU 3") || text.contains("cpu"), "{text}");
}

#[test]
fn applying_needs_root_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = fixture_copy("untuned-laptop", tmp.path());
    // The unprivileged user must be able to read the tree and run the binary.
    for p in [tmp.path(), &tree] {
        let o = Command::new("chmod")
            .arg("-R")
            .arg("a+rX")
            .arg(p)
            .output()
            .unwrap();
        assert!(o.status.success());
    }
    let original = snapshot(&tree);
    let o = common::cyclescope_as_nobody(tmp.path())
        .args(["tune", "--cpu", "3", "--apply", "--root"])
        .arg(&tree)
        .output()
        .expect("setpriv (util-linux) runs the binary as nobody");
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.contains("tuning the host needs root (effective uid 65534)"),
        "{text}"
    );
    assert_eq!(snapshot(&tree), original);
}
