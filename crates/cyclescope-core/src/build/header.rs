//! Reading an ICCS instance header (`CryptHash_AlgorithmInstance.h`): the values of its
//! `ALGORITHM_INSTANCE` and `DIGEST_BIT_LENGTH` macros. A plain scan of `#define` lines, not a
//! preprocessor: the official template defines both as literals, and a header that computes
//! them is refused with the reason rather than guessed at.

use std::path::Path;

use super::BuildError;
use crate::name::SafeName;

/// The two facts an instance header gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeaderFacts {
    pub(crate) instance: String,
    pub(crate) digest_bits: u32,
}

pub(crate) fn read(header: &Path) -> Result<HeaderFacts, BuildError> {
    let text = std::fs::read(header).map_err(|source| BuildError::Read {
        path: header.to_path_buf(),
        source,
    })?;
    parse(&String::from_utf8_lossy(&text), header)
}

pub(crate) fn parse(text: &str, header: &Path) -> Result<HeaderFacts, BuildError> {
    let bad = |name: &'static str, value: &str, why: String| BuildError::BadDefine {
        header: header.to_path_buf(),
        name,
        value: value.to_string(),
        why,
    };
    let missing = |name: &'static str| BuildError::MissingDefine {
        header: header.to_path_buf(),
        name,
    };
    let instance_value = define(text, "ALGORITHM_INSTANCE").ok_or(missing("ALGORITHM_INSTANCE"))?;
    let instance = instance_value
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .ok_or_else(|| {
            bad(
                "ALGORITHM_INSTANCE",
                &instance_value,
                "expected a string literal".into(),
            )
        })?;
    // The official generator allows [A-Za-z0-9_-], ≤ 64 characters; the name becomes file
    // names here too, so the one naming rule decides.
    SafeName::new("ALGORITHM_INSTANCE", instance)
        .map_err(|e| bad("ALGORITHM_INSTANCE", &instance_value, e.to_string()))?;
    let bits_value = define(text, "DIGEST_BIT_LENGTH").ok_or(missing("DIGEST_BIT_LENGTH"))?;
    let digits = bits_value
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim_end_matches(['u', 'U', 'l', 'L']);
    let bits: u64 = digits.parse().map_err(|_| {
        bad(
            "DIGEST_BIT_LENGTH",
            &bits_value,
            "expected a decimal number".into(),
        )
    })?;
    let digest_bits = crate::catalog::bounds::check_digest_bits(bits)
        .map_err(|e| bad("DIGEST_BIT_LENGTH", &bits_value, e))?;
    Ok(HeaderFacts {
        instance: instance.to_string(),
        digest_bits,
    })
}

/// The value of the last `#define NAME value` line (comments after it dropped).
fn define(text: &str, name: &str) -> Option<String> {
    let mut found = None;
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        let mut words = rest.trim_start().splitn(2, [' ', '\t']);
        if words.next() != Some(name) {
            continue;
        }
        let value = words.next().unwrap_or("");
        let value = value.split("/*").next().unwrap_or("");
        let value = value.split("//").next().unwrap_or("").trim();
        found = Some(value.to_string());
    }
    found.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<HeaderFacts, BuildError> {
        parse(text, Path::new("h.h"))
    }

    #[test]
    fn literals_are_read_with_comments_and_suffixes() {
        let f = parse_text(
            "#ifndef X\n#  define ALGORITHM_INSTANCE \"FEILIAN512\" /* name */\n\
             #define DIGEST_BIT_LENGTH (512u) // bits\n",
        )
        .unwrap();
        assert_eq!(f.instance, "FEILIAN512");
        assert_eq!(f.digest_bits, 512);
    }

    #[test]
    fn missing_and_unusable_defines_are_named() {
        let err = parse_text("#define DIGEST_BIT_LENGTH 256\n").unwrap_err();
        assert!(
            matches!(
                err,
                BuildError::MissingDefine {
                    name: "ALGORITHM_INSTANCE",
                    ..
                }
            ),
            "{err}"
        );
        let err = parse_text("#define ALGORITHM_INSTANCE \"A\"\n").unwrap_err();
        assert!(err.to_string().contains("DIGEST_BIT_LENGTH"), "{err}");
        for (text, needle) in [
            (
                "#define ALGORITHM_INSTANCE NAME\n#define DIGEST_BIT_LENGTH 256\n",
                "string literal",
            ),
            (
                "#define ALGORITHM_INSTANCE \"../x\"\n#define DIGEST_BIT_LENGTH 256\n",
                "starts with '.'",
            ),
            (
                "#define ALGORITHM_INSTANCE \"A\"\n#define DIGEST_BIT_LENGTH (2*256)\n",
                "decimal",
            ),
            (
                "#define ALGORITHM_INSTANCE \"A\"\n#define DIGEST_BIT_LENGTH 12\n",
                "multiple of 8",
            ),
        ] {
            let err = parse_text(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
