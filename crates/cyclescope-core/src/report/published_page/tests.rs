use super::*;

/// The five x86_1 pages, reduced to the headings and tables the parser reads.
fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/seed-pages")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn every_text_form_of_the_x86_1_pages_reads_whole() {
    // Spaces (05, 10, 32), `|` with a row split over two lines (07), tabs and backticks (09).
    for (name, rows, instances) in [
        ("hash-05_uHash_x86_1.txt", 24, 3),
        ("hash-07_Dragon_x86_1.txt", 48, 6),
        ("hash-09_Eijen_x86_1.txt", 40, 5),
        ("hash-10_FEILIAN_x86_1.txt", 24, 3),
        ("hash-32_ZC-EDMC_x86_1.txt", 48, 6),
    ] {
        let p = PublishedPage::parse(&fixture(name), name).unwrap();
        assert_eq!(p.rows.len(), rows, "{name}");
        assert_eq!(p.flags.len(), instances, "{name}: {:?}", p.flags);
        assert!(p.flags.values().all(|f| f == "guide"), "{name}");
        assert_eq!(p.system.as_deref(), Some("x86_1"), "{name}");
        assert_eq!(
            p.clock.as_deref(),
            Some("max 2.10 GHz, governor performance, turbo off, SMT off"),
            "{name}"
        );
        assert_eq!(
            p.processor.as_deref(),
            Some("12th Gen Intel(R) Core(TM) i7-12700 (CPU 2, one core)")
        );
        assert_eq!(
            p.compiler.as_deref(),
            Some("gcc (Debian 14.2.0-19) 14.2.0 / cmake version 3.31.6")
        );
        assert_eq!(p.records().len(), rows, "{name}");
    }
}

#[test]
fn figures_are_the_printed_ones_with_their_suffixes() {
    let p = PublishedPage::parse(&fixture("hash-10_FEILIAN_x86_1.txt"), "p").unwrap();
    assert_eq!(p.candidate.as_deref(), Some("hash-10"));
    let at = |label: &str, bytes: u64| {
        p.rows
            .iter()
            .find(|r| r.label == label && r.input_bytes == bytes)
            .unwrap()
    };
    assert_eq!(at("FEILIAN512", 32).mean_cycles, 2014.0);
    assert_eq!(at("FEILIAN512", 1024).mean_cycles, 15_100.0);
    assert_eq!(at("FEILIAN512", 65536).mean_cycles, 962_600.0);
    let r = at("FEILIAN512", 8192);
    assert_eq!((r.trials, r.calls_per_trial), (5, 14724));
    let dragon = PublishedPage::parse(&fixture("hash-07_Dragon_x86_1.txt"), "p").unwrap();
    let last = dragon.rows.last().unwrap();
    assert_eq!(
        (last.label.as_str(), last.input_bytes, last.mean_cycles),
        ("Dragon-XOF-512", 65536, 2_380_000.0)
    );
    let eijen = PublishedPage::parse(&fixture("hash-09_Eijen_x86_1.txt"), "p").unwrap();
    assert_eq!(eijen.rows[0].label, "Eijen-256", "backticks go");
    // A record per row: the page's mean, its calls as one trial (no interval), its flags.
    let rec = &p.records()[0];
    assert_eq!(rec.mean_cycles, Some(2014.0));
    assert_eq!(rec.trials.len(), 1);
    assert_eq!(rec.flags, "guide");
    assert!(
        rec.cyclescope.is_none(),
        "the harness's counter, not one of ours"
    );
}

#[test]
fn a_text_without_the_table_is_refused_with_what_it_lacks() {
    let e = PublishedPage::parse("4. Performance\nnothing here\n", "x.txt").unwrap_err();
    assert!(matches!(e, PageError::NoTable(_)), "{e}");
    assert!(
        e.to_string()
            .starts_with("x.txt: no `4. Performance` table")
    );
    // A row whose n is not trials × calls is not taken for one.
    let bad = "4. Performance\nX-256 32 B 2014 62.9 964 ns 33.2 100001 (5 × 20000)\n";
    assert!(PublishedPage::parse(bad, "x").is_err());
}
