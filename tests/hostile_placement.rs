//! Candidates that try to leave the place the worker put them: one moves itself to CPU 0
//! during its first call, one raises its priority with `nice(-20)` from a thread of its own,
//! one makes itself real-time (`SCHED_FIFO` 99). The tests run as root, where all three
//! calls succeed unless the worker's sandbox forbids them: each must end its job as stopped
//! by the sandbox (SIGSYS), never as a measured figure or a KAT verdict. A fourth trial worker
//! is moved from outside while its candidate sleeps, as a candidate could move itself where no
//! seccomp filter runs: the parent's own look at `/proc` refuses the trial.

mod common;

use std::path::{Path, PathBuf};

use common::{cyclescope_in as cyclescope, output_text as text};

const SANDBOX_NOTE: &str = "stopped by the worker sandbox: a forbidden system call";

/// A library whose first `CryptHash` call runs `first_call` (C statements).
fn library(dir: &Path, name: &str, first_call: &str, prelude: &str) -> PathBuf {
    let body = format!("static int done; if (!done) {{ done = 1; {first_call} }}");
    let source = common::cc::candidate_source("hash-94", name, 256, &body, prelude);
    common::cc::build_library(dir, name, &source)
}

/// Two short trials at 32 B of `lib`, into `out`.
fn measure(dir: &Path, lib: &Path, out: &str) -> std::process::Output {
    cyclescope(dir, &common::quick_run(lib.to_str().unwrap(), out, true))
}

/// Stopped by the sandbox; where the kernel's log let the parent name the call, it is `call`.
fn assert_stopped_by_sandbox(o: &std::process::Output, call: &str) {
    assert!(text(o).contains("SIGSYS"), "{}", text(o));
    assert!(text(o).contains(SANDBOX_NOTE), "{}", text(o));
    if text(o).contains(&format!("{SANDBOX_NOTE}, ")) {
        assert!(
            text(o).contains(&format!("{SANDBOX_NOTE}, {call})")),
            "{}",
            text(o)
        );
    }
}

fn assert_stopped_in_trial(o: &std::process::Output, call: &str) {
    assert!(text(o).contains(" measured, 1 failed"), "{}", text(o));
    assert_stopped_by_sandbox(o, call);
}

#[test]
fn a_candidate_moving_itself_to_another_cpu_is_stopped() {
    let t = tempfile::tempdir().unwrap();
    let lib = library(
        t.path(),
        "affine256",
        "unsigned long cpu0 = 1; \
         if (syscall(SYS_sched_setaffinity, 0, sizeof cpu0, &cpu0) != 0) \
         perror(\"fixture affinity\");",
        "#include <stdio.h>\n#include <sys/syscall.h>\n#include <unistd.h>",
    );
    assert_stopped_in_trial(&measure(t.path(), &lib, "a"), "sched_setaffinity");
}

#[test]
fn a_candidate_raising_its_priority_from_a_thread_is_stopped() {
    let t = tempfile::tempdir().unwrap();
    let lib = library(
        t.path(),
        "nice256",
        "pthread_t th; if (pthread_create(&th, 0, raise_priority, 0) == 0) pthread_join(th, 0);",
        "#include <pthread.h>\n#include <stdio.h>\n#include <unistd.h>\n#include <errno.h>\n\
         static void *raise_priority(void *arg) {\n\
             errno = 0; if (nice(-20) == -1 && errno) perror(\"fixture nice\");\n\
             return arg;\n}",
    );
    // The KAT worker (`cyclescope worker kat`): CRASH by SIGSYS, exit code 7.
    let o = cyclescope(
        t.path(),
        &["kat", "--lib", lib.to_str().unwrap(), "--out", "k"],
    );
    assert_eq!(o.status.code(), Some(7), "CRASH: {}", text(&o));
    assert!(text(&o).contains("CRASH signal=SIGSYS"), "{}", text(&o));
    assert_stopped_by_sandbox(&o, "setpriority");
    // The trial worker (`cyclescope-worker`).
    assert_stopped_in_trial(&measure(t.path(), &lib, "n"), "setpriority");
}

#[test]
fn a_candidate_making_itself_real_time_is_stopped() {
    let t = tempfile::tempdir().unwrap();
    let lib = library(
        t.path(),
        "fifo256",
        "struct sched_param p = { .sched_priority = 99 }; \
         if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) perror(\"fixture fifo\");",
        "#include <sched.h>\n#include <stdio.h>",
    );
    assert_stopped_in_trial(&measure(t.path(), &lib, "f"), "sched_setscheduler");
    let o = cyclescope(
        t.path(),
        &["kat", "--lib", lib.to_str().unwrap(), "--out", "k"],
    );
    assert_eq!(o.status.code(), Some(7), "CRASH: {}", text(&o));
    assert_stopped_by_sandbox(&o, "sched_setscheduler");
}

/// The process id of a running process whose command line holds every one of `words`.
/// A child of `parent` whose command line holds every one of `words` (the worker loads its
/// library from a descriptor, so the library's path is not among them).
fn find_process(parent: u32, words: &[&str]) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let ppid: u32 = stat[stat.rfind(')')? + 1..]
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        (ppid == parent && words.iter().all(|w| cmdline.contains(w))).then_some(pid)
    })
}

/// Where no seccomp filter stops the call (qemu-user), the parent's own look must: here the
/// test moves a trial worker from outside (`renice`) while the candidate sleeps in its first
/// call — a one-call job's or a timed one's — and the job ends TAMPERED, never as a figure.
#[test]
fn a_trial_worker_moved_from_outside_is_refused_by_the_parent() {
    let t = tempfile::tempdir().unwrap();
    let lib = library(
        t.path(),
        "sleepy256",
        "struct timespec ts = { 1, 500000000 }; nanosleep(&ts, 0);",
        "#include <time.h>",
    );
    let mut run = common::cyclescope()
        .args([
            "run",
            "--lib",
            lib.to_str().unwrap(),
            "--no-baselines",
            "--lengths",
            "32",
            "--trials",
            "1",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--allow-kat-fail",
            "--out",
            "m",
        ])
        .current_dir(t.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Every job of `cyclescope-worker worker` is a trial worker: the metadata probe, the
    // KAT files' tables, the known answers' and reference digests' table, then the timed ones
    // (none names its job: it comes on stdin). The first one found that is still there to be
    // moved is moved.
    // A nice value other than the one the worker inherited from this test's process.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    let own: i32 = fields[19 - 3].parse().unwrap();
    let moved = if own < 19 { own + 1 } else { 18 };
    let mut tries = Vec::new();
    let mut moved_one = false;
    for _ in 0..2000 {
        if let Some(worker) = find_process(run.id(), &["cyclescope-worker"]) {
            let renice = std::process::Command::new("renice")
                .args(["-n", &moved.to_string(), "-p", &worker.to_string()])
                .output()
                .expect("this test moves the worker with renice(1)");
            if renice.status.success() {
                moved_one = true;
                break;
            }
            // It ended between the look and the move.
            tries.push(renice);
        }
        if run.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(moved_one, "no trial worker stayed to be moved: {tries:?}");
    let o = run.wait_with_output().unwrap();
    // A timed trial or a digest job fails its job; a moved KAT file's table, or the KAT's
    // metadata probe, makes the KAT TAMPERED (the job is then timed only for --allow-kat-fail,
    // flagged); a moved metadata probe of the library's catalog entry, before any job, refuses
    // the run.
    let kat = "KAT sleepy256: TAMPERED ";
    assert!(
        text(&o).contains(" measured, 1 failed")
            || text(&o).contains(kat)
            || o.status.code() == Some(2),
        "{}",
        text(&o)
    );
    // A timed trial's words, a digest job's (`library … left its place in the worker`), or the
    // KAT's.
    assert!(
        text(&o).contains("TAMPERED: the candidate left its place")
            || text(&o).contains("TAMPERED: library ")
            || text(&o).contains(kat),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("left its place"), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "runs at nice {moved}, but it was started at nice {own}"
        )),
        "{}",
        text(&o)
    );
}
