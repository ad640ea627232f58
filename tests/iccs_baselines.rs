//! The bundled ICCS baseline libraries, loaded through the same loader a candidate goes
//! through (`HashLibrary::open` on `bundled_library`), must reproduce every line of the
//! harness's published ICCS self-test logs, report their metadata, reject unsupported widths
//! with -4 and stay inside their buffers.

mod common;

use std::path::{Path, PathBuf};

use cyclescope_core::catalog::bundled_library;
use cyclescope_core::plugin::{GuardedBuffer, HashLibrary, INVALID_DIGESTBITLEN};

/// One `ok …` line of a self-test log.
#[derive(Debug)]
struct Expected {
    line: String,
    message: Vec<u8>,
    rc: i32,
    /// The digest prefix the log shows (it prints the first 16 bytes).
    prefix: Vec<u8>,
}

/// A parsed `<label>-<width>.log`.
#[derive(Debug)]
struct SelftestLog {
    label: String,
    library: String,
    width: u32,
    expected: Vec<Expected>,
}

fn parse_message(what: &str) -> Option<Vec<u8>> {
    match what {
        "GB/T 32905 abc" => Some(b"abc".to_vec()),
        "GB/T 32905 abcdabcd..." => Some(b"abcd".repeat(16)),
        _ => Some(common::selftest_message(
            what.strip_prefix("len=")?.parse().ok()?,
        )),
    }
}

fn parse_log(path: &Path) -> SelftestLog {
    let label = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("log name")
        .to_string();
    let (family, width) = label.rsplit_once('-').expect("label is <name>-<width>");
    let width: u32 = width.parse().expect("width in the log name");
    let text = std::fs::read_to_string(path).expect("readable log");
    let mut expected = Vec::new();
    let mut result = None;
    for line in text.lines() {
        let bad = || panic!("{}: unrecognised line {line:?}", path.display());
        if let Some(instance) = line.strip_prefix("instance = ") {
            assert_eq!(instance, label, "{}", path.display());
        } else if line.starts_with("library = ") || line.starts_with("model = ") {
            // Provenance of the published run; nothing to reproduce.
        } else if let Some(rest) = line.strip_prefix("ok   ") {
            let Some((what, outcome)) = rest.rsplit_once(" rc=") else {
                bad()
            };
            let Some((rc, hex_prefix)) = outcome.split_once(' ') else {
                bad()
            };
            let Some(hex_prefix) = hex_prefix.strip_suffix("...") else {
                bad()
            };
            let (Some(message), Ok(rc), Ok(prefix)) =
                (parse_message(what), rc.parse(), hex::decode(hex_prefix))
            else {
                bad()
            };
            assert_eq!(prefix.len(), 16, "{line}");
            expected.push(Expected {
                line: line.to_string(),
                message,
                rc,
                prefix,
            });
        } else if let Some(rest) = line.strip_prefix("RESULT iccs ") {
            result = Some(rest.to_string());
        } else if !line.trim().is_empty() {
            bad();
        }
    }
    let n = expected.len();
    assert_eq!(
        result.as_deref(),
        Some(format!("{label} PASS ({n}/{n})").as_str()),
        "{}: RESULT line and ok lines disagree",
        path.display()
    );
    SelftestLog {
        library: family.to_ascii_lowercase(),
        label,
        width,
        expected,
    }
}

fn logs() -> Vec<SelftestLog> {
    let dir = common::iccs_selftest_logs();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    paths.sort();
    paths.iter().map(|p| parse_log(p)).collect()
}

fn open(name: &str) -> HashLibrary {
    let path = bundled_library(name);
    HashLibrary::open(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Calls `CryptHash` on guarded copies and checks both buffers' guards.
fn hash(lib: &HashLibrary, width: u32, message: &[u8]) -> (i32, Vec<u8>) {
    let mut msg = GuardedBuffer::new(message.len());
    msg.data_mut().copy_from_slice(message);
    let mut digest = GuardedBuffer::new(width.div_ceil(8) as usize);
    let rc = lib.crypt_hash(width, &msg, 8 * message.len() as u64, &mut digest);
    assert!(
        msg.guards_intact(),
        "message guards broken at width {width}"
    );
    assert!(
        digest.guards_intact(),
        "digest guards broken at width {width}"
    );
    assert_eq!(msg.data(), message, "the message was modified");
    (rc, digest.data().to_vec())
}

fn reproduce(family: &str) -> usize {
    let mut lines = 0;
    for log in logs().iter().filter(|l| l.library == family) {
        let lib = open(&log.library);
        lib.check_digest_bits(log.width)
            .unwrap_or_else(|e| panic!("{e}"));
        for want in &log.expected {
            let (rc, digest) = hash(&lib, log.width, &want.message);
            assert_eq!(rc, want.rc, "{}: {}", log.label, want.line);
            assert_eq!(
                hex::encode(&digest[..16]),
                hex::encode(&want.prefix),
                "{}: {}",
                log.label,
                want.line
            );
            lines += 1;
        }
    }
    lines
}

#[test]
fn all_twelve_published_logs_are_read() {
    let labels: Vec<String> = logs().into_iter().map(|l| l.label).collect();
    let mut want = vec!["sm3hash-256".to_string()];
    want.extend([512, 768, 1024].map(|b| format!("pseudohash-{b}")));
    want.extend([256, 384, 512, 768, 1024, 1152, 1280, 2048].map(|b| format!("pseudoXOF-{b}")));
    let mut sorted = want.clone();
    sorted.sort();
    assert_eq!(labels, sorted);
}

#[test]
fn sm3hash_reproduces_its_selftest_log() {
    // 18 self-test messages plus the two GB/T 32905 vectors.
    assert_eq!(reproduce("sm3hash"), 20);
}

#[test]
fn pseudohash_reproduces_its_selftest_logs() {
    assert_eq!(reproduce("pseudohash"), 3 * 18);
}

#[test]
fn pseudoxof_reproduces_its_selftest_logs() {
    assert_eq!(reproduce("pseudoxof"), 8 * 18);
}

#[test]
fn metadata_reads_through_the_loader() {
    for (name, instance, bits) in [
        ("sm3hash", "sm3hash-256", 256),
        ("pseudohash", "pseudohash", 0),
        ("pseudoxof", "pseudoXOF", 0),
    ] {
        let lib = open(name);
        let meta = lib.meta().unwrap_or_else(|| panic!("{name}: no ngcc_meta"));
        assert_eq!(meta.instance, instance);
        assert_eq!(meta.digest_bits, bits, "{name}");
        assert_eq!(meta.digest_len, bits / 8, "{name}");
        assert_eq!(
            (meta.id.as_str(), meta.kind.as_str(), meta.variant.as_str()),
            ("iccs", "hash", "iccs-baseline")
        );
    }
}

#[test]
fn unsupported_widths_return_minus_4_and_write_nothing() {
    for (name, width) in [
        ("sm3hash", 512),
        ("sm3hash", 128),
        ("pseudohash", 256),
        ("pseudohash", 1152),
        ("pseudoxof", 0),
    ] {
        let (rc, digest) = hash(&open(name), width, b"abc");
        assert_eq!(rc, INVALID_DIGESTBITLEN, "{name} at {width} bits");
        assert!(digest.iter().all(|&b| b == 0), "{name} wrote at {width}");
    }
}

#[test]
fn pseudoxof_clears_the_unused_bits_of_an_odd_width() {
    let lib = open("pseudoxof");
    let (rc, wide) = hash(&lib, 256, b"abc");
    assert_eq!(rc, 0);
    let (rc, narrow) = hash(&lib, 13, b"abc");
    assert_eq!(rc, 0);
    assert_eq!(narrow, [wide[0], wide[1] & 0xF8]);
}

#[test]
fn null_pointers_and_negative_widths_are_error_codes_not_crashes() {
    // HashLibrary never passes NULL, so this calls the exported symbol directly.
    type CryptHashFn = unsafe extern "C" fn(i32, *const u8, u64, *mut u8) -> i32;
    for (name, width) in [("sm3hash", 256), ("pseudohash", 512), ("pseudoxof", 384)] {
        let path = bundled_library(name);
        // SAFETY: a bundled library of this workspace; its initialisers are Rust's defaults.
        let lib = unsafe { libloading::Library::new(&path) }.unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: CryptHash has exactly the ICCS C signature.
        let f = *unsafe { lib.get::<CryptHashFn>(b"CryptHash\0") }.expect("CryptHash");
        let mut out = [0u8; 128];
        let msg = [1u8; 8];
        let null_msg = std::ptr::null::<u8>();
        let null_out = std::ptr::null_mut::<u8>();
        // SAFETY (all four calls): every non-NULL pointer is a live buffer larger than the
        // lengths given; the NULL ones are what is under test.
        unsafe {
            assert_eq!(f(width, null_msg, 64, out.as_mut_ptr()), -3, "{name}");
            assert_eq!(f(width, msg.as_ptr(), 64, null_out), -3, "{name}");
            assert_eq!(f(-width, msg.as_ptr(), 64, out.as_mut_ptr()), -4, "{name}");
            assert_eq!(out, [0; 128], "{name} wrote on an error");
            assert_eq!(
                f(width, null_msg, 0, out.as_mut_ptr()),
                0,
                "{name}: empty message"
            );
        }
    }
}

/// A record of a bundled baseline says how it was built: Rust compiled by the engine's
/// build script, not the guide's C flags the harness's own baselines get.
#[test]
fn bundled_baseline_records_say_they_are_built_by_rustc() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = tmp.path().join("run");
    let o = common::cyclescope()
        .args([
            "run",
            "pseudoXOF-256",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--out",
        ])
        .arg(&run)
        .output()
        .expect("running cyclescope");
    assert!(o.status.success(), "{}", common::output_text(&o));
    let rec: serde_json::Value = serde_json::from_slice(
        &std::fs::read(run.join("records/iccs/pseudoXOF-256__hash_32.json")).expect("record"),
    )
    .expect("record JSON");
    let flags = rec["flags"].as_str().expect("flags");
    assert_ne!(flags, "guide", "{rec}");
    assert!(flags.starts_with("rustc "), "{flags}");
}
