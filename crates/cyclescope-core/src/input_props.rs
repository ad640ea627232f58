//! Property tests of every parser a user or a candidate can feed: config.toml, kat.sha256
//! manifests, KAT reference text, timing records (and the harness's JSON float format),
//! journal lines, worker protocol messages and names. Properties: arbitrary input never
//! panics; errors carry their line (and column where the format has one); valid input survives
//! a round trip. Case counts are proptest's (256 per property in `cargo test`; raise with
//! `PROPTEST_CASES=N` for a long run by hand). Test code only.

use std::path::Path;

use proptest::prelude::*;

use crate::catalog::parse_config;
use crate::kat::manifest::{
    CanonicalMode, Manifest, ManifestError, canonical_sha256, compare_lines, entry_for_reference,
};
use crate::measure::trial::TrialMessage;
use crate::name::SafeName;
use crate::record::TimingRecord;
use crate::record::journal::{Entry, JournalReader};
use crate::record::pyjson::{py_float_repr, to_py_json};

/// A published record, mutated by the properties below.
const RECORD: &[u8] = include_bytes!(
    "../../../tests/fixtures/reference/harness-data/performance/data/arm_1/records/iccs/pseudoXOF-512__hash_1024.json"
);

/// Text with the characters parsers care about overrepresented.
fn texty() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("\n".to_string()),
            Just("[[candidate]]\n".to_string()),
            Just("[[candidate.instance]]\n".to_string()),
            Just("[settings]\n".to_string()),
            Just(" = ".to_string()),
            Just("\"".to_string()),
            "[a-z_]{1,12}",
            "-?[0-9]{1,12}(\\.[0-9]*)?(e[0-9]{1,3})?",
            Just("inf".to_string()),
            Just("nan".to_string()),
            any::<String>(),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

fn safe_name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_][A-Za-z0-9._+-]{0,20}"
}

proptest! {
    #[test]
    fn config_never_panics_and_points_at_a_real_place(text in texty()) {
        match parse_config(&text, Path::new("c.toml"), Path::new("/b")) {
            Ok(c) => {
                for i in c.instances() {
                    prop_assert!(i.file_names().is_ok(), "{:?}", i);
                }
            }
            Err(crate::catalog::ConfigError::Syntax { line, column, .. }) => {
                prop_assert!(line >= 1 && line <= text.lines().count() + 1, "line {}", line);
                prop_assert!(column >= 1);
            }
            Err(_) => {}
        }
    }

    #[test]
    fn valid_configs_round_trip(
        id in safe_name(),
        labels in prop::collection::btree_set(safe_name(), 1..6),
        widths in prop::collection::vec(1u32..=1024, 6),
        lengths in prop::collection::btree_set(1u64..=(16 << 20), 1..9),
        trials in 1u32..=16,
        target in 1e-4f64..3600.0,
    ) {
        let lengths: Vec<u64> = lengths.into_iter().collect();
        let mut text = format!(
            "[settings]\nlengths = {lengths:?}\ntrials = {trials}\ntrial_target_s = {target:?}\n\
             [[candidate]]\nid = {id:?}\nalgorithm = \"A\"\n"
        );
        for (label, w) in labels.iter().zip(&widths) {
            text += &format!(
                "[[candidate.instance]]\nlabel = {label:?}\nlibrary = \"l.so\"\ndigest_bits = {}\n",
                w * 8
            );
        }
        let c = parse_config(&text, Path::new("c.toml"), Path::new("/b")).unwrap();
        prop_assert_eq!(&c.settings.lengths, &lengths);
        prop_assert_eq!(c.settings.trials, trials);
        prop_assert_eq!(c.settings.trial_target_s, target);
        let got: Vec<(String, u32)> =
            c.instances().map(|i| (i.label.clone(), i.digest_bits)).collect();
        let want: Vec<(String, u32)> =
            labels.iter().zip(&widths).map(|(l, w)| (l.clone(), w * 8)).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn manifest_never_panics_and_names_the_line(text in texty(), tail in any::<String>()) {
        let text = text + &tail;
        match Manifest::parse(&text, Path::new("kat.sha256")) {
            Ok(m) => {
                for e in &m.entries {
                    prop_assert!(!e.name.contains(".."));
                }
            }
            Err(ManifestError::Syntax { line, .. }) => {
                prop_assert!(line >= 1 && line <= text.lines().count());
            }
            Err(e) => prop_assert!(false, "unexpected error kind: {e}"),
        }
    }

    #[test]
    fn manifest_lines_round_trip(
        entries in prop::collection::btree_map(
            (safe_name(), safe_name()),
            (any::<[u8; 32]>(), any::<bool>(), prop::option::of(1u64..1_000_000)),
            0..8,
        )
    ) {
        let text: String = entries
            .iter()
            .map(|((dir, file), (sha, nolen, count))| {
                let mode = if *nolen { "nolen" } else { "strict" };
                let mode = count.map_or(mode.to_string(), |n| format!("{mode}:{n}"));
                format!("{} {mode} {dir}/{file}\n", hex::encode(sha))
            })
            .collect();
        let m = Manifest::parse(&text, Path::new("m")).unwrap();
        let again: String = m.entries.iter().map(|e| e.line() + "\n").collect();
        prop_assert_eq!(again, text);
    }

    #[test]
    fn kat_reference_text_never_panics(
        a in prop::collection::vec(any::<u8>(), 0..600),
        b in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        let cmp = compare_lines(&a[..], &b[..]).unwrap();
        let same = compare_lines(&a[..], &a[..]).unwrap();
        prop_assert!(same.difference.is_none(), "{:?}", same);
        let _ = cmp;
        for mode in [CanonicalMode::Strict, CanonicalMode::NoLen] {
            let _ = canonical_sha256(&a, mode);
        }
        let _ = entry_for_reference(&b, "x/KAT_2_12_x.txt".into());
    }

    #[test]
    fn records_never_panic_on_damage(cut in 0usize..RECORD.len(), at in 0usize..RECORD.len(), byte in any::<u8>()) {
        let _ = serde_json::from_slice::<TimingRecord>(&RECORD[..cut]);
        let mut flipped = RECORD.to_vec();
        flipped[at] = byte;
        let _ = serde_json::from_slice::<TimingRecord>(&flipped);
        let _ = serde_json::from_slice::<serde_json::Value>(&flipped);
    }

    #[test]
    fn records_never_panic_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = serde_json::from_slice::<TimingRecord>(&bytes);
    }

    #[test]
    fn python_float_text_reads_back_exactly(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        let text = py_float_repr(x);
        let back: f64 = text.parse().unwrap();
        prop_assert_eq!(back.to_bits(), x.to_bits(), "{} -> {}", x, text);
    }

    #[test]
    fn journal_reading_never_panics(lines in prop::collection::vec(
        prop_oneof![
            any::<String>(),
            Just(r#"{"utc":"x","event":"warning","message":"m"}"#.to_string()),
            Just(r#"{"utc":"x","event":"run_finished","cancelled":false,"wall_s":-1e308,"finished":1,"failed":0}"#.to_string()),
            Just(r#"{"utc":"x","event":"kat_started"}"#.to_string()),
            (any::<f64>(), any::<bool>()).prop_map(|(w, c)| format!(
                r#"{{"utc":"x","event":"run_finished","cancelled":{c},"wall_s":{},"finished":1,"failed":0}}"#,
                if w.is_finite() { format!("{w:e}") } else { "1e308".into() }
            )),
            "[A-Za-z0-9+/=]{0,200}".prop_map(|h| format!(
                r#"{{"utc":"x","event":"trial_progress","job":{{"candidate":"c","label":"l","input_bytes":32}},"trial":1,"trials":5,"calls_done":1,"calls_total":2,"loop_mean_cycles":null,"timer_overhead_ticks":1.0,"per_call_source":"tsc","histogram":"{h}"}}"#
            )),
        ],
        0..12,
    ), torn in any::<String>()) {
        let dir = tempfile::tempdir().unwrap();
        let text = lines.join("\n") + "\n" + &torn;
        std::fs::write(dir.path().join("journal.jsonl"), &text).unwrap();
        let mut r = JournalReader::new(dir.path());
        let entries = r.poll().unwrap();
        for e in entries {
            // Back to an engine event, as `watch` does with every entry.
            let _ = e.event.into_event(dir.path());
        }
    }

    #[test]
    fn journal_entries_round_trip(message in any::<String>(), utc in any::<String>()) {
        let line = serde_json::json!({"utc": utc, "event": "warning", "message": message});
        let e: Entry = serde_json::from_value(line.clone()).unwrap();
        prop_assert_eq!(serde_json::to_value(&e).unwrap(), line);
    }

    #[test]
    fn protocol_lines_never_panic(line in prop_oneof![
        any::<String>(),
        "\\{\"t\":\"(done|trial|samples|ready|digests|wrote|error)\"[ -~]{0,80}\\}",
    ]) {
        let _ = serde_json::from_str::<TrialMessage>(&line);
    }

    #[test]
    fn a_safe_name_is_one_plain_path_component(name in any::<String>()) {
        if let Ok(n) = SafeName::new("name", &name) {
            let p = Path::new(n.as_str());
            let parts: Vec<_> = p.components().collect();
            prop_assert_eq!(parts.len(), 1);
            prop_assert!(matches!(parts[0], std::path::Component::Normal(_)));
            prop_assert!(crate::record::safe_path::inside(Path::new("/r"), p).is_ok());
        }
    }
}

#[test]
fn the_published_record_round_trips_byte_for_byte() {
    let r: TimingRecord = serde_json::from_slice(RECORD).unwrap();
    assert_eq!(to_py_json(&r).unwrap(), RECORD);
}
