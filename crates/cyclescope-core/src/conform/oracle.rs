//! The checks against a second implementation of the same instance (the oracle: the other of
//! a submission's Reference and Optimized builds, or the instance `config.toml` names):
//! `differential` at random lengths up to 3 MiB, and `long_message` (`--full`) around 2^32
//! bits, where a 32-bit bit counter wraps.

use super::Evidence;
use super::buffers::failed;
use super::noise::Noise;
use super::probe::{AROUND, Offsets, Probe, io_failed};
use super::verdict::{Compared, Digests};
use crate::plugin::{Arena, HashLibrary, Placement};

/// Short, middle and long random lengths (bits): the long ones between 1 MiB (KAT_2_23's
/// length, which the KAT already covers) and 3 MiB.
fn random_lengths(noise: &mut Noise, whole_bytes: bool) -> Vec<u64> {
    let mut v = Vec::new();
    for (n, lo, hi) in [
        (8, 0, 8192),
        (4, 8193, 1 << 19),
        (2, (1 << 23) + 1, 3 << 23),
    ] {
        for _ in 0..n {
            let b = noise.between(lo, hi);
            v.push(if whole_bytes { b / 8 * 8 } else { b });
        }
    }
    v
}

/// `differential`: the library (through `probe`, so its buffers are watched too) against the
/// oracle at random lengths.
pub(crate) fn differential(
    probe: &mut Probe,
    oracle: &HashLibrary,
    label: &str,
) -> Result<Digests, String> {
    let mut other = Probe::new(oracle, probe.digest_bits)
        .map_err(|e| format!("the worker could not map memory for the oracle ({e})"))?;
    let mut digests = Digests::default();
    let whole = !(probe.takes_bits() && other.takes_bits());
    for bits in random_lengths(&mut probe.noise, whole) {
        let msg = probe.message(bits);
        let want = match other.hash(&msg, bits, Offsets::default()) {
            Ok(d) => d,
            Err(e) => return Err(format!("the oracle failed: {e}")),
        };
        let what = format!("the digest, against the oracle {label}'s,");
        digests
            .calls
            .push(match probe.hash(&msg, bits, Offsets::default()) {
                Ok(got) => Compared {
                    bits,
                    what,
                    vector: None,
                    want,
                    got,
                    failed: None,
                },
                Err(evidence) => failed(bits, what, evidence),
            });
        if digests.differs() {
            break;
        }
    }
    Ok(digests)
}

/// `long_message`: 2^32 bits and one 512-bit block on either side, one random message in
/// one arena for both libraries (512 MiB; two copies would not fit the usual limit).
pub(crate) fn long_message(
    probe: &mut Probe,
    oracle: &HashLibrary,
    label: &str,
) -> Result<Digests, String> {
    const WRAP: u64 = 1 << 32;
    let lengths = [WRAP - 512, WRAP, WRAP + 512];
    let bytes = (WRAP + 512) as usize / 8;
    let mut msg = match Arena::new(bytes) {
        Ok(a) => a,
        Err(e) => {
            return Err(format!(
                "no room for a {} MiB message under this worker's limits ({e}); raise --max-address-space-mib",
                bytes >> 20
            ));
        }
    };
    let mut result = Digests::default();
    probe.noise.fill(msg.bytes_mut());
    let d = probe.digest_bytes();
    for bits in lengths {
        let mut digests = Vec::new();
        for lib in [oracle, probe.lib] {
            let mut out = match Arena::new(d + 2 * AROUND) {
                Ok(o) => o,
                Err(e) => return Err(io_failed(bits, &e).to_string()),
            };
            let at = Placement {
                msg_at: 0,
                msg_bits: bits,
                out_at: AROUND,
                out_bytes: d,
            };
            let rc = lib.crypt_hash_in(probe.digest_bits, &msg, &mut out, at);
            if rc != 0 {
                let what = format!("CryptHash returned {rc}");
                let evidence = Evidence {
                    bits,
                    offset: None,
                    byte: None,
                    what,
                };
                if std::ptr::eq(lib, oracle) {
                    return Err(format!("the oracle failed: {evidence}"));
                }
                let what = format!("the digest, against the oracle {label}'s,");
                result.calls.push(failed(bits, what, evidence));
                return Ok(result);
            }
            digests.push(out.bytes()[AROUND..AROUND + d].to_vec());
        }
        let what = format!("the digest, against the oracle {label}'s,");
        let [want, got]: [Vec<u8>; 2] = std::mem::take(&mut digests)
            .try_into()
            .map_err(|_| "the worker lost a digest".to_string())?;
        result.calls.push(Compared {
            bits,
            what,
            vector: None,
            want,
            got,
            failed: None,
        });
        if result.differs() {
            break;
        }
    }
    Ok(result)
}
