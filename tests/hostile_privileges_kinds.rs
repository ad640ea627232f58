//! Each kind of worker refuses what only the machine's owner may do, end to end: `privileges.c`
//! tries to change the mode, owner, times and attributes of another user's file, set the host
//! name, push a key into a terminal, set the clock (two calls), make a child in new user, network and mount namespaces,
//! open a perf event on a whole CPU, open a pidfd on the engine, read the kernel log's size,
//! open `/dev/kmsg` for writing, and finds its securebits not all set and locked. Each
//! behaviour is tried alone in each kind of worker: `hash` and `kat` on their first call; the
//! guide's trials and the fresh-message probe of `run`, the count and its probe of `run
//! --counter instructions` (valgrind), `profile` (valgrind) and `supercop-checksum` on a later
//! call (`CYCLESCOPE_PRIVILEGES_AFTER`), which neither a KAT worker nor the digest workers
//! before the trials reach. Each must end that worker: killed by the system-call filter on
//! the call named, or, where the call is allowed and simply fails, with the fixture's own
//! abort after it tried and nothing worked; no output may say that something worked. Without
//! the jail, the same fixture finds most of them open to root (`tests/privileges_unjailed.rs`).

mod common;
use common::hostile as support;

use std::time::Duration;

use support::*;

/// Far beyond what each command needs (valgrind included).
const BOUND: Duration = Duration::from_secs(300);

/// What the fixture prints for each thing that worked.
const WORKED: &str = "privileges fixture:";

/// Each behaviour (`CYCLESCOPE_PRIVILEGES_ONLY`), the call the worker's filter kills it on
/// (None where the call is allowed and fails: `/dev/kmsg` is root's to write, and Landlock
/// allows no writing there; the securebits are read, and a worker's are set and locked), and
/// the error valgrind answers itself for a call it does not pass to the kernel (3.19 knows no
/// `pidfd_open`): under valgrind, that error, or the filter's kill where a later valgrind
/// passes the call on.
/// Where the C library may make either of two calls, both are named (`a|b`).
const BEHAVIOURS: [(&str, Option<&str>, Option<i32>); 14] = [
    ("chmod", Some("chmod|fchmodat"), None),
    ("chown", Some("chown|fchownat"), None),
    ("utimensat", Some("utimensat"), None),
    ("setxattr", Some("setxattr"), None),
    ("sethostname", Some("sethostname"), None),
    ("tiocsti", Some("ioctl"), None),
    ("settimeofday", Some("settimeofday"), None),
    ("clock_settime", Some("clock_settime"), None),
    ("clone-newns", Some("clone"), None),
    ("perf-system-wide", Some("perf_event_open"), None),
    ("pidfd-open", Some("pidfd_open"), Some(nix::libc::ENOSYS)),
    ("syslog", Some("syslog"), None),
    ("kmsg-write", None, None),
    ("securebits", None, None),
];

/// The kinds of worker that call the library, and the command that starts each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `hash`: one call.
    Hash,
    /// `kat`: the KAT files' calls, then the conformance checks'.
    Kat,
    /// `run`: a guide trial, natively.
    Trial,
    /// `run`: the fresh-message probe after the trials, natively.
    Probe,
    /// `run --counter instructions`: the count under valgrind.
    Count,
    /// `run --counter instructions`: the count's fresh-message probe under valgrind.
    CountProbe,
    /// `profile`: the counted calls under valgrind.
    Profile,
    /// `supercop-checksum`: checksumsmall's calls.
    Checksum,
}

impl Kind {
    fn args<'a>(self, lib: &'a str, out: &'a str) -> Vec<&'a str> {
        let adhoc = [
            "--lib",
            lib,
            "--label",
            "privileges-256",
            "--digest-bits",
            "256",
        ];
        let alone = ["--no-baselines", "--no-reference-jobs"];
        let counted = [
            "--no-baselines",
            "--no-reference-jobs",
            "--counter",
            "instructions",
        ];
        match self {
            Kind::Hash => vec![
                "hash",
                "--lib",
                lib,
                "--digest-bits",
                "256",
                "--hex",
                "616263",
            ],
            Kind::Kat => [&["kat"][..], &adhoc, &["--out", out]].concat(),
            Kind::Trial | Kind::Probe => labelled_run(lib, "privileges-256", out, &alone),
            Kind::Count | Kind::CountProbe => labelled_run(lib, "privileges-256", out, &counted),
            Kind::Profile => [
                &["profile"][..],
                &adhoc,
                &["--length", "64", "--calls", "2"],
            ]
            .concat(),
            Kind::Checksum => [&["supercop-checksum"][..], &adhoc].concat(),
        }
    }

    /// When the fixture acts: on its first call, or on its second of one length with the
    /// same message (trials, counts and profiles hash one message over and over) or a new
    /// one (probes); the checksum's first two calls share a length.
    fn when(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Kind::Hash | Kind::Kat => &[],
            Kind::Trial | Kind::Count | Kind::Profile => &[
                ("CYCLESCOPE_PRIVILEGES_AFTER", "2"),
                ("CYCLESCOPE_PRIVILEGES_MESSAGES", "same"),
            ],
            Kind::Probe | Kind::CountProbe => &[
                ("CYCLESCOPE_PRIVILEGES_AFTER", "2"),
                ("CYCLESCOPE_PRIVILEGES_MESSAGES", "fresh"),
            ],
            Kind::Checksum => &[("CYCLESCOPE_PRIVILEGES_AFTER", "2")],
        }
    }

    /// What the output says when this kind of worker ended by `signal` (a trial's and a
    /// count's end is the job's CRASH, not its probe's).
    fn ended_by(self, signal: &str) -> String {
        match self {
            Kind::Hash | Kind::Checksum => format!("crashed ({signal}) in its worker"),
            Kind::Kat => format!("CRASH signal={signal} in KAT_2_12"),
            Kind::Trial | Kind::Count => format!("CRASH: worker killed by {signal}"),
            Kind::Probe | Kind::CountProbe => {
                format!("CRASH: in the fresh-message probe: worker killed by {signal}")
            }
            Kind::Profile => format!("the profile's worker failed: signal={signal}"),
        }
    }

    fn under_valgrind(self) -> bool {
        matches!(self, Kind::Count | Kind::CountProbe | Kind::Profile)
    }

    /// Whether the output shows the worker's stderr when it aborted (a probe's failure names
    /// the last line its worker printed: under valgrind, valgrind's own).
    fn shows_abort_stderr(self) -> bool {
        !matches!(self, Kind::CountProbe)
    }
}

/// The library and a folder for the runs' output.
struct Setup {
    tmp: tempfile::TempDir,
    lib: std::path::PathBuf,
    /// A file of another user's (root can give it away), for the mode, owner, times and
    /// attributes the fixture tries to change.
    target: std::path::PathBuf,
    runs: std::sync::atomic::AtomicUsize,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let lib = build_fixture("privileges", tmp.path());
        let target = tmp.path().join("someone-elses.txt");
        std::fs::write(&target, "not yours\n").unwrap();
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&target, Some(65533), Some(65533)).unwrap();
        }
        Setup {
            tmp,
            lib,
            target,
            runs: Default::default(),
        }
    }

    /// Runs `kind`'s command with the fixture trying `behaviour`: its output and every file
    /// it wrote (records and KAT logs keep the workers' ends).
    fn run(&self, kind: Kind, behaviour: &str) -> String {
        // A folder of its own each time: a run is tried again when its kill went unnamed.
        let n = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let out = self.tmp.path().join(format!("{kind:?}-{behaviour}-{n}"));
        let args = kind.args(path_str(&self.lib), path_str(&out));
        let mut env = vec![
            ("CYCLESCOPE_PRIVILEGES_ONLY", behaviour),
            ("CYCLESCOPE_PRIVILEGES_TARGET", path_str(&self.target)),
        ];
        env.extend_from_slice(kind.when());
        let m = marker(&format!("privs-kinds-{kind:?}"));
        let _sweep = Sweep(m.clone());
        let (o, _) = run_bounded(command(&args, &m, &env), BOUND);
        assert_none_left(&m);
        format!("{}{}", text(&o), logs_under(&out))
    }
}

/// Runs every behaviour in `kind`'s worker and holds it to its refusal.
fn each_behaviour_refused(kind: Kind) {
    let s = Setup::new();
    for (behaviour, call, valgrind_says) in BEHAVIOURS {
        // Only root's workers (and those of an engine with a user namespace of its own) may
        // lock their securebits; CI runs as root.
        if behaviour == "securebits" && !nix::unistd::geteuid().is_root() {
            continue;
        }
        let what = format!("{kind:?} {behaviour}");
        let errno = valgrind_says.filter(|_| kind.under_valgrind());
        let all = match call {
            Some(call) => run_to_a_named_kill(&s, kind, behaviour, call),
            None => s.run(kind, behaviour),
        };
        assert!(
            !all.contains(WORKED),
            "{what}: a privileged call worked:\n{all}"
        );
        match (call, errno) {
            (Some(call), Some(errno)) if !all.contains("worker sandbox") => {
                assert_failed_alone(&what, kind, behaviour, &all);
                let line = format!("{behaviour}, nothing worked (errno {errno})");
                assert!(
                    !kind.shows_abort_stderr() || all.contains(&line),
                    "{what} ({call}): {all}"
                );
            }
            (Some(call), _) => assert_killed(&what, kind, call, &all),
            (None, _) => assert_failed_alone(&what, kind, behaviour, &all),
        }
    }
}

/// `kind`'s run of `behaviour`, run again while the filter's kill went unnamed (`until_named`).
fn run_to_a_named_kill(s: &Setup, kind: Kind, behaviour: &str, call: &str) -> String {
    until_named(&alternatives(call), |_| ((), s.run(kind, behaviour))).1
}

/// The calls of `a|b`.
fn alternatives(call: &str) -> Vec<&str> {
    call.split('|').collect()
}

/// Killed by the filter in `kind`'s worker, on `call` by name where the kernel log is readable.
fn assert_killed(what: &str, kind: Kind, call: &str, all: &str) {
    let named = kill_named(&alternatives(call), all);
    let kmsg = std::fs::File::open("/dev/kmsg").is_ok();
    assert!(
        named || (!kmsg && all.contains("stopped by the worker sandbox")),
        "{what}: not refused by name ({call}):\n{all}"
    );
    let ended = kind.ended_by("SIGSYS");
    assert!(all.contains(&ended), "{what}: not {ended:?}:\n{all}");
    if matches!(kind, Kind::Trial | Kind::Count) {
        assert!(!all.contains("fresh-message probe"), "{what}: {all}");
    }
}

/// The call failed: `hash` prints a digest whose first three bytes (the bits of what worked)
/// are zero; `kat` writes its files with such digests; every other worker ends in the
/// fixture's abort, which it makes only once it tried and nothing worked.
fn assert_failed_alone(what: &str, kind: Kind, behaviour: &str, all: &str) {
    assert!(!all.contains("worker sandbox"), "{what}: {all}");
    match kind {
        Kind::Hash => assert!(all.contains("--- stdout\n000000"), "{what}: {all}"),
        Kind::Kat => {
            // The KAT files are among the output's files.
            let kat = all;
            assert!(
                kat.contains("Msg_Len = 4096"),
                "{what}: KAT cut short:\n{all}"
            );
            let digests = kat.lines().filter(|l| l.starts_with("Dst = "));
            assert!(
                digests.clone().all(|l| l.starts_with("Dst = 000000")),
                "{what}: a digest carries what worked"
            );
            assert!(digests.count() > 4096, "{what}");
            for failure in ["CRYPTOFAIL", "CRASH"] {
                assert!(!all.contains(failure), "{what}: {failure}:\n{all}");
            }
        }
        _ => {
            let aborted = kind.ended_by("SIGABRT");
            assert!(all.contains(&aborted), "{what}: not {aborted:?}:\n{all}");
            if kind.shows_abort_stderr() {
                let line = format!("privileges tried: {behaviour}, nothing worked (errno ");
                assert!(all.contains(&line), "{what}: {all}");
            }
        }
    }
}

#[test]
fn hash_workers_refuse_the_machines_privileges() {
    each_behaviour_refused(Kind::Hash);
}

#[test]
fn kat_workers_refuse_the_machines_privileges() {
    each_behaviour_refused(Kind::Kat);
}

/// Measures: queues for a CPU like every run.
#[test]
fn trial_workers_refuse_the_machines_privileges() {
    each_behaviour_refused(Kind::Trial);
}

/// Measures: queues for a CPU like every run.
#[test]
fn fresh_probe_workers_refuse_the_machines_privileges() {
    each_behaviour_refused(Kind::Probe);
}

/// Counts under valgrind, which runs inside the filter the engine installed before `exec`.
#[test]
fn count_workers_refuse_the_machines_privileges_under_valgrind() {
    each_behaviour_refused(Kind::Count);
}

#[test]
fn count_probe_workers_refuse_the_machines_privileges_under_valgrind() {
    each_behaviour_refused(Kind::CountProbe);
}

#[test]
fn profile_workers_refuse_the_machines_privileges_under_valgrind() {
    each_behaviour_refused(Kind::Profile);
}

#[test]
fn checksum_workers_refuse_the_machines_privileges() {
    each_behaviour_refused(Kind::Checksum);
}

/// The later attempt skips the workers before the measuring ones: a KAT worker (its lengths
/// change from the first call) and a `hash` worker (one call) never reach it, so a killing
/// behaviour ends neither.
#[test]
fn a_late_attempt_passes_kat_and_digest_workers_by() {
    let s = Setup::new();
    for kind in [Kind::Hash, Kind::Kat] {
        let out = s.tmp.path().join(format!("late-{kind:?}"));
        let args = kind.args(path_str(&s.lib), path_str(&out));
        let env = [
            ("CYCLESCOPE_PRIVILEGES_ONLY", "syslog"),
            ("CYCLESCOPE_PRIVILEGES_AFTER", "2"),
        ];
        let m = marker("privs-kinds-late");
        let _sweep = Sweep(m.clone());
        let (o, _) = run_bounded(command(&args, &m, &env), BOUND);
        assert_none_left(&m);
        let all = format!("{}{}", text(&o), logs_under(&out));
        for word in [
            "worker sandbox",
            "SIGABRT",
            "privileges tried",
            "CRASH",
            WORKED,
        ] {
            assert!(!all.contains(word), "{kind:?}: {word}:\n{all}");
        }
    }
}
