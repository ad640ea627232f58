//! Unit tests of the bit-granular SM3: the GB/T 32905 vectors, and the bit paths against a
//! deliberately naive model that pads a `Vec<bool>` bit by bit.

use super::*;

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A deterministic test message.
fn message(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

fn bits_of(msg: &[u8], bits: u64) -> Vec<bool> {
    (0..bits as usize)
        .map(|i| msg[i / 8] >> (7 - i % 8) & 1 == 1)
        .collect()
}

fn pack(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, &b) in bits.iter().enumerate() {
        if b {
            out[i / 8] |= 0x80 >> (i % 8);
        }
    }
    out
}

/// The padding written out literally over a bit vector, then compressed block by block.
fn naive_sm3_bits(msg: &[u8], bits: u64) -> [u8; 32] {
    let mut v = bits_of(msg, bits);
    v.push(true);
    while v.len() % 512 != 448 {
        v.push(false);
    }
    v.extend((0..64).rev().map(|i| (bits >> i) & 1 == 1));
    let mut state = IV;
    compress_blocks(&mut state, &pack(&v));
    let mut out = [0u8; 32];
    for (c, w) in out.chunks_exact_mut(4).zip(state) {
        c.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// `len` bits of `msg` starting at bit `start`, packed from the first bit.
fn bit_slice(msg: &[u8], start: usize, len: usize) -> Vec<u8> {
    pack(&bits_of(msg, (start + len) as u64)[start..])
}

#[test]
fn gbt_32905_vectors() {
    assert_eq!(
        hex(&sm3(b"abc")),
        "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
    );
    assert_eq!(
        hex(&sm3(&b"abcd".repeat(16))),
        "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732"
    );
    assert_eq!(
        hex(&sm3(b"")),
        "1ab21d8355cfa17f8e61194831e81a8f22bec8c728fefb747ed035eb5082aa2b"
    );
}

#[test]
fn byte_aligned_bits_equal_bytes() {
    for n in [0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 1000] {
        let m = message(n, 1);
        assert_eq!(sm3_bits(&m, 8 * n as u64), sm3(&m), "n = {n}");
    }
}

#[test]
fn bits_past_the_length_are_ignored() {
    let mut a = message(20, 2);
    let mut b = a.clone();
    a[19] &= 0xE0;
    b[19] |= 0x1F;
    assert_eq!(sm3_bits(&a, 155), sm3_bits(&b, 155));
    assert_ne!(sm3_bits(&a, 155), sm3_bits(&a, 156));
}

#[test]
fn every_bit_length_matches_the_naive_padding() {
    let m = message(140, 3);
    for bits in 0..=1120u64 {
        assert_eq!(
            sm3_bits(&m, bits),
            naive_sm3_bits(&m, bits),
            "bits = {bits}"
        );
    }
}

#[test]
fn odd_pieces_concatenate_at_bit_level() {
    let m = message(400, 4);
    let total = 3001usize;
    let whole = sm3_bits(&m, total as u64);
    for pieces in [
        &[1usize, 3, 5, 7, 13][..],
        &[8, 1, 16, 7],
        &[511, 1, 513],
        &[9],
        &[0, 17, 0, 2],
    ] {
        let mut h = Sm3::new();
        let mut at = 0;
        let mut k = 0;
        while at < total {
            let len = pieces[k % pieces.len()].min(total - at);
            h.update_bits(&bit_slice(&m, at, len), len as u64);
            at += len;
            k += 1;
        }
        assert_eq!(h.finalize(), whole, "pieces {pieces:?}");
    }
}

#[test]
fn whole_bytes_after_an_odd_prefix_are_shifted() {
    // `update` must honour a pending partial byte, not overwrite it.
    let m = message(300, 5);
    for prefix in 1..8usize {
        let mut h = Sm3::new();
        h.update_bits(&m, prefix as u64);
        let rest = bit_slice(&m, prefix, 8 * 250);
        h.update(&rest);
        assert_eq!(
            h.finalize(),
            naive_sm3_bits(&m, (prefix + 8 * 250) as u64),
            "prefix {prefix}"
        );
    }
}

#[test]
#[should_panic(expected = "update_bits")]
fn too_many_bits_is_a_caller_bug() {
    Sm3::new().update_bits(&[0u8; 2], 17);
}
