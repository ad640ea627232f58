//! Who measures what: the slice of a campaign one `--shard K/N` process takes, and which of a
//! run's measurement CPUs (its lanes) measures which instance. Both follow the harness's
//! shards: whole instances (every length of an instance stays together), greedy
//! longest-processing-time over known costs, unknown instances costing 60 s, ties broken by
//! key, so the same inputs always give the same assignment. Pure functions; nothing here
//! measures, reads or writes.

use std::collections::BTreeMap;

use crate::catalog::Instance;

/// What an instance without a known cost counts as (the harness's figure).
const UNKNOWN_COST_S: f64 = 60.0;

/// One slice of a campaign: `index` of `count`, 1-based as written (`--shard 2/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The most slices a campaign is cut into.
    pub const MAX_COUNT: u32 = 4096;
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "{s:?} is not a shard: K/N with 1 ≤ K ≤ N ≤ {} (K counts from 1; under Slurm \
                 that is $((SLURM_ARRAY_TASK_ID + 1)) for an array 0-based)",
                Shard::MAX_COUNT
            )
        };
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count || count > Shard::MAX_COUNT {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl TryFrom<String> for Shard {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Shard> for String {
    fn from(s: Shard) -> String {
        s.to_string()
    }
}

/// Greedy longest-processing-time: each key (costliest first, ties by key) goes to the bin
/// with the least load so far (ties: the lowest bin). Returns the bin of each key, in the
/// order given. `bins` ≥ 1.
pub(crate) fn lpt(keys: &[String], costs: &BTreeMap<String, f64>, bins: usize) -> Vec<usize> {
    let bins = bins.max(1);
    let cost = |k: &String| costs.get(k).copied().unwrap_or(UNKNOWN_COST_S);
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        cost(&keys[b])
            .total_cmp(&cost(&keys[a]))
            .then(keys[a].cmp(&keys[b]))
    });
    let mut load = vec![0.0f64; bins];
    let mut bin_of = vec![0; keys.len()];
    for i in order {
        let (best, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .unwrap_or((0, &0.0));
        load[best] += cost(&keys[i]);
        bin_of[i] = best;
    }
    bin_of
}

/// The instances of `shard` (all of them without one).
pub(crate) fn shard_instances(
    instances: &[Instance],
    shard: Option<Shard>,
    costs: &BTreeMap<String, f64>,
) -> Vec<Instance> {
    let Some(shard) = shard else {
        return instances.to_vec();
    };
    let keys: Vec<String> = instances.iter().map(Instance::key).collect();
    let bins = lpt(&keys, costs, shard.count as usize);
    instances
        .iter()
        .zip(bins)
        .filter(|(_, b)| *b + 1 == shard.index as usize)
        .map(|(i, _)| i.clone())
        .collect()
}

/// The instances each of `lanes` measurement CPUs takes, lane by lane, each in the
/// campaign's order.
pub(crate) fn lane_instances(instances: &[Instance], lanes: usize) -> Vec<Vec<Instance>> {
    let keys: Vec<String> = instances.iter().map(Instance::key).collect();
    let bins = lpt(&keys, &BTreeMap::new(), lanes);
    let mut out = vec![Vec::new(); lanes.max(1)];
    for (inst, b) in instances.iter().zip(bins) {
        out[b].push(inst.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("c/i{i:02}")).collect()
    }

    #[test]
    fn shards_parse_one_based_and_refuse_the_rest() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard { index: 2, count: 4 }.to_string(), "2/4");
        for bad in ["0/2", "3/2", "1/0", "2", "a/b", "1/5000", "-1/2"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("K counts from 1"), "{bad}: {e}");
        }
    }

    #[test]
    fn longest_first_goes_to_the_least_loaded_bin() {
        let k = keys(4);
        let costs: BTreeMap<String, f64> = [
            (k[0].clone(), 10.0),
            (k[1].clone(), 7.0),
            (k[2].clone(), 5.0),
            (k[3].clone(), 4.0),
        ]
        .into();
        // 10 → bin 0, 7 → bin 1, 5 → bin 1 (7 < 10), 4 → bin 0 (10 < 12).
        assert_eq!(lpt(&k, &costs, 2), [0, 1, 1, 0]);
    }

    #[test]
    fn equal_costs_deal_the_keys_round_robin_and_every_key_lands_once() {
        let k = keys(12);
        let bins = lpt(&k, &BTreeMap::new(), 2);
        assert_eq!(bins, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
        let bins3 = lpt(&k, &BTreeMap::new(), 5);
        for b in 0..5 {
            let n = bins3.iter().filter(|&&x| x == b).count();
            assert!((2..=3).contains(&n), "bin {b}: {n}");
        }
        // Deterministic: the same input, the same answer, whatever the input order.
        let mut rev = k.clone();
        rev.reverse();
        let again = lpt(&rev, &BTreeMap::new(), 2);
        for (i, key) in rev.iter().enumerate() {
            let j = k.iter().position(|x| x == key).unwrap();
            assert_eq!(again[i], bins[j], "{key}");
        }
    }
}
