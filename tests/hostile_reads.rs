//! Workers read only what a hash needs (`jail::reads`): a library that opens, on its first
//! call, `/etc/shadow`, a root-owned file of mode 0600 and a file in a folder standing for a
//! home folder (`reads.c`) is refused all three (`EACCES`, or missing where a worker's `/tmp`
//! of its own hides them), in `hash`, `kat`, and `run`'s
//! trial worker, natively and under valgrind (`--counter instructions`), and its honest work
//! goes on: nothing it read, nothing failed.

mod common;
use common::hostile as support;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use support::*;

/// Far beyond what each command needs (valgrind included).
const BOUND: Duration = Duration::from_secs(300);

/// What the fixture prints for a file it could open.
const OPENED: &str = "reads fixture: opened";

/// The library, and the two files outside every job's paths it will try to read.
struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    lib: PathBuf,
    secret: PathBuf,
    home_file: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        // Beside the build, so that where it is not under /tmp a worker (which has a /tmp of
        // its own) meets Landlock's refusal, not a missing file.
        let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let dir = tmp.path().to_path_buf();
        let lib = build_fixture("reads", &dir);
        let secret = dir.join("secret");
        std::fs::write(&secret, "root's alone\n").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        let home = dir.join("home").join("someone");
        std::fs::create_dir_all(&home).unwrap();
        let home_file = home.join(".profile");
        std::fs::write(&home_file, "export SECRET=1\n").unwrap();
        Setup {
            _tmp: tmp,
            dir,
            lib,
            secret,
            home_file,
        }
    }

    fn run(&self, test: &str, args: &[&str]) -> std::process::Output {
        let m = marker(test);
        let _sweep = Sweep(m.clone());
        let env = [
            ("CYCLESCOPE_READS_SECRET", path_str(&self.secret)),
            ("CYCLESCOPE_READS_HOME", path_str(&self.home_file)),
        ];
        let (o, _) = run_bounded(command(args, &m, &env), BOUND);
        assert_none_left(&m);
        o
    }

    fn lib(&self) -> &str {
        path_str(&self.lib)
    }
}

#[test]
fn hash_and_kat_workers_read_no_secret() {
    let s = Setup::new();
    let hash = [
        "hash",
        "--lib",
        s.lib(),
        "--digest-bits",
        "256",
        "--hex",
        "616263",
    ];
    let o = s.run("reads-hash", &hash);
    assert!(o.status.success(), "{}", text(&o));
    // Byte 0: nothing read; byte 1: all three could not be opened (/etc/shadow only where
    // this system has one). The files lie beside the build, outside every worker's /tmp of
    // its own: EACCES, Landlock's.
    let out = String::from_utf8_lossy(&o.stdout);
    let refused = if std::path::Path::new("/etc/shadow").exists() {
        "0007"
    } else {
        "0006"
    };
    assert!(out.starts_with(refused), "{out}\n{}", text(&o));

    let out_dir = s.dir.join("kat-out");
    let kat = [
        "kat",
        "--lib",
        s.lib(),
        "--label",
        "reads-256",
        "--digest-bits",
        "256",
        "--out",
        path_str(&out_dir),
    ];
    let o = s.run("reads-kat", &kat);
    let all = format!("{}{}", text(&o), logs_under(&out_dir));
    assert!(!all.contains(OPENED), "{all}");
    assert!(!all.contains("CRYPTOFAIL"), "{all}");
    // Its KAT text was still written where the job may write.
    assert!(!logs_under(&out_dir).is_empty(), "{all}");
}

/// Measures: queues for a CPU like every run.
#[test]
fn trial_workers_read_no_secret_natively_and_under_valgrind() {
    let s = Setup::new();
    for (name, extra) in [
        ("native", &[][..]),
        ("valgrind", &["--counter", "instructions"][..]),
    ] {
        let out = s.dir.join(format!("run-{name}"));
        let args = labelled_run(s.lib(), "reads-256", path_str(&out), extra);
        let o = s.run(&format!("reads-run-{name}"), &args);
        let all = format!("{}{}", text(&o), logs_under(&out));
        assert!(all.contains("kat_finished"), "{name}: {all}");
        assert!(!all.contains(OPENED), "{name}: {all}");
        for failure in ["CRYPTOFAIL", "CryptHash returned", "CRASH", "LOADFAIL"] {
            assert!(!all.contains(failure), "{name}: {failure}: {all}");
        }
    }
}

/// As `nobody`, with the files the library reaches for its own (the user's home folder and a
/// file of its own of mode 0600, which the file's mode lets it read): Landlock alone refuses
/// them, in a `hash` worker. Runs where root can hand the files to `nobody`.
#[test]
fn a_worker_of_an_engine_that_is_not_root_reads_not_even_its_users_own_files() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let t = common::open_tempdir();
    let lib = build_fixture("reads", t.path());
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let (secret, profile) = (home.join("secret"), home.join(".profile"));
    std::fs::write(&secret, "nobody's alone\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&profile, "export SECRET=1\n").unwrap();
    for p in [&home, &secret, &profile] {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    }
    let m = marker("reads-nobody");
    let _sweep = Sweep(m.clone());
    let mut cmd = common::cyclescope_as_nobody(t.path());
    cmd.args(["hash", "--lib", path_str(&lib), "--digest-bits", "256"])
        .args(["--hex", "616263"])
        .current_dir(t.path())
        .env(MARKER_VAR, &m)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", t.path().join("data"))
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .env("CYCLESCOPE_READS_SECRET", &secret)
        .env("CYCLESCOPE_READS_HOME", &profile)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (o, _) = run_bounded(cmd, BOUND);
    assert_none_left(&m);
    assert!(o.status.success(), "{}", text(&o));
    // The file's mode would let nobody read both: only the worker's Landlock ruleset stands
    // between (byte 0 nothing read; byte 1 /etc/shadow, the secret and the home file refused).
    assert!(!text(&o).contains(OPENED), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let refused = if std::path::Path::new("/etc/shadow").exists() {
        "0007"
    } else {
        "0006"
    };
    assert!(out.starts_with(refused), "{out}\n{}", text(&o));
    // As nobody outside the jail, the same files open.
    let plain = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "head",
            "-c",
            "6",
        ])
        .arg(&secret)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        "nobody",
        "{plain:?}"
    );
}
