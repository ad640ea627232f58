//! Names that become file names: candidate ids, instance labels and KAT names reach the disk as
//! `records/<id>/<label>__hash_<n>.json`, `kat/<id>/<label>.log` and `KAT_2_12_<name>.txt`, and
//! they come from places nobody vouches for (a config file, `--label`, a folder scan, a
//! library's own `ngcc_meta`). One rule decides them all: [`SafeName`]. This module never
//! repairs a name (a silently renamed instance would be a different instance); it refuses it
//! and says which rule it broke.

use std::fmt;

/// The longest name accepted. Published ids and labels are at most 39 characters; 64 also
/// matches the `instance` field of `ngcc_meta` (63 bytes and a NUL).
pub const MAX_NAME_LEN: usize = 64;

/// A name that is safe as one path component on every filesystem we write to: 1 to 64 of
/// `A–Z a–z 0–9 . _ + -`, not starting with `.` (hidden files, `.`, `..`) or `-` (read as an
/// option by any command it is passed to).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SafeName(String);

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{what} is empty")]
    Empty { what: &'static str },
    #[error("{what} {name:?} is {len} characters long (at most {MAX_NAME_LEN})")]
    TooLong {
        what: &'static str,
        name: String,
        len: usize,
    },
    #[error(
        "{what} {name:?} contains {bad:?}: names become file names, so only letters, digits \
         and . _ + - are allowed"
    )]
    BadCharacter {
        what: &'static str,
        name: String,
        bad: char,
    },
    #[error("{what} {name:?} starts with {first:?} (names may not start with . or -)")]
    BadStart {
        what: &'static str,
        name: String,
        first: char,
    },
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-')
}

impl SafeName {
    /// Checks `name`; `what` says in errors what it is ("instance label", "ngcc_meta id", …).
    pub fn new(what: &'static str, name: &str) -> Result<Self, NameError> {
        let Some(first) = name.chars().next() else {
            return Err(NameError::Empty { what });
        };
        let len = name.chars().count();
        if len > MAX_NAME_LEN {
            // A 300-character name is shown shortened: the error must stay readable.
            let shown: String = name.chars().take(MAX_NAME_LEN).collect::<String>() + "…";
            return Err(NameError::TooLong {
                what,
                name: shown,
                len,
            });
        }
        if matches!(first, '.' | '-') {
            return Err(NameError::BadStart {
                what,
                name: name.to_string(),
                first,
            });
        }
        if let Some(bad) = name.chars().find(|&c| !allowed(c)) {
            return Err(NameError::BadCharacter {
                what,
                name: name.to_string(),
                bad,
            });
        }
        Ok(Self(name.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SafeName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<std::path::Path> for SafeName {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.0)
    }
}

impl fmt::Display for SafeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_refused_with_the_rule_they_break() {
        for (name, needle) in [
            ("", "empty"),
            ("../../x", "starts with '.'"),
            ("..", "starts with '.'"),
            (".hidden", "starts with '.'"),
            ("-rf", "starts with '-'"),
            ("a/b", "contains '/'"),
            ("/etc/passwd", "contains '/'"),
            ("a\\b", "contains '\\\\'"),
            ("a b", "contains ' '"),
            ("a\0b", "contains '\\0'"),
            ("naïve", "contains 'ï'"),
            ("x\n", "contains '\\n'"),
        ] {
            let err = SafeName::new("label", name).unwrap_err().to_string();
            assert!(err.contains(needle), "{name:?}: {err}");
        }
        let long = "a".repeat(300);
        let err = SafeName::new("label", &long).unwrap_err().to_string();
        assert!(err.contains("300 characters long (at most 64)"), "{err}");
        assert!(err.len() < 200, "the error quotes a shortened name: {err}");
    }

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "sm3hash-256",
            "pseudoXOF-2048",
            "hash-10",
            "Garnet_512_Cap1024",
            "uHash-1024",
            "a.b+c",
            &"x".repeat(64),
        ] {
            assert_eq!(SafeName::new("label", name).unwrap().as_str(), name);
        }
    }
}
