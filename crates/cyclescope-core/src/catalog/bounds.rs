//! The allowed range of every number a user can give (config.toml, command-line options, a
//! campaign.json being resumed), in one table so the config check and the CLI's parsers say
//! the same thing. A value outside its range is refused where it is read, with the range in
//! the message; nothing is clamped, wrapped or rounded silently. Never reads a file itself.

use std::collections::BTreeSet;

/// A closed range of seconds. NaN and infinities are outside every range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecondsRange {
    pub what: &'static str,
    pub min: f64,
    pub max: f64,
}

/// A closed range of whole numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountRange {
    pub what: &'static str,
    pub min: u64,
    pub max: u64,
}

const WEEK_S: f64 = 7.0 * 86_400.0;

/// Seconds one trial aims at (the guide: 1.0).
pub const TRIAL_TARGET: SecondsRange = SecondsRange {
    what: "trial target",
    min: 1e-4,
    max: 3600.0,
};
/// Measured time allowed per instance × length (the guide: 900).
pub const OP_BUDGET: SecondsRange = SecondsRange {
    what: "op budget",
    min: 1e-3,
    max: WEEK_S,
};
/// Seconds before a KAT worker is killed (the harness: 900).
pub const KAT_TIMEOUT: SecondsRange = SecondsRange {
    what: "KAT timeout",
    min: 0.1,
    max: WEEK_S,
};
/// The hidden cap on any worker's time (tests).
pub const TIMEOUT_CAP: SecondsRange = SecondsRange {
    what: "timeout cap",
    min: 0.1,
    max: WEEK_S,
};
/// Trials per job in the guide's mode.
pub const TRIALS: CountRange = CountRange {
    what: "trials",
    min: 1,
    max: 16,
};
/// Most trials per job in adaptive mode (at least the statistics' minimum).
pub const MAX_TRIALS: CountRange = CountRange {
    what: "max trials",
    min: crate::measure::plan::MIN_ADAPTIVE_TRIALS as u64,
    max: 1000,
};
/// Pairs per length of an interleaved A/B comparison (`compare --live`).
pub const PAIRS: CountRange = CountRange {
    what: "pairs",
    min: crate::measure::paired::MIN_PAIRS as u64,
    max: 1000,
};
/// A digest width in bits, a multiple of 8. `CryptHash` takes an `int`, and KAT_Loop rotates
/// the digest through a 1024-byte buffer, so 8192 bits is the most any KAT can exercise.
pub const DIGEST_BITS: CountRange = CountRange {
    what: "digest bits",
    min: 8,
    max: 8192,
};
/// A message length in bytes (the guide's largest is 64 KiB).
pub const LENGTH_BYTES: CountRange = CountRange {
    what: "message length",
    min: 1,
    max: 16 << 20,
};
/// RLIMIT_AS of a trial process in MiB: below 64 MiB the worker itself cannot start (which
/// would be blamed on the candidate); the top keeps `MiB << 20` inside 64 bits.
pub const ADDRESS_SPACE_MIB: CountRange = CountRange {
    what: "address-space limit (MiB)",
    min: 64,
    max: u64::MAX >> 20,
};
/// RLIMIT_CPU of a trial process in seconds (the hard limit is one more).
pub const CPU_SECONDS: CountRange = CountRange {
    what: "CPU-time limit (s)",
    min: 1,
    max: 365 * 86_400,
};

impl SecondsRange {
    pub fn check(&self, value: f64) -> Result<f64, String> {
        if value.is_finite() && value >= self.min && value <= self.max {
            Ok(value)
        } else {
            Err(format!(
                "{} {value} is outside the allowed range {} … {} seconds",
                self.what, self.min, self.max
            ))
        }
    }
}

impl CountRange {
    pub fn check(&self, value: u64) -> Result<u64, String> {
        if (self.min..=self.max).contains(&value) {
            Ok(value)
        } else {
            Err(format!(
                "{} {value} is outside the allowed range {} … {}",
                self.what, self.min, self.max
            ))
        }
    }
}

/// A digest width: in [`DIGEST_BITS`] and a multiple of 8.
pub fn check_digest_bits(bits: u64) -> Result<u32, String> {
    let bits = DIGEST_BITS.check(bits)?;
    if bits % 8 != 0 {
        return Err(format!("digest bits {bits} is not a multiple of 8"));
    }
    u32::try_from(bits).map_err(|_| format!("digest bits {bits} does not fit"))
}

/// A fraction strictly between 0 and 1 (the adaptive mode's precision).
pub fn check_fraction(what: &str, value: f64) -> Result<f64, String> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(format!(
            "{what} {value} is outside the allowed range: a fraction between 0 and 1 (exclusive), e.g. 0.01"
        ))
    }
}

/// Message lengths: at least one, each in [`LENGTH_BYTES`], none twice (measuring a length
/// twice would write two results into one record, so a repeat is refused, not merged).
pub fn check_lengths(lengths: &[u64]) -> Result<(), String> {
    if lengths.is_empty() {
        return Err("no message length given".into());
    }
    let mut seen = BTreeSet::new();
    for &l in lengths {
        LENGTH_BYTES.check(l)?;
        if !seen.insert(l) {
            return Err(format!(
                "message length {l} is listed twice (each length is measured once; remove the repeat)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_refuse_nan_infinity_and_out_of_range() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -1.0, 1e300] {
            let err = KAT_TIMEOUT.check(v).unwrap_err();
            assert!(err.contains("0.1 … 604800 seconds"), "{v}: {err}");
        }
        assert_eq!(KAT_TIMEOUT.check(900.0), Ok(900.0));
        assert_eq!(TRIAL_TARGET.check(0.01), Ok(0.01));
    }

    #[test]
    fn digest_bits_fit_an_int_and_the_kat_loop() {
        assert!(
            check_digest_bits(4_294_967_288)
                .unwrap_err()
                .contains("8 … 8192")
        );
        assert!(check_digest_bits(12).unwrap_err().contains("multiple of 8"));
        assert!(check_digest_bits(0).is_err());
        assert_eq!(check_digest_bits(2048), Ok(2048));
    }

    #[test]
    fn address_space_cannot_wrap() {
        let max = ADDRESS_SPACE_MIB.check(u64::MAX >> 20).unwrap();
        assert!(max.checked_shl(20).is_some_and(|b| b >> 20 == max));
        assert!(ADDRESS_SPACE_MIB.check(1 << 44).is_err());
    }

    #[test]
    fn a_repeated_length_is_refused_by_name() {
        let err = check_lengths(&[32, 1024, 32]).unwrap_err();
        assert!(err.contains("32 is listed twice"), "{err}");
        assert!(check_lengths(&[]).is_err());
        assert!(check_lengths(&[0]).is_err());
        assert!(check_lengths(&[32, 65536]).is_ok());
    }
}
