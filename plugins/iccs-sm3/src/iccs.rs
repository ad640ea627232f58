//! The ICCS placeholder hash helpers of `api/auxfunc.c` (spec §1.3) in safe Rust: `sm3hash`
//! (plain SM3), `pseudohash` (SM3 + HMAC-SM3, 512/768/1024 bits) and `pseudoXOF` (the
//! GB/T 32918.4 KDF). Signatures mirror the C ones with slices for pointers, and return codes
//! are the ICCS ones. They never panic on any input: a message or output slice too short for
//! the lengths given is `HASH_FAILED`, not a panic, because the bundled `CryptHash` wrappers
//! pass foreign input straight through.
//!
//! The constructions are computed exactly as `auxfunc.c` does, including its cost: pseudoXOF
//! hashes `m || ct` afresh for every counter value rather than reusing the state after `m`,
//! because these functions are the baseline that candidates are compared against, and the
//! published ratios were taken against that cost.

use crate::hmac::HmacSm3;
use crate::sm3::{DIGEST_LEN, Sm3};

/// `HASH_SUCCESS`.
pub const HASH_SUCCESS: i32 = 0;
/// `MEMORY_ALLOCATION_FAILED`.
pub const MEMORY_ALLOCATION_FAILED: i32 = -2;
/// `HASH_FAILED`: also returned here when a buffer is shorter than the lengths given.
pub const HASH_FAILED: i32 = -3;
/// `INVALID_DIGESTBITLEN`.
pub const INVALID_DIGESTBITLEN: i32 = -4;

/// pseudoXOF's documented output limit: fewer than 2^40 − 2^8 bits (the 32-bit counter).
pub const PSEUDO_XOF_MAX_BITS: u64 = (1 << 40) - (1 << 8);

/// The pseudohash HMAC key, `SM3("3.14159265358979") || SM3("2.71828182845904")` (a test
/// recomputes it).
pub const KEY: [u8; 64] = [
    0x53, 0x07, 0xf6, 0xd5, 0xeb, 0x6a, 0x3c, 0xed, 0x3d, 0x24, 0xc5, 0x3c, 0xc9, 0xc8, 0x2c, 0xce,
    0x2f, 0x89, 0x36, 0x39, 0x70, 0x23, 0xf0, 0x69, 0x5c, 0x26, 0xc8, 0x0c, 0x1a, 0xb1, 0x82, 0xa7,
    0x1d, 0xb0, 0x2b, 0xa9, 0x2f, 0x54, 0x40, 0x18, 0x11, 0x5a, 0x96, 0xe7, 0x19, 0x66, 0x2c, 0xa3,
    0x2b, 0x7c, 0x7e, 0xfc, 0x0a, 0x6d, 0x24, 0x82, 0x15, 0x07, 0x66, 0xba, 0x6f, 0x65, 0x5b, 0x8e,
];

/// True when `msg` holds `msg_bits` bits and `out` holds `out_bytes` bytes.
fn buffers_fit(msg: &[u8], msg_bits: u64, out: &[u8], out_bytes: u64) -> bool {
    msg_bits.div_ceil(8) <= msg.len() as u64 && out_bytes <= out.len() as u64
}

/// `sm3hash`: SM3 of the first `msg_bits` bits of `msg` into `out[..32]`; only 256 bits.
pub fn sm3hash(digest_bits: u32, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    if digest_bits != 256 {
        return INVALID_DIGESTBITLEN;
    }
    if !buffers_fit(msg, msg_bits, out, DIGEST_LEN as u64) {
        return HASH_FAILED;
    }
    let mut h = Sm3::new();
    h.update_bits(msg, msg_bits);
    out[..DIGEST_LEN].copy_from_slice(&h.finalize());
    HASH_SUCCESS
}

fn hmac(parts: &[&[u8]]) -> [u8; DIGEST_LEN] {
    let mut h = HmacSm3::new(&KEY);
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

fn sm3_of(parts: &[&[u8]]) -> [u8; DIGEST_LEN] {
    let mut h = Sm3::new();
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

/// `pseudohash`: 512, 768 or 1024 bits of `h1 || h2 [|| h3 [|| h4]]` into `out`.
pub fn pseudohash(digest_bits: u32, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    let blocks = match digest_bits {
        512 => 2,
        768 => 3,
        1024 => 4,
        _ => return INVALID_DIGESTBITLEN,
    };
    if !buffers_fit(msg, msg_bits, out, u64::from(digest_bits / 8)) {
        return HASH_FAILED;
    }
    // dom = (bits/256, 0): the first byte is 2, 3 or 4.
    let dom = [(digest_bits / 256) as u8, 0];
    let k1 = {
        let mut h = HmacSm3::new(&KEY);
        h.update(&dom);
        h.update_bits(msg, msg_bits);
        h.finalize()
    };
    let h1 = {
        let mut h = Sm3::new();
        h.update_bits(msg, msg_bits);
        h.update(&dom);
        h.finalize()
    };
    let h2 = sm3_of(&[&k1, &h1]);
    let mut hs = [h1, h2, [0; DIGEST_LEN], [0; DIGEST_LEN]];
    if blocks >= 3 {
        let k2 = hmac(&[&h1]);
        hs[2] = sm3_of(&[&h2, &k2]);
    }
    if blocks == 4 {
        let k3 = hmac(&[&h2]);
        let k4 = hmac(&[&hs[2]]);
        hs[3] = sm3_of(&[&k3, &hs[2], &k4]);
    }
    for (chunk, h) in out[..blocks * DIGEST_LEN]
        .chunks_exact_mut(DIGEST_LEN)
        .zip(&hs)
    {
        chunk.copy_from_slice(h);
    }
    HASH_SUCCESS
}

/// `pseudoXOF`: `output_bits` bits (1 ≤ L < 2^40 − 2^8) of `SM3(m || 1) || SM3(m || 2) || …`
/// into `out[..ceil(L/8)]`, the unused low bits of the last byte cleared.
pub fn pseudo_xof(output_bits: u64, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    if output_bits == 0 || output_bits >= PSEUDO_XOF_MAX_BITS {
        return INVALID_DIGESTBITLEN;
    }
    let out_bytes = output_bits.div_ceil(8);
    if !buffers_fit(msg, msg_bits, out, out_bytes) {
        return HASH_FAILED;
    }
    let out = &mut out[..out_bytes as usize];
    for (ct, chunk) in (1u32..).zip(out.chunks_mut(DIGEST_LEN)) {
        let mut h = Sm3::new();
        h.update_bits(msg, msg_bits);
        h.update(&ct.to_be_bytes());
        let block = h.finalize();
        chunk.copy_from_slice(&block[..chunk.len()]);
    }
    let unused = (8 * out_bytes - output_bits) as u32;
    if let Some(last) = out.last_mut() {
        *last &= 0xFFu8 << unused;
    }
    HASH_SUCCESS
}

#[cfg(test)]
mod tests;
