//! The fresh-message probe's messages as the engine regenerates them from their seed, to check
//! the digest the probe's last call wrote: the same SplitMix64 stream as the trial worker's
//! (`cyclescope_worker::proof`, which cannot be linked here; a test holds the two together).

/// The bytes of probe trial `trial`'s pool: `count` messages of `len` bytes from `seed`.
pub(crate) fn pool(seed: u64, trial: u64, len: usize, count: usize) -> Vec<u8> {
    let state = seed ^ trial.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03);
    pool_of(state, len * count)
}

/// XORs the heads stream of `heads` into the first 8 bytes of each `len`-byte message of
/// `pool`, as the worker does once the go line gave it `heads` (`companion::proof::Probe`).
pub(crate) fn toggle_heads(heads: u64, pool: &mut [u8], len: usize) {
    if len == 0 {
        return;
    }
    let mut stream = pool_of(heads, pool.len().div_ceil(len) * 8);
    for (message, head) in pool.chunks_mut(len).zip(stream.chunks_mut(8)) {
        message
            .iter_mut()
            .zip(head.iter_mut())
            .for_each(|(b, h)| *b ^= *h);
    }
}

/// `bytes` bytes of the SplitMix64 stream of `seed` (no per-trial step).
fn pool_of(seed: u64, bytes: usize) -> Vec<u8> {
    let mut state = seed;
    let mut out = vec![0u8; bytes];
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

/// Message `index` of the first trial of a probe whose pool came from `seed` and `heads`.
pub(crate) fn probe_message(seed: u64, heads: u64, len: usize, index: usize) -> Vec<u8> {
    let mut all = pool(seed, 0, len, index + 1);
    toggle_heads(heads, &mut all, len);
    all[len * index..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::companion::proof::Fresh;

    #[test]
    fn the_engine_regenerates_the_probes_heads() {
        use crate::companion::proof::Probe;
        for (seed, heads, len, count) in [(7u64, 9u64, 32usize, 5usize), (1, u64::MAX, 5, 4)] {
            let p = Probe {
                body: Fresh::new(seed),
                heads,
                repeat: false,
            };
            let mut worker = vec![0u8; len * count];
            p.fill(0, &mut worker, len);
            for i in 0..count {
                assert_eq!(
                    probe_message(seed, heads, len, i),
                    worker[len * i..len * (i + 1)]
                );
            }
            assert_eq!(p.differs(0, &mut worker, len), None);
            worker[len + 3] ^= 1;
            assert_eq!(p.differs(0, &mut worker, len), Some(len + 3));
        }
    }

    #[test]
    fn the_engine_regenerates_the_workers_probe_messages() {
        for (seed, trial, len, count) in [(7u64, 0u64, 32usize, 5usize), (u64::MAX, 2, 61, 3)] {
            let mut worker = vec![0u8; len * count];
            Fresh::new(seed).advance(trial).fill(&mut worker);
            assert_eq!(pool(seed, trial, len, count), worker);
        }
    }
}
