//! `cyclescope build` on hostile sources, through the real binary and the real compiler: a
//! source that includes a secret file, top-level asm that `.incbin`s it, a macro bomb, and
//! an instance source that is a link to a file outside the tree. Each instance fails with a
//! named reason, a plain instance beside them still builds in the jail, and no byte of the
//! secret (a file of the test's own outside the tree, and `/etc/shadow` where the test can
//! read it, as root in CI) reaches the tree, the build cache or the command's output.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::build::*;
use common::output_text;

/// The secret file's content: a line the compiler would quote, a marker nothing else holds.
const SECRET: &str = "int cyclescope_secret_marker_5b1e = 0x7f3a9c; /* not for a build log */\n";

/// An instance header for `name`, 256 bits.
fn header(name: &str) -> String {
    format!(
        "#define ALGORITHM_INSTANCE \"{name}\"\n#define DIGEST_BIT_LENGTH 256\n\
         int CryptHash(int, const unsigned char *, unsigned long long, unsigned char *);\n"
    )
}

/// A CryptHash that builds, after `prefix`.
fn source(prefix: &str) -> String {
    format!(
        "{prefix}\n#include \"CryptHash_AlgorithmInstance.h\"\n\
         int CryptHash(int bits, const unsigned char *m, unsigned long long n, unsigned char *d) \
         {{ for (int i = 0; i < bits / 8; i++) d[i] = (unsigned char)(i + (n ? m[0] : 0)); \
         return 0; }}\n"
    )
}

/// `root/Reference_Implementation/<name>/` with its header and `hash.c` holding `text`.
fn instance(root: &Path, name: &str, text: &str) -> PathBuf {
    let dir = root.join("Reference_Implementation").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("CryptHash_AlgorithmInstance.h"), header(name)).unwrap();
    std::fs::write(dir.join("hash.c"), text).unwrap();
    dir
}

/// The secrets to look for: ours, and the lines of `/etc/shadow` when readable.
fn secrets(ours: &Path) -> Vec<Vec<u8>> {
    let mut out = vec![SECRET.trim_end().as_bytes().to_vec()];
    assert!(std::fs::read(ours).unwrap().starts_with(&out[0]));
    if let Ok(shadow) = std::fs::read("/etc/shadow") {
        out.extend(
            shadow
                .split(|&b| b == b'\n')
                .filter(|l| l.len() >= 8)
                .map(<[u8]>::to_vec),
        );
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Every regular file under `dir` (links not followed).
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let kind = e.file_type().unwrap();
        if kind.is_dir() {
            files(&e.path(), out);
        } else if kind.is_file() {
            out.push(e.path());
        }
    }
}

/// No secret in the tree, the cache or the output.
fn assert_no_secret(work: &Path, o: &Output, secrets: &[Vec<u8>]) {
    let mut all = Vec::new();
    files(&work.join("T"), &mut all);
    files(&work.join("cache"), &mut all);
    assert!(!all.is_empty());
    for s in secrets {
        assert!(
            !contains(&o.stdout, s) && !contains(&o.stderr, s),
            "{}",
            output_text(o)
        );
        for f in &all {
            assert!(
                !contains(&std::fs::read(f).unwrap(), s),
                "secret in {}",
                f.display()
            );
        }
    }
}

/// The secret file, in a folder of its own outside the tree.
fn secret_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.h");
    std::fs::write(&path, SECRET).unwrap();
    (dir, path)
}

#[test]
fn includes_incbin_and_a_macro_bomb_fail_in_the_jail_and_leak_nothing() {
    let (_keep, secret) = secret_file();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("hostile");
    let s = secret.display();
    instance(&root, "INC-256", &source(&format!("#include \"{s}\"")));
    instance(&root, "SHADOW-256", &source("#include \"/etc/shadow\""));
    let incbin = format!(
        "__asm__(\".section .rodata\\n.incbin \\\"{s}\\\"\\n.incbin \\\"/etc/shadow\\\"\\n.text\");"
    );
    instance(&root, "ASM-256", &source(&incbin));
    // 2^40 additions of `v`: the parser's tree outgrows any memory limit.
    let mut bomb = String::from("#define B0 v\n");
    for i in 1..=40 {
        bomb.push_str(&format!("#define B{i} (B{0}+B{0})\n", i - 1));
    }
    bomb.push_str("int bomb(int v) { return B40; }\n");
    instance(&root, "BOMB-256", &source(&bomb));
    instance(&root, "OK-256", &source(""));

    let start = Instant::now();
    let o = cyclescope(
        work.path(),
        &[
            "build",
            root.to_str().unwrap(),
            "--out",
            "T",
            "--no-kat",
            "--max-compiler-memory",
            "256",
        ],
    );
    let took = start.elapsed();
    let text = output_text(&o);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(out.contains("1 built, 0 cached, 4 failed"), "{text}");
    assert!(out.contains("built  hostile/OK-256 "), "{text}");
    for label in ["INC-256", "SHADOW-256", "ASM-256"] {
        assert!(out.contains(&format!("FAILED hostile/{label} ")), "{text}");
    }
    // The secret lies in a folder of the engine's /tmp the build does not name: the
    // compiler's /tmp of its own hides it (where namespaces can be made), Landlock refuses it.
    assert!(
        out.contains("secret.h: No such file or directory")
            || out.contains("secret.h: Permission denied"),
        "{text}"
    );
    assert!(out.contains("/etc/shadow: Permission denied"), "{text}");
    assert!(out.contains("FAILED hostile/BOMB-256 "), "{text}");
    assert!(
        out.contains("BOMB-256: the compiler ran out of memory (its limit is 256 MiB"),
        "{text}"
    );
    // The bomb is stopped by memory, long before the 300 s time limit.
    assert!(took < Duration::from_secs(200), "{took:?} {text}");
    assert_no_secret(work.path(), &o, &secrets(&secret));
}

#[test]
fn an_instance_source_linked_out_of_the_tree_is_refused_by_name() {
    let (_keep, secret) = secret_file();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("linked");
    let dir = instance(&root, "LINK-256", &source(""));
    std::os::unix::fs::symlink(&secret, dir.join("extra.c")).unwrap();

    let o = cyclescope(
        work.path(),
        &["build", root.to_str().unwrap(), "--out", "T", "--no-kat"],
    );
    let text = output_text(&o);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(out.contains("0 built, 0 cached, 1 failed"), "{text}");
    assert!(out.contains("FAILED "), "{text}");
    assert!(
        out.contains("LINK-256/extra.c links to a file outside the submission tree (in "),
        "{text}"
    );
    let folder = std::fs::canonicalize(secret.parent().unwrap()).unwrap();
    assert!(out.contains(&folder.display().to_string()), "{text}");
    assert_no_secret(work.path(), &o, &secrets(&secret));
}

/// A compiler of the test's own, `<prefix>/bin/cc`, that says its uid and runs the system's
/// `cc`: its install prefix is readable in the jail, and holds `include/root-only.h`, a file
/// of the secret's, root's (mode 0600).
fn saying_compiler() -> (tempfile::TempDir, PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let prefix = tempfile::tempdir().unwrap();
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    mode(prefix.path(), 0o755);
    for dir in ["bin", "include"] {
        std::fs::create_dir(prefix.path().join(dir)).unwrap();
        mode(&prefix.path().join(dir), 0o755);
    }
    let cc = prefix.path().join("bin/cc");
    std::fs::write(
        &cc,
        "#!/bin/sh\necho \"compiler uid: $(id -u)\" >&2\nexec cc \"$@\"\n",
    )
    .unwrap();
    mode(&cc, 0o755);
    let secret = prefix.path().join("include/root-only.h");
    std::fs::write(&secret, SECRET).unwrap();
    mode(&secret, 0o600);
    (prefix, cc, secret)
}

#[test]
fn a_roots_compiler_is_unprivileged_and_reads_no_root_only_file() {
    let (_prefix, cc, secret) = saying_compiler();
    // The tree lies in the test's folder, of mode 0700, root's: the compiler's user cannot
    // pass it, and one of its sources is root's alone, yet the instance builds (from a copy)
    // and finds a header by a path relative to its source.
    use std::os::unix::fs::PermissionsExt;
    let work = tempfile::tempdir().unwrap();
    std::fs::set_permissions(work.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let root = work.path().join("unpriv");
    let s = secret.display();
    let dir = instance(&root, "ROOTONLY-256", &source(&format!("#include \"{s}\"")));
    let ok = instance(&root, "OK-256", &source("#include \"../common/own.h\""));
    std::fs::create_dir_all(root.join("Reference_Implementation/common")).unwrap();
    std::fs::write(
        root.join("Reference_Implementation/common/own.h"),
        "enum { OWN = 1 };\n",
    )
    .unwrap();
    std::fs::set_permissions(ok.join("hash.c"), std::fs::Permissions::from_mode(0o600)).unwrap();

    let o = cyclescope(
        work.path(),
        &[
            "build",
            root.to_str().unwrap(),
            "--out",
            "T",
            "--no-kat",
            "--cc",
            cc.to_str().unwrap(),
        ],
    );
    let text = output_text(&o);
    let out = stdout(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let log = std::fs::read_to_string(work.path().join("T/unpriv/build/OK-256.log")).unwrap();
    if !nix::unistd::geteuid().is_root() {
        // Not root: nothing changes, the compiler is this user.
        let uid = nix::unistd::geteuid().as_raw();
        assert!(
            err.contains(&format!("the compiler runs as this user (uid {uid})")),
            "{text}"
        );
        assert!(log.contains(&format!("compiler uid: {uid}\n")), "{log}");
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(out.contains("1 built, 0 cached, 1 failed"), "{text}");
    assert!(out.contains("built  unpriv/OK-256 "), "{text}");
    // The build says who its compiler is, and the compiler itself agrees.
    let said = err
        .lines()
        .find_map(|l| l.strip_prefix("cyclescope: the compiler runs as uid "))
        .unwrap_or_else(|| panic!("{text}"));
    let uid: u32 = said.split(' ').next().unwrap().parse().unwrap();
    assert_ne!(uid, 0, "{text}");
    assert!(log.contains(&format!("compiler uid: {uid}\n")), "{log}");
    // Root's 0600 file, in a folder the jail lets the compiler read: denied by its uid. The
    // error names the source by its real path, not the private copy's.
    let real = std::fs::canonicalize(&dir).unwrap().join("hash.c");
    assert!(out.contains("FAILED unpriv/ROOTONLY-256 "), "{text}");
    assert!(out.contains("root-only.h: Permission denied"), "{text}");
    assert!(out.contains(&format!("{}:1:", real.display())), "{text}");
    let failed_log =
        std::fs::read_to_string(work.path().join("T/unpriv/build/ROOTONLY-256.log")).unwrap();
    assert!(
        failed_log.contains(&format!("{}:1:", real.display())),
        "{failed_log}"
    );
    assert!(!text.contains("cyclescope-staged") && !failed_log.contains("cyclescope-staged"));
    // Nothing of a compile's private folder stays in the cache.
    let mut cached = Vec::new();
    files(&work.path().join("cache"), &mut cached);
    assert!(
        cached
            .iter()
            .all(|f| !f.components().any(|c| c.as_os_str() == "work")),
        "{cached:?}"
    );
    assert_no_secret(work.path(), &o, &secrets(&secret));
}

/// An engine that is not root gives its compiler a PID namespace of its own, as it gives its
/// workers: the forked child makes it inside the compiler's user namespace and forks the
/// compiler into it (pid 2 there; its parent, the engine, outside), and the driver's `cc1`,
/// `as` and `ld` are born in it one after another. Root builds as `nobody` to show it, where
/// the kernel gives that user a user namespace.
#[test]
fn a_compiler_of_an_engine_that_is_not_root_has_a_pid_namespace_of_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let allowed = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .is_ok_and(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0));
    if !nix::unistd::geteuid().is_root() || !allowed {
        return;
    }
    let work = common::open_tempdir();
    let cc = work.path().join("saying-cc");
    std::fs::write(
        &cc,
        "#!/bin/sh\necho \"compiler pid: $$ parent: $PPID\" >&2\nexec cc \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = work.path().join("sub");
    instance(&root, "OK-256", &source(""));
    let mut cmd = common::cyclescope_as_nobody(work.path());
    common::suite_locks(&mut cmd);
    let o = cmd
        .args(["build", root.to_str().unwrap(), "--out", "T", "--no-kat"])
        .args(["--cc", cc.to_str().unwrap()])
        .current_dir(work.path())
        .env("HOME", work.path())
        .env("XDG_CACHE_HOME", work.path().join("cache"))
        .output()
        .expect("setpriv (util-linux) runs the binary as nobody");
    let text = output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(stdout(&o).contains("1 built, 0 cached, 0 failed"), "{text}");
    let log = std::fs::read_to_string(work.path().join("T/sub/build/OK-256.log")).unwrap();
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix("compiler pid: "))
        .unwrap_or_else(|| panic!("{log}"));
    // 2, never 1 (its namespace's first process is the holder); its parent is outside: 0.
    assert_eq!(line, "2 parent: 0", "{log}");
}
