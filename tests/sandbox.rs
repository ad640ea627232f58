//! The worker's sandbox against C libraries written to break out: one opens a network socket
//! while hashing, one runs a program from its constructor, one writes a file outside anything
//! it was given. The first two are stopped (the worker dies of SIGSYS and the status says it
//! was the sandbox); the write is denied (the file never appears) — while the same library,
//! loaded in this unsandboxed test process, does create it, so the test can fail.

mod common;

use common::{cyclescope_in as cyclescope, output_text as text};

const SANDBOX_NOTE: &str = "stopped by the worker sandbox: a forbidden system call";

#[test]
fn a_library_opening_a_socket_is_stopped_and_the_kat_says_why() {
    let t = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source(
        "hash-97",
        "sock256",
        256,
        "int s = socket(AF_INET, SOCK_STREAM, 0); if (s >= 0) close(s);",
        "#include <sys/socket.h>\n#include <netinet/in.h>\n#include <unistd.h>",
    );
    let lib = common::cc::build_library(t.path(), "sock256", &source);
    let o = cyclescope(
        t.path(),
        &["kat", "--lib", lib.to_str().unwrap(), "--out", "k"],
    );
    assert_eq!(o.status.code(), Some(7), "CRASH: {}", text(&o));
    assert!(text(&o).contains("CRASH signal=SIGSYS"), "{}", text(&o));
    assert!(text(&o).contains(SANDBOX_NOTE), "{}", text(&o));
    let log = std::fs::read_to_string(t.path().join("k/kat/hash-97/sock256.log")).unwrap();
    assert!(log.contains(SANDBOX_NOTE), "{log}");
}

#[test]
fn a_library_running_a_program_from_its_constructor_is_stopped() {
    let t = tempfile::tempdir().unwrap();
    let marker = t.path().join("ran");
    let source = common::cc::candidate_source(
        "hash-96",
        "exec256",
        256,
        "",
        &format!(
            "#include <unistd.h>\n__attribute__((constructor)) static void run(void) {{\n\
             char *argv[] = {{\"/bin/sh\", \"-c\", \"touch {}\", 0}};\n\
             execve(\"/bin/sh\", argv, 0);\n}}",
            marker.display()
        ),
    );
    let lib = common::cc::build_library(t.path(), "exec256", &source);
    let o = cyclescope(t.path(), &["list", "--lib", lib.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("crashed (SIGSYS) in its worker"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains(SANDBOX_NOTE), "{}", text(&o));
    assert!(!marker.exists(), "the program ran");
}

#[test]
fn a_library_writing_outside_its_folder_is_denied() {
    let t = tempfile::tempdir().unwrap();
    let escaped = t.path().join("escaped.txt");
    let body = format!(
        "int fd = open(\"{}\", O_WRONLY | O_CREAT | O_TRUNC, 0644);\n\
         if (fd >= 0) {{ write(fd, \"x\", 1); close(fd); }} else perror(\"fixture open\");",
        escaped.display()
    );
    let source = common::cc::candidate_source(
        "hash-95",
        "write256",
        256,
        &body,
        "#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>",
    );
    let lib = common::cc::build_library(t.path(), "write256", &source);
    let lib_s = lib.to_str().unwrap();

    // In a worker: the digest comes back, the file does not appear.
    let o = cyclescope(t.path(), &["hash", "--lib", lib_s, "--hex", "00"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!escaped.exists(), "the worker wrote outside its folder");
    // A KAT job may write its own folder, still not elsewhere.
    let o = cyclescope(t.path(), &["kat", "--lib", lib_s, "--out", "k"]);
    assert_eq!(o.status.code(), Some(2), "NOKAT: {}", text(&o));
    assert!(
        t.path()
            .join("k/katgen/hash-95/write256/KAT_2_12_write256.txt")
            .is_file()
    );
    assert!(!escaped.exists(), "the KAT worker wrote outside its folder");

    // Unsandboxed, the same library does write the file.
    // SAFETY: a fixture written above for this test; its CryptHash writes one file.
    unsafe {
        let l = libloading::Library::new(&lib).unwrap();
        let f: libloading::Symbol<unsafe extern "C" fn(i32, *const u8, u64, *mut u8) -> i32> =
            l.get(b"CryptHash\0").unwrap();
        let mut digest = [0u8; 32];
        assert_eq!(f(256, [0u8].as_ptr(), 8, digest.as_mut_ptr()), 0);
    }
    assert!(
        escaped.exists(),
        "the fixture's write works outside the sandbox"
    );
}

/// Trials run in their own program (`cyclescope-worker`, no std), which installs the same
/// sandbox by hand: the socket kills the trial process, the write is denied while the trials
/// complete.
#[test]
fn trial_processes_are_sandboxed_too() {
    let t = tempfile::tempdir().unwrap();
    let escaped = t.path().join("escaped-in-trial.txt");
    let write_body = format!(
        "int fd = open(\"{}\", O_WRONLY | O_CREAT | O_TRUNC, 0644);\n\
         if (fd >= 0) {{ write(fd, \"x\", 1); close(fd); }}",
        escaped.display()
    );
    let writer = common::cc::build_library(
        t.path(),
        "write256",
        &common::cc::candidate_source(
            "hash-95",
            "write256",
            256,
            &write_body,
            "#include <fcntl.h>\n#include <unistd.h>",
        ),
    );
    let socket = common::cc::build_library(
        t.path(),
        "sock256",
        &common::cc::candidate_source(
            "hash-97",
            "sock256",
            256,
            "int s = socket(AF_INET, SOCK_STREAM, 0); if (s >= 0) close(s);",
            "#include <sys/socket.h>\n#include <netinet/in.h>\n#include <unistd.h>",
        ),
    );
    let measure = |lib: &std::path::Path, out: &str| {
        cyclescope(
            t.path(),
            &common::quick_run(lib.to_str().unwrap(), out, true),
        )
    };
    let o = measure(&writer, "w");
    assert!(text(&o).contains("done write256 @ 32 B"), "{}", text(&o));
    assert!(text(&o).contains(" measured, 0 failed"), "{}", text(&o));
    assert!(
        !escaped.exists(),
        "a trial process wrote outside any folder"
    );

    let o = measure(&socket, "s");
    assert!(text(&o).contains(" measured, 1 failed"), "{}", text(&o));
    assert!(text(&o).contains("SIGSYS"), "{}", text(&o));
    assert!(text(&o).contains(SANDBOX_NOTE), "{}", text(&o));
}

#[test]
fn check_says_what_the_sandbox_enforces_here() {
    let t = tempfile::tempdir().unwrap();
    let o = cyclescope(t.path(), &["check"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("worker sandbox: "))
        .unwrap_or_else(|| panic!("no sandbox line: {}", text(&o)));
    // Either state is said plainly; this machine's kernel has both.
    assert!(line.contains("seccomp allowlist on"), "{line}");
    assert!(line.contains("Landlock fully enforced"), "{line}");
    // Reads are limited as well as writes (issue 31, item 4).
    assert!(
        line.contains(
            "reads only the loader, shared libraries, /proc, devices and the job's files"
        ),
        "{line}"
    );
    // Root on a machine with cgroups (CI) puts every worker in a group of its own.
    if nix::unistd::geteuid().is_root() && std::path::Path::new("/sys/fs/cgroup").exists() {
        assert!(line.contains("a control group of its own"), "{line}");
    }
    // What the engine read of that worker from its /proc entry, not what the worker said.
    let seen = out
        .lines()
        .find(|l| l.starts_with("worker seen from outside: "))
        .unwrap_or_else(|| panic!("no outside line: {}", text(&o)));
    assert!(seen.contains("seccomp filter ("), "{seen}");
    assert!(seen.contains("no_new_privs set; no capabilities"), "{seen}");
    assert!(!seen.contains("no control group"), "{seen}");
    assert!(seen.contains("Landlock ABI "), "{seen}");
    // Root's worker has every namespace, its PID namespace included.
    if nix::unistd::geteuid().is_root() {
        assert!(
            seen.contains("namespaces of its own: net, ipc, uts, pid, mnt"),
            "{seen}"
        );
        assert!(!seen.contains('⚠'), "{seen}");
    }
    let o = cyclescope(t.path(), &["check", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let observed = &doc["sandbox"]["observed"];
    assert_eq!(observed["no_capabilities"], true, "{observed}");
    assert!(observed["gaps"].is_array(), "{observed}");
    assert!(observed["landlock"]["enforced_abi"].is_u64(), "{observed}");
}

/// An engine that is not root gives its worker a PID namespace (with the others) and reads the
/// namespaces of its worker, which is not dumpable, from outside all the same: the worker's user namespace is the engine's to inspect (its owner
/// holds every capability in it). Root runs `check` as `nobody` to show it, where the kernel
/// gives that user a user namespace (not under qemu-user, whose threads forbid one).
#[test]
fn a_user_that_is_not_root_sees_its_workers_namespaces_from_outside() {
    let allowed = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .is_ok_and(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0));
    if !nix::unistd::geteuid().is_root() || !allowed {
        return;
    }
    let t = common::open_tempdir();
    let o = common::cyclescope_as_nobody(t.path())
        .args(["check", "--cpu", "0"])
        .current_dir(t.path())
        .env("HOME", t.path())
        .env("XDG_DATA_HOME", t.path().join("data"))
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .output()
        .expect("setpriv (util-linux) runs the binary as nobody");
    let out = String::from_utf8_lossy(&o.stdout);
    let seen = out
        .lines()
        .find(|l| l.starts_with("worker seen from outside: "))
        .unwrap_or_else(|| panic!("no outside line: {}", text(&o)));
    assert!(seen.contains("uid 65534"), "{seen}");
    let own = seen
        .split("namespaces of its own: ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("{seen}"));
    // A PID namespace too, made by the worker's forked parent inside its user namespace.
    for ns in ["net", "ipc", "uts", "pid", "user"] {
        assert!(own.split(", ").any(|o| o == ns), "{ns}: {seen}");
    }
    assert!(!seen.contains("not readable from outside"), "{seen}");
    assert!(!seen.contains("no PID namespace of its own"), "{seen}");
}
