//! The fault-injection fixture `libfaulty.so` driven through the real binary: `cyclescope hash
//! --lib libfaulty.so` runs `CryptHash` in a worker process, so each injected fault must come
//! back as the error a user would see (or, for harmless chatter, not at all) while the
//! `cyclescope` process itself survives. `hang` is not tested here: timeouts belong to the KAT
//! and measurement engines.

mod common;

use std::process::Output;

use cyclescope_core::catalog::bundled_library;
use iccs_sm3::iccs::pseudo_xof;

/// `cyclescope hash --lib libfaulty.so --digest-bits 256 --hex <hex>` with `FAULTY_MODE=mode`.
fn hash_with(mode: Option<&str>, hex: &str) -> Output {
    let lib = bundled_library("faulty");
    assert!(lib.is_file(), "{} not built", lib.display());
    let mut cmd = common::cyclescope();
    cmd.args(["hash", "--lib"])
        .arg(&lib)
        .args(["--digest-bits", "256", "--hex", hex])
        .env_remove("CYCLESCOPE_WORKER_EXE")
        .env_remove("FAULTY_MODE");
    if let Some(m) = mode {
        cmd.env("FAULTY_MODE", m);
    }
    cmd.output().expect("cyclescope runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// pseudoXOF-256 of `msg`, computed in this process.
fn expected(msg: &[u8]) -> String {
    let mut out = [0u8; 32];
    assert_eq!(pseudo_xof(256, msg, 8 * msg.len() as u64, &mut out), 0);
    hex::encode(out)
}

/// Asserts success and returns the one digest line.
fn digest_of(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    let out = stdout(o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "stdout must be the digest line only: {out:?}"
    );
    lines[0].to_string()
}

/// Asserts failure (not a crash of cyclescope itself) with `needle` in the error.
fn fails_with(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stdout(o).is_empty(), "no digest on failure: {}", stdout(o));
    let err = stderr(o);
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
}

#[test]
fn unset_mode_hashes_like_pseudoxof_256() {
    let fixture = digest_of(&hash_with(None, "00"));
    assert_eq!(fixture, expected(&[0]));
    let out = common::cyclescope()
        .args(["hash", "pseudoXOF-256", "--hex", "00"])
        .env_remove("CYCLESCOPE_WORKER_EXE")
        .output()
        .expect("cyclescope runs");
    assert_eq!(digest_of(&out), fixture);
}

#[test]
fn segv_is_reported_as_a_crash() {
    fails_with(&hash_with(Some("segv"), "00"), "crashed (SIGSEGV)");
}

#[test]
fn abort_is_reported_as_a_crash() {
    fails_with(&hash_with(Some("abort"), "00"), "crashed (SIGABRT)");
}

#[test]
fn error_code_is_reported() {
    fails_with(&hash_with(Some("error"), "00"), "CryptHash returned -3");
}

#[test]
fn overflow_is_caught_by_the_guards() {
    fails_with(&hash_with(Some("overflow"), "00"), "OVERFLOW");
}

#[test]
fn exit_is_an_error_not_a_success() {
    fails_with(&hash_with(Some("exit"), "00"), "without an answer");
}

#[test]
fn candidate_prints_do_not_pollute_the_digest() {
    // The fixture prints a fake protocol line on its stdout too; it must not be taken for the
    // worker's answer.
    assert_eq!(digest_of(&hash_with(Some("stdout"), "00")), expected(&[0]));
}

#[test]
fn wrong_digest_differs_in_the_first_byte_only() {
    let got = hex::decode(digest_of(&hash_with(Some("wrong"), "00"))).unwrap();
    let want = hex::decode(expected(&[0])).unwrap();
    assert_eq!(got[0], want[0] ^ 0xFF);
    assert_eq!(got[1..], want[1..]);
}

#[test]
fn slow_is_still_correct() {
    assert_eq!(digest_of(&hash_with(Some("slow"), "00")), expected(&[0]));
}

#[test]
fn at_limits_the_fault_to_one_message_length() {
    assert_eq!(digest_of(&hash_with(Some("error@2"), "00")), expected(&[0]));
    fails_with(&hash_with(Some("error@2"), "0000"), "CryptHash returned -3");
}

#[test]
fn unknown_mode_fails_loudly() {
    fails_with(&hash_with(Some("segfault"), "00"), "CryptHash returned -3");
}
