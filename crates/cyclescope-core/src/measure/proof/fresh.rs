//! The fresh-message probe's messages as the engine regenerates them from their seed, to check
//! the digest the probe's last call wrote: the same SplitMix64 stream as the trial worker's
//! (`companion/proof.rs`, which cannot be linked here; a test holds the two together).

/// The bytes of probe trial `trial`'s pool: `count` messages of `len` bytes from `seed`.
pub(crate) fn pool(seed: u64, trial: u64, len: usize, count: usize) -> Vec<u8> {
    let mut state = seed ^ trial.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut out = vec![0u8; len * count];
    for chunk in out.chunks_mut(8) {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let v = (z ^ (z >> 31)).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    out
}

/// The last message probe trial `trial` hashed.
pub(crate) fn last_message(seed: u64, trial: u64, len: usize, count: usize) -> Vec<u8> {
    let all = pool(seed, trial, len, count);
    all[len * count.saturating_sub(1)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::companion::proof::Fresh;

    #[test]
    fn the_engine_regenerates_the_workers_probe_messages() {
        for (seed, trial, len, count) in [(7u64, 0u64, 32usize, 5usize), (u64::MAX, 2, 61, 3)] {
            let mut worker = vec![0u8; len * count];
            Fresh::new(seed).advance(trial).fill(&mut worker);
            assert_eq!(pool(seed, trial, len, count), worker);
            assert_eq!(
                last_message(seed, trial, len, count),
                worker[len * (count - 1)..]
            );
        }
    }
}
