//! `cyclescope list` through the real binary on C libraries built here: the digest width of
//! a scanned library without `ngcc_meta` is the number after its algorithm name, never a
//! variant suffix's (`-O0` read as 0 bits, `-bug` as no number at all), and a long `ngcc_meta`
//! text is cut to its column, so the library column stays where its heading is.

mod common;

use std::path::Path;

/// A library exporting `CryptHash` and nothing else: no `ngcc_meta` to take a width from.
const WITHOUT_META: &str = "#include <string.h>\n\
    int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,\n\
                  unsigned char *digest) {\n\
        (void)msg; (void)msg_len_bits;\n\
        memset(digest, 0x5a, (size_t)digest_len_bits / 8);\n\
        return 0;\n\
    }\n";

fn list(dir: &Path, args: &[&str]) -> (String, String) {
    let mut all = vec!["list", "--no-baselines"];
    all.extend_from_slice(args);
    let o = common::cyclescope_in(dir, &all);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        common::output_text(&o),
    )
}

#[test]
fn a_scanned_librarys_width_is_the_number_after_its_algorithm_name() {
    let tmp = tempfile::tempdir().unwrap();
    let libs = tmp.path().join("libs");
    std::fs::create_dir(&libs).unwrap();
    for name in ["MYSHA-256-O0", "MYSHA-256-bug", "MYSHA-bug"] {
        common::cc::build_library(&libs, name, WITHOUT_META);
    }
    let (stdout, text) = list(tmp.path(), &["--scan", "libs"]);
    for label in ["MYSHA-256-O0", "MYSHA-256-bug"] {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(label))
            .unwrap_or_else(|| panic!("no row of {label}:\n{text}"));
        assert_eq!(row.split_whitespace().nth(2), Some("256"), "{row}");
    }
    // No width anywhere in its name: skipped, and the reason says what was looked for.
    assert!(
        text.contains("no number after the algorithm name in \"MYSHA-bug\"): pass --digest-bits"),
        "{text}"
    );
    assert!(!text.contains("digest bits 0"), "{text}");
}

#[test]
fn a_long_ngcc_meta_text_is_cut_to_its_column() {
    let tmp = tempfile::tempdir().unwrap();
    let instance = "A-VERY-LONG-INSTANCE-NAME-256";
    let source = common::cc::candidate_source("hash-90", instance, 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "LONGMETA-256", &source);
    let (stdout, text) = list(tmp.path(), &["--lib", lib.to_str().unwrap()]);
    let header = stdout
        .lines()
        .find(|l| l.starts_with("candidate "))
        .unwrap_or_else(|| panic!("no heading:\n{text}"));
    let row = stdout
        .lines()
        .find(|l| l.contains(instance))
        .unwrap_or_else(|| panic!("no row:\n{text}"));
    let (meta_at, lib_at) = (
        header.find("ngcc_meta").expect("ngcc_meta heading"),
        header.find("library").expect("library heading"),
    );
    let cell: String = row.chars().skip(meta_at).take(lib_at - meta_at).collect();
    assert!(
        cell.starts_with("hash-90 A-VERY-LONG") && cell.trim_end().ends_with('…'),
        "{cell:?}\n{text}"
    );
    // The library column starts under its heading: the path alone, nothing of the meta text.
    let library: String = row.chars().skip(lib_at).collect();
    assert!(
        library.ends_with("libLONGMETA-256.so") && !library.contains(' '),
        "{library:?}\n{text}"
    );
}

/// A library's metadata is read where its timed calls run: `program_told.c` names, as its
/// variant, the program that asked (the large `cyclescope worker`, or any other), and `list`
/// shows the trial worker's answer (before, the large program's).
#[test]
fn a_librarys_metadata_is_asked_in_the_program_its_timed_calls_run_in() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = common::hostile::build_fixture("program_told", tmp.path());
    let (out, all) = list(tmp.path(), &["--lib", lib.to_str().unwrap(), "--json"]);
    let rows: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {all}"));
    let told = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "TOLD-256")
        .unwrap_or_else(|| panic!("{all}"));
    assert_eq!(told["meta"]["variant"], "trial-worker", "{told}");
}
