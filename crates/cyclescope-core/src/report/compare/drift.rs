//! Which figures a row of a comparison is divided by to cancel what the host did during a
//! whole run (its width's baseline pseudoXOF, else the nearest other width, else another of the
//! bundled helpers), and the helpers' rows weighed as A/A evidence of the noise between the two
//! runs. Reads the two runs' records only.

use std::collections::BTreeMap;

use super::{Comparison, Figure, Key, Weighed, judge_with};
use crate::record::TimingRecord;

/// The figure a row is divided by: its label, and both runs' figures of it.
pub(super) struct Divisor {
    pub(super) label: String,
    pub(super) a: Figure,
    pub(super) b: Figure,
}

/// Both runs' baseline figures for the job `k` and the instance they are of, when both have
/// one.
pub(super) fn baselines(
    ma: &BTreeMap<Key, &TimingRecord>,
    mb: &BTreeMap<Key, &TimingRecord>,
    k: &Key,
) -> Option<Divisor> {
    let base = (baseline_label(ma, mb, ma.get(k)?)?, k.1);
    Some(Divisor {
        a: Figure::of_record(ma.get(&base)?)?,
        b: Figure::of_record(mb.get(&base)?)?,
        label: base.0,
    })
}

/// The job `k` weighed as if no figure were doubtful (the helpers' A/A evidence), on its
/// baseline ratios (`on_ratio`, when both runs have a baseline) or on its mean cycles.
pub(super) fn probe(
    ma: &BTreeMap<Key, &TimingRecord>,
    mb: &BTreeMap<Key, &TimingRecord>,
    k: &Key,
    on_ratio: bool,
) -> Option<Weighed> {
    let clean = |f: Figure| Figure { doubt: None, ..f };
    let (fa, fb) = (
        clean(Figure::of_record(ma.get(k)?)?),
        clean(Figure::of_record(mb.get(k)?)?),
    );
    let refs = if on_ratio {
        Some(baselines(ma, mb, k).map(|d| (clean(d.a), clean(d.b)))?)
    } else {
        None
    };
    judge_with(&fa, &fb, refs.as_ref().map(|(x, y)| (x, y)))
        .1
        .map(|(w, _)| w)
}

/// Whether the row is of a bundled helper (the baseline candidates' instances) in both runs.
pub(super) fn is_helper(
    ma: &BTreeMap<Key, &TimingRecord>,
    mb: &BTreeMap<Key, &TimingRecord>,
    r: &Comparison,
) -> bool {
    let k = (r.label.clone(), r.input_bytes);
    let helper = |m: &BTreeMap<Key, &TimingRecord>| {
        m.get(&k).is_some_and(|rec| {
            rec.candidate == crate::baseline::DEFAULT_CANDIDATE
                || rec.candidate == crate::build::iccs_api::ICCS_C_ID
        })
    };
    helper(ma) && helper(mb)
}

/// The label of the record `r` is divided by in both runs (the host's drift probe): its own
/// width's `pseudoXOF-<bits>`; else the nearest other pseudoXOF width both runs measured at that
/// length (one library serves every width); for a baseline record with no other width, another
/// instance of its own candidate (the bundled helpers are the same in both runs). None when the
/// runs share none of these.
fn baseline_label(
    ma: &BTreeMap<Key, &TimingRecord>,
    mb: &BTreeMap<Key, &TimingRecord>,
    r: &TimingRecord,
) -> Option<String> {
    let bits = r.digest_bits()?;
    let own = crate::baseline::label(bits);
    let in_both = |l: &String| {
        let k = (l.clone(), r.input_bytes);
        ma.contains_key(&k) && mb.contains_key(&k)
    };
    if r.label != own && in_both(&own) {
        return Some(own);
    }
    let others = || {
        ma.iter()
            .filter(|((l, n), _)| *n == r.input_bytes && *l != r.label && in_both(l))
            .map(|((l, _), rec)| (l, rec))
    };
    let nearest_width = others()
        .filter(|(l, _)| l.starts_with("pseudoXOF-"))
        .min_by_key(|(_, rec)| rec.digest_bits().unwrap_or(u32::MAX).abs_diff(bits))
        .map(|(l, _)| l.clone());
    if nearest_width.is_some() || r.label != own {
        return nearest_width;
    }
    others()
        .find(|(_, rec)| rec.candidate == r.candidate)
        .map(|(l, _)| l.clone())
}
