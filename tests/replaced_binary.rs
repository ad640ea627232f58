//! A rebuild or `cargo install` that replaces the `cyclescope` file while a run goes on must not
//! fail the jobs after it: workers start from the image the run opened at its start, not from
//! the path (which then names another file, or "… (deleted)"). A copy of the binary starts a
//! run of three bundled baselines at two lengths; once its first worker runs (the first KAT), the copy is deleted
//! and a file that cannot run is put in its place. Every job must still complete.

mod common;
use common::hostile as support;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use support::*;

/// Measures: queues for a CPU like every run.
#[test]
fn a_binary_replaced_mid_run_fails_no_job() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let exe = bin.join("cyclescope");
    std::fs::copy(EXE, &exe).unwrap();
    let out = tmp.path().join("run");
    let m = marker("replaced-binary");
    let _sweep = Sweep(m.clone());
    let mut cmd = common::cyclescope_at(&exe);
    cmd.args([
        "run",
        "sm3hash-256",
        "pseudohash-512",
        "--no-reference-jobs",
        "pseudoXOF-256",
        "--lengths",
        "64,128",
        "--trials",
        "2",
        "--trial-target",
        "0.01",
        "--allow-unfixed-host",
        "--out",
        path_str(&out),
    ])
    .current_dir(tmp.path())
    .env(MARKER_VAR, &m)
    .env("CYCLESCOPE_CACHE_DIR", tmp.path().join("cache"))
    .env_remove("CYCLESCOPE_WORKER_EXE")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    // A copy just written may be busy for a moment (ETXTBSY) in a forking test process.
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(26) => std::thread::sleep(Duration::from_millis(20)),
            other => break other.expect("the copy starts"),
        }
    };
    wait_for_process(&m, " worker ", Duration::from_secs(120));
    std::fs::remove_file(&exe).unwrap();
    std::fs::write(&exe, "not a program\n").unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(600));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        !stderr.contains("LOADFAIL") && !stderr.contains("cannot start worker"),
        "{stderr}"
    );
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("0 failed"), "{stderr}");
    assert_none_left(&m);
}
