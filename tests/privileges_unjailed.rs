//! The privileges fixture called by a plain program, with no jail around it: what
//! `tests/hostile_privileges_kinds.rs` sees refused in every kind of worker is open here, so
//! none of those refusals passes for want of trying.

mod common;
use common::hostile as support;

use support::*;

/// What the fixture prints for each thing that worked.
const WORKED: &str = "privileges fixture:";

/// The fixture called by a plain program, no jail: what the tests above see refused is what
/// it finds open here, so none of them passes for want of trying. A pidfd on the parent and
/// securebits left open need no privilege; the rest need the capability named, which root
/// holds in CI. The clock is left alone here: it would be set for the whole machine.
#[test]
fn without_the_jail_the_fixture_finds_these_privileges() {
    let t = tempfile::tempdir().unwrap();
    let lib = build_fixture("privileges", t.path());
    let driver = build_unjailed(t.path(), &lib);
    let root = nix::unistd::geteuid().is_root();
    let target = t.path().join("someone-elses.txt");
    std::fs::write(&target, "not yours\n").unwrap();
    if root {
        std::os::unix::fs::chown(&target, Some(65533), Some(65533)).unwrap();
    }
    let cases = [
        ("chmod", root),    // CAP_FOWNER
        ("setxattr", root), // CAP_FOWNER
        ("pidfd-open", true),
        ("securebits", true),
        ("syslog", holds(34)),                        // CAP_SYSLOG
        ("kmsg-write", root),                         // /dev/kmsg is root's, mode 0644
        ("clone-newns", holds(21)),                   // CAP_SYS_ADMIN
        ("perf-system-wide", holds(38) || holds(21)), // CAP_PERFMON
    ];
    for (behaviour, open) in cases.into_iter().filter(|&(_, open)| open) {
        let o = std::process::Command::new(&driver)
            .env("CYCLESCOPE_PRIVILEGES_ONLY", behaviour)
            .env("CYCLESCOPE_PRIVILEGES_TARGET", &target)
            .env_remove("CYCLESCOPE_PRIVILEGES_AFTER")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            !out.starts_with("000000") && out.trim_end().ends_with(" 1"),
            "{behaviour} (open: {open}) was not found open without the jail: {}",
            text(&o)
        );
        assert!(String::from_utf8_lossy(&o.stderr).contains(WORKED));
    }
}
