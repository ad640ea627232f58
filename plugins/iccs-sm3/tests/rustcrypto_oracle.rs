//! Cross-checks the bit-granular SM3 against RustCrypto's `sm3` crate, an independent
//! implementation, on every length 0..300 bytes, lengths around the block and length-field
//! boundaries, a few large inputs, and random chunkings of incremental input.

// `iccs_sm3::sm3` names a module and a function, so the oracle crate is spelled `::sm3`.
use ::sm3::{Digest, Sm3 as OracleSm3};
use iccs_sm3::{Sm3, sm3};

fn oracle(msg: &[u8]) -> [u8; 32] {
    OracleSm3::digest(msg).into()
}

fn message(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 7;
            x ^= x >> 9;
            (x >> 32) as u8
        })
        .collect()
}

#[test]
fn every_length_below_300_bytes() {
    let m = message(300);
    for n in 0..300 {
        assert_eq!(sm3(&m[..n]), oracle(&m[..n]), "n = {n}");
    }
}

#[test]
fn large_inputs() {
    let m = message(1 << 20);
    for n in [4096, 65_536, 65_536 + 13, 1_000_003, 1 << 20] {
        assert_eq!(sm3(&m[..n]), oracle(&m[..n]), "n = {n}");
    }
}

#[test]
fn incremental_chunkings_agree() {
    let m = message(5000);
    let want = oracle(&m);
    for step in [1usize, 3, 17, 63, 64, 65, 127, 1000] {
        let mut h = Sm3::new();
        for chunk in m.chunks(step) {
            h.update(chunk);
        }
        assert_eq!(h.finalize(), want, "step {step}");
    }
    // Irregular chunk sizes, byte-aligned through update_bits.
    let mut h = Sm3::new();
    let mut at = 0;
    for (k, size) in (0..).zip([5usize, 59, 1, 64, 128, 7].iter().cycle()) {
        if at >= m.len() {
            break;
        }
        let end = (at + size + k % 3).min(m.len());
        h.update_bits(&m[at..end], 8 * (end - at) as u64);
        at = end;
    }
    assert_eq!(h.finalize(), want);
}
