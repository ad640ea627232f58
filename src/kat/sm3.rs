//! Interim byte-oriented SM3 (GB/T 32905) used by the DRNG until the `iccs_sm3` crate of the
//! plugins branch lands; it will be replaced by `iccs_sm3::sm3`. Never used for anything else.

const IV: [u32; 8] = [
    0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600, 0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e,
];

fn compress(v: &mut [u32; 8], block: &[u8]) {
    let mut w = [0u32; 68];
    for (i, c) in block.chunks_exact(4).enumerate() {
        w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    let p1 = |x: u32| x ^ x.rotate_left(15) ^ x.rotate_left(23);
    for j in 16..68 {
        w[j] = p1(w[j - 16] ^ w[j - 9] ^ w[j - 3].rotate_left(15))
            ^ w[j - 13].rotate_left(7)
            ^ w[j - 6];
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *v;
    for j in 0..64 {
        let t: u32 = if j < 16 { 0x79cc4519 } else { 0x7a879d8a };
        let ss1 = a
            .rotate_left(12)
            .wrapping_add(e)
            .wrapping_add(t.rotate_left((j % 32) as u32))
            .rotate_left(7);
        let ss2 = ss1 ^ a.rotate_left(12);
        let (ff, gg) = if j < 16 {
            (a ^ b ^ c, e ^ f ^ g)
        } else {
            ((a & b) | (a & c) | (b & c), (e & f) | (!e & g))
        };
        let tt1 = ff
            .wrapping_add(d)
            .wrapping_add(ss2)
            .wrapping_add(w[j] ^ w[j + 4]);
        let tt2 = gg.wrapping_add(h).wrapping_add(ss1).wrapping_add(w[j]);
        d = c;
        c = b.rotate_left(9);
        b = a;
        a = tt1;
        h = g;
        g = f.rotate_left(19);
        f = e;
        e = tt2 ^ tt2.rotate_left(9) ^ tt2.rotate_left(17);
    }
    for (x, y) in v.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *x ^= y;
    }
}

/// SM3 of a byte string.
pub fn sm3(msg: &[u8]) -> [u8; 32] {
    let mut v = IV;
    let mut chunks = msg.chunks_exact(64);
    for block in &mut chunks {
        compress(&mut v, block);
    }
    let rest = chunks.remainder();
    let mut tail = [0u8; 128];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let n = if rest.len() < 56 { 64 } else { 128 };
    tail[n - 8..n].copy_from_slice(&((msg.len() as u64) * 8).to_be_bytes());
    for block in tail[..n].chunks_exact(64) {
        compress(&mut v, block);
    }
    let mut out = [0u8; 32];
    for (o, x) in out.chunks_exact_mut(4).zip(v) {
        o.copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn gbt_32905_abc() {
        assert_eq!(
            hex::encode(super::sm3(b"abc")),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
        );
    }
}
