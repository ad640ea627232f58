//! Helpers shared by the integration tests (`mod common;`). Each test crate uses only some of
//! them, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod hostile;
pub mod kat;

use std::path::{Path, PathBuf};

/// The published reference data the tests compare against, copied into the repository (see
/// `tests/fixtures/reference/README.md` for where each file comes from).
pub fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference")
}

/// The published ICCS self-test logs (`<label>.log`).
pub fn iccs_selftest_logs() -> PathBuf {
    reference_dir().join("harness-data/performance/data/arm_1/kat/iccs")
}

/// The self-test message of `performance/iccs/selftest.py`: byte i = (7·i + 1) mod 256.
pub fn selftest_message(n: usize) -> Vec<u8> {
    (0..n).map(|i| (7 * i + 1) as u8).collect()
}

/// The ngcc-harness files under their repository paths.
pub fn harness_data() -> PathBuf {
    reference_dir().join("harness-data")
}

/// The published arm_1 dataset.
pub fn arm_1() -> PathBuf {
    harness_data().join("performance/data/arm_1")
}

#[allow(dead_code)]
pub mod build;
pub mod cc;
pub mod conform;
pub mod host_checks;
pub mod host_tree;
pub mod outside;
pub mod pages;
pub mod proof;
pub mod published;
pub mod runs;
pub mod slurm;
pub mod tmux;
pub mod tuning;

/// The CPU-lock folder every cyclescope the tests start shares: one for the whole suite, every
/// test binary and every clone on this machine, so that no two tests measure on one CPU at once
/// (the tests of one binary run in parallel threads, and each writes its own runs folder).
pub fn suite_lock_dir() -> PathBuf {
    std::env::temp_dir().join("cyclescope-test-cpus")
}

/// How long a test's run queues for a CPU another test measures on (`CYCLESCOPE_LOCK_WAIT`):
/// longer than any test's measuring, so a busy CPU means a wait, never a refusal.
pub const SUITE_LOCK_WAIT_S: &str = "1800";

/// `cmd` (a cyclescope, or what starts one: tmux, a shell) with the suite's CPU locks: the
/// shared folder and the wait.
pub fn suite_locks(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use cyclescope_core::cpu::lock::{LOCK_DIR_ENV, LOCK_WAIT_ENV};
    cmd.env(LOCK_DIR_ENV, suite_lock_dir())
        .env(LOCK_WAIT_ENV, SUITE_LOCK_WAIT_S)
        // The tuning journal of every test process is its own, never the user's.
        .env("XDG_DATA_HOME", test_data_home())
        .env_remove(cyclescope_core::journal::JOURNAL_ENV)
}

/// A fresh `$XDG_DATA_HOME` (the tuning journal's folder) under the build's temporary folder,
/// one per command: no test sees another's journal or reuses its KAT passes. Tests of the
/// journal set their own and share it between their commands.
pub fn test_data_home() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("xdg-data")
        .join(format!("{}-{n}", std::process::id()))
}

/// A temporary folder any user may enter and write (0777): where a test hands files to, or
/// runs a copy of the binary as, `nobody` ([`cyclescope_as_nobody`]).
#[allow(dead_code)]
pub fn open_tempdir() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        t.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    t
}

/// `setpriv` ready to run a copy of the binary as `nobody` (uid and gid 65534, no groups): the
/// copy is made in `dir`, a folder of the test's that anyone may enter. The binary's own path
/// will not do: a fresh clone may lie in a folder that user may not pass (`mktemp -d` makes
/// it 0700).
pub fn cyclescope_as_nobody(dir: &Path) -> std::process::Command {
    let copy = dir.join("cyclescope-for-nobody");
    if !copy.exists() {
        std::fs::copy(env!("CARGO_BIN_EXE_cyclescope"), &copy).unwrap();
    }
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(copy);
    cmd
}

/// The real binary, under the suite's CPU locks: every test starts cyclescope through this
/// (`tests/suite_locks.rs` holds them to it).
pub fn cyclescope() -> std::process::Command {
    cyclescope_at(env!("CARGO_BIN_EXE_cyclescope"))
}

/// A cyclescope binary at `exe` (an installed copy), under the suite's CPU locks.
pub fn cyclescope_at(exe: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(exe);
    suite_locks(&mut cmd);
    cmd
}

/// The arguments of a quick `run` of one ad-hoc library alone (`--no-baselines`): two 10 ms
/// trials at 32 B into `out`, measured whatever the host says and, with `allow_kat_fail`,
/// whatever its KAT says.
pub fn quick_run<'a>(lib: &'a str, out: &'a str, allow_kat_fail: bool) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--lib",
        lib,
        "--no-baselines",
        "--lengths",
        "32",
        "--trials",
        "2",
        "--trial-target",
        "0.01",
        "--allow-unfixed-host",
        "--out",
        out,
    ];
    if allow_kat_fail {
        args.push("--allow-kat-fail");
    }
    args
}

/// [`quick_run`] of the instances a folder holds (`--scan`) instead of one library.
pub fn quick_scan_run<'a>(scan: &'a str, out: &'a str) -> Vec<&'a str> {
    let mut args = quick_run(scan, out, false);
    args[1] = "--scan";
    args
}

/// The real binary run in `dir` with `args`, to its end.
pub fn cyclescope_in(dir: &Path, args: &[&str]) -> std::process::Output {
    cyclescope()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running cyclescope")
}

/// Status, stdout and stderr of `o`, for assertion messages and searches.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The bundled KAT manifest with the pseudoXOF-256 entries repeated under `faulty-256`, written
/// into `dir`: the faulty library posing as pseudoXOF-256 then passes its KAT.
pub fn faulty_manifest(dir: &Path) -> PathBuf {
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("kat/iccs/kat.sha256");
    let text = std::fs::read_to_string(&bundled).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.extend(
        text.lines()
            .filter(|l| l.contains(" pseudoXOF-256/"))
            .map(|l| l.replace(" pseudoXOF-256/", " faulty-256/")),
    );
    let manifest = dir.join("kat.sha256");
    std::fs::write(&manifest, lines.join("\n") + "\n").unwrap();
    manifest
}

/// The run folders under a runs folder (its `.cpu<N>.lock` files and other dot files left out).
pub fn run_folders(runs: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(runs)
        .map(|d| {
            d.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The CPU a run measures on by default: the highest-numbered online one.
pub fn measurement_cpu() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
}

/// A real busy loop pinned to `cpu` until it is killed: the load a shared machine puts on the
/// measurement CPU.
pub fn busy_loop_on(cpu: usize) -> std::process::Child {
    std::process::Command::new("taskset")
        .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("taskset(1) is installed")
}

/// Whether this engine's workers get a control group that counts CPU time: root, on a machine
/// that mounts v1's `cpuacct` hierarchy (this VM and CI do). Elsewhere the check is skipped.
#[allow(dead_code)]
pub fn cgroup_cpu_accounted() -> bool {
    nix::unistd::geteuid().is_root()
        && std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|m| m.contains("cpuacct"))
}

/// A quick `run` of one bundled library on CPU 0 (two 10 ms trials at 1 KiB, measured whatever
/// the host says); the caller adds `--out`.
#[allow(dead_code)]
pub const QUICK_BUNDLED_RUN: [&str; 12] = [
    "run",
    "pseudohash-512",
    "--no-reference-jobs",
    "--lengths",
    "1024",
    "--trials",
    "2",
    "--trial-target",
    "0.01",
    "--allow-unfixed-host",
    "--cpu",
    "0",
];
