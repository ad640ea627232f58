//! The compiler's address-space limit through `cyclescope build` (issue 31): the compiler of
//! a build that names no limit runs with RLIMIT_AS at 2 GiB; `[build] max_compiler_memory_mib`
//! in the config changes it, and `--max-compiler-memory` beats the config. The compiler is a
//! script of the test's own (`[build] cc` or `--cc`) that writes the limit it was given
//! (`ulimit -v`, KiB) into the instance's build log, then runs the system's `cc`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::build::{cyclescope, stdout};
use common::output_text;

/// What the compiler script writes before the limit.
const SAID: &str = "compiler address space: ";

/// `<prefix>/bin/cc`, the saying compiler, in a folder anyone may enter (root's compiler is
/// another user).
fn saying_compiler() -> (tempfile::TempDir, PathBuf) {
    let prefix = tempfile::tempdir().unwrap();
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    mode(prefix.path(), 0o755);
    std::fs::create_dir(prefix.path().join("bin")).unwrap();
    mode(&prefix.path().join("bin"), 0o755);
    let cc = prefix.path().join("bin/cc");
    std::fs::write(
        &cc,
        format!("#!/bin/sh\necho \"{SAID}$(ulimit -v)\" >&2\nexec cc \"$@\"\n"),
    )
    .unwrap();
    mode(&cc, 0o755);
    (prefix, cc)
}

/// A submission tree `dir/sub` with one instance, `OK-256`, that builds.
fn submission(dir: &Path) -> PathBuf {
    let root = dir.join("sub");
    let inst = root.join("Reference_Implementation/OK-256");
    std::fs::create_dir_all(&inst).unwrap();
    std::fs::write(
        inst.join("CryptHash_AlgorithmInstance.h"),
        "#define ALGORITHM_INSTANCE \"OK-256\"\n#define DIGEST_BIT_LENGTH 256\n",
    )
    .unwrap();
    std::fs::write(
        inst.join("hash.c"),
        "#include \"CryptHash_AlgorithmInstance.h\"\n\
         int CryptHash(int bits, const unsigned char *m, unsigned long long n, unsigned char *d) \
         { for (int i = 0; i < bits / 8; i++) d[i] = (unsigned char)(i + (n ? m[0] : 0)); \
         return 0; }\n",
    )
    .unwrap();
    root
}

/// Builds the submission in a folder of its own with `args` after `build SRC --out T
/// --no-kat`, and returns the limit the compiler said, in KiB as `ulimit -v` prints it.
fn limit_seen(extra: &[&str]) -> String {
    let work = tempfile::tempdir().unwrap();
    let root = submission(work.path());
    let mut args = vec!["build", root.to_str().unwrap(), "--out", "T", "--no-kat"];
    args.extend_from_slice(extra);
    let o = cyclescope(work.path(), &args);
    let text = output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(stdout(&o).contains("1 built, 0 cached, 0 failed"), "{text}");
    let log = std::fs::read_to_string(work.path().join("T/sub/build/OK-256.log")).unwrap();
    log.lines()
        .find_map(|l| l.strip_prefix(SAID))
        .unwrap_or_else(|| panic!("the compiler script did not run: {log}\n{text}"))
        .to_string()
}

/// Whether a limit set on a process here holds: not under an emulator such as qemu-user,
/// which accepts RLIMIT_AS and keeps it from the program (it would bound the emulator).
fn address_space_limits_hold() -> bool {
    let o = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 1048576 && ulimit -v"])
        .output()
        .expect("sh runs");
    String::from_utf8_lossy(&o.stdout).trim() == "1048576"
}

#[test]
fn the_compiler_has_two_gib_of_address_space_unless_the_config_or_the_option_says_otherwise() {
    if !address_space_limits_hold() {
        eprintln!("skipped: RLIMIT_AS set here does not hold (an emulator?)");
        return;
    }
    let (_prefix, cc) = saying_compiler();
    let cc = cc.to_str().unwrap();
    // No option, no config: 2048 MiB.
    assert_eq!(limit_seen(&["--cc", cc]), (2048u64 << 10).to_string());

    // The config's key, with the compiler named there too.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[build]\ncc = {cc:?}\nmax_compiler_memory_mib = 700\n"),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    assert_eq!(
        limit_seen(&["--config", config]),
        (700u64 << 10).to_string()
    );
    // The option over the config.
    assert_eq!(
        limit_seen(&["--config", config, "--max-compiler-memory", "900"]),
        (900u64 << 10).to_string()
    );
}
