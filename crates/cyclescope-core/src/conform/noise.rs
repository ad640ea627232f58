//! Random bytes for canaries, surroundings and messages, fresh in every worker process: a
//! 64-bit generator seeded from the kernel (`/dev/urandom`), so a library cannot expect the
//! same guard pattern twice. Not cryptographic, and it need not be: the library never sees
//! the seed.

use std::io::Read;

/// A xorshift64* stream.
#[derive(Debug, Clone)]
pub(crate) struct Noise(u64);

impl Noise {
    /// Seeded from `/dev/urandom`, else from the clock and the process id.
    pub(crate) fn fresh() -> Self {
        let mut seed = [0u8; 8];
        let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut seed));
        let s = match read {
            Ok(()) => u64::from_le_bytes(seed),
            Err(_) => {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                t ^ (u64::from(std::process::id()) << 32)
            }
        };
        Self::seeded(s)
    }

    pub(crate) fn seeded(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `lo..=hi`.
    pub(crate) fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    pub(crate) fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// `out` filled so that no byte equals the byte at the same place of `other`: a
    /// surrounding that differs everywhere from the previous one.
    pub(crate) fn fill_unlike(&mut self, out: &mut [u8], other: &[u8]) {
        self.fill(out);
        for (b, &o) in out.iter_mut().zip(other) {
            if *b == o {
                *b = !o;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_processes_worth_of_seeds_differ_and_fill_unlike_differs_everywhere() {
        let (mut a, mut b) = (Noise::fresh(), Noise::fresh());
        assert_ne!(a.next_u64(), b.next_u64());
        let mut x = [0u8; 37];
        let mut y = [0u8; 37];
        a.fill(&mut x);
        a.fill_unlike(&mut y, &x);
        assert!(x.iter().zip(&y).all(|(p, q)| p != q));
        assert!((0..100).all(|_| (3..=5).contains(&a.between(3, 5))));
    }
}
