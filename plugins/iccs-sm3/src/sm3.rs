//! SM3 (GB/T 32905-2016) with bit-granular input, as the ICCS helpers (`api/auxfunc.c`
//! `sm3_bit`) need it: a message may end mid-byte, and pieces may be concatenated at bit level
//! (`m || dom` with `m` of 13 bits puts `dom` across byte boundaries). Bits are taken high-order
//! first within each byte. This is measured as a baseline, so the byte-aligned path compresses
//! whole 64-byte blocks straight from the input and never loops per bit; only input arriving at
//! a non-byte-aligned position is shifted, a byte at a time. It must never allocate.
//!
//! The encoded length is the true 64-bit bit count. `auxfunc.c` computes the high length word as
//! `(block_num >> 32) << 9`, which differs only for inputs of 2^32 bits (512 MiB) or more; no
//! caller of the helpers hashes that much, so the quirk is not reproduced.

/// Digest length in bytes.
pub const DIGEST_LEN: usize = 32;
/// Compression block length in bytes.
pub const BLOCK_LEN: usize = 64;

const IV: [u32; 8] = [
    0x7380_166f,
    0x4914_b2b9,
    0x1724_42d7,
    0xda8a_0600,
    0xa96f_30bc,
    0x1631_38aa,
    0xe38d_ee4d,
    0xb0fb_0e4e,
];

/// `T_j <<< (j mod 32)`, precomputed.
const T_ROTATED: [u32; 64] = {
    let mut t = [0u32; 64];
    let mut j = 0;
    while j < 64 {
        let tj: u32 = if j < 16 { 0x79cc_4519 } else { 0x7a87_9d8a };
        t[j] = tj.rotate_left((j % 32) as u32);
        j += 1;
    }
    t
};

#[inline(always)]
fn p0(x: u32) -> u32 {
    x ^ x.rotate_left(9) ^ x.rotate_left(17)
}

#[inline(always)]
fn p1(x: u32) -> u32 {
    x ^ x.rotate_left(15) ^ x.rotate_left(23)
}

/// One round in OpenSSL's register-renaming form: instead of shifting eight words per round,
/// the caller rotates the names (`a b c d e f g h` → `d a b c h e f g`), so a round only
/// rewrites `b`, `d`, `f` and `h`. The message schedule is a 16-word window expanded on the
/// fly (`W[j+4]` is computed when first needed). `$ff`/`$gg` pick the round's half.
macro_rules! round {
    ($ff:ident, $gg:ident, $j:expr, $x:ident,
     $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident) => {{
        let w_j4 = if $j + 4 < 16 {
            $x[$j + 4]
        } else {
            expand(&mut $x, $j + 4)
        };
        let w_j = $x[$j & 15];
        let a12 = $a.rotate_left(12);
        let ss1 = a12
            .wrapping_add($e)
            .wrapping_add(T_ROTATED[$j])
            .rotate_left(7);
        let ss2 = ss1 ^ a12;
        let tt1 = $ff($a, $b, $c)
            .wrapping_add($d)
            .wrapping_add(ss2)
            .wrapping_add(w_j ^ w_j4);
        let tt2 = $gg($e, $f, $g)
            .wrapping_add($h)
            .wrapping_add(ss1)
            .wrapping_add(w_j);
        $b = $b.rotate_left(9);
        $d = tt1;
        $f = $f.rotate_left(19);
        $h = p0(tt2);
    }};
}

/// Four rounds from `$j`, after which the names are back in place.
macro_rules! four_rounds {
    ($ff:ident, $gg:ident, $j:expr, $x:ident, $a:ident, $b:ident, $c:ident, $d:ident,
     $e:ident, $f:ident, $g:ident, $h:ident) => {
        round!($ff, $gg, $j, $x, $a, $b, $c, $d, $e, $f, $g, $h);
        round!($ff, $gg, $j + 1, $x, $d, $a, $b, $c, $h, $e, $f, $g);
        round!($ff, $gg, $j + 2, $x, $c, $d, $a, $b, $g, $h, $e, $f);
        round!($ff, $gg, $j + 3, $x, $b, $c, $d, $a, $f, $g, $h, $e);
    };
}

/// `W[i]` for 16 ≤ i < 68 from the window holding `W[i-16..i]`, stored in place of `W[i-16]`.
#[inline(always)]
fn expand(x: &mut [u32; 16], i: usize) -> u32 {
    let w = p1(x[i & 15] ^ x[(i - 9) & 15] ^ x[(i - 3) & 15].rotate_left(15))
        ^ x[(i - 13) & 15].rotate_left(7)
        ^ x[(i - 6) & 15];
    x[i & 15] = w;
    w
}

#[inline(always)]
fn ff0(x: u32, y: u32, z: u32) -> u32 {
    x ^ y ^ z
}

#[inline(always)]
fn ff1(x: u32, y: u32, z: u32) -> u32 {
    (x & y) | (x & z) | (y & z)
}

/// `(x & y) | (!x & z)`, in one operation fewer.
#[inline(always)]
fn gg1(x: u32, y: u32, z: u32) -> u32 {
    ((y ^ z) & x) ^ z
}

/// Compresses every whole block of `blocks` (its length is a multiple of 64) into `state`.
fn compress_blocks(state: &mut [u32; 8], blocks: &[u8]) {
    debug_assert_eq!(blocks.len() % BLOCK_LEN, 0);
    for block in blocks.chunks_exact(BLOCK_LEN) {
        let mut x = [0u32; 16];
        for (xi, word) in x.iter_mut().zip(block.chunks_exact(4)) {
            *xi = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
        four_rounds!(ff0, ff0, 0, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff0, ff0, 4, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff0, ff0, 8, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff0, ff0, 12, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 16, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 20, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 24, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 28, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 32, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 36, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 40, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 44, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 48, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 52, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 56, x, a, b, c, d, e, f, g, h);
        four_rounds!(ff1, gg1, 60, x, a, b, c, d, e, f, g, h);
        for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *s ^= v;
        }
    }
}

/// Incremental SM3 over a bit string.
#[derive(Clone, Debug)]
pub struct Sm3 {
    state: [u32; 8],
    /// Pending input; bits `0..pending_bits` are valid (high-order first), the low bits of a
    /// partial last byte are zero.
    buf: [u8; BLOCK_LEN],
    pending_bits: usize,
    total_bits: u64,
}

impl Default for Sm3 {
    fn default() -> Self {
        Self::new()
    }
}

impl Sm3 {
    pub const fn new() -> Self {
        Self {
            state: IV,
            buf: [0; BLOCK_LEN],
            pending_bits: 0,
            total_bits: 0,
        }
    }

    /// Absorbs whole bytes.
    #[inline]
    pub fn update(&mut self, data: &[u8]) {
        self.total_bits = self.total_bits.wrapping_add(8 * data.len() as u64);
        if self.pending_bits.is_multiple_of(8) {
            self.absorb_aligned(data);
        } else {
            self.absorb_shifted(data);
        }
    }

    /// Absorbs the first `bits` bits of `data` (high-order bits first within each byte); the
    /// rest of a partial last byte is ignored. Pieces concatenate at bit level.
    ///
    /// # Panics
    /// If `bits` exceeds `8 * data.len()` (a caller bug).
    pub fn update_bits(&mut self, data: &[u8], bits: u64) {
        assert!(
            bits.div_ceil(8) <= data.len() as u64,
            "update_bits: {bits} bits requested from {} bytes",
            data.len()
        );
        let whole = (bits / 8) as usize;
        let rest = (bits % 8) as usize;
        self.update(&data[..whole]);
        if rest != 0 {
            self.total_bits = self.total_bits.wrapping_add(rest as u64);
            self.push_bits(data[whole] & (0xFFu8 << (8 - rest)), rest);
        }
    }

    /// Pads (message bits, a 1 bit, zeros, 64-bit big-endian length) and returns the digest.
    pub fn finalize(mut self) -> [u8; DIGEST_LEN] {
        let total = self.total_bits;
        self.push_bits(0x80, 1);
        let used = self.pending_bits.div_ceil(8);
        self.buf[used..].fill(0);
        if used > BLOCK_LEN - 8 {
            compress_blocks(&mut self.state, &self.buf);
            self.buf.fill(0);
        }
        self.buf[BLOCK_LEN - 8..].copy_from_slice(&total.to_be_bytes());
        compress_blocks(&mut self.state, &self.buf);
        let mut out = [0u8; DIGEST_LEN];
        for (chunk, word) in out.chunks_exact_mut(4).zip(self.state) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        out
    }

    /// Byte-aligned input: fill the pending block, then compress straight from `data`.
    fn absorb_aligned(&mut self, mut data: &[u8]) {
        let mut used = self.pending_bits / 8;
        if used > 0 {
            let take = (BLOCK_LEN - used).min(data.len());
            self.buf[used..used + take].copy_from_slice(&data[..take]);
            used += take;
            data = &data[take..];
            if used < BLOCK_LEN {
                self.pending_bits = used * 8;
                return;
            }
            compress_blocks(&mut self.state, &self.buf);
        }
        let whole = data.len() - data.len() % BLOCK_LEN;
        compress_blocks(&mut self.state, &data[..whole]);
        let tail = &data[whole..];
        self.buf[..tail.len()].copy_from_slice(tail);
        self.pending_bits = tail.len() * 8;
    }

    /// Input arriving mid-byte: every byte straddles two pending bytes.
    fn absorb_shifted(&mut self, data: &[u8]) {
        for &byte in data {
            self.push_bits(byte, 8);
        }
    }

    /// Appends the top `n` bits of `x` (1 ≤ n ≤ 8, the other bits of `x` zero). Does not count
    /// them in `total_bits`.
    #[inline]
    fn push_bits(&mut self, x: u8, n: usize) {
        let p = self.pending_bits / 8;
        let s = self.pending_bits % 8;
        if s == 0 {
            self.buf[p] = x;
        } else {
            self.buf[p] |= x >> s;
        }
        if s + n < 8 {
            self.pending_bits += n;
            return;
        }
        // Byte `p` is complete; the spill (if any) starts the next byte.
        let mut next = p + 1;
        if next == BLOCK_LEN {
            compress_blocks(&mut self.state, &self.buf);
            next = 0;
        }
        let spill = s + n - 8;
        if spill > 0 {
            self.buf[next] = x << (8 - s);
        }
        self.pending_bits = next * 8 + spill;
    }
}

/// SM3 of a byte string.
pub fn sm3(msg: &[u8]) -> [u8; DIGEST_LEN] {
    let mut h = Sm3::new();
    h.update(msg);
    h.finalize()
}

/// SM3 of the first `bits` bits of `msg`.
///
/// # Panics
/// If `bits` exceeds `8 * msg.len()`.
pub fn sm3_bits(msg: &[u8], bits: u64) -> [u8; DIGEST_LEN] {
    let mut h = Sm3::new();
    h.update_bits(msg, bits);
    h.finalize()
}

#[cfg(test)]
mod tests;
