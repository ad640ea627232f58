use super::protocol_line::signal_name;
use super::*;

/// A worker program that speaks the protocol from `sh`: its cgroup line, then `hog`
/// (an `awk` string of 2^n bytes) run, then `done`.
fn shell_worker(dir: &std::path::Path, memory: &str, hog: u32) -> PathBuf {
    let exe = dir.join("worker.sh");
    let script = format!(
        "#!/bin/sh\nread t\necho \"$t \\\"$(grep {memory} /proc/self/cgroup)\\\"\"\n\
         awk 'BEGIN {{ s = \"x\"; for (i = 0; i < {hog}; i++) s = s s; print length(s) }}' >&2\n\
         echo \"$t \\\"done\\\"\"\n"
    );
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    exe
}

fn shell_run(exe: PathBuf, address_space: u64) -> (Vec<String>, Outcome) {
    let cmd = WorkerCommand {
        exe,
        args: Vec::new(),
        timeout: Duration::from_secs(60),
        cancel: None,
        limits: Limits::standard(address_space),
        pinned_cpu: None,
        launcher: None,
        go_line: None,
        libraries: Vec::new(),
        cwd: None,
        files: None,
    };
    let mut said = Vec::new();
    let outcome = run(&cmd, |m: String| {
        said.push(m);
        Ok(())
    })
    .unwrap();
    (said, outcome)
}

#[test]
fn a_worker_runs_in_a_control_group_that_counts_and_bounds_its_memory() {
    let root = nix::unistd::geteuid().is_root();
    let memory = if std::path::Path::new("/sys/fs/cgroup/memory").exists() {
        ":memory:"
    } else {
        "0::"
    };
    let dir = tempfile::tempdir().unwrap();
    // 32 MiB in a worker of 256: it runs, and its group saw at least that much.
    let (said, outcome) = shell_run(shell_worker(dir.path(), memory, 25), 256);
    assert_eq!(said.last().map(String::as_str), Some("done"), "{outcome:?}");
    let Some(peak) = outcome.peak_memory_bytes else {
        // Only a user the machine gives no cgroup to runs without one.
        assert!(!root, "root's worker had no control group: {said:?}");
        return;
    };
    assert!(said[0].contains("cyclescope-"), "{said:?}");
    assert!(peak >= 32 << 20, "peak {peak}");
    assert!(outcome.stderr_tail.contains("33554432"), "{outcome:?}");
    // Its CPU time, where the machine accounts it (root here: v1's cpuacct), holds the
    // leader's own and the awk it started; a zero or a missing account fails.
    let accounted =
        std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|m| m.contains("cpuacct"));
    if root && accounted {
        let group = outcome
            .group_cpu
            .expect("root's worker group counts CPU time");
        assert!(group > std::time::Duration::ZERO, "{outcome:?}");
        assert!(group >= outcome.cpu.unwrap_or_default(), "{outcome:?}");
    }
    // 128 MiB in a group of 64: the kernel kills the process that holds it (the shell
    // speaking for the worker survives), and the end says which limit.
    let (_, outcome) = shell_run(shell_worker(dir.path(), memory, 27), 64);
    assert!(!outcome.stderr_tail.contains("134217728"), "{outcome:?}");
    assert!(
        outcome
            .limit_note
            .contains("control group's 64.0 MiB memory limit"),
        "{outcome:?}"
    );
}

#[test]
fn lines_without_the_token_or_json_are_tampering() {
    let token = SessionToken::generate().unwrap();
    let good = format!("{} 7", token.as_str());
    assert_eq!(parse_line::<u32>(Ok(good.as_bytes()), &token), Ok(7));
    let foreign = parse_line::<u32>(Ok(b"{\"t\":\"done\"}"), &token).unwrap_err();
    assert!(foreign.0.contains("did not write"), "{foreign:?}");
    let garbled = format!("{} {{nope", token.as_str());
    let e = parse_line::<u32>(Ok(garbled.as_bytes()), &token).unwrap_err();
    assert!(e.0.contains("malformed"), "{e:?}");
    let e = parse_line::<u32>(Err(Framing::Unterminated), &token).unwrap_err();
    assert!(e.0.contains("unterminated"), "{e:?}");
}

#[test]
fn signals_have_names() {
    assert_eq!(signal_name(11), "SIGSEGV");
    assert_eq!(signal_name(6), "SIGABRT");
}
