//! SUPERCOP's `checksumsmall` / `checksumbig` for a hash function, so a digest that differs
//! from eBASH's published one shows: a deterministic Salsa20 stream picks message lengths and
//! contents, each digest is folded into a Salsa20-core chaining state, and the first 32 bytes
//! of that state are the checksum (docs/supercop.md says the procedure in our words and what
//! was verified). Runs only in a worker (it calls candidate code through `plugin`); it never
//! calls a library any other way and writes nothing.

use crate::plugin::{GuardedBuffer, HashLibrary};

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

/// A loaded library at a given width, through whichever ABI it was opened with.
struct Library<'a> {
    lib: &'a HashLibrary,
    digest_bits: u32,
}

impl ByteHash for Library<'_> {
    fn hash(&mut self, out: &mut GuardedBuffer, msg: &GuardedBuffer, mlen: usize) -> i32 {
        self.lib
            .crypt_hash(self.digest_bits, msg, 8 * mlen as u64, out)
    }
    fn hash_in_place(&mut self, buf: &mut GuardedBuffer, mlen: usize) -> Option<i32> {
        (self.lib.abi() == crate::plugin::Abi::Supercop)
            .then(|| self.lib.hash_in_place(self.digest_bits, buf, mlen))
    }
}

/// `checksumsmall` and `checksumbig` of `lib` at `digest_bits`, each from a fresh state and
/// a fresh input stream, as SUPERCOP's separate runs compute them.
pub fn checksums(lib: &HashLibrary, digest_bits: u32) -> Result<Checksums, SupercopError> {
    if !digest_bits.is_multiple_of(8) {
        return Err(SupercopError::PartialByteDigest(digest_bits));
    }
    let hlen = digest_bits as usize / 8;
    let mut f = Library { lib, digest_bits };
    Ok(Checksums {
        small: checksum(&mut f, hlen, SMALL)?,
        big: checksum(&mut f, hlen, BIG)?,
    })
}

/// One checksum: `loops` messages of random length up to `maxtest` bytes.
pub fn checksum(
    f: &mut dyn ByteHash,
    hlen: usize,
    (loops, maxtest): (u64, u64),
) -> Result<String, SupercopError> {
    let mut inputs = Stream::new(*b"generate inputs for test vectors");
    let mut state = [0u8; 64];
    for _ in 0..loops {
        let mut r = [0u8; 8];
        inputs.next_into(&mut r);
        let mlen = (u64::from_le_bytes(r) % (maxtest + 1)) as usize;
        let mut m = GuardedBuffer::new(mlen);
        inputs.next_into(m.data_mut());
        let original = m.data().to_vec();
        let mut h = GuardedBuffer::new(hlen);
        let rc = f.hash(&mut h, &m, mlen);
        if rc != 0 {
            return Err(SupercopError::Returned { rc, mlen });
        }
        if !h.guards_intact() || !m.guards_intact() {
            return Err(SupercopError::Overflow { mlen });
        }
        if m.data() != original.as_slice() {
            return Err(SupercopError::WroteInput { mlen });
        }
        fold(&mut state, h.data());
        let mut h2 = GuardedBuffer::new(hlen);
        let rc = f.hash(&mut h2, &m, mlen);
        if rc != 0 {
            return Err(SupercopError::Returned { rc, mlen });
        }
        if h2.data() != h.data() {
            return Err(SupercopError::Nondeterministic { mlen });
        }
        let mut both = GuardedBuffer::new(mlen.max(hlen));
        both.data_mut()[..mlen].copy_from_slice(&original);
        let Some(rc) = f.hash_in_place(&mut both, mlen) else {
            continue;
        };
        if rc != 0 {
            return Err(SupercopError::Returned { rc, mlen });
        }
        if !both.guards_intact() {
            return Err(SupercopError::Overflow { mlen });
        }
        if both.data()[..hlen] != *h.data() {
            return Err(SupercopError::Overlap { mlen });
        }
    }
    Ok(hex::encode(&state[..32]))
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
