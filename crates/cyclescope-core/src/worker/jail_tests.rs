//! The jail (`jail::namespaces`, `jail::privileges`) as a worker meets it: each test spawns
//! a real process through [`Group::spawn_worker`], as every worker is started.

use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};

use crate::jail::namespaces::{Kept, user_namespace_refusal};
use crate::worker::group::Group;

/// What `sh -c script` says in a worker whose `/tmp` lets `kept` through, and the
/// namespaces it was seen to have of its own from outside.
fn worker_says(script: &str, kept: &[&str]) -> (String, Vec<String>) {
    let me = nix::unistd::geteuid().as_raw();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]).stdout(Stdio::piped());
    let mut g = Group::spawn_worker(
        &mut cmd,
        None,
        Kept::for_job(kept.iter().copied(), &[me]),
        Default::default(),
    )
    .unwrap();
    let own = crate::worker::observed::Protections::of(g.pid())
        .map(|p| p.own_namespaces)
        .unwrap_or_default();
    let mut out = String::new();
    std::io::Read::read_to_string(g.child_mut().stdout.as_mut().unwrap(), &mut out).ok();
    g.finish();
    (out, own)
}

/// Marks the line the test below prints for the one that runs it as another user.
const SEEN: &str = "worker namespaces:";

/// Root, or a user whose kernel allows user namespaces: the worker has network, IPC, UTS and
/// mount namespaces of its own (a user namespace too when not root), no capability in any
/// set, and a `/tmp` where the folder its job names is, and a file planted beside it is not.
#[test]
fn a_worker_has_namespaces_and_a_tmp_of_its_own_with_its_jobs_folder_let_through() {
    let root = nix::unistd::geteuid().is_root();
    if let Some(errno) = user_namespace_refusal().filter(|_| !root) {
        eprintln!("{SEEN} none: no user namespace for this user (errno {errno})");
        return;
    }
    let job = tempfile::Builder::new()
        .prefix("cs-job")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(job.path().join("msg"), "the job's own\n").unwrap();
    let planted = tempfile::Builder::new()
        .prefix("cs-planted")
        .tempfile_in("/tmp")
        .unwrap();
    let script = format!(
        "cat {job}/msg; test -e {planted} && echo PLANTED-SEEN; \
         grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status; sleep 1",
        job = job.path().display(),
        planted = planted.path().display(),
    );
    let job_path = job.path().join("msg").display().to_string();
    let (out, own) = worker_says(&script, &[&job_path]);
    eprintln!("{SEEN} {}", own.join(" "));
    assert!(out.starts_with("the job's own\n"), "{out}");
    assert!(!out.contains("PLANTED-SEEN"), "{out}");
    for set in ["CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            out.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {out}"
        );
    }
    // A PID namespace for both: root's from its spawning thread, another user's made by the
    // forked child inside its user namespace.
    let mut want = vec!["net", "ipc", "uts", "mnt", "pid"];
    if !root {
        want.push("user");
    }
    for ns in want {
        assert!(own.iter().any(|o| o == ns), "{ns}: {own:?}");
    }
    // The engine's own /tmp is not the worker's.
    let engine = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!engine.contains(" /tmp rw,nosuid,nodev,noexec"), "{engine}");

    // A job that names `/tmp` itself keeps the engine's: the planted file is there.
    let (out, own) = worker_says(&script, &["/tmp"]);
    assert!(out.contains("PLANTED-SEEN"), "{out}");
    assert!(!own.iter().any(|o| o == "mnt"), "{own:?}");
}

/// Root runs the test above, and the PID namespace's below, again as `nobody` (`setpriv`),
/// which takes the other road: a user namespace of its own, with the PID namespace made by
/// the forked child. The test binary is run through a descriptor, so that no
/// folder above it need be open to that user.
#[test]
fn a_user_that_is_not_root_gives_its_workers_the_same_in_a_user_namespace() {
    if !nix::unistd::geteuid().is_root() || which("setpriv").is_none() {
        return;
    }
    let exe = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
    const AT: i32 = 200;
    let raw = exe.as_raw_fd();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(format!("/proc/self/fd/{AT}"))
        .args([
            "--exact",
            "worker::jail_tests::a_worker_has_namespaces_and_a_tmp_of_its_own_with_its_jobs_folder_let_through",
            "worker::jail_tests::a_worker_is_pid_2_of_a_pid_namespace_that_ends_with_it",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir("/")
        .env("TMPDIR", "/tmp");
    // SAFETY: in the forked child before exec: one dup2 onto a fixed number (the copy is
    // not close-on-exec), an async-signal-safe call on a descriptor opened before the fork.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
            if libc::dup2(raw, AT) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    assert!(text.contains("2 passed"), "{text}");
    let line = text.lines().find(|l| l.starts_with(SEEN)).unwrap_or("");
    // This machine's kernel allows unprivileged user namespaces: the worker of `nobody` has
    // one, with the others inside it. The one refusal taken is the emulator's: under
    // qemu-user (CI's AArch64 half) every process has more than one thread, and `unshare`
    // of a user namespace then fails with EINVAL; the line says so and the worker runs in
    // the engine's namespaces.
    let allowed = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .is_ok_and(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0));
    let emulated = line.ends_with(&format!("(errno {})", libc::EINVAL));
    if allowed && !emulated {
        assert!(line.contains("user") && line.contains("mnt"), "{text}");
    }
}

/// A worker is the second process of a PID namespace of its own: pid 2 there (the first
/// ignores the signals it sends itself), its parent outside (0), the engine out of its reach
/// (for `nobody`'s worker, of the engine's own uid, only the namespace keeps it so), and a
/// process it moved out of its group and session ends with it all the same. Root's, and
/// another user's where the kernel gives that user a user namespace (not under qemu-user).
#[test]
fn a_worker_is_pid_2_of_a_pid_namespace_that_ends_with_it() {
    if !nix::unistd::geteuid().is_root() && !crate::jail::namespaces::user_namespaces_allowed() {
        return;
    }
    let script = format!(
        "echo pid $$ parent $PPID; kill -0 {engine} 2>/dev/null && echo ENGINE-REACHED; \
         setsid sh -c 'read p rest < /proc/self/stat; echo escaped $p; \
         exec sleep 600 >/dev/null 2>&1' & sleep 0.3",
        engine = std::process::id()
    );
    let (out, own) = worker_says(&script, &[]);
    // 2, or a little more where the spawn itself starts a process first (qemu-user's
    // emulation of it): never 1, the number that ignores the signals it sends itself.
    let inside: u32 = out
        .strip_prefix("pid ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!((2..10).contains(&inside), "{out}");
    assert!(out.contains(" parent 0\n"), "{out}");
    assert!(!out.contains("ENGINE-REACHED"), "{out}");
    assert!(own.iter().any(|o| o == "pid"), "{own:?}");
    // The escaped process had its own session and group: `killpg` missed it, the end of
    // the namespace did not (`/proc` shows the host's numbers).
    let escaped: u32 = out
        .lines()
        .find_map(|l| l.strip_prefix("escaped "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    let stat = std::fs::read_to_string(format!("/proc/{escaped}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty(),
        "still there after its worker ended: {stat}"
    );
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| p.is_file())
}

/// `grep`s its own status through a real `Group` spawned as workers are.
fn worker_status() -> String {
    let mut cmd = Command::new("cat");
    cmd.arg("/proc/self/status").stdout(Stdio::piped());
    let mut g =
        Group::spawn_worker(&mut cmd, None, Default::default(), Default::default()).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut g.child_mut().stdout.take().unwrap(), &mut out).unwrap();
    g.finish();
    out
}

#[test]
fn a_worker_holds_no_capability_and_no_new_privs() {
    let status = worker_status();
    for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        let line = status.lines().find(|l| l.starts_with(set)).unwrap();
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    assert!(crate::jail::privileges::describe(&status, None).starts_with("no capabilities"));
    // Root's worker runs as another user: real, effective, saved and file uids and gids.
    if let Some(id) = crate::jail::identity::Identity::for_workers() {
        let (uid, gid) = (id.uid, id.gid);
        let want = |name: &str, id: u32| format!("{name}:\t{id}\t{id}\t{id}\t{id}");
        assert!(status.contains(&want("Uid", uid)), "{status}");
        assert!(status.contains(&want("Gid", gid)), "{status}");
        let groups = status.lines().find(|l| l.starts_with("Groups:")).unwrap();
        assert_eq!(groups.trim_end(), "Groups:", "{status}");
        assert!(
            crate::jail::privileges::describe(&status, None).ends_with(&format!(", uid {uid}"))
        );
    }
}
