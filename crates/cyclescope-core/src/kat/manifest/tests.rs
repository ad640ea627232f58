//! Manifest parsing, lookup, merging and the published manifests as fixtures.

use super::*;

const SHA: &str = "87a5813566d944bf12bea9fc0a0ef7594b6138702d1801cbba59025ce0b3456a";

fn parse(text: &str) -> Result<Manifest, ManifestError> {
    Manifest::parse(text, Path::new("kat.sha256"))
}

#[test]
fn every_published_hash_manifest_parses() {
    let data =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/reference/harness-data");
    let mut count = 0;
    for entry in std::fs::read_dir(&data).unwrap() {
        let dir = entry.unwrap().path();
        let file = dir.join("kat.sha256");
        if !file.is_file() {
            continue;
        }
        let m = Manifest::load(&file).unwrap_or_else(|e| panic!("{e}"));
        assert!(!m.entries.is_empty(), "{}", file.display());
        assert_eq!(
            m.entries.len() % 4,
            0,
            "four files per instance: {}",
            file.display()
        );
        assert!(
            m.entries
                .iter()
                .all(|e| e.mode == CanonicalMode::Strict && e.count.is_none())
        );
        // Written sorted by name: our writer reproduces the file.
        assert_eq!(
            m.to_text(),
            std::fs::read_to_string(&file).unwrap(),
            "{}",
            file.display()
        );
        count += 1;
    }
    assert_eq!(count, 16);
}

#[test]
fn lookup_by_label_then_bare_name() {
    let m = parse(&format!(
        "{SHA} strict uHash-512/KAT_2_12_uHash-512.txt\n{SHA} nolen:3 KAT_2_23_x.txt\n"
    ))
    .unwrap();
    assert!(m.lookup("uHash-512", "KAT_2_12_uHash-512.txt").is_some());
    assert!(m.lookup("uHash-768", "KAT_2_12_uHash-512.txt").is_none());
    let e = m.lookup("any", "KAT_2_23_x.txt").unwrap();
    assert_eq!(
        (e.mode, e.count, e.mode_text()),
        (CanonicalMode::NoLen, Some(3), "nolen:3".into())
    );
    assert_eq!(e.file_name(), "KAT_2_23_x.txt");
}

#[test]
fn errors_name_the_line() {
    for (text, needle) in [
        ("\nabc strict a/b.txt\n", "kat.sha256:2: "),
        (&format!("{SHA} fuzzy a/b.txt"), "neither strict nor nolen"),
        (&format!("{SHA} strict:0 a/b.txt"), "positive"),
        (&format!("{SHA} strict"), "expected"),
        (&format!("{SHA} strict ../b.txt"), "escapes"),
        (&format!("{SHA} strict a/../../b.txt"), "escapes"),
        (&format!("{SHA} strict /etc/passwd"), "absolute"),
        (
            &format!("{SHA} strict a/b.txt\n{SHA} strict a/b.txt"),
            "kat.sha256:2: a/b.txt is listed twice",
        ),
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains(needle), "{text:?}: {err}");
    }
}

#[test]
fn merge_replaces_and_writes_sorted() {
    let mut m = parse(&format!("{SHA} strict b/KAT_2_12_b.txt\n")).unwrap();
    let zero = ManifestEntry {
        sha256: [0; 32],
        mode: CanonicalMode::Strict,
        count: None,
        name: "a/KAT_2_12_a.txt".into(),
    };
    let replaced = ManifestEntry {
        name: "b/KAT_2_12_b.txt".into(),
        ..zero.clone()
    };
    m.merge([zero, replaced]);
    let text = m.to_text();
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(names, ["a/KAT_2_12_a.txt", "b/KAT_2_12_b.txt"]);
    assert!(!text.contains(SHA));
    assert_eq!(parse(&text).unwrap().entries.len(), 2);
}

#[test]
fn reference_entries_choose_nolen_for_template_files() {
    let clean = b"Msg_Len = 0\nMsg = \nDst_Len = 256\nDst = AB\n\n";
    let template = b"Msg_Len = 0\r\nMsg = \r\nDst_Len =\r\nDst = AB\r\n\r\n";
    let e = entry_for_reference(clean, "x/a.txt".into());
    assert_eq!(e.mode, CanonicalMode::Strict);
    let t = entry_for_reference(template, "x/a.txt".into());
    assert_eq!(t.mode, CanonicalMode::NoLen);
    assert_eq!(t.sha256, canonical_sha256(clean, CanonicalMode::NoLen));
}

#[test]
fn a_label_without_entries_gets_the_nearest_one_suggested() {
    let text = format!(
        "{SHA} strict FEILIAN512/KAT_2_12_ShortMsg.txt\n{SHA} strict uHash-768/KAT_2_12_ShortMsg.txt\n"
    );
    let m = parse(&text).unwrap();
    assert_eq!(m.nearest_label("FEILIAN-512"), Some("FEILIAN512"));
    assert_eq!(m.nearest_label("feilian512"), Some("FEILIAN512"));
    assert_eq!(m.nearest_label("uhash-786"), Some("uHash-768"));
    // Its own entries, or nothing close: no suggestion.
    assert_eq!(m.nearest_label("FEILIAN512"), None);
    assert_eq!(m.nearest_label("sm3hash-256"), None);
}
