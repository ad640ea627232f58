//! HMAC-SM3 (GB/T 15852.2 / RFC 2104 with SM3, block 64 bytes) over a bit-string message, as
//! `pseudohash` uses it. Keys longer than a block are hashed first; the message may end
//! mid-byte because the inner hash is the bit-granular [`Sm3`].

use crate::sm3::{BLOCK_LEN, DIGEST_LEN, Sm3};

const IPAD: u8 = 0x36;
const OPAD: u8 = 0x5c;

/// Incremental HMAC-SM3.
#[derive(Clone, Debug)]
pub struct HmacSm3 {
    inner: Sm3,
    outer_key: [u8; BLOCK_LEN],
}

impl HmacSm3 {
    pub fn new(key: &[u8]) -> Self {
        let mut k = [0u8; BLOCK_LEN];
        if key.len() > BLOCK_LEN {
            k[..DIGEST_LEN].copy_from_slice(&crate::sm3::sm3(key));
        } else {
            k[..key.len()].copy_from_slice(key);
        }
        let mut inner = Sm3::new();
        inner.update(&k.map(|b| b ^ IPAD));
        Self {
            inner,
            outer_key: k.map(|b| b ^ OPAD),
        }
    }

    /// Absorbs whole bytes of the message.
    pub fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
    }

    /// Absorbs the first `bits` bits of `data` (see [`Sm3::update_bits`]).
    ///
    /// # Panics
    /// If `bits` exceeds `8 * data.len()`.
    pub fn update_bits(&mut self, data: &[u8], bits: u64) {
        self.inner.update_bits(data, bits);
    }

    pub fn finalize(self) -> [u8; DIGEST_LEN] {
        let inner = self.inner.finalize();
        let mut outer = Sm3::new();
        outer.update(&self.outer_key);
        outer.update(&inner);
        outer.finalize()
    }
}

/// HMAC-SM3 of the first `bits` bits of `msg` under `key`.
///
/// # Panics
/// If `bits` exceeds `8 * msg.len()`.
pub fn hmac_sm3_bits(key: &[u8], msg: &[u8], bits: u64) -> [u8; DIGEST_LEN] {
    let mut h = HmacSm3::new(key);
    h.update_bits(msg, bits);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm3::sm3;

    fn hex(d: &[u8]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// HMAC written out from its definition, for byte messages.
    fn by_definition(key: &[u8], msg: &[u8]) -> [u8; 32] {
        let mut k = if key.len() > 64 {
            sm3(key).to_vec()
        } else {
            key.to_vec()
        };
        k.resize(64, 0);
        let mut inner: Vec<u8> = k.iter().map(|b| b ^ IPAD).collect();
        inner.extend_from_slice(msg);
        let mut outer: Vec<u8> = k.iter().map(|b| b ^ OPAD).collect();
        outer.extend_from_slice(&sm3(&inner));
        sm3(&outer)
    }

    #[test]
    fn matches_the_definition_for_short_exact_and_long_keys() {
        let msg: Vec<u8> = (0..200u8).collect();
        for key_len in [0, 1, 32, 63, 64, 65, 200] {
            let key: Vec<u8> = (0..key_len).map(|i| (i * 3 + 7) as u8).collect();
            for n in [0, 1, 55, 64, 200] {
                assert_eq!(
                    hmac_sm3_bits(&key, &msg[..n], 8 * n as u64),
                    by_definition(&key, &msg[..n]),
                    "key {key_len} msg {n}"
                );
            }
        }
    }

    #[test]
    fn known_answer() {
        // RFC 4231 test case 2's inputs with SM3; the value is what OpenSSL's HMAC-SM3 gives.
        assert_eq!(
            hex(&hmac_sm3_bits(
                b"Jefe",
                b"what do ya want for nothing?",
                28 * 8
            )),
            "2e87f1d16862e6d964b50a5200bf2b10b764faa9680a296a2405f24bec39f882"
        );
    }

    #[test]
    fn message_bits_beyond_the_length_are_ignored() {
        let key = [9u8; 64];
        assert_eq!(
            hmac_sm3_bits(&key, &[0xF0], 4),
            hmac_sm3_bits(&key, &[0xFF], 4)
        );
        assert_ne!(
            hmac_sm3_bits(&key, &[0xF0], 4),
            hmac_sm3_bits(&key, &[0xF0], 5)
        );
    }
}
