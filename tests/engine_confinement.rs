//! What the engine keeps from its workers, seen from outside while a worker sits in its
//! candidate's first call (`tests/fixtures/hostile/hang_named.c`) (issue 31): the engine is
//! not dumpable, so a process of its own user cannot read its memory or environment; every
//! worker's stdin is `/dev/null` by then, not the pipe its token and job came on; and no
//! worker holds the descriptor of the CPU lock its engine measures under.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::hostile::{MARKER_VAR, Sweep, build_fixture, marker, path_str, wait_for_process};
use common::outside::{self, as_nobody};

/// The name the fixture gives its thread once it hangs (`/proc/<pid>/comm`).
const HUNG: &str = "comm=hung-in-call";

/// How long a worker may take to reach its first call (a run queues for its CPU first).
const START: Duration = Duration::from_secs(180);

/// How long the engine may take to end once its worker was killed.
const WIND_DOWN: Duration = Duration::from_secs(60);

/// `hash` of the fixture at 256 bits: its worker hangs in the call.
fn hash_args(lib: &str) -> Vec<&str> {
    vec!["hash", "--lib", lib, "--digest-bits", "256", "--hex", "00"]
}

/// `cmd` with the test's marker, the fixture told where to hang (`hang_in`: a program name,
/// or anywhere when empty), and its output collected.
fn marked(cmd: &mut Command, m: &str, hang_in: &str) {
    cmd.env(MARKER_VAR, m)
        .env("HANG_IN_PROGRAM", hang_in)
        .env_remove("CYCLESCOPE_WORKER_EXE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
}

/// An engine running as `nobody` has made itself not dumpable: its `/proc/<pid>/mem` is root's,
/// and another process of `nobody`'s may open neither its memory nor its environment, while
/// the same reader does read the environment of a plain process of that user's.
#[test]
fn another_process_of_the_engines_user_cannot_open_its_memory() {
    if !nix::unistd::geteuid().is_root() {
        // Only root can run the engine as another user here.
        return;
    }
    let t = common::open_tempdir();
    let lib = build_fixture("hang_named", t.path());
    let m = marker("engine-not-dumpable");
    let _sweep = Sweep(m.clone());
    let mut cmd = common::cyclescope_as_nobody(t.path());
    common::suite_locks(&mut cmd);
    marked(&mut cmd, &m, "");
    let engine = cmd
        .args(hash_args(path_str(&lib)))
        .current_dir(t.path())
        .env("HOME", t.path())
        .env("XDG_DATA_HOME", t.path().join("data"))
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .spawn()
        .expect("setpriv (util-linux) runs the binary as nobody");
    // `setpriv` runs the engine in its own process; the worker's first call means the
    // engine's start, where it makes itself not dumpable, is long past.
    let pid = engine.id() as i32;
    let worker = wait_for_process(&m, HUNG, START);
    let seen_uid = outside::real_uid(pid);
    let owner = outside::memory_owner(pid);
    let mem = as_nobody(&format!("exec 3< /proc/{pid}/mem"));
    let environ = as_nobody(&format!("cat /proc/{pid}/environ > /dev/null"));

    // The control: a process of nobody's that did nothing to itself.
    let mut plain = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sleep",
            "120",
        ])
        .spawn()
        .unwrap();
    let plain_pid = plain.id() as i32;
    // Once `sleep` runs: `setpriv` itself is not dumpable between its change of user and
    // its `exec`.
    let started = std::time::Instant::now();
    while started.elapsed() < START {
        let comm = std::fs::read_to_string(format!("/proc/{plain_pid}/comm")).unwrap_or_default();
        if comm.trim_end() == "sleep" {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let plain_owner = outside::memory_owner(plain_pid);
    let plain_environ = as_nobody(&format!("cat /proc/{plain_pid}/environ > /dev/null"));
    let _ = plain.kill();
    let _ = plain.wait();
    outside::kill(worker);
    let o = outside::output_within(engine, WIND_DOWN);
    let text = common::output_text(&o);

    assert_eq!(seen_uid, 65534, "the engine runs as nobody: {text}");
    assert_eq!(owner, 0, "the engine's /proc/<pid>/mem is root's: {text}");
    assert!(
        !mem.status.success(),
        "nobody opened the engine's memory: {mem:?}"
    );
    assert!(
        !environ.status.success(),
        "nobody read the engine's environment: {environ:?}"
    );
    assert_eq!(plain_owner, 65534);
    assert!(
        plain_environ.status.success(),
        "the reader must be able to read a plain process of its user's: {plain_environ:?}"
    );
}

/// `hash` runs its call in a `cyclescope worker`: by the time the candidate runs, that
/// worker's fd 0 is the null device.
#[test]
fn a_workers_stdin_is_dev_null_while_its_candidate_runs() {
    let t = tempfile::tempdir().unwrap();
    let lib = build_fixture("hang_named", t.path());
    let m = marker("worker-stdin");
    let _sweep = Sweep(m.clone());
    let mut cmd = common::cyclescope();
    marked(&mut cmd, &m, "");
    let engine = cmd
        .args(hash_args(path_str(&lib)))
        .current_dir(t.path())
        .spawn()
        .unwrap();
    let worker = wait_for_process(&m, HUNG, START);
    let cmdline = std::fs::read(format!("/proc/{worker}/cmdline")).unwrap_or_default();
    let null = outside::is_dev_null(worker, 0);
    let fds = outside::descriptors(worker);
    outside::kill(worker);
    let o = outside::output_within(engine, WIND_DOWN);
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(cmdline.contains(" worker "), "{cmdline}");
    assert!(
        null,
        "fd 0 is not /dev/null: {fds:?}\n{}",
        common::output_text(&o)
    );
}

/// A run's trial worker (`cyclescope-worker`, no std) sets its stdin to `/dev/null` too, and
/// holds no descriptor of the CPU lock its engine holds while it measures.
#[test]
fn a_trial_workers_stdin_is_dev_null_and_it_holds_no_cpu_lock() {
    let t = tempfile::tempdir().unwrap();
    let lib = build_fixture("hang_named", t.path());
    let m = marker("trial-stdin");
    let _sweep = Sweep(m.clone());
    let run = t.path().join("run");
    let args = common::hostile::labelled_run(
        path_str(&lib),
        "hung-256",
        path_str(&run),
        &["--no-reference-jobs"],
    );
    let mut cmd = common::cyclescope();
    // The KAT files' trial workers answer; the first to hash the timing message, a measuring
    // one (the reference digests'), hangs.
    marked(&mut cmd, &m, "cyclescope-worker");
    cmd.env("HANG_ON_TIMING_MESSAGE", "1");
    let engine = cmd.args(args).current_dir(t.path()).spawn().unwrap();
    let pid = engine.id() as i32;
    let worker = wait_for_process(&m, HUNG, START);
    let cmdline = std::fs::read(format!("/proc/{worker}/cmdline")).unwrap_or_default();
    let null = outside::is_dev_null(worker, 0);
    let worker_fds = outside::descriptors(worker);
    let engine_fds = outside::descriptors(pid);
    outside::kill(worker);
    let o = outside::output_within(engine, WIND_DOWN);
    let text = common::output_text(&o);
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(cmdline.contains("cyclescope-worker"), "{cmdline}");
    assert!(null, "fd 0 is not /dev/null: {worker_fds:?}\n{text}");

    // The engine holds its CPU's lock files (the suite's, the run folder's) while the worker
    // measures (the control)...
    let is_lock = |p: &Path| p.to_string_lossy().ends_with(".lock");
    let suite = std::fs::canonicalize(common::suite_lock_dir()).unwrap();
    assert!(
        engine_fds
            .iter()
            .any(|(_, p)| is_lock(p) && p.starts_with(&suite)),
        "the engine holds no lock file: {engine_fds:?}\n{text}"
    );
    // ...and its worker no descriptor of any.
    let leaked: Vec<_> = worker_fds.iter().filter(|(_, p)| is_lock(p)).collect();
    assert!(leaked.is_empty(), "{leaked:?} in {worker_fds:?}");
}
