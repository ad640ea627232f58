//! Flag profiles: the compiler flags an instance is built with, and the name records carry
//! for them (`flags` in build.json and timing records). `guide` and `harness-default` are the
//! harness's exact sets (spec §1.2); more come from `[profiles]` in config.toml, or ad hoc
//! from `--cflags`. A profile is data only; compiling is `compile`'s.

use super::{BuildConfig, BuildError};

/// The harness's permissive additions: old submissions still compile with a newer compiler.
const PERMISSIVE: [&str; 4] = [
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=incompatible-pointer-types",
    "-Wno-error=int-conversion",
    "-Wno-error=implicit-int",
];

/// The performance campaign's flags: the guide's, then `-fPIC -D_GNU_SOURCE`.
const GUIDE: [&str; 7] = [
    "-std=c99",
    "-Wpedantic",
    "-Wall",
    "-Wextra",
    "-O2",
    "-fPIC",
    "-D_GNU_SOURCE",
];

/// The harness's own default flags (`api/link_rules.mk`).
const HARNESS_DEFAULT: [&str; 10] = [
    "-O2",
    "-fPIC",
    "-std=gnu11",
    "-Wall",
    "-Wno-unused",
    "-Wno-unknown-pragmas",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-fno-omit-frame-pointer",
    "-D_GNU_SOURCE",
];

/// The profile named when nothing else is asked for.
pub const DEFAULT_PROFILE: &str = "guide";

/// The name recorded for `--cflags` builds.
pub const CFLAGS_PROFILE: &str = "cflags";

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProfileChoice {
    /// `[build] profile` of the config, else `guide`.
    #[default]
    Default,
    /// `--profile NAME`: `guide`, `harness-default` or a `[profiles]` entry.
    Named(String),
    /// `--cflags "…"`: these flags (plus `-fPIC` when missing).
    Cflags(String),
}

/// A resolved flag set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagProfile {
    /// `guide`, `harness-default`, a config profile's name, or `cflags`.
    pub name: String,
    /// The compiler flags, in order (link flags are added by the build).
    pub cflags: Vec<String>,
}

impl FlagProfile {
    /// The profiles every build knows, without a config.
    pub fn builtin(name: &str) -> Option<Self> {
        let flags: Vec<&str> = match name {
            "guide" => GUIDE.iter().chain(PERMISSIVE.iter()).copied().collect(),
            "harness-default" => HARNESS_DEFAULT
                .iter()
                .chain(PERMISSIVE.iter())
                .copied()
                .collect(),
            _ => return None,
        };
        Some(Self {
            name: name.to_string(),
            cflags: flags.into_iter().map(String::from).collect(),
        })
    }

    /// Resolves `choice` against the built-in profiles and the config's `[profiles]`.
    pub fn choose(choice: &ProfileChoice, config: &BuildConfig) -> Result<Self, BuildError> {
        match choice {
            ProfileChoice::Default => {
                let name = config
                    .build
                    .profile
                    .clone()
                    .unwrap_or_else(|| DEFAULT_PROFILE.into());
                Self::named(&name, config)
            }
            ProfileChoice::Named(name) => Self::named(name, config),
            ProfileChoice::Cflags(flags) => Self::from_text(CFLAGS_PROFILE, flags),
        }
    }

    fn named(name: &str, config: &BuildConfig) -> Result<Self, BuildError> {
        if let Some(text) = config.profiles.get(name) {
            return Self::from_text(name, text);
        }
        Self::builtin(name).ok_or_else(|| BuildError::UnknownProfile {
            name: name.to_string(),
            known: Self::known(config).join(", "),
        })
    }

    /// Every profile name `config` offers, built-in ones first.
    pub fn known(config: &BuildConfig) -> Vec<String> {
        ["guide", "harness-default"]
            .into_iter()
            .map(String::from)
            .chain(config.profiles.keys().cloned())
            .collect()
    }

    /// A profile from a flag string (shell-style words); `-fPIC` is added when missing, since
    /// every build is a shared library.
    pub fn from_text(name: &str, text: &str) -> Result<Self, BuildError> {
        let mut cflags = shlex::split(text).ok_or_else(|| BuildError::BadFlags {
            flags: text.to_string(),
        })?;
        if !cflags.iter().any(|f| f == "-fPIC" || f == "-fpic") {
            cflags.push("-fPIC".into());
        }
        Ok(Self {
            name: name.to_string(),
            cflags,
        })
    }

    /// The flags as one string (`ngcc_build_flags`, build.json, logs).
    pub fn flags_text(&self) -> String {
        self.cflags.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_are_the_harness_sets() {
        let g = FlagProfile::builtin("guide").unwrap();
        assert_eq!(
            g.flags_text(),
            "-std=c99 -Wpedantic -Wall -Wextra -O2 -fPIC -D_GNU_SOURCE \
             -Wno-error=implicit-function-declaration -Wno-error=incompatible-pointer-types \
             -Wno-error=int-conversion -Wno-error=implicit-int"
        );
        let h = FlagProfile::builtin("harness-default").unwrap();
        assert!(
            h.flags_text()
                .starts_with("-O2 -fPIC -std=gnu11 -Wall -Wno-unused")
        );
    }

    #[test]
    fn config_profiles_and_cflags_resolve() {
        let mut config = BuildConfig::default();
        config
            .profiles
            .insert("native".into(), "-O3 -march=native".into());
        let p = FlagProfile::choose(&ProfileChoice::Named("native".into()), &config).unwrap();
        assert_eq!(p.cflags, ["-O3", "-march=native", "-fPIC"]);
        let p =
            FlagProfile::choose(&ProfileChoice::Cflags("-O1 -DX='a b'".into()), &config).unwrap();
        assert_eq!(
            (p.name.as_str(), p.cflags[1].as_str()),
            ("cflags", "-DX=a b")
        );
        let err = FlagProfile::choose(&ProfileChoice::Named("fast".into()), &config).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown flag profile \"fast\" (known: guide, harness-default, native)"
        );
        assert!(FlagProfile::from_text("x", "-O2 \"-DA").is_err());
        config.build.profile = Some("harness-default".into());
        let p = FlagProfile::choose(&ProfileChoice::Default, &config).unwrap();
        assert_eq!(p.name, "harness-default");
    }
}
