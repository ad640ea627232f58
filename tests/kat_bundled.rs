//! The KAT gate on the bundled ICCS baseline libraries through the real binary: all twelve
//! instances reproduce the committed `kat/iccs/kat.sha256` in the default scope, the log has
//! the published layout without absolute paths, `--write-manifest` reproduces the committed
//! entries, and the `--kat-dir` line-by-line mode tolerates CRLF and blank `X_Len =` lines.

mod common;

use common::kat as support;

use support::*;

#[test]
fn all_bundled_instances_pass_the_default_scope() {
    let run = tempfile::tempdir().unwrap();
    let mut args = BUNDLED.to_vec();
    args.extend(["--out", path_str(run.path())]);
    let o = kat(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let lines = results(&o);
    assert_eq!(lines.len(), 12, "{lines:?}");
    // The printed line ends with its status, no trailing space (the log keeps the harness's).
    assert!(
        stdout(&o).lines().all(|l| !l.ends_with(' ')),
        "{}",
        stdout(&o)
    );
    for line in &lines {
        assert!(
            line.starts_with("RESULT iccs ") && line.ends_with(" PASS"),
            "{line:?}"
        );
    }
    for label in BUNDLED {
        let log = log_of(run.path(), "iccs", label);
        assert!(log.starts_with("library     = "), "{log}");
        assert!(log.contains("\nid          = iccs\n"), "{log}");
        let bits = label.rsplit('-').next().unwrap();
        assert!(log.contains(&format!("\ndigest_bits = {bits}\n")), "{log}");
        for tag in ["KAT_2_12", "KAT_2_23"] {
            assert!(log.contains(&format!("\ntiming  {tag} ")), "{log}");
            assert!(
                log.contains(&format!("\nwrote  katgen/iccs/{label}/{tag}_")),
                "{log}"
            );
            assert!(
                log.contains(" strict ") && log.contains("\nmanifest "),
                "{log}"
            );
        }
        assert!(log.ends_with(" PASS \n"), "{log}");
        for abs in ["/tmp/", "/root/", "/home/", "/work/"] {
            assert!(!log.contains(abs), "absolute path in {label}.log:\n{log}");
        }
    }
}

#[test]
fn write_manifest_reproduces_the_committed_entries() {
    let run = tempfile::tempdir().unwrap();
    let m = run.path().join("m.sha256");
    let o = kat(
        &[
            "pseudoXOF-256",
            "sm3hash-256",
            "--out",
            path_str(run.path()),
            "--write-manifest",
            path_str(&m),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let written = std::fs::read_to_string(&m).unwrap();
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/kat/iccs/kat.sha256"))
            .unwrap();
    assert_eq!(written.lines().count(), 4, "{written}");
    for line in written.lines() {
        assert!(line.contains(" strict "), "{line}");
        assert!(
            committed.lines().any(|c| c == line),
            "{line} not in kat/iccs/kat.sha256"
        );
    }
    // Merging keeps what is there and stays sorted.
    let o = kat(
        &[
            "pseudoXOF-384",
            "--out",
            path_str(&run.path().join("b")),
            "--write-manifest",
            path_str(&m),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let merged = std::fs::read_to_string(&m).unwrap();
    let names: Vec<&str> = merged
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!((names.len(), &names), (6, &sorted));
}

/// Runs the ad-hoc bundled pseudoXOF at 256 bits against a reference folder (no manifest).
fn against_kat_dir(dir: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    let lib = cyclescope_core::catalog::bundled_library("pseudoxof");
    kat(
        &[
            "--lib",
            path_str(&lib),
            "--label",
            "pseudoXOF-256",
            "--digest-bits",
            "256",
            "--kat-dir",
            path_str(dir),
            "--out",
            path_str(out),
        ],
        None,
    )
}

#[test]
fn kat_dir_comparison_tolerates_crlf_and_blank_len_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("first");
    let o = against_kat_dir(&tmp.path().join("none"), &first);
    assert_eq!(
        o.status.code(),
        Some(2),
        "no reference yet: NOKAT\n{}",
        stdout(&o)
    );
    // A reference folder as a submitter might ship it: CRLF, trailing spaces, blank Dst_Len.
    let refs = tmp.path().join("refs").join("pseudoXOF-256");
    std::fs::create_dir_all(&refs).unwrap();
    for tag in ["KAT_2_12", "KAT_2_23"] {
        let name = format!("{tag}_pseudoXOF-256.txt");
        let text = std::fs::read_to_string(first.join("katgen/adhoc/pseudoXOF-256").join(&name))
            .or_else(|_| {
                std::fs::read_to_string(first.join("katgen/iccs/pseudoXOF-256").join(&name))
            })
            .unwrap();
        let messy: String = text
            .lines()
            .map(|l| {
                if l.starts_with("Dst_Len") {
                    "Dst_Len =\r\n".to_string()
                } else {
                    format!("{l}  \r\n")
                }
            })
            .collect();
        std::fs::write(refs.join(&name), messy).unwrap();
    }
    let o = against_kat_dir(&tmp.path().join("refs"), &tmp.path().join("second"));
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let log = std::fs::read_to_string(
        std::fs::read_dir(tmp.path().join("second/kat"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("pseudoXOF-256.log"),
    )
    .unwrap();
    assert!(
        log.contains("\ncompare ")
            && log.contains("4097 blank X_Len lines in the reference tolerated"),
        "{log}"
    );
    // --write-manifest from such references chooses nolen.
    let m = tmp.path().join("m.sha256");
    let lib = cyclescope_core::catalog::bundled_library("pseudoxof");
    let o = kat(
        &[
            "--lib",
            path_str(&lib),
            "--label",
            "pseudoXOF-256",
            "--digest-bits",
            "256",
            "--kat-dir",
            path_str(&tmp.path().join("refs")),
            "--out",
            path_str(&tmp.path().join("third")),
            "--write-manifest",
            path_str(&m),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&m).unwrap();
    assert_eq!(text.matches(" nolen pseudoXOF-256/").count(), 2, "{text}");
    // One changed digit is a MISMATCH naming the line.
    let f = refs.join("KAT_2_23_pseudoXOF-256.txt");
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replacen("Dst = ", "Dst = 0", 1);
    std::fs::write(&f, text).unwrap();
    let o = against_kat_dir(&tmp.path().join("refs"), &tmp.path().join("fourth"));
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("MISMATCH KAT_2_23_pseudoXOF-256.txt: line 5 differs"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn loop_scope_matches_the_committed_manifest() {
    // pseudoXOF-256 is the cheapest instance: a million chained calls take seconds.
    let run = tempfile::tempdir().unwrap();
    let o = kat(
        &["pseudoXOF-256", "--loop", "--out", path_str(run.path())],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let log = log_of(run.path(), "iccs", "pseudoXOF-256");
    assert!(
        log.contains("\ntiming  KAT_Loop ") && log.contains(" s (1e6 x 8192-bit)\n"),
        "{log}"
    );
    assert!(
        log.contains(" strict KAT_Loop_pseudoXOF-256.txt\n"),
        "{log}"
    );
    assert!(
        log.contains(
            "\nwrote  katgen/iccs/pseudoXOF-256/KAT_Loop_pseudoXOF-256.txt (2156 bytes)\n"
        ),
        "{log}"
    );
}
