use super::*;

fn parse(text: &str) -> Result<Catalog, ConfigError> {
    parse_config(text, Path::new("cfg.toml"), Path::new("/base"))
}

#[test]
fn relative_paths_resolve_against_the_config_folder() {
    let c = parse(
            "[[candidate]]\nid = \"hash-10\"\nalgorithm = \"FEILIAN\"\nkat_manifest = \"hash-10/kat.sha256\"\n\
             [[candidate.instance]]\nlabel = \"FEILIAN512\"\nlibrary = \"lib/libFEILIAN512.so\"\ndigest_bits = 512\n",
        )
        .unwrap();
    let i = c.find("FEILIAN512").unwrap();
    assert_eq!(i.library, Path::new("/base/lib/libFEILIAN512.so"));
    assert_eq!(
        i.kat_manifest.as_deref(),
        Some(Path::new("/base/hash-10/kat.sha256"))
    );
    assert_eq!(
        (i.variant.as_str(), i.flags.as_str()),
        ("reference", "guide")
    );
    assert_eq!(c.settings, Settings::default());
}

#[test]
fn an_instance_may_say_it_exports_supercop_crypto_hash() {
    let inst = |abi: &str| {
        format!(
            "[[candidate]]\nid = \"ebash\"\nalgorithm = \"X\"\n[[candidate.instance]]\n\
                 label = \"x-256\"\nlibrary = \"libx.so\"\ndigest_bits = 256\n{abi}"
        )
    };
    let c = parse(&inst("abi = \"supercop\"\n")).unwrap();
    assert_eq!(c.find("x-256").unwrap().abi, crate::plugin::Abi::Supercop);
    let c = parse(&inst("")).unwrap();
    assert_eq!(c.find("x-256").unwrap().abi, crate::plugin::Abi::Iccs);
    let err = parse(&inst("abi = \"nacl\"\n")).unwrap_err().to_string();
    assert!(err.contains("nacl") && err.contains("supercop"), "{err}");
}

#[test]
fn unknown_key_names_line_and_column() {
    let err = parse("[settings]\ntrials = 5\ntrial_targt_s = 1.0\n").unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("cfg.toml:3:1: "), "{msg}");
    assert!(msg.contains("trial_targt_s"), "{msg}");
}

#[test]
fn malformed_toml_names_line_and_column() {
    let err = parse("[settings]\ntrials = = 5\n").unwrap_err();
    assert!(err.to_string().starts_with("cfg.toml:2:"), "{err}");
}

#[test]
fn invalid_values_are_refused() {
    for (text, needle) in [
        ("[settings]\ntrials = 0\n", "trials"),
        ("[settings]\nlengths = []\n", "lengths"),
        (
            "[[candidate]]\nid=\"x\"\nalgorithm=\"X\"\n[[candidate.instance]]\nlabel=\"a\"\nlibrary=\"a.so\"\ndigest_bits=12\n",
            "multiple of 8",
        ),
        (
            "[[candidate]]\nid=\"x\"\nalgorithm=\"X\"\n[[candidate.instance]]\nlabel=\"a\"\nlibrary=\"a.so\"\ndigest_bits=256\n[[candidate.instance]]\nlabel=\"a\"\nlibrary=\"b.so\"\ndigest_bits=256\n",
            "twice",
        ),
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains(needle), "{text:?}: {err}");
    }
}

fn one_instance(id: &str, label: &str, extra: &str) -> String {
    format!(
        "[[candidate]]\nid={id:?}\nalgorithm=\"X\"\n[[candidate.instance]]\nlabel={label:?}\nlibrary=\"a.so\"\n{extra}\n"
    )
}

#[test]
fn numbers_outside_their_range_are_refused_with_the_range() {
    for (text, needle) in [
        (
            "[settings]\ntrial_target_s = nan\n",
            "trial_target_s: trial target NaN is outside the allowed range 0.0001 … 3600 seconds",
        ),
        ("[settings]\ntrial_target_s = inf\n", "trial_target_s"),
        (
            "[settings]\nop_budget_s = inf\n",
            "op_budget_s: op budget inf",
        ),
        ("[settings]\nkat_timeout_s = -inf\n", "kat_timeout_s"),
        (
            "[settings]\nlengths = [32, 1024, 32]\n",
            "32 is listed twice",
        ),
        ("[settings]\nlengths = [0]\n", "1 … 16777216"),
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains(needle), "{text:?}: {err}");
    }
    let err = parse(&one_instance("x", "a", "digest_bits=4294967288"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("digest bits 4294967288 is outside the allowed range 8 … 8192"),
        "{err}"
    );
}

#[test]
fn names_that_would_be_paths_are_refused() {
    let long = "a".repeat(300);
    for (id, label, extra, needle) in [
        (
            "x",
            "../../x",
            "",
            "instance label \"../../x\" starts with '.'",
        ),
        ("../x", "a", "", "candidate id \"../x\" starts with '.'"),
        ("/abs", "a", "", "contains '/'"),
        ("x", "a/b", "", "contains '/'"),
        ("x", long.as_str(), "", "300 characters long (at most 64)"),
        ("x", "a", "kat_name=\"../../k\"", "kat_name \"../../k\""),
        ("x", "a", "oracle=\"a b\"", "oracle \"a b\""),
    ] {
        let text = one_instance(id, label, &format!("digest_bits=256\n{extra}"));
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains(needle), "{id:?}/{label:?}: {err}");
    }
}

#[test]
fn an_instance_may_name_its_oracle() {
    let text = one_instance("x", "a", "digest_bits=256\noracle=\"a-ref\"");
    let cat = parse(&text).unwrap();
    assert_eq!(
        cat.instances().next().unwrap().oracle.as_deref(),
        Some("a-ref")
    );
}

#[test]
fn line_column_counts_characters() {
    assert_eq!(line_column("ab\ncd", 4), (2, 2));
    assert_eq!(line_column("µ=1", 2), (1, 2));
}
