//! Which instance is the oracle of another for the `differential` check: the one the catalog
//! names (`oracle = "LABEL"`), else the other build of the same submission instance — same
//! candidate, width and KAT name, another variant (a submission's Reference and Optimized
//! implementations). Pure lookup over the instances at hand; it loads nothing.

use super::OracleSpec;
use crate::catalog::Instance;

/// The oracle of `inst` among `peers`, if there is one.
pub fn oracle_for(inst: &Instance, peers: &[Instance]) -> Option<OracleSpec> {
    let spec = |o: &Instance| OracleSpec {
        label: o.label.clone(),
        library: o.library.clone(),
        abi: o.abi,
    };
    if let Some(named) = &inst.oracle {
        return peers
            .iter()
            .find(|p| &p.label == named && p.digest_bits == inst.digest_bits)
            .map(spec);
    }
    let kat_name = |i: &Instance| i.kat_name.clone().unwrap_or_else(|| i.label.clone());
    peers
        .iter()
        .find(|p| {
            p.label != inst.label
                && p.candidate == inst.candidate
                && p.digest_bits == inst.digest_bits
                && p.variant != inst.variant
                && kat_name(p) == kat_name(inst)
        })
        .map(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn inst(label: &str, variant: &str, kat_name: Option<&str>) -> Instance {
        Instance {
            candidate: "fixhash".into(),
            algorithm: "FIXH".into(),
            label: label.into(),
            library: PathBuf::from(format!("lib/lib{label}.so")),
            digest_bits: 256,
            variant: variant.into(),
            flags: "guide".into(),
            kat_manifest: None,
            kat_name: kat_name.map(str::to_string),
            abi: Default::default(),
            oracle: None,
            kat_dir: None,
        }
    }

    #[test]
    fn the_reference_and_optimized_builds_are_each_others_oracle() {
        let r = inst("FIXH-256", "reference", Some("FIXH-256"));
        let o = inst("FIXH-256-opt", "optimized", Some("FIXH-256"));
        let other = inst("FIXH-512", "reference", Some("FIXH-512"));
        let peers = vec![r.clone(), o.clone(), other.clone()];
        assert_eq!(oracle_for(&o, &peers).unwrap().label, "FIXH-256");
        assert_eq!(oracle_for(&r, &peers).unwrap().label, "FIXH-256-opt");
        assert!(oracle_for(&other, &peers).is_none());
    }

    #[test]
    fn a_named_oracle_wins_and_must_have_the_width() {
        let mut a = inst("A", "reference", None);
        a.oracle = Some("B".into());
        let b = inst("B", "reference", None);
        assert_eq!(oracle_for(&a, std::slice::from_ref(&b)).unwrap().label, "B");
        let mut wide = b;
        wide.digest_bits = 512;
        assert!(oracle_for(&a, &[wide]).is_none());
    }
}
