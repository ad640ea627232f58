//! `cyclescope build` on bad input, through the real binary and the real compiler: in the
//! broken fixture tree every problem is named for its instance (compile error, undefined
//! symbol at link time, a header without its define, a folder without sources) while the
//! others still build (one with its warning shown, one whose shipped KAT files disagree);
//! a missing compiler and a read-only output folder are named errors; the shared-lib
//! candidate builds only with its config.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::build::*;
use common::output_text;

/// The output line that starts with `prefix`, and the indented lines after it.
fn block(text: &str, prefix: &str) -> String {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(prefix));
    let mut out: Vec<&str> = lines.next().into_iter().collect();
    out.extend(lines.take_while(|l| l.starts_with("    ")));
    out.join("\n")
}

#[test]
fn each_broken_instance_is_named_and_the_others_build() {
    let work = tempfile::tempdir().unwrap();
    let src = submissions().join("broken");
    let o = cyclescope(work.path(), &["build", src.to_str().unwrap(), "--out", "T"]);
    let text = output_text(&o);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(out.contains("2 built, 0 cached, 4 failed"), "{text}");

    let fail = block(&out, "FAILED broken/FAIL-256 ");
    assert!(fail.contains("error: expected"), "{text}");
    let undef = block(&out, "FAILED broken/UNDEF-256 ");
    assert!(
        undef.contains("undefined reference to `undef_fixture_compress'"),
        "{text}"
    );
    assert!(
        out.contains(
            "NODEF-256/CryptHash_AlgorithmInstance.h: no `#define DIGEST_BIT_LENGTH` (the ICCS \
             instance header must define it)"
        ),
        "{text}"
    );
    assert!(out.contains("EMPTY-256: no source files"), "{text}");
    let warned = block(&out, "built  broken/FIXH-512 ");
    assert!(warned.contains("warning(s)"), "{text}");
    assert!(
        warned.contains("FIXH-512 fixture: this instance warns on purpose"),
        "{text}"
    );
    assert!(out.contains("KAT    FIXH-512 PASS"), "{text}");
    assert!(
        out.contains("KAT    FIXH-256 MISMATCH KAT_2_12_FIXH-256.txt: sha256"),
        "{text}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not built: FAIL-256, UNDEF-256, EMPTY-256 (folder), NODEF-256 (folder)"),
        "{text}"
    );

    let json = build_json(&work.path().join("T"));
    assert_eq!(json["instances"]["broken/FIXH-256"]["kat"], "MISMATCH");
    assert_eq!(json["instances"]["broken/FIXH-512"]["build_warnings"], 2);
    let failed = json["failed"]["broken/UNDEF-256"]["error"]
        .as_str()
        .unwrap();
    assert!(failed.contains("undefined reference"), "{failed}");
    // The failed build's log is kept in the tree.
    let log = std::fs::read_to_string(work.path().join("T/broken/build/UNDEF-256.log")).unwrap();
    assert!(log.contains("-Wl,--no-undefined"), "{log}");
    assert!(!work.path().join("T/broken/lib/libUNDEF-256.so").exists());
}

#[test]
fn a_missing_compiler_is_named() {
    let work = tempfile::tempdir().unwrap();
    let src = submissions().join("fixhash");
    let o = cyclescope(
        work.path(),
        &[
            "build",
            src.to_str().unwrap(),
            "--cc",
            "no-such-cc-anywhere",
            "--out",
            "T",
        ],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("C compiler \"no-such-cc-anywhere\" cannot be run"),
        "{text}"
    );
}

/// As root, the compiler runs as an unprivileged user: one that user cannot reach (here in
/// root's folder of mode 0700) is named with that uid, not taken for a missing one.
#[test]
fn a_compiler_the_unprivileged_user_cannot_run_is_named() {
    use std::os::unix::fs::PermissionsExt;
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let bin = work.path().join("closed/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let closed = work.path().join("closed");
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    let cc = bin.join("cc");
    std::fs::write(&cc, "#!/bin/sh\nexec cc \"$@\"\n").unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let src = submissions().join("fixhash");
    let o = cyclescope(
        work.path(),
        &[
            "build",
            src.to_str().unwrap(),
            "--cc",
            cc.to_str().unwrap(),
            "--out",
            "T",
            "--no-kat",
        ],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let want = format!(
        "C compiler {:?} cannot be run as uid ",
        cc.to_str().unwrap()
    );
    assert!(stdout(&o).contains(&want), "{text}");
    assert!(stdout(&o).contains("Permission denied"), "{text}");
}

/// A read-only folder: a read-only tmpfs for root (which ignores mode bits), mode 0555 for
/// anyone else.
struct ReadOnly(PathBuf, bool);

impl ReadOnly {
    fn new(path: PathBuf) -> Self {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o555)).unwrap();
        // Mode bits stop everyone but root; when they do not stop us, mount.
        let probe = path.join("probe");
        let root = std::fs::write(&probe, b"").is_ok();
        if root {
            std::fs::remove_file(&probe).unwrap();
            let out = Command::new("mount")
                .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
                .arg(&path)
                .output()
                .expect("running mount");
            assert!(
                out.status.success(),
                "cannot mount a read-only tmpfs on {} (as root): {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Self(path, root)
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if self.1 {
            let _ = Command::new("umount").arg(&self.0).status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn a_read_only_output_folder_is_named() {
    let work = tempfile::tempdir().unwrap();
    let ro = ReadOnly::new(work.path().join("ro"));
    let src = submissions().join("fixhash");
    let o = cyclescope(
        work.path(),
        &["build", src.to_str().unwrap(), "--out", "ro/T"],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("output folder ro/T cannot be written"),
        "{text}"
    );
    drop(ro);
}

#[test]
fn the_shared_lib_candidate_builds_with_its_config_only() {
    let work = tempfile::tempdir().unwrap();
    let config = submissions().join("config.toml");
    let src = submissions().join("sharedlib");
    let o = cyclescope(
        work.path(),
        &["build", src.to_str().unwrap(), "--out", "bare", "--no-kat"],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(stdout(&o).contains("fixh.h"), "{text}");

    // By root folder (the config's `root`) and by id alone.
    for args in [
        vec!["build", src.to_str().unwrap(), "--out", "T", "--no-kat"],
        vec!["build", "--id", "hash-98", "--out", "T2", "--no-kat"],
    ] {
        let mut all = vec!["--config", config.to_str().unwrap()];
        all.extend(args);
        let o = cyclescope(work.path(), &all);
        let text = output_text(&o);
        assert_eq!(o.status.code(), Some(0), "{text}");
        assert!(stdout(&o).contains("hash-98/SHL-512"), "{text}");
    }
    for (label, want) in [
        (
            "SHL-256",
            "fba97b7e5dd3eebfb54ba62c83128e565d2c4a8d0a5c3be4b66b73a85cd0a7af",
        ),
        (
            "SHL-512",
            "e4841a6b736f704b76913a776406c931c7f87bf9c90d6eaf55cdec81667b08098806bc6713377b82a076845a6f23ab6244ab4c6cab4614789e4554ff8a880841",
        ),
    ] {
        let o = cyclescope(
            work.path(),
            &["hash", label, "--scan", "T", "--hex", "616263"],
        );
        assert_eq!(stdout(&o).trim(), want, "{}", output_text(&o));
    }
}

#[test]
fn a_failed_rebuild_leaves_no_earlier_library_behind() {
    let work = tempfile::tempdir().unwrap();
    let from = submissions().join("fixhash/Reference_Implementation/FIXH-256");
    let inst = work.path().join("sub/Reference_Implementation/FIXH-256");
    std::fs::create_dir_all(&inst).unwrap();
    for f in [
        "CryptHash_AlgorithmInstance.h",
        "CryptHash_AlgorithmInstance.c",
        "fixh.c",
        "fixh.h",
    ] {
        std::fs::copy(from.join(f), inst.join(f)).unwrap();
    }
    let args = ["build", "sub", "--id", "hash-97", "--out", "T", "--no-kat"];
    let o = cyclescope(work.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let lib = work.path().join("T/hash-97/lib/libFIXH-256.so");
    assert!(lib.is_file());

    std::fs::write(inst.join("fixh.c"), "int fixh(void) { return 0 }\n").unwrap();
    let o = cyclescope(work.path(), &args);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert!(
        !lib.exists(),
        "the library of the earlier build is still there"
    );
    let json = build_json(&work.path().join("T"));
    assert!(
        json["instances"].get("hash-97/FIXH-256").is_none(),
        "{json}"
    );
    assert!(json["failed"].get("hash-97/FIXH-256").is_some(), "{json}");
}
