use super::*;
use crate::report::compare::Verdict;

fn entry(sha: &str, mean: f64, ended: &str) -> Entry {
    Entry {
        origin: Origin::Workbench,
        run_dir: PathBuf::from("/runs/a"),
        record: PathBuf::from(format!("records/x/{sha}-{ended}.json")),
        candidate: "hash-01".into(),
        label: "FIXH-256".into(),
        library_sha256: sha.into(),
        flags: "guide".into(),
        build_flags: format!("-O{}", sha.len()),
        compiler: "cc 12".into(),
        cpu_model: "a cpu".into(),
        system_id: "host".into(),
        counter: "tsc".into(),
        input_bytes: 32,
        mean_cycles: Some(mean),
        ci95_half_width: Some(mean * 0.002),
        process_sd_relative: Some(0.002),
        robust: None,
        processes: 5,
        doubt: None,
        ended_utc: ended.into(),
    }
}

#[test]
fn an_entry_goes_in_and_comes_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/journal.sqlite");
    let j = Journal::open(&path).unwrap();
    let mut e = entry("aa", 1000.0, "2026-01-01T00:00:00");
    e.doubt = Some("clock drifted".into());
    j.insert(&e).unwrap();
    // The same record again replaces, never duplicates.
    j.insert(&e).unwrap();
    assert_eq!(j.entries("FIXH-256", Some(32)).unwrap(), vec![e.clone()]);
    assert!(j.entries("FIXH-256", Some(64)).unwrap().is_empty());
    assert_eq!(j.labels().unwrap(), vec!["FIXH-256".to_string()]);
    drop(j);
    let again = Journal::open(&path).unwrap();
    assert_eq!(again.entries("FIXH-256", None).unwrap(), vec![e]);
}

#[test]
fn a_journal_of_the_previous_schema_is_migrated_with_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.sqlite");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(schema::V1).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute(
            "INSERT INTO measurement (run_dir, record, candidate, label, library_sha256, flags, \
             build_flags, compiler, cpu_model, system_id, counter, input_bytes, mean_cycles, \
             ci95_half_width, processes, ended_utc) VALUES ('/r', 'records/a.json', 'c', \
             'FIXH-256', 'ab', 'guide', '-O2', 'cc', 'cpu', 'host', 'tsc', 32, 1234.5, 2.0, 5, \
             '2025-12-01T00:00:00')",
            [],
        )
        .unwrap();
    }
    let j = Journal::open(&path).unwrap();
    let version: i64 = j
        .conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    let old = j.entries("FIXH-256", None).unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].origin, Origin::Run);
    assert_eq!(old[0].mean_cycles, Some(1234.5));
    assert_eq!(old[0].process_sd_relative, None);
    // New rows land beside the migrated one.
    j.insert(&entry("cd", 1000.0, "2026-01-01T00:00:00"))
        .unwrap();
    assert_eq!(j.entries("FIXH-256", None).unwrap().len(), 2);
}

#[test]
fn a_damaged_file_is_a_named_error_and_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.sqlite");
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &junk).unwrap();
    let err = Journal::open(&path).err().expect("refused");
    assert!(matches!(err, JournalError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("--rebuild"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), junk, "nothing lost");
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.sqlite");
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = Journal::open(&path).err().expect("refused");
    assert!(
        matches!(err, JournalError::Newer { found: 99, .. }),
        "{err}"
    );
}

#[test]
fn a_locked_journal_is_a_named_error_until_it_is_released() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.sqlite");
    drop(Journal::open(&path).unwrap());
    let holder = Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = Journal::open_waiting(&path, Duration::from_millis(50))
        .err()
        .expect("locked");
    assert!(matches!(err, JournalError::Locked { .. }), "{err}");
    let j = Journal::open_waiting(&path, Duration::from_millis(50));
    assert!(j.is_err());
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert!(Journal::open(&path).is_ok(), "usable again once released");
}

#[test]
fn a_writer_that_cannot_write_says_so_once_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be: SQLite cannot open it.
    let path = dir.path().join("journal.sqlite");
    std::fs::create_dir(&path).unwrap();
    let mut w = JournalWriter::new(JournalTarget::At(path), Origin::Run);
    let first = w.add(dir.path(), Path::new("records/x.json"));
    assert!(
        first
            .as_deref()
            .is_some_and(|m| m.contains("the run goes on")),
        "{first:?}"
    );
    assert_eq!(w.add(dir.path(), Path::new("records/y.json")), None);
    let mut off = JournalWriter::new(JournalTarget::Off, Origin::Run);
    assert_eq!(off.add(dir.path(), Path::new("records/x.json")), None);
}

#[test]
fn history_folds_a_build_and_judges_each_against_the_one_before() {
    let mut doubtful = entry("ccc", 700.0, "2026-01-04");
    doubtful.doubt = Some("clock outside the band".into());
    let rows = history(&[
        entry("a", 1000.0, "2026-01-01"),
        entry("a", 1001.0, "2026-01-02"),
        entry("bb", 400.0, "2026-01-03"),
        doubtful,
        entry("dddd", 1200.0, "2026-01-05"),
    ]);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].measurements, 2);
    assert_eq!(rows[0].entry.mean_cycles, Some(1001.0));
    assert_eq!(rows[0].verdict, None);
    assert_eq!(rows[1].verdict, Some(Verdict::Faster));
    assert!(matches!(rows[2].verdict, Some(Verdict::Doubtful(..))));
    assert!(matches!(rows[3].verdict, Some(Verdict::Doubtful(..))));
    // Another counter: no verdict across it.
    let mut perf = entry("e", 900.0, "2026-01-06");
    perf.counter = "perf_event:cpu-cycles:u".into();
    let rows = history(&[entry("a", 1000.0, "2026-01-01"), perf]);
    assert!(matches!(rows[1].verdict, Some(Verdict::NotComparable(_))));
}

#[test]
fn the_location_follows_the_environment_and_the_settings() {
    // Only the pure part: an explicit setting wins when the variable is unset.
    if std::env::var_os(JOURNAL_ENV).is_none() {
        assert_eq!(
            location(Some(Path::new("/x/j.sqlite"))).unwrap(),
            PathBuf::from("/x/j.sqlite")
        );
    }
}

#[test]
fn a_kat_pass_is_found_only_under_its_whole_key_and_while_its_log_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::open(&dir.path().join("journal.sqlite")).unwrap();
    let log = dir.path().join("kat.log");
    std::fs::write(&log, "RESULT PASS\n").unwrap();
    let key = KatKey {
        library_sha256: "aa".into(),
        manifest_sha256: "mm".into(),
        checks_version: crate::conform::CHECKS_VERSION,
        scope: "default".into(),
        kat_name: "FIXH-256".into(),
        digest_bits: 256,
    };
    let pass = KatPass {
        run_dir: dir.path().to_path_buf(),
        log: log.clone(),
        log_sha256: crate::record::sha256_file(&log).unwrap(),
        // A pass keeps its findings: a reuse carries them into its records.
        conformance: vec![crate::conform::CheckResult::new(
            crate::conform::Check::DigestLength,
            crate::conform::Outcome::Finding {
                evidence: crate::conform::Evidence {
                    bits: 256,
                    offset: None,
                    byte: None,
                    what: "the worker ended (signal=SIGFPE)".into(),
                },
            },
        )],
    };
    j.remember_kat_pass(&key, &pass).unwrap();
    assert_eq!(j.kat_pass(&key).unwrap(), Some(pass.clone()));
    assert!(pass.still_there());
    let others = [
        KatKey {
            library_sha256: "ab".into(),
            ..key.clone()
        },
        KatKey {
            manifest_sha256: "mn".into(),
            ..key.clone()
        },
        KatKey {
            checks_version: key.checks_version + 1,
            ..key.clone()
        },
        KatKey {
            scope: "loop".into(),
            ..key.clone()
        },
        KatKey {
            digest_bits: 512,
            ..key.clone()
        },
    ];
    for other in others {
        assert_eq!(j.kat_pass(&other).unwrap(), None, "{other:?}");
    }
    std::fs::write(&log, "RESULT PASS, edited\n").unwrap();
    assert!(!pass.still_there());
}

#[test]
fn the_table_cuts_long_flags_and_the_csv_keeps_them_whole_with_the_doubt() {
    let mut e = entry("aa", 1412.0, "2026-01-01T00:00:00Z");
    e.build_flags = format!("-O3 {}", "-fsome-long-option ".repeat(8))
        .trim()
        .into();
    e.doubt = Some("1 kept trial(s) disturbed".into());
    let full = e.flags_text();
    assert!(full.chars().count() > 100);
    let short = e.flags_short();
    assert_eq!(short.chars().count(), super::entry::FLAGS_SHORT);
    assert!(short.ends_with('…') && full.starts_with(short.trim_end_matches('…')));
    let words = e.build_flags.clone();
    let rows = history(&[e]);
    let table = super::table(&rows);
    assert!(table.contains(&short) && !table.contains(&full), "{table}");
    let csv = super::rows_csv(&rows);
    let header = csv.lines().next().unwrap();
    assert!(
        header.contains(",ci95_cycles,doubt,measurements,"),
        "{header}"
    );
    assert!(csv.contains(&format!(",guide,{words},")), "{csv}");
    assert!(csv.contains(",1 kept trial(s) disturbed,1,first,"), "{csv}");
}
