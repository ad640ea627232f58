//! Running the C compiler: identifying it once (`Toolchain::probe`, from its own predefined
//! macros), and compiling one instance — sources, shim, export list — into a shared library
//! linked `-shared -Wl,--no-undefined` with the harness's other link flags. Every compiler run
//! is the leader of its own process group, writes into a log file (no pipe to fill), is
//! bounded in time and killed whole, whatever it started.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::jail::{Jail, JailGap};
use super::{BuildError, FlagProfile, InstanceSource};
use crate::worker::group::Group;

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
            match run_bounded(&mut cmd, &log, PROBE_LIMIT) {
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

    /// The compiler's arguments for one instance, output `lib` in `dir` (which holds the
    /// shim and the export list).
    pub(crate) fn arguments(
        &self,
        inst: &InstanceSource,
        profile: &FlagProfile,
        dir: &Path,
        lib: &Path,
    ) -> Vec<String> {
        let mut args: Vec<String> = profile.cflags.clone();
        args.push(format!("-I{}", inst.folder.display()));
        args.extend(
            inst.include_dirs
                .iter()
                .map(|d| format!("-I{}", d.display())),
        );
        args.extend(inst.sources.iter().map(|s| s.display().to_string()));
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

    /// Runs the compiler, jailed, with `args` for `inst`, its output into `log`, writing
    /// only beneath `dir` (its temporary files in `dir/tmp`); Ok(()) when it succeeded.
    pub(crate) fn compile(
        &self,
        inst: &InstanceSource,
        args: &[String],
        log: &Path,
        dir: &Path,
    ) -> Result<(), BuildError> {
        let label = inst.label.as_str();
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(super::io_err("cannot create", &tmp))?;
        let mut cmd = Command::new(&self.cc);
        cmd.args(args);
        let group = self
            .jail
            .confine(
                &mut cmd,
                &inst.readable(),
                &[tmp.clone(), dir.to_path_buf()],
            )
            .map_err(|e| BuildError::Jail {
                label: label.to_string(),
                detail: e.to_string(),
            })?;
        let ran = run_bounded(&mut cmd, log, self.limit);
        // The kernel's own word that the group's memory limit killed a compiler process.
        let killed_for_memory = group.as_ref().is_some_and(|g| g.out_of_memory());
        drop(group);
        // The compiler cleans up after itself; what a killed one left is of no use.
        let _ = std::fs::remove_dir_all(&tmp);
        match ran {
            Err(source) => Err(BuildError::CompilerMissing {
                cc: self.cc.clone(),
                source,
            }),
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

/// How a bounded run ended.
pub(crate) enum Finished {
    Exited { success: bool, code: String },
    TimedOut,
}

/// Runs `cmd` as a process-group leader with stdout and stderr appended to `log`; after it
/// ends, or at `limit`, the whole group is killed.
pub(crate) fn run_bounded(
    cmd: &mut Command,
    log: &Path,
    limit: Duration,
) -> std::io::Result<Finished> {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let err = out.try_clone()?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let group = Group::spawn(cmd, None)?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    while !group.leader_ended() {
        if start.elapsed() >= limit {
            group.finish();
            return Ok(Finished::TimedOut);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    let status = group.finish();
    Ok(match status {
        Some(s) => Finished::Exited {
            success: s.success(),
            code: s.code().map_or_else(|| format!("{s}"), |c| c.to_string()),
        },
        None => Finished::Exited {
            success: false,
            code: "unknown".into(),
        },
    })
}

/// The lines that say what went wrong: those with `error` first, else the first lines.
pub(crate) fn excerpt(log: &str) -> String {
    const LINES: usize = 8;
    // The first line is the command (`$ cc …`), whose `-Wno-error=` flags are no errors.
    let said = || log.lines().filter(|l| !l.starts_with("$ "));
    let errors: Vec<&str> = said()
        .filter(|l| l.contains("error") || l.contains("undefined reference"))
        .take(LINES)
        .collect();
    let lines = if errors.is_empty() {
        said().take(LINES).collect()
    } else {
        errors
    };
    lines.join("\n")
}

/// Whether the compiler's output says it ran out of memory (gcc: `out of memory allocating`,
/// `virtual memory exhausted`; clang: `Cannot allocate memory`, `std::bad_alloc`).
fn out_of_memory(log: &str) -> bool {
    log.lines().filter(|l| !l.starts_with("$ ")).any(|l| {
        l.contains("out of memory")
            || l.contains("memory exhausted")
            || l.contains("Cannot allocate memory")
            || l.contains("bad_alloc")
    })
}

/// The compiler's warning lines.
pub(crate) fn warnings(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("warning:"))
        .map(String::from)
        .collect()
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

    #[test]
    fn a_command_that_outlives_its_limit_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 300 & echo started; wait"]);
        let start = Instant::now();
        let end = run_bounded(&mut cmd, &log, Duration::from_millis(300)).unwrap();
        assert!(matches!(end, Finished::TimedOut));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(std::fs::read_to_string(&log).unwrap().contains("started"));
    }

    #[test]
    fn excerpts_prefer_error_lines() {
        let log =
            "$ cc -Wno-error=x a.c\na.c: In function 'f':\na.c:3:1: error: expected ';'\nnote\n";
        assert_eq!(excerpt(log), "a.c:3:1: error: expected ';'");
        assert_eq!(
            warnings("x.c:1: warning: unused\nok\n"),
            ["x.c:1: warning: unused"]
        );
    }
}
