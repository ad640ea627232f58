//! SUPERCOP's `checksumsmall` / `checksumbig` for a hash function, so a digest that differs
//! from eBASH's published one shows: a deterministic Salsa20 stream picks message lengths and
//! contents, each digest is folded into a Salsa20-core chaining state, and the first 32 bytes
//! of that state are the checksum (docs/supercop.md says the procedure in our words and what
//! was verified). The messages depend on nothing the function returns, so the engine makes
//! them all first (`messages`), has a worker hash them (the trial worker's table job, as
//! `cyclescope supercop` does), and folds what came back (`Folder`), judging each message's
//! digests itself; `checksum` runs the same procedure on a function in this process (the
//! tests' reference). It never loads a library and writes nothing.

use crate::plugin::GuardedBuffer;

/// Loops and largest message of `checksumsmall` and `checksumbig`.
pub const SMALL: (u64, u64) = (64, 128);
pub const BIG: (u64, u64) = (512, 4096);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SupercopError {
    #[error("digest width {0} is not a whole number of bytes")]
    PartialByteDigest(u32),
    #[error("the hash function returned {rc} for a {mlen}-byte message")]
    Returned { rc: i32, mlen: usize },
    #[error("the hash function wrote outside its buffers ({mlen}-byte message)")]
    Overflow { mlen: usize },
    #[error("the hash function changed its input ({mlen}-byte message)")]
    WroteInput { mlen: usize },
    #[error("the hash function gave two digests for one {mlen}-byte message")]
    Nondeterministic { mlen: usize },
    #[error("the hash function gives another digest when output and input overlap ({mlen} bytes)")]
    Overlap { mlen: usize },
}

/// Both checksums, lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksums {
    pub small: String,
    pub big: String,
}

/// A function of whole-byte messages with a fixed digest, as the procedure calls it.
pub trait ByteHash {
    /// Digest of the first `mlen` bytes of `msg` into `out`; the return code (0 = success).
    fn hash(&mut self, out: &mut GuardedBuffer, msg: &GuardedBuffer, mlen: usize) -> i32;
    /// Digest of the first `mlen` bytes of `buf` written over the start of `buf`; None when
    /// the function's API does not promise that (ICCS `CryptHash` does not: the bundled
    /// libraries refuse overlapping buffers).
    fn hash_in_place(&mut self, buf: &mut GuardedBuffer, mlen: usize) -> Option<i32>;
}

/// The messages of one checksum, in order: `loops` of random length up to `maxtest` bytes.
pub fn messages((loops, maxtest): (u64, u64)) -> Vec<Vec<u8>> {
    let mut inputs = Stream::new(*b"generate inputs for test vectors");
    (0..loops)
        .map(|_| {
            let mut r = [0u8; 8];
            inputs.next_into(&mut r);
            let mut m = vec![0u8; (u64::from_le_bytes(r) % (maxtest + 1)) as usize];
            inputs.next_into(&mut m);
            m
        })
        .collect()
}

/// What a function gave for one message: its digest, a second call's, and where its API
/// promises one, the digest of a call whose output overlapped its input.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub first: &'a [u8],
    pub second: &'a [u8],
    pub in_place: Option<&'a [u8]>,
}

/// The chaining state of one checksum, fed each message's answers in order.
pub struct Folder {
    state: [u8; 64],
}

impl Default for Folder {
    fn default() -> Self {
        Self { state: [0; 64] }
    }
}

impl Folder {
    /// Takes the answers for a message of `mlen` bytes: a second digest or an in-place one
    /// that is not the first ends the checksum, named.
    pub fn take(&mut self, mlen: usize, a: Answer<'_>) -> Result<(), SupercopError> {
        if a.second != a.first {
            return Err(SupercopError::Nondeterministic { mlen });
        }
        if a.in_place.is_some_and(|p| p != a.first) {
            return Err(SupercopError::Overlap { mlen });
        }
        fold(&mut self.state, a.first);
        Ok(())
    }

    /// The checksum, lowercase hex.
    pub fn finish(self) -> String {
        hex::encode(&self.state[..32])
    }
}

/// One checksum of a function in this process: `loops` messages of random length up to
/// `maxtest` bytes, each hashed twice and (where the API promises it) in place, every call's
/// return, guard bytes and input checked.
pub fn checksum(
    f: &mut dyn ByteHash,
    hlen: usize,
    size: (u64, u64),
) -> Result<String, SupercopError> {
    let mut folder = Folder::default();
    for original in messages(size) {
        let mlen = original.len();
        let mut m = GuardedBuffer::new(mlen);
        m.data_mut().copy_from_slice(&original);
        let mut h = GuardedBuffer::new(hlen);
        let mut h2 = GuardedBuffer::new(hlen);
        for out in [&mut h, &mut h2] {
            let rc = f.hash(out, &m, mlen);
            if rc != 0 {
                return Err(SupercopError::Returned { rc, mlen });
            }
            if !out.guards_intact() || !m.guards_intact() {
                return Err(SupercopError::Overflow { mlen });
            }
            if m.data() != original.as_slice() {
                return Err(SupercopError::WroteInput { mlen });
            }
        }
        let mut both = GuardedBuffer::new(mlen.max(hlen));
        both.data_mut()[..mlen].copy_from_slice(&original);
        let in_place = match f.hash_in_place(&mut both, mlen) {
            None => None,
            Some(0) if both.guards_intact() => Some(&both.data()[..hlen]),
            Some(0) => return Err(SupercopError::Overflow { mlen }),
            Some(rc) => return Err(SupercopError::Returned { rc, mlen }),
        };
        let answer = Answer {
            first: h.data(),
            second: h2.data(),
            in_place,
        };
        folder.take(mlen, answer)?;
    }
    Ok(folder.finish())
}

/// Folds `x` into the chaining state: each 16-byte piece is the input block of a Salsa20 core
/// keyed by the state's first 32 bytes; the last piece is padded with a 1 byte, and the state
/// is marked (first byte ^ 1) before it, so lengths cannot collide.
fn fold(state: &mut [u8; 64], x: &[u8]) {
    let mut chunks = x.chunks_exact(16);
    for c in &mut chunks {
        *state = core(c.try_into().unwrap_or([0; 16]), key_of(state));
    }
    let rest = chunks.remainder();
    let mut last = [0u8; 16];
    last[..rest.len()].copy_from_slice(rest);
    last[rest.len()] = 1;
    state[0] ^= 1;
    *state = core(last, key_of(state));
}

fn key_of(state: &[u8; 64]) -> [u8; 32] {
    let mut k = [0u8; 32];
    k.copy_from_slice(&state[..32]);
    k
}

/// The Salsa20/20 core: 16-byte input block, 32-byte key, 64-byte output (feed-forward added).
fn core(input: [u8; 16], key: [u8; 32]) -> [u8; 64] {
    let word = |b: &[u8], i: usize| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    };
    let sigma = b"expand 32-byte k";
    let mut x = [0u32; 16];
    for i in 0..4 {
        x[5 * i] = word(sigma, i);
        x[1 + i] = word(&key, i);
        x[6 + i] = word(&input, i);
        x[11 + i] = word(&key, 4 + i);
    }
    let start = x;
    let quarter = |x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize| {
        x[b] ^= x[a].wrapping_add(x[d]).rotate_left(7);
        x[c] ^= x[b].wrapping_add(x[a]).rotate_left(9);
        x[d] ^= x[c].wrapping_add(x[b]).rotate_left(13);
        x[a] ^= x[d].wrapping_add(x[c]).rotate_left(18);
    };
    for _ in 0..10 {
        // Columns, then rows.
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 5, 9, 13, 1);
        quarter(&mut x, 10, 14, 2, 6);
        quarter(&mut x, 15, 3, 7, 11);
        quarter(&mut x, 0, 1, 2, 3);
        quarter(&mut x, 5, 6, 7, 4);
        quarter(&mut x, 10, 11, 8, 9);
        quarter(&mut x, 15, 12, 13, 14);
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&x[i].wrapping_add(start[i]).to_le_bytes());
    }
    out
}

/// A keyed Salsa20 stream whose 8-byte nonce (little-endian) goes up by one after each
/// request: every request starts a new stream at block 0.
struct Stream {
    key: [u8; 32],
    nonce: u64,
}

impl Stream {
    fn new(key: [u8; 32]) -> Self {
        Stream { key, nonce: 0 }
    }

    fn next_into(&mut self, out: &mut [u8]) {
        for (block, piece) in out.chunks_mut(64).enumerate() {
            let mut input = [0u8; 16];
            input[..8].copy_from_slice(&self.nonce.to_le_bytes());
            input[8..].copy_from_slice(&(block as u64).to_le_bytes());
            let ks = core(input, self.key);
            piece.copy_from_slice(&ks[..piece.len()]);
        }
        self.nonce = self.nonce.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests;
