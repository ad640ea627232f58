//! Tests of the ICCS helpers: the key, the return codes, whole outputs computed with an
//! independent model (Python's hashlib/hmac SM3 following spec §1.3), and the bit-level
//! concatenations against a model that packs bit vectors before hashing.

use super::*;
use crate::sm3::{sm3, sm3_bits};

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The self-test messages: byte i = (7·i + 1) mod 256.
fn selftest_message(n: usize) -> Vec<u8> {
    (0..n).map(|i| (7 * i + 1) as u8).collect()
}

/// A bit string, for modelling bit-level `||`.
#[derive(Default, Clone)]
struct Bits(Vec<bool>);

impl Bits {
    fn of(bytes: &[u8], bits: u64) -> Self {
        Self(
            (0..bits as usize)
                .map(|i| bytes[i / 8] >> (7 - i % 8) & 1 == 1)
                .collect(),
        )
    }
    fn cat(mut self, other: &Bits) -> Self {
        self.0.extend_from_slice(&other.0);
        self
    }
    fn sm3(&self) -> [u8; 32] {
        let mut packed = vec![0u8; self.0.len().div_ceil(8)];
        for (i, &b) in self.0.iter().enumerate() {
            if b {
                packed[i / 8] |= 0x80 >> (i % 8);
            }
        }
        sm3_bits(&packed, self.0.len() as u64)
    }
}

fn b(bytes: &[u8]) -> Bits {
    Bits::of(bytes, 8 * bytes.len() as u64)
}

/// HMAC-SM3 with the 64-byte key over a bit string, from the definition.
fn model_hmac(m: &Bits) -> [u8; 32] {
    let inner = b(&KEY.map(|k| k ^ 0x36)).cat(m).sm3();
    b(&KEY.map(|k| k ^ 0x5c)).cat(&b(&inner)).sm3()
}

fn model_pseudohash(bits: u32, m: &Bits) -> Vec<u8> {
    let dom = b(&[(bits / 256) as u8, 0]);
    let k1 = model_hmac(&dom.clone().cat(m));
    let h1 = m.clone().cat(&dom).sm3();
    let h2 = b(&k1).cat(&b(&h1)).sm3();
    let k2 = model_hmac(&b(&h1));
    let h3 = b(&h2).cat(&b(&k2)).sm3();
    let k3 = model_hmac(&b(&h2));
    let k4 = model_hmac(&b(&h3));
    let h4 = b(&k3).cat(&b(&h3)).cat(&b(&k4)).sm3();
    [h1, h2, h3, h4].concat()[..bits as usize / 8].to_vec()
}

fn model_xof(len: u64, m: &Bits) -> Vec<u8> {
    let mut out = Vec::new();
    for ct in 1..=len.div_ceil(256) as u32 {
        out.extend_from_slice(&m.clone().cat(&b(&ct.to_be_bytes())).sm3());
    }
    out.truncate(len.div_ceil(8) as usize);
    if !len.is_multiple_of(8) {
        let last = out.len() - 1;
        out[last] &= 0xFFu8 << (8 - len % 8);
    }
    out
}

#[test]
fn key_is_sm3_of_pi_and_e() {
    let computed = [sm3(b"3.14159265358979"), sm3(b"2.71828182845904")].concat();
    assert_eq!(computed, KEY);
    assert_eq!(
        hex(&KEY),
        "5307f6d5eb6a3ced3d24c53cc9c82cce2f8936397023f0695c26c80c1ab182a7\
         1db02ba92f544018115a96e719662ca32b7c7efc0a6d2482150766ba6f655b8e"
    );
}

#[test]
fn unsupported_widths_are_rejected() {
    let mut out = [0u8; 256];
    for bits in [0, 8, 255, 257, 512] {
        assert_eq!(
            sm3hash(bits, b"", 0, &mut out),
            INVALID_DIGESTBITLEN,
            "{bits}"
        );
    }
    for bits in [0, 256, 384, 513, 1152, 2048] {
        assert_eq!(
            pseudohash(bits, b"", 0, &mut out),
            INVALID_DIGESTBITLEN,
            "{bits}"
        );
    }
    for bits in [0, PSEUDO_XOF_MAX_BITS, u64::MAX] {
        assert_eq!(
            pseudo_xof(bits, b"", 0, &mut out),
            INVALID_DIGESTBITLEN,
            "{bits}"
        );
    }
    assert_eq!(out, [0; 256], "nothing written on rejection");
}

#[test]
fn short_buffers_fail_without_panicking() {
    let mut small = [0u8; 31];
    assert_eq!(sm3hash(256, b"", 0, &mut small), HASH_FAILED);
    assert_eq!(pseudohash(512, b"", 0, &mut [0; 63]), HASH_FAILED);
    assert_eq!(pseudo_xof(257, b"", 0, &mut [0; 32]), HASH_FAILED);
    let mut out = [0u8; 128];
    assert_eq!(sm3hash(256, b"ab", 17, &mut out), HASH_FAILED);
    assert_eq!(pseudohash(1024, b"ab", 17, &mut out), HASH_FAILED);
    assert_eq!(pseudo_xof(8, b"", 1, &mut out), HASH_FAILED);
    assert_eq!(out, [0; 128]);
}

#[test]
fn whole_outputs_match_the_python_model() {
    // python: hashlib.new('sm3') / hmac.new(KEY, m, 'sm3') on bytes((7*i+1)&255 for i in range(3)).
    let m = selftest_message(3);
    let cases: [(u32, &str); 3] = [
        (
            512,
            "023fff61871489a2a03eeec5e07a4513909b857ad0a775dc6c1ad765e0fd1cf1\
             34a88d0ced0dd0acf467d3abed8d6103cad9fde94c907a98db1f3d82490e9fe6",
        ),
        (
            768,
            "efe9756c3d60bbb87b945df858087629c99200ac3e481c2896e6cf6e1d766ea0\
             d6dfceae010d8fa2a8f6dcaa9d31e0c00f28d8b725cf5bab53875dce18f116cb\
             b6d70d9888a674b5203b89e2e446f4f05c09848392db8e1e5b0fad40d94f9a98",
        ),
        (
            1024,
            "4cef658f82146b0b30692a5e3d4d69f62f8fe72f48f7a2a872ef5b880777d400\
             220d6076ee893a9e62dd90577f2b741e7312cad0c8f220bac0826613cb8be032\
             d17a66e6ddbcb62118b30eb2a4decd05eb49a936f787a2267f79ccf879d08adc\
             7d2eba9a50c1a96cf3ad1728c174f5ac3400c4e8460214f93154a0b838e76c51",
        ),
    ];
    for (bits, want) in cases {
        let mut out = vec![0u8; bits as usize / 8];
        assert_eq!(pseudohash(bits, &m, 24, &mut out), HASH_SUCCESS);
        assert_eq!(hex(&out), want, "pseudohash-{bits}");
    }
    let mut out = [0u8; 144];
    assert_eq!(pseudo_xof(1152, &m, 24, &mut out), HASH_SUCCESS);
    assert_eq!(
        hex(&out),
        "7b51547f0ba1e5aff2099274d0a731a9717c5f9cb3d555e915dc492cf65e1695\
         b6299155a35b2994ab5677ff2dd131d12885ae78b04f8082f0970491f8d20f38\
         fa800940e5af24291c239c91c4eb2c73d7aced946b7f64632aa2b9326b758e0f\
         9d2778599fc1d9a4753fb9b05e8afeb79ccacceed2c5f7f1ee603dfc038df77c\
         85c1cca6115e5e31350609811caf6120"
    );
    let mut out = [0xFFu8; 126];
    assert_eq!(pseudo_xof(1001, b"abc", 24, &mut out), HASH_SUCCESS);
    // 1001 = 3·256 + 233: the fourth block is cut mid-byte and its last byte masked.
    assert_eq!(
        hex(&out),
        "fe1ea80dac6f100c33537bd24619ec7c72a1e8b1ffeaefb1eb52a37791fdaf61\
         9db16c0ac7bebb47238c6cc925ff66af7936e278e12d2664502bb38b03fd41cb\
         2975a660d33ecc32fe62f27c738964e266ec71694f39a68810af5a05d3b45d67\
         975866a52fc303bbdd2f6fd43a2015e3d6d78910dc82deb8b47fd50a1100"
    );
}

#[test]
fn bit_level_messages_match_the_bit_vector_model() {
    let m = selftest_message(80);
    for msg_bits in [0u64, 1, 3, 7, 9, 13, 255, 441, 447, 448, 449, 511, 513, 639] {
        let bits = Bits::of(&m, msg_bits);
        for width in [512u32, 768, 1024] {
            let mut out = vec![0u8; width as usize / 8];
            assert_eq!(pseudohash(width, &m, msg_bits, &mut out), HASH_SUCCESS);
            assert_eq!(out, model_pseudohash(width, &bits), "{width} / {msg_bits}");
        }
        for len in [1u64, 7, 8, 9, 255, 256, 257, 1152, 1281] {
            let mut out = vec![0u8; len.div_ceil(8) as usize];
            assert_eq!(pseudo_xof(len, &m, msg_bits, &mut out), HASH_SUCCESS);
            assert_eq!(out, model_xof(len, &bits), "xof {len} / {msg_bits}");
        }
        let mut out = [0u8; 32];
        assert_eq!(sm3hash(256, &m, msg_bits, &mut out), HASH_SUCCESS);
        assert_eq!(out, bits.sm3(), "sm3hash / {msg_bits}");
    }
}

#[test]
fn xof_writes_exactly_ceil_l_over_8_bytes() {
    let mut out = [0xEEu8; 40];
    assert_eq!(pseudo_xof(260, b"x", 8, &mut out), HASH_SUCCESS);
    assert_eq!(out[32] & 0x0F, 0, "low 4 bits of byte 32 cleared");
    assert!(out[33..].iter().all(|&x| x == 0xEE), "nothing past byte 32");
}
