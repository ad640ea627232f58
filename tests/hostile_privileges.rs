//! Workers hold no privilege, even when cyclescope runs as root: a library that tries, on its
//! first call, what root's capabilities allow (`privileges.c`: change the mode, owner, times
//! and attributes of another user's file, set the host name, open the parent's memory for
//! writing, push a key into a terminal, find capabilities in its sets, reach the engine by its
//! pid) or root's uid alone
//! (write to a file only root may write, read one only root may read) fails every call if any
//! of it worked. Each behaviour is tried alone, through `hash`, `run` and `run --counter
//! instructions` (valgrind), and `kat` tries them all: the worker's system-call allowlist kills
//! it on the calls a hash has no use for, by name, and the rest fail for want of privilege;
//! none may work, and the file stays as it was.

mod common;
use common::hostile as support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::time::Duration;

use support::*;

/// Far beyond what each command needs (valgrind included).
const BOUND: Duration = Duration::from_secs(300);

/// The environment variable the fixture reads the target's path from.
const TARGET_VAR: &str = "CYCLESCOPE_PRIVILEGES_TARGET";

/// What the fixture prints for each thing that worked.
const WORKED: &str = "privileges fixture:";

/// The environment variables naming root's files to the fixture.
const ROOT_FILE_VAR: &str = "CYCLESCOPE_PRIVILEGES_ROOT_FILE";
const SECRET_VAR: &str = "CYCLESCOPE_PRIVILEGES_SECRET";

/// Another user's uid: neither root nor `nobody`, which root's workers run as.
const SOMEONE_ELSE: u32 = 65533;

/// The library, a file of another user it will try to take over, and two files of this user
/// (root in CI) in a folder anyone may pass: one only root may write (0644), one only root
/// may read (0600).
struct Setup {
    _tmp: tempfile::TempDir,
    _open: tempfile::TempDir,
    dir: PathBuf,
    lib: PathBuf,
    target: PathBuf,
    root_file: PathBuf,
    secret: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let lib = build_fixture("privileges", &dir);
        let target = dir.join("someone-elses.txt");
        std::fs::write(&target, "not yours\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        if nix::unistd::geteuid().is_root() {
            let other = Some(SOMEONE_ELSE.into());
            nix::unistd::chown(&target, other, Some(SOMEONE_ELSE.into())).unwrap();
        }
        let open = tempfile::tempdir().unwrap();
        std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let root_file = open.path().join("roots.conf");
        std::fs::write(&root_file, "root's\n").unwrap();
        std::fs::set_permissions(&root_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let secret = open.path().join("shadow");
        std::fs::write(&secret, "root:secret\n").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        Setup {
            _tmp: tmp,
            _open: open,
            dir,
            lib,
            target,
            root_file,
            secret,
        }
    }

    /// The fixture's environment, with `only` behaviour when given.
    fn env<'a>(&'a self, only: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
        let mut env = vec![
            (TARGET_VAR, path_str(&self.target)),
            (ROOT_FILE_VAR, path_str(&self.root_file)),
            (SECRET_VAR, path_str(&self.secret)),
        ];
        env.extend(only.map(|b| ("CYCLESCOPE_PRIVILEGES_ONLY", b)));
        env
    }

    /// `cyclescope <args>` with the target named to the library's worker.
    fn run(&self, test: &str, args: &[&str]) -> std::process::Output {
        let m = marker(test);
        let _sweep = Sweep(m.clone());
        let (o, _) = run_bounded(command(args, &m, &self.env(None)), BOUND);
        assert_none_left(&m);
        o
    }

    /// The target as it was made: mode, owner, times, no attribute.
    fn assert_untouched(&self, before: &std::fs::Metadata) {
        let now = std::fs::metadata(&self.target).unwrap();
        assert_eq!(now.mode() & 0o7777, 0o644, "the mode changed");
        assert_eq!((now.uid(), now.gid()), (before.uid(), before.gid()));
        assert_eq!(now.mtime(), before.mtime(), "the times changed");
        assert_eq!(
            std::fs::read_to_string(&self.target).unwrap(),
            "not yours\n"
        );
        let root_file = std::fs::read_to_string(&self.root_file).unwrap();
        assert_eq!(root_file, "root's\n", "root's file was written");
    }

    /// [`Setup::run`] with the fixture trying `behaviour` only.
    fn run_only(&self, test: &str, behaviour: &str, args: &[&str]) -> std::process::Output {
        let m = marker(test);
        let _sweep = Sweep(m.clone());
        let (o, _) = run_bounded(command(args, &m, &self.env(Some(behaviour))), BOUND);
        assert_none_left(&m);
        o
    }

    fn lib(&self) -> &str {
        path_str(&self.lib)
    }
}

/// Fails naming what the library reported it could do.
fn assert_nothing_worked(what: &str, o: &std::process::Output, extra: &str) {
    let all = format!("{}{extra}", text(o));
    assert!(
        !all.contains(WORKED),
        "{what}: a privileged call worked:\n{all}"
    );
}

/// Each behaviour the fixture can try alone, and the system calls the worker's filter kills
/// it on (any one of them, by the C library's choice), or none where the call is allowed and
/// simply fails (no capability, the engine not dumpable, Landlock's signal scope).
const BEHAVIOURS: [(&str, &[&str]); 11] = [
    ("chmod", &["chmod", "fchmodat"]),
    ("chown", &["chown", "fchownat"]),
    ("utimensat", &["utimensat"]),
    ("setxattr", &["setxattr"]),
    ("sethostname", &["sethostname"]),
    ("tiocsti", &["ioctl"]),
    ("parent-mem", &[]),
    ("capabilities", &[]),
    ("reach-parent", &[]),
    ("write-root-file", &[]),
    ("read-root-file", &[]),
];

/// What only root's uid allows, with no capability: open to a worker of root until it ran
/// as another user.
const ROOTS_UID: [&str; 2] = ["write-root-file", "read-root-file"];

/// Says how the worker ended for `behaviour`: killed by the filter on one of `calls` (named
/// where the kernel log is readable), or done with nothing privileged working.
fn assert_refused(
    kind: &str,
    behaviour: &str,
    calls: &[&str],
    o: &std::process::Output,
    logs: &str,
) {
    let all = format!("{}{logs}", text(o));
    assert_nothing_worked(&format!("{kind} {behaviour}"), o, logs);
    if calls.is_empty() {
        assert!(!all.contains("worker sandbox"), "{kind} {behaviour}: {all}");
        return;
    }
    let named = kill_named(calls, &all);
    let kmsg = std::fs::File::open("/dev/kmsg").is_ok();
    assert!(
        named || (!kmsg && all.contains("stopped by the worker sandbox")),
        "{kind} {behaviour}: not refused by name ({calls:?}):\n{all}"
    );
}

#[test]
fn hash_and_kat_workers_hold_no_privilege() {
    let s = Setup::new();
    let before = std::fs::metadata(&s.target).unwrap();
    let hash = [
        "hash",
        "--lib",
        s.lib(),
        "--digest-bits",
        "256",
        "--hex",
        "616263",
    ];
    for (behaviour, calls) in BEHAVIOURS {
        let (o, _) = until_named(calls, |_| {
            let o = s.run_only("privs-hash", behaviour, &hash);
            let all = text(&o);
            (o, all)
        });
        assert_refused("hash", behaviour, calls, &o, "");
        if calls.is_empty() {
            assert!(o.status.success(), "{behaviour}: {}", text(&o));
            // The digest's first three bytes are the bits of what worked: none.
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(out.starts_with("000000"), "{behaviour}: {out}");
        }
        s.assert_untouched(&before);
    }

    // Every behaviour in one KAT worker: the first forbidden call ends it, by name.
    let kat = [
        "kat",
        "--lib",
        s.lib(),
        "--label",
        "privileges-256",
        "--digest-bits",
        "256",
        "--out",
        "",
    ];
    let first_calls = ["chmod", "fchmodat"];
    let ((o, logs), _) = until_named(&first_calls, |n| {
        let mut kat = kat;
        let out_dir = s.dir.join(format!("kat-out-{n}"));
        kat[8] = path_str(&out_dir);
        let o = s.run("privs-kat", &kat);
        let logs = logs_under(&out_dir);
        let all = format!("{}{logs}", text(&o));
        ((o, logs), all)
    });
    assert_refused("kat", "all", &first_calls, &o, &logs);
    s.assert_untouched(&before);
    // The first forbidden call above ends the KAT worker before it tries root's files.
    for behaviour in ROOTS_UID {
        let out_dir = s.dir.join(format!("kat-{behaviour}"));
        let mut kat = kat;
        kat[8] = path_str(&out_dir);
        let o = s.run_only("privs-kat", behaviour, &kat);
        assert_refused("kat", behaviour, &[], &o, &logs_under(&out_dir));
        s.assert_untouched(&before);
    }
}

/// Measures: queues for a CPU like every run.
#[test]
fn trial_workers_hold_no_privilege_natively_and_under_valgrind() {
    let s = Setup::new();
    let before = std::fs::metadata(&s.target).unwrap();
    for (name, extra) in [
        ("native", &[][..]),
        ("valgrind", &["--counter", "instructions"][..]),
    ] {
        for (behaviour, calls) in BEHAVIOURS {
            let ((o, records), _) = until_named(calls, |n| {
                let out = s.dir.join(format!("run-{name}-{behaviour}-{n}"));
                let args = labelled_run(s.lib(), "privileges-256", path_str(&out), extra);
                let o = s.run_only(&format!("privs-run-{name}"), behaviour, &args);
                let records = logs_under(&out);
                let all = format!("{}{records}", text(&o));
                ((o, records), all)
            });
            assert_refused(name, behaviour, calls, &o, &records);
            if calls.is_empty() {
                // The job may fail the fresh-message probe (a fixture this cheap is all call
                // overhead), never on a failed call or a dead worker: CryptHash fails once
                // anything privileged worked.
                let all = text(&o);
                assert!(records.contains("kat_finished"), "{name}: {all}\n{records}");
                for failure in ["CRYPTOFAIL", "CryptHash returned", "CRASH", "LOADFAIL"] {
                    assert!(
                        !all.contains(failure),
                        "{name} {behaviour}: {failure}: {all}\n{records}"
                    );
                }
            }
            s.assert_untouched(&before);
        }
    }
}

/// An engine that is not root gives its workers a PID namespace of their own (made inside
/// their user namespace), where the engine's pid names no process: without it, a worker (of
/// any uid) reads the engine's process group and CPU mask by that number, which no Landlock
/// scope covers. Root counts the fixture under valgrind as `nobody` to show it, where the kernel gives that user a user
/// namespace. Counts are exact, so this run needs no CPU of its own: its CPU locks are in a
/// folder of its own, which `nobody` may write.
#[test]
fn a_worker_of_an_engine_that_is_not_root_cannot_reach_it_by_its_pid() {
    let allowed = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .is_ok_and(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0));
    if !nix::unistd::geteuid().is_root() || !allowed {
        return;
    }
    let t = common::open_tempdir();
    let lib = build_fixture("privileges", t.path());
    let out = t.path().join("run");
    let extra = ["--counter", "instructions", "--no-baselines", "--cpu", "0"];
    let args = labelled_run(path_str(&lib), "privileges-256", path_str(&out), &extra);
    let m = marker("privs-nobody");
    let _sweep = Sweep(m.clone());
    let mut cmd = common::cyclescope_as_nobody(t.path());
    cmd.args(&args)
        .current_dir(t.path())
        .env(MARKER_VAR, &m)
        .env("HOME", t.path())
        .env("XDG_DATA_HOME", t.path().join("data"))
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .env(
            cyclescope_core::cpu::lock::LOCK_DIR_ENV,
            t.path().join("locks"),
        )
        .env("CYCLESCOPE_PRIVILEGES_ONLY", "reach-parent")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (o, _) = run_bounded(cmd, BOUND);
    assert_none_left(&m);
    let records = logs_under(&out);
    assert_nothing_worked("count as nobody", &o, &records);
    let all = text(&o);
    assert!(all.contains("instr/call"), "not counted: {all}\n{records}");
    assert!(!all.contains("CRYPTOFAIL"), "{all}\n{records}");
    assert!(
        records.contains("\"pid\""),
        "no PID namespace recorded: {records}"
    );
}
