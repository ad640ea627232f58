//! The bundled baselines beside a catalog: added, turned off, recognised in an older config,
//! and label clashes refused or given way to.

use std::path::Path;

use super::*;

fn parse(text: &str) -> Catalog {
    let mut c = parse_config(text, Path::new("mine.toml"), Path::new("/base")).unwrap();
    c.source = Some("mine.toml".into());
    c
}

const OWN: &str = "[[candidate]]\nid = \"hash-10\"\nalgorithm = \"FEILIAN\"\n\
                   [[candidate.instance]]\nlabel = \"FEILIAN512\"\nlibrary = \"lib/libFEILIAN512.so\"\ndigest_bits = 512\n";

fn labels(c: &Catalog) -> Vec<&str> {
    c.instances().map(|i| i.label.as_str()).collect()
}

#[test]
fn the_baselines_stand_beside_a_config_unless_turned_off() {
    let mut c = parse(OWN);
    assert_eq!(
        c.add_baselines(OnClash::Refuse).unwrap(),
        Vec::<String>::new()
    );
    let all = labels(&c);
    assert_eq!(all.len(), 13, "{all:?}");
    assert_eq!(all[0], "FEILIAN512");
    assert!(all.contains(&"pseudoXOF-512") && all.contains(&"sm3hash-256"));
    let xof = c.find("pseudoXOF-512").unwrap();
    assert_eq!(xof.candidate, "iccs");
    assert_eq!(xof.variant, "iccs-baseline");
    let manifest = xof.kat_manifest.as_deref().expect("bundled manifest");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kat/iccs/kat.sha256");
    assert_eq!(
        std::fs::read(manifest).unwrap(),
        std::fs::read(shipped).unwrap()
    );

    let mut off = parse(&format!("[settings]\nbundled_baselines = false\n{OWN}"));
    off.add_baselines(OnClash::Refuse).unwrap();
    assert_eq!(labels(&off), ["FEILIAN512"]);
}

#[test]
fn a_config_that_lists_a_baseline_itself_keeps_it_once() {
    let mut c = parse(
        "[[candidate]]\nid = \"iccs\"\nalgorithm = \"ICCS hash helpers\"\nkat_manifest = \"mine.sha256\"\n\
         [[candidate.instance]]\nlabel = \"pseudoXOF-256\"\nlibrary = \"bundled:pseudoxof\"\ndigest_bits = 256\n",
    );
    c.add_baselines(OnClash::Refuse).unwrap();
    let all = labels(&c);
    assert_eq!(all.len(), 12, "{all:?}");
    assert_eq!(
        c.candidates.len(),
        1,
        "merged into the config's iccs candidate"
    );
    let own = c.find("pseudoXOF-256").unwrap();
    assert_eq!(
        own.kat_manifest.as_deref(),
        Some(Path::new("/base/mine.sha256"))
    );
}

#[test]
fn a_clash_is_refused_in_a_config_and_gives_way_on_the_command_line() {
    let clash = "[[candidate]]\nid = \"mine\"\nalgorithm = \"X\"\n\
                 [[candidate.instance]]\nlabel = \"sm3hash-256\"\nlibrary = \"my.so\"\ndigest_bits = 256\n";
    let err = parse(clash)
        .add_baselines(OnClash::Refuse)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"sm3hash-256\" of mine.toml"), "{err}");
    assert!(err.contains("bundled_baselines = false"), "{err}");

    let mut c = parse(clash);
    let left_out = c.add_baselines(OnClash::PreferOwn).unwrap();
    assert_eq!(left_out, ["sm3hash-256"]);
    assert_eq!(
        c.find("sm3hash-256").unwrap().library,
        Path::new("/base/my.so")
    );
    assert_eq!(labels(&c).len(), 12);
}

#[test]
fn an_unknown_bundled_name_is_refused_with_the_known_ones() {
    let err = parse_config(
        "[[candidate]]\nid = \"x\"\nalgorithm = \"X\"\n\
         [[candidate.instance]]\nlabel = \"a\"\nlibrary = \"bundled:sm4\"\ndigest_bits = 256\n",
        Path::new("c.toml"),
        Path::new("."),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("instance \"a\": no bundled library named \"sm4\""),
        "{err}"
    );
}
