//! Helpers of the `hostile_*` integration tests (`common::hostile`, used as `support`): build a fixture
//! library from `tests/fixtures/hostile/` with the system `cc`, run the real binary with a
//! marker in its environment (inherited by every worker and by whatever a library forks),
//! bound how long it may take, and find the processes that still carry the marker; pace the
//! runs that end in a filter's kill so that the kernel's log names each; link a fixture into
//! a plain program that calls it with no jail.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const EXE: &str = env!("CARGO_BIN_EXE_cyclescope");

/// The environment variable that marks a test's processes.
pub const MARKER_VAR: &str = "CYCLESCOPE_HOSTILE_TEST";

/// Builds `tests/fixtures/hostile/<name>.c` into `<dir>/lib<name>.so`.
pub fn build_fixture(name: &str, dir: &Path) -> PathBuf {
    let src_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
    let src = src_dir.join(format!("{name}.c"));
    let out = dir.join(format!("lib{name}.so"));
    let o = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&out)
        .arg(&src)
        .arg("-I")
        .arg(&src_dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("the hostile fixtures need a C compiler: cannot run `cc` ({e}); install gcc")
        });
    assert!(
        o.status.success(),
        "cc {}: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// A marker unique to one test.
pub fn marker(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{test}-{}-{nanos}", std::process::id())
}

/// Kills every process left with `marker` when dropped (after the test looked), so a failing
/// test leaves nothing behind either.
pub struct Sweep(pub String);

impl Drop for Sweep {
    fn drop(&mut self) {
        for (pid, _) in marked_processes(&self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The arguments of a quick `run` of the fixture `lib` as instance `label` (256 bits): two
/// 10 ms trials at 64 B into `out`, measured whatever the host and its KAT say; `extra` last.
pub fn labelled_run<'a>(
    lib: &'a str,
    label: &'a str,
    out: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--lib",
        lib,
        "--label",
        label,
        "--digest-bits",
        "256",
        "--lengths",
        "64",
        "--trials",
        "2",
        "--trial-target",
        "0.01",
        "--out",
        out,
        "--allow-unfixed-host",
        "--allow-kat-fail",
    ];
    args.extend_from_slice(extra);
    args
}

/// `cyclescope <args>` in the package folder with the marker set.
pub fn command(args: &[&str], marker: &str, env: &[(&str, &str)]) -> Command {
    let mut c = super::cyclescope();
    c.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env(MARKER_VAR, marker)
        .env_remove("CYCLESCOPE_WORKER_EXE")
        .env_remove("FAULTY_MODE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Runs `cmd` to its end, failing the test (and killing it) if it takes longer than `limit`
/// — the bound a hang must not pass, not a timing target.
pub fn run_bounded(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let child = cmd.spawn().expect("cyclescope starts");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => (out.expect("cyclescope ran"), started.elapsed()),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("cyclescope did not end within {limit:?}: {cmd:?}");
        }
    }
}

/// Waits for `child` up to `limit`; kills it and fails when it does not end.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("waiting for cyclescope") {
            return s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("cyclescope did not end within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Live processes (zombies excluded) whose environment holds `marker`: pid, and command line
/// with ` comm=<name>` after it.
pub fn marked_processes(marker: &str) -> Vec<(i32, String)> {
    let needle = format!("{MARKER_VAR}={marker}");
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if !env.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            continue;
        }
        let state = std::fs::read_to_string(e.path().join("stat"))
            .ok()
            .and_then(|s| s[s.rfind(')')? + 2..].chars().next());
        if matches!(state, None | Some('Z') | Some('X')) {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        // No worker's command line names its job; a library may name its thread (the faulty
        // library's `hang` says `faulty-hang`), which `comm=` shows.
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        found.push((pid, format!("{cmdline} comm={}", comm.trim_end())));
    }
    found
}

/// Asserts that no process carries `marker` (a killed group may take a moment to vanish).
pub fn assert_none_left(marker: &str) {
    let mut left = marked_processes(marker);
    for _ in 0..100 {
        if left.is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = marked_processes(marker);
    }
    panic!("processes of the test are still running: {left:?}");
}

/// Waits until a process with `marker` whose command line contains `word` runs.
pub fn wait_for_process(marker: &str, word: &str, limit: Duration) -> i32 {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some((pid, _)) = marked_processes(marker)
            .into_iter()
            .find(|(_, c)| c.contains(word))
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "no process with {word:?} in its command line or name appeared within {limit:?}: {:?}",
        marked_processes(marker)
    );
}

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// The faulty library posing as pseudoXOF-256, whose KAT then passes against the bundled
/// manifest (entries copied under its label).
pub fn fault_config(dir: &Path) -> PathBuf {
    let faulty = cyclescope_core::catalog::bundled_library("faulty");
    let manifest = super::faulty_manifest(dir);
    let cfg = dir.join("faults.toml");
    std::fs::write(
        &cfg,
        format!(
            "[settings]\ntrials = 2\ntrial_target_s = 0.01\n\n\
             [[candidate]]\nid = \"fixture\"\nalgorithm = \"Faulty\"\nkat_manifest = {manifest:?}\n\
             [[candidate.instance]]\nlabel = \"faulty-256\"\nlibrary = {faulty:?}\ndigest_bits = 256\nkat_name = \"pseudoXOF-256\"\n"
        ),
    )
    .unwrap();
    cfg
}

/// Live processes with `marker` that are workers (`… worker …` or `cyclescope-worker`).
pub fn marked_workers(marker: &str) -> Vec<(i32, String)> {
    marked_processes(marker)
        .into_iter()
        .filter(|(_, c)| c.contains(" worker ") || c.contains("cyclescope-worker"))
        .collect()
}

/// Waits until no worker with `marker` runs; fails naming them after `limit`.
pub fn wait_workers_gone(marker: &str, limit: Duration) {
    let started = Instant::now();
    while started.elapsed() < limit {
        if marked_workers(marker).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "workers still running after {limit:?}: {:?}",
        marked_workers(marker)
    );
}

/// Every file's text under `dir` (records, KAT logs), where the workers' stderr ends up.
pub fn logs_under(dir: &Path) -> String {
    files_under(dir)
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

/// Every file under `dir`, at any depth.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                found.push(p);
            }
        }
    }
    found
}

/// Every file under `dir`, at any depth, named `name`.
pub fn files_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = files_under(dir);
    found.retain(|p| p.file_name().is_some_and(|n| n == name));
    found
}

/// The kernel's audit-line budget: its window and how many lines it prints in one.
pub fn ratelimit() -> (Duration, usize) {
    let read = |name: &str, default: u64| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(default)
    };
    let window = Duration::from_secs(read("printk_ratelimit", 5) + 1);
    (window, read("printk_ratelimit_burst", 10) as usize)
}

/// Waits until this test binary started fewer runs that end in a filter's kill than half the
/// kernel's budget within its window, and counts this one: the tests of a binary run in
/// parallel, and a kill the kernel does not print goes unnamed.
pub fn kernel_log_turn() {
    static STARTED: std::sync::Mutex<Vec<std::time::Instant>> = std::sync::Mutex::new(Vec::new());
    let (window, burst) = ratelimit();
    loop {
        let mut started = STARTED.lock().unwrap_or_else(|p| p.into_inner());
        started.retain(|t| t.elapsed() < window);
        if started.len() < (burst / 2).max(1) {
            started.push(std::time::Instant::now());
            return;
        }
        let wait = window.saturating_sub(started[0].elapsed());
        drop(started);
        std::thread::sleep(wait.max(Duration::from_millis(50)));
    }
}

/// Whether `all` names one of `calls` as the system call the worker's filter killed on.
pub fn kill_named(calls: &[&str], all: &str) -> bool {
    calls.iter().any(|c| {
        all.contains(&format!(
            "stopped by the worker sandbox: a forbidden system call, {c})"
        ))
    })
}

/// Runs `attempt` (given its number, from 0, for a folder of its own) until what it printed
/// (the second of its pair) names one of `calls` as the filter's kill, or tells of no kill, at
/// most four times, each after a turn at the kernel's audit-line budget: the kernel prints at
/// most `printk_ratelimit_burst` audit lines in `printk_ratelimit` seconds, every test on the
/// machine shares them, and a kill it does not print goes unnamed. The last attempt's pair.
pub fn until_named<T>(
    calls: &[&str],
    mut attempt: impl FnMut(usize) -> (T, String),
) -> (T, String) {
    let mut n = 0;
    loop {
        kernel_log_turn();
        let (t, all) = attempt(n);
        let unnamed = !calls.is_empty()
            && !kill_named(calls, &all)
            && all.contains("stopped by the worker sandbox");
        n += 1;
        if !unnamed || n == 4 {
            return (t, all);
        }
        std::thread::sleep(ratelimit().0);
    }
}

/// Whether this process holds capability `cap` in its effective set.
pub fn holds(cap: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|set| set & (1 << cap) != 0)
}

/// `tests/fixtures/hostile/unjailed.c` linked with the fixture `lib`, in `dir`.
pub fn build_unjailed(dir: &Path, lib: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile/unjailed.c");
    let exe = dir.join("unjailed");
    let o = std::process::Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg(lib)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .output()
        .expect("the hostile fixtures need a C compiler (cc)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exe
}
