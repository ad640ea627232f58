use super::*;

#[test]
fn cpu_time_is_utime_plus_stime_after_the_command_name() {
    let stat = "4242 (a (b) c) Z 1 4242 4242 0 -1 4227148 230 0 0 0 49 3 0 0 20 0 1 0";
    assert_eq!(
        cpu_time_from_stat(stat, 100),
        Some(Duration::from_millis(520))
    );
    assert_eq!(cpu_time_from_stat("4242 (x) Z 1", 100), None);
}

#[test]
fn a_worker_given_a_cpu_runs_there_from_its_start_and_so_do_its_threads() {
    let cpu = crate::cpu::last_allowed();
    // A shell that reports its own mask, then starts a child (a second task of the group)
    // that reports its own. `/proc/self`: `$$` and `$!` are numbers of the worker's PID
    // namespace, and `/proc` is the host's.
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "while read -r l; do case $l in Cpus_allowed_list*) echo \"$l\";; esac; done \
         < /proc/self/status; grep Cpus_allowed_list /proc/self/status",
    ])
    .stdout(std::process::Stdio::piped());
    let mut g = Group::spawn(&mut cmd, Some(cpu), None).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut g.child_mut().stdout.take().unwrap(), &mut out).unwrap();
    g.finish();
    let masks: Vec<&str> = out.lines().filter_map(|l| l.split('\t').nth(1)).collect();
    assert_eq!(masks, [cpu.to_string(), cpu.to_string()], "{out}");
}

#[test]
fn a_group_is_killed_whole_and_its_leader_reaped() {
    // A shell that leaves a sleeping child behind in its group, then exits.
    let mut cmd = Command::new("sh");
    // The sleeper says its pid as the host's `/proc` numbers it (`$!` is its number in the
    // worker's PID namespace).
    cmd.args([
        "-c",
        "sh -c 'read p r < /proc/self/stat; echo $p; exec sleep 300 >/dev/null 2>&1' &",
    ])
    .stdout(std::process::Stdio::piped());
    let mut g = Group::spawn(&mut cmd, None, None).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(g.child_mut().stdout.as_mut().unwrap(), &mut out).ok();
    let sleeper: i32 = out.trim().parse().unwrap();
    while !g.leader_ended() {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(g.leader_cpu_time().is_some());
    let status = g.finish().unwrap();
    assert!(status.success());
    // The sleeper is gone (a zombie at most, until its new parent reaps it).
    let mut state = None;
    for _ in 0..200 {
        state = std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
            .ok()
            .and_then(|s| s[s.rfind(')')? + 2..].chars().next());
        if state.is_none_or(|c| c == 'Z' || c == 'X') {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the group's sleeper {sleeper} survived (state {state:?})");
}

#[test]
fn a_worker_leads_a_session_without_a_terminal_and_is_killed_whole() {
    // The shell and a sleeper it leaves behind: both in the worker's session and group.
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "read -r s < /proc/self/stat; echo \"$s\"; sh -c 'read p r < /proc/self/stat; echo $p; exec sleep 300 >/dev/null 2>&1' &",
    ])
    .stdout(std::process::Stdio::piped());
    let mut g =
        Group::spawn_worker(&mut cmd, None, Default::default(), Default::default()).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(g.child_mut().stdout.as_mut().unwrap(), &mut out).ok();
    let mut lines = out.lines();
    let stat = lines.next().unwrap();
    let sleeper: i32 = lines.next().unwrap().parse().unwrap();
    // pid, (comm), state, ppid, pgrp, session, tty_nr
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let pid = g.pid().to_string();
    assert_eq!((f[2], f[3], f[4]), (&*pid, &*pid, "0"), "{stat}");
    g.finish();
    for _ in 0..200 {
        let state = std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
            .ok()
            .and_then(|s| s[s.rfind(')')? + 2..].chars().next());
        if state.is_none_or(|c| c == 'Z' || c == 'X') {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the worker's sleeper {sleeper} survived");
}

/// Spawns `sh -c script` as a group and waits (bounded) until `stopped` sees something.
fn stopped_of(script: &str) -> Stopped {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]);
    let g = Group::spawn(&mut cmd, None, None).unwrap();
    for _ in 0..2000 {
        // A leader seen in `/proc` before `waitid` has its signal is looked at again.
        match g.stopped() {
            Some(Stopped::Worker { signal }) if signal.starts_with("state") => {}
            Some(s) => return s,
            None => {}
        }
        assert!(!g.leader_ended(), "the shell ended without stopping");
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no stopped process seen in `{script}`");
}

#[test]
fn a_stopped_leader_is_seen_with_its_signal() {
    for signal in ["STOP", "TSTP", "TTIN", "TTOU"] {
        let seen = stopped_of(&format!("kill -{signal} $$; sleep 300"));
        let signal = format!("SIG{signal}");
        assert_eq!(seen, Stopped::Worker { signal });
    }
}

#[test]
fn a_stopped_descendant_is_seen_in_proc() {
    let seen = stopped_of("sleep 300 & kill -STOP $!; wait");
    assert!(
        matches!(seen, Stopped::Descendant { state: 'T', .. }),
        "{seen:?}"
    );
    assert!(seen.to_string().contains("is stopped (state T)"), "{seen}");
}

#[test]
fn a_running_group_is_not_stopped() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "sleep 300 & sleep 300"]);
    let g = Group::spawn(&mut cmd, None, None).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(g.stopped(), None);
}

#[test]
fn state_and_group_follow_the_command_name() {
    let stat = "4242 (a (b) c) T 1 4240 4240 0 -1";
    assert_eq!(state_and_group(stat), Some(('T', 4240)));
    assert_eq!(state_and_group("4242 (x) R 1"), None);
}
