//! Running the C compiler: identifying it once (`Toolchain::probe`, from its own predefined
//! macros), and compiling one instance — sources, shim, export list — into a shared library
//! linked `-shared -Wl,--no-undefined` with the harness's other link flags. Every compiler run
//! is the leader of its own process group, writes into a log file (no pipe to fill), is
//! bounded in time and killed whole, whatever it started. As root, it runs as an unprivileged
//! user in a private copy of the sources (`stage`), its working folder.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub(crate) use bounded::{Finished, run_bounded};
use said::out_of_memory;
pub(crate) use said::{excerpt, warnings};

use super::jail::{CompilerUser, Jail, JailGap};
use super::stage::Stage;
use super::{BuildError, FlagProfile, InstanceSource};
use crate::jail::identity::Identity;

mod bounded;
mod said;

/// The harness's link flags besides `-shared` (spec §1.2); the version script is added per
/// build.
const LINK_FLAGS: [&str; 5] = [
    "-shared",
    "-Wl,-Bsymbolic",
    "-Wl,--no-undefined",
    "-Wl,-z,noexecstack",
    "-Wl,-z,relro",
];

/// How long identifying the compiler may take.
const PROBE_LIMIT: Duration = Duration::from_secs(30);

/// A C compiler that was found and works.
#[derive(Debug, Clone)]
pub struct Toolchain {
    cc: String,
    /// `gcc 12.2.0`, `clang 14.0.6`: what `ngcc_meta.compiler` says.
    identity: String,
    /// The compiler's own description (`--version`), part of every cache key.
    version_text: String,
    limit: Duration,
    /// How each compile is confined (`jail`).
    jail: Jail,
}

impl Toolchain {
    /// Finds out what `cc` is. A command that cannot be started is `CompilerMissing`; one
    /// that does not preprocess an empty file is `CompilerUnusable`. Each compile may take
    /// `limit` and `memory_mib` of address space per compiler process.
    pub fn probe(cc: &str, limit: Duration, memory_mib: u64) -> Result<Self, BuildError> {
        let scratch = tempfile::tempdir().map_err(|source| BuildError::Io {
            what: "cannot create a scratch folder for",
            path: PathBuf::from(cc),
            source,
        })?;
        let run = |args: &[&str], name: &str| -> Result<String, BuildError> {
            let log = scratch.path().join(name);
            let mut cmd = Command::new(cc);
            cmd.args(args);
            match run_bounded(&mut cmd, &log, PROBE_LIMIT, None) {
                Err(source) if source.kind() == std::io::ErrorKind::NotFound => {
                    Err(BuildError::CompilerMissing {
                        cc: cc.to_string(),
                        source,
                    })
                }
                Err(source) if source.kind() == std::io::ErrorKind::PermissionDenied => {
                    Err(BuildError::CompilerMissing {
                        cc: cc.to_string(),
                        source,
                    })
                }
                Err(e) => Err(BuildError::CompilerUnusable {
                    cc: cc.to_string(),
                    detail: e.to_string(),
                }),
                Ok(Finished::TimedOut) => Err(BuildError::CompilerUnusable {
                    cc: cc.to_string(),
                    detail: format!("`{cc} {}` did not finish", args.join(" ")),
                }),
                Ok(Finished::Exited { success, code }) => {
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    if success {
                        Ok(text)
                    } else {
                        Err(BuildError::CompilerUnusable {
                            cc: cc.to_string(),
                            detail: format!(
                                "`{cc} {}` exited with {code}: {}",
                                args.join(" "),
                                text.lines().next().unwrap_or("")
                            ),
                        })
                    }
                }
            }
        };
        let empty = scratch.path().join("empty.c");
        std::fs::write(&empty, "").map_err(super::io_err("cannot write", &empty))?;
        let empty_arg = empty.to_string_lossy().into_owned();
        let macros = run(&["-dM", "-E", &empty_arg], "macros")?;
        let version_text = run(&["--version"], "version")?;
        Ok(Self {
            cc: cc.to_string(),
            identity: identity(&macros),
            version_text,
            limit,
            jail: Jail::for_this_process(cc, memory_mib, limit),
        })
    }

    /// A toolchain that was never probed, for unit tests of what is generated from it.
    #[cfg(test)]
    pub(crate) fn named(cc: &str, identity: &str) -> Self {
        Self {
            cc: cc.into(),
            identity: identity.into(),
            version_text: String::new(),
            limit: Duration::from_secs(1),
            jail: Jail::for_this_process(
                cc,
                super::jail::DEFAULT_MEMORY_MIB,
                Duration::from_secs(1),
            ),
        }
    }

    /// The compiler command.
    pub fn cc(&self) -> &str {
        &self.cc
    }

    /// `gcc 12.2.0`, `clang 14.0.6`, … (the harness writes `"gcc " __VERSION__`).
    pub fn identity(&self) -> &str {
        &self.identity
    }

    pub(crate) fn version_text(&self) -> &str {
        &self.version_text
    }

    /// What the compiler's jail cannot enforce on this machine.
    pub fn jail_gaps(&self) -> &[JailGap] {
        self.jail.gaps()
    }

    /// Who every compiler run of this toolchain runs as.
    pub fn compiler_user(&self) -> CompilerUser {
        self.jail.runs_as()
    }

    /// The unprivileged user the compiler becomes (when this process is root): it reads a
    /// private copy of the sources (`stage`).
    pub(crate) fn staging_identity(&self) -> Option<Identity> {
        self.jail.identity()
    }

    /// The compiler's arguments for one instance, output `lib` in `dir` (which holds the
    /// shim and the export list), the instance's paths as `place` names them (the compiler
    /// may see a copy).
    pub(crate) fn arguments(
        &self,
        inst: &InstanceSource,
        profile: &FlagProfile,
        dir: &Path,
        lib: &Path,
        place: &dyn Fn(&Path) -> PathBuf,
    ) -> Vec<String> {
        let mut args: Vec<String> = profile.cflags.clone();
        args.push(format!("-I{}", place(&inst.folder).display()));
        args.extend(
            inst.include_dirs
                .iter()
                .map(|d| format!("-I{}", place(d).display())),
        );
        args.extend(inst.sources.iter().map(|s| place(s).display().to_string()));
        args.push(dir.join("ngcc_shim.c").display().to_string());
        args.extend(LINK_FLAGS.iter().map(|s| s.to_string()));
        args.push(format!(
            "-Wl,--version-script={}",
            dir.join("exports.map").display()
        ));
        args.push("-o".into());
        args.push(lib.display().to_string());
        args.push("-lm".into());
        args
    }

    /// Runs the compiler, jailed, with `args` for `inst`, its output into `log`, where
    /// `workplace` says; Ok(()) when it succeeded.
    pub(crate) fn compile(
        &self,
        inst: &InstanceSource,
        args: &[String],
        log: &Path,
        workplace: Workplace<'_>,
    ) -> Result<(), BuildError> {
        let label = inst.label.as_str();
        let jail_err = |detail: String| BuildError::Jail {
            label: label.to_string(),
            detail,
        };
        let (mut cmd, readable, writable, tmp) = match workplace {
            Workplace::InPlace { dir } => {
                let tmp = dir.join("tmp");
                std::fs::create_dir_all(&tmp).map_err(super::io_err("cannot create", &tmp))?;
                let writable = vec![tmp.clone(), dir.to_path_buf()];
                (Command::new(&self.cc), inst.readable(), writable, tmp)
            }
            Workplace::Staged(stage) => {
                // Relative paths from the working folder: the folders above it are closed to
                // the compiler's user. A compiler named by a relative path is found from the
                // engine's folder, as the probe found it.
                let cc = if self.cc.contains('/') {
                    std::path::absolute(&self.cc).map_err(|e| jail_err(e.to_string()))?
                } else {
                    PathBuf::from(&self.cc)
                };
                let mut cmd = Command::new(cc);
                cmd.current_dir(stage.work());
                let work = stage.work().to_path_buf();
                (cmd, vec![work.clone()], vec![work], PathBuf::from("tmp"))
            }
        };
        cmd.args(args);
        cmd.env("TMPDIR", &tmp);
        let confined = self
            .jail
            .confine(&mut cmd, &readable, &writable)
            .map_err(|e| jail_err(e.to_string()))?;
        let group = confined.cgroup;
        let ran = run_bounded(&mut cmd, log, self.limit, confined.pid_namespace);
        // The kernel's own word that the group's memory limit killed a compiler process.
        let killed_for_memory = group.as_ref().is_some_and(|g| g.out_of_memory());
        drop(group);
        // The compiler cleans up after itself; what a killed one left is of no use (a
        // stage's folder goes with the stage).
        match workplace {
            Workplace::InPlace { .. } => {
                let _ = std::fs::remove_dir_all(&tmp);
            }
            Workplace::Staged(stage) => restore_log_paths(stage, log)?,
        }
        match ran {
            Err(source) => match workplace {
                Workplace::Staged(stage)
                    if source.kind() == std::io::ErrorKind::PermissionDenied =>
                {
                    Err(BuildError::CompilerDenied {
                        cc: self.cc.clone(),
                        uid: stage.uid(),
                        source,
                    })
                }
                _ => Err(BuildError::CompilerMissing {
                    cc: self.cc.clone(),
                    source,
                }),
            },
            Ok(Finished::TimedOut) => Err(BuildError::CompileTimeout {
                label: label.to_string(),
                limit: self.limit,
            }),
            Ok(Finished::Exited { success: true, .. }) => Ok(()),
            Ok(Finished::Exited { code, .. }) => {
                let said = std::fs::read_to_string(log).unwrap_or_default();
                if killed_for_memory || out_of_memory(&said) {
                    return Err(BuildError::CompileOutOfMemory {
                        label: label.to_string(),
                        limit_mib: self.jail.memory_mib(),
                        excerpt: excerpt(&said),
                    });
                }
                Err(BuildError::CompileFailed {
                    label: label.to_string(),
                    code,
                    excerpt: excerpt(&said),
                })
            }
        }
    }
}

/// Where a compile reads and writes.
#[derive(Clone, Copy)]
pub(crate) enum Workplace<'a> {
    /// The instance's own folders, the output into `dir` (its temporary files in `dir/tmp`).
    InPlace { dir: &'a Path },
    /// A private copy, the compiler's working folder, as the unprivileged user (`stage`).
    Staged(&'a Stage),
}

/// The compiler's output in `log` with the copy's paths named as the real ones.
fn restore_log_paths(stage: &Stage, log: &Path) -> Result<(), BuildError> {
    let text = std::fs::read(log).map_err(super::io_err("cannot read", log))?;
    let restored = stage.restore_paths(&String::from_utf8_lossy(&text));
    std::fs::write(log, restored).map_err(super::io_err("cannot write", log))
}

/// `clang <version>` when `__clang__` is predefined, else `gcc <__VERSION__>` when
/// `__GNUC__` is, else the first word we can tell.
fn identity(macros: &str) -> String {
    let value = |name: &str| {
        macros.lines().find_map(|l| {
            let rest = l.strip_prefix("#define ")?;
            let (n, v) = rest.split_once(' ')?;
            (n == name).then(|| v.trim().trim_matches('"').trim().to_string())
        })
    };
    if value("__clang__").is_some() {
        let v = value("__clang_version__").unwrap_or_default();
        let v = v.split_whitespace().next().unwrap_or("");
        return format!("clang {v}").trim_end().to_string();
    }
    if value("__GNUC__").is_some()
        && let Some(v) = value("__VERSION__")
    {
        return format!("gcc {v}");
    }
    "cc".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_comes_from_predefined_macros() {
        assert_eq!(
            identity("#define __GNUC__ 12\n#define __VERSION__ \"12.2.0\"\n"),
            "gcc 12.2.0"
        );
        assert_eq!(
            identity(
                "#define __clang__ 1\n#define __GNUC__ 4\n#define __clang_version__ \"14.0.6 \"\n"
            ),
            "clang 14.0.6"
        );
        assert_eq!(identity(""), "cc");
    }
}
