//! The trial worker's file limits, in force before it starts: the engine makes the worker's
//! Landlock ruleset (`sandbox::ruleset`, the one every worker has) and the forked child
//! enforces it just before `exec`, so valgrind, for an instruction count or a profile, reads
//! and writes only what the ruleset names from its own first instruction, and the candidate
//! under it too. The trial worker adds its own layer later (no writes at all); this one never
//! loosens anything, and it decides nothing about a job.

use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Command;

/// What a trial worker's job hands it on disk, beyond the system's files (`jail::reads`).
#[derive(Debug, Clone, Default)]
pub struct JobFiles {
    /// Read (and executed): the worker's program, valgrind, valgrind's private copy of the
    /// library.
    pub readable: Vec<PathBuf>,
    /// Written, regular files only: valgrind's scratch folder.
    pub writable: Vec<PathBuf>,
}

impl JobFiles {
    /// The files of a trial worker `exe`, under `launcher` (valgrind) when there is one, with
    /// `job`'s own.
    pub(crate) fn for_worker(
        exe: &std::path::Path,
        launcher: Option<&std::path::Path>,
        job: &Self,
    ) -> Self {
        let mut readable = vec![exe.to_path_buf()];
        if let Some(program) = launcher {
            // Its folder, where a wrapper script finds the program it runs (Debian's
            // `valgrind` runs `valgrind.bin`), and the script's interpreter.
            readable.extend(program.parent().map(std::path::Path::to_path_buf));
            readable.extend(interpreter(program));
            // valgrind's tools and preloads beside a valgrind outside the system's folders
            // (`…/bin/valgrind`, `…/libexec/valgrind/`, `…/lib/valgrind/`).
            if let Some(prefix) = program.parent().and_then(|bin| bin.parent()) {
                readable.extend(["libexec/valgrind", "lib/valgrind"].map(|d| prefix.join(d)));
            }
        }
        readable.extend(job.readable.iter().cloned());
        Self {
            readable,
            writable: job.writable.clone(),
        }
    }
}

/// The interpreter a script names on its `#!` line, None for any other program.
fn interpreter(program: &std::path::Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..n]
        .strip_prefix(b"#!")?
        .split(|&b| b == b'\n')
        .next()?;
    let line = std::str::from_utf8(line).ok()?;
    line.split_whitespace().next().map(PathBuf::from)
}

/// The ruleset of `files`, made before the fork, for the child to enforce last before exec
/// ([`enforce`], from `Group::spawn_worker`). None where the kernel has no Landlock (the
/// worker's own report says so); a ruleset that cannot be made is an error, and the worker is
/// not started. valgrind makes its files of the client's `/proc/self/cmdline` and `auxv` in
/// `$TMPDIR`, which becomes the one folder it may write.
pub(crate) fn prepare(cmd: &mut Command, files: &JobFiles) -> io::Result<Option<OwnedFd>> {
    let created = crate::jail::landlock::ruleset(&files.writable, &files.readable)
        .map_err(|e| io::Error::other(format!("the trial worker's Landlock ruleset: {e}")))?;
    if let Some(scratch) = files.writable.first() {
        cmd.env("TMPDIR", scratch);
    }
    Option::<OwnedFd>::from(created)
        .map(super::pass_fds::above_placed)
        .transpose()
}

/// What the engine puts in force in a worker's forked child last before `exec`: the trial
/// worker's Landlock ruleset ([`prepare`]) and, under valgrind, the system-call filter
/// valgrind starts under (`jail::syscalls::launch_programs`), so that no instruction of
/// valgrind's runs unfiltered. The worker adds its own filter inside, which takes away what
/// only valgrind's start needed (running programs, removing its scratch files) before the
/// candidate is loaded.
#[derive(Default)]
pub(crate) struct BeforeExec {
    pub(crate) ruleset: Option<OwnedFd>,
    pub(crate) filters: Vec<seccompiler::BpfProgram>,
}

impl BeforeExec {
    /// In the forked child: the ruleset, then each filter (raw system calls on what was made
    /// before the fork; no allocation, no lock). A kernel without seccomp (or an emulator)
    /// refuses the filter with EINVAL or ENOSYS: the worker then runs without it and its own
    /// report says so.
    pub(crate) fn enforce(&self) -> io::Result<()> {
        if let Some(r) = &self.ruleset {
            crate::jail::landlock::enforce(r)?;
        }
        for program in &self.filters {
            let prog = libc::sock_fprog {
                len: program.len() as u16,
                filter: program.as_ptr().cast_mut().cast(),
            };
            // SAFETY: prctl takes integers; seccomp reads `prog.len` instructions from the
            // live program `prog` points into (seccompiler's `sock_filter` is the kernel's
            // layout); neither touches any other memory of ours.
            let failed = unsafe {
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::syscall(
                        libc::SYS_seccomp,
                        libc::SECCOMP_SET_MODE_FILTER,
                        0,
                        &prog as *const libc::sock_fprog,
                    ) != 0
            };
            if failed {
                let e = io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::EINVAL | libc::ENOSYS) => Ok(()),
                    _ => Err(e),
                };
            }
        }
        Ok(())
    }
}

/// What `cmd`'s worker lets through into its own `/tmp`: every path its job, its launcher
/// (valgrind), its program and its files name, each owned by this process or by the workers'
/// user (`identity`: root lends the job's folders to it).
pub(super) fn kept_for(cmd: &super::WorkerCommand) -> crate::jail::namespaces::Kept {
    let mut named: Vec<String> = cmd.args.clone();
    if let Some((program, args)) = &cmd.launcher {
        named.push(program.display().to_string());
        named.extend(args.iter().cloned());
    }
    named.push(cmd.exe.display().to_string());
    named.extend(cmd.cwd.iter().map(|d| d.display().to_string()));
    if let Some(files) = &cmd.files {
        let paths = files.readable.iter().chain(&files.writable);
        named.extend(paths.map(|p| p.display().to_string()));
    }
    let mut owners = vec![nix::unistd::geteuid().as_raw()];
    owners.extend(crate::jail::identity::Identity::for_workers().map(|id| id.uid));
    crate::jail::namespaces::Kept::for_job(named.iter().map(String::as_str), &owners)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapper_scripts_interpreter_and_folder_are_readable() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("bin").join("valgrind");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "#!/bin/sh -e\nexec $0.bin \"$@\"\n").unwrap();
        let files = JobFiles::for_worker(
            std::path::Path::new("/cache/cyclescope-worker"),
            Some(&script),
            &JobFiles::default(),
        );
        assert!(
            files.readable.contains(&PathBuf::from("/bin/sh")),
            "{files:?}"
        );
        assert!(
            files.readable.contains(&dir.path().join("bin")),
            "{files:?}"
        );
        assert!(
            files
                .readable
                .contains(&PathBuf::from("/cache/cyclescope-worker"))
        );
        assert!(files.writable.is_empty());
        assert_eq!(interpreter(std::path::Path::new("/nonexistent")), None);
    }

    /// A process that starts with more descriptors open (as CI's test runner does) draws the
    /// ruleset at the low numbers the child places the libraries and the filter at; the
    /// ruleset must still be there for `enforce`, after the placing.
    #[test]
    fn the_ruleset_never_sits_where_the_child_places_descriptors() {
        use std::os::fd::AsRawFd;
        let placed = [
            crate::plugin::sealed::WORKER_LIBRARY_FDS.as_slice(),
            &[crate::jail::syscalls::WORKER_FILTER_FD],
        ]
        .concat();
        // Hold every number up to the highest placed one, then free the placed numbers: the
        // next descriptor this process opens is the lowest of them (unless another test's
        // thread takes it first, which cannot make this fail).
        let mut held = Vec::new();
        loop {
            let f = std::fs::File::open("/dev/null").unwrap();
            let n = f.as_raw_fd();
            held.push(f);
            if n > *placed.iter().max().unwrap() {
                break;
            }
        }
        held.retain(|f| !placed.contains(&f.as_raw_fd()));
        let files = JobFiles::for_worker(
            std::path::Path::new("/bin/true"),
            None,
            &JobFiles::default(),
        );
        let Some(ruleset) = prepare(&mut Command::new("/bin/true"), &files).unwrap() else {
            eprintln!("no Landlock here: no ruleset to place");
            return;
        };
        assert!(
            !placed.contains(&ruleset.as_raw_fd()),
            "ruleset at {} among {placed:?}",
            ruleset.as_raw_fd()
        );
    }

    /// valgrind, from its first instruction, and the program it runs: no_new_privs set, and
    /// a file outside the read set refused, while the system's and its scratch folder's are
    /// not (a program of the system's stands in for the trial worker).
    #[test]
    fn the_ruleset_and_the_filter_hold_before_valgrind_starts() {
        let Ok(valgrind) = crate::counter::callgrind::find_valgrind() else {
            eprintln!("no valgrind here: nothing to show");
            return;
        };
        let secret_dir = tempfile::tempdir().unwrap();
        let secret = secret_dir.path().join("secret");
        std::fs::write(&secret, "root's alone\n").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        // head, not cat: cat asks the kernel for read-ahead advice, which no worker needs.
        let cat = PathBuf::from("/usr/bin/head").canonicalize().unwrap();
        let job = JobFiles {
            readable: vec![],
            writable: vec![scratch.path().to_path_buf()],
        };
        let files = JobFiles::for_worker(&cat, Some(&valgrind), &job);
        let mut cmd = Command::new(&valgrind);
        cmd.args(["-q", "--tool=none", "--vgdb=no"])
            .arg(&cat)
            .args(["-n", "1000"])
            .arg("/proc/self/status")
            .arg(&secret);
        let Some(ruleset) = prepare(&mut cmd, &files).unwrap() else {
            // No ruleset only where this kernel (or emulator: qemu-user has no Landlock) has no
            // Landlock at all: the layer is missing, and the worker runs without it.
            // SAFETY: asks for the ABI version (flag 1): no pointer is read.
            let abi = unsafe {
                libc::syscall(
                    libc::SYS_landlock_create_ruleset,
                    std::ptr::null::<u8>(),
                    0usize,
                    1u32,
                )
            };
            assert!(
                abi < 0,
                "Landlock ABI {abi} is there, but no ruleset was made"
            );
            return;
        };
        // Valgrind's own filter too, as the engine puts it in force for a count.
        let before = BeforeExec {
            ruleset: Some(ruleset),
            filters: crate::jail::syscalls::launch_programs().unwrap(),
        };
        // SAFETY: `enforce` makes only async-signal-safe system calls.
        unsafe { std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || before.enforce()) };
        let o = cmd.output().unwrap();
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(out.contains("NoNewPrivs:\t1"), "{out}\n{err}");
        // Mode 2: a filter is in force from valgrind's first instruction.
        assert!(out.contains("Seccomp:\t2"), "{out}\n{err}");
        assert!(!out.contains("root's alone"), "{out}");
        assert!(err.contains("Permission denied"), "{err}");
        assert!(!o.status.success());
    }
}
