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
    assert!(out.contains("secret.h: Permission denied"), "{text}");
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
