//! One measuring process per CPU: an advisory `flock` on `.cpu<N>.lock` in the lock folder,
//! held for the whole run, with the holder's pid, command line and run directory written into
//! it so a refused process can say who is measuring there. The folder is machine-wide, whatever
//! runs folder a process writes to: `/run/cyclescope` for root, else
//! `$XDG_RUNTIME_DIR/cyclescope`, else `cyclescope-cpus-<uid>` in the temporary folder;
//! `CYCLESCOPE_LOCK_DIR` overrides it (the test suite's shared folder). The runs folder (the
//! parent of the run directory), where the harness keeps its `.cpu<N>.lock`, is locked too, so
//! a harness measuring into the same folder is also kept off the CPU. The kernel drops
//! a lock when its holder dies, so a killed run never leaves a CPU locked. A busy CPU refuses
//! the run at once, unless `CYCLESCOPE_LOCK_WAIT` gives a bounded time to queue for it (queued
//! campaigns, the test suite). Never pins anything. A lock file is opened without following a
//! link and rewritten only when it is a regular file of this user's with one name; the
//! machine-wide folder must be this user's, and the fallback in the shared temporary folder is
//! made 0700 and refused when it is not (`crate::owned`): root must never truncate a file
//! another user chose.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use crate::owned::{self, OwnedError};

/// The environment variable naming a machine-wide lock folder.
pub const LOCK_DIR_ENV: &str = "CYCLESCOPE_LOCK_DIR";

/// The environment variable giving how many seconds a run waits for a busy CPU before it is
/// refused (unset or 0: refused at once).
pub const LOCK_WAIT_ENV: &str = "CYCLESCOPE_LOCK_WAIT";

/// The longest wait `CYCLESCOPE_LOCK_WAIT` may ask for: a day.
const LONGEST_WAIT_S: u64 = 86_400;

/// How often a waiting run tries the lock again (and looks at its cancel flag).
const RETRY: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum CpuLockError {
    #[error(
        "CPU {cpu} is taken: process {holder} is measuring on it (lock {}); wait for it to \
         finish, queue for it with {LOCK_WAIT_ENV}=<seconds>, or choose other CPUs with --cpus",
        .path.display()
    )]
    Busy {
        cpu: usize,
        holder: String,
        path: PathBuf,
    },
    #[error("{busy} (waited {waited_s} s, the limit {LOCK_WAIT_ENV} sets)")]
    StillBusy {
        busy: Box<CpuLockError>,
        waited_s: u64,
    },
    #[error("cancelled while waiting for CPU {cpu}")]
    Cancelled { cpu: usize },
    #[error(
        "{LOCK_WAIT_ENV} must be a whole number of seconds from 0 to {LONGEST_WAIT_S}, not `{value}`"
    )]
    BadWait { value: String },
    #[error("cannot lock CPU {cpu}: {source}")]
    Unsafe {
        cpu: usize,
        source: crate::owned::OwnedError,
    },
    #[error("cannot lock CPU {cpu} ({}): {source}", .path.display())]
    Io {
        cpu: usize,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A held CPU lock; dropping it releases the CPU.
#[derive(Debug)]
pub struct CpuLock {
    _lock: Flock<File>,
}

/// The machine-wide folder of the CPU locks: `CYCLESCOPE_LOCK_DIR`, else `/run/cyclescope` for
/// root, else `$XDG_RUNTIME_DIR/cyclescope`, else `cyclescope-cpus-<uid>` in the temporary
/// folder (per user, like the runtime folder it stands in for).
pub fn machine_lock_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(LOCK_DIR_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(d);
    }
    let uid = nix::unistd::geteuid();
    if uid.is_root() {
        return PathBuf::from("/run/cyclescope");
    }
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("cyclescope"),
        None => private_fallback(),
    }
}

/// `cyclescope-cpus-<uid>` in the temporary folder: the lock folder of a user without a
/// runtime folder, in a folder every user can write.
fn private_fallback() -> PathBuf {
    std::env::temp_dir().join(format!("cyclescope-cpus-{}", nix::unistd::geteuid()))
}

/// Makes the lock folder `dir` ready, or says why it cannot be trusted. The fallback in the
/// shared temporary folder is made 0700 and must stay this user's and private (another user
/// may have made the name first, to hold the locks or to plant links); the machine-wide
/// folder must be this user's real folder. A runs folder may be anyone's (`/tmp`): there each
/// lock file is checked as it is opened.
fn prepare_folder(dir: &Path, machine: &Path, fallback: &Path) -> Result<(), OwnedError> {
    if dir == fallback {
        owned::private_folder(dir)
    } else if dir == machine {
        owned::create_folder(dir, true)?;
        owned::check_own_folder(dir, false)
    } else {
        owned::create_folder(dir, false)
    }
}

/// Where the CPU locks of a run writing `run_dir` live: the machine-wide folder `machine`, and
/// the runs folder (the harness's place) when it is another folder.
pub fn lock_dirs(machine: &Path, run_dir: &Path) -> Vec<PathBuf> {
    let machine = machine.to_path_buf();
    let runs = run_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    if same(&machine, &runs) {
        vec![machine]
    } else {
        vec![machine, runs]
    }
}

/// Who holds CPU `cpu`'s lock in `dir`, when another process does (the host check's busy-CPU
/// line): None when the CPU is free, the lock cannot be read, or this process holds it. Read
/// from the kernel's `/proc/locks` (the flock on that file's inode), never by trying the lock,
/// which would make a run starting at that moment find its CPU taken.
pub fn holder(dir: &Path, cpu: usize) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = dir.join(format!(".cpu{cpu}.lock"));
    // Never through a link: a planted one would show another file's first lines.
    let file = owned::open_to_read(&path)?;
    let meta = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = flock_holder(&locks, meta.dev(), meta.ino())?;
    if pid == std::process::id() {
        return None;
    }
    let mut note = String::new();
    let _ = file.take(4096).read_to_string(&mut note);
    // A note left by an earlier holder names another process: the kernel's pid wins.
    Some(if note.starts_with(&format!("pid {pid}\n")) {
        holder_of(&note)
    } else {
        format!("{pid} (not yet named)")
    })
}

/// The pid holding an exclusive flock on the file (`dev`, `ino`) in a `/proc/locks` text
/// (`1: FLOCK  ADVISORY  WRITE 5817 fe:00:10035508 0 EOF`; the device as hex major:minor).
fn flock_holder(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    let want = format!(
        "{:02x}:{:02x}:{ino}",
        libc::major(dev as libc::dev_t),
        libc::minor(dev as libc::dev_t)
    );
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // A blocked waiter's line starts `1: -> FLOCK …`: only holders have FLOCK second.
        (f.get(1) == Some(&"FLOCK")
            && f.get(3) == Some(&"WRITE")
            && f.get(5) == Some(&want.as_str()))
        .then(|| f.get(4)?.parse().ok())
        .flatten()
    })
}

/// How long a run may wait for a busy CPU: `CYCLESCOPE_LOCK_WAIT` seconds, zero when unset.
pub fn lock_wait() -> Result<Duration, CpuLockError> {
    let Some(raw) = std::env::var_os(LOCK_WAIT_ENV).filter(|v| !v.is_empty()) else {
        return Ok(Duration::ZERO);
    };
    let text = raw.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(s) if s <= LONGEST_WAIT_S => Ok(Duration::from_secs(s)),
        _ => Err(CpuLockError::BadWait {
            value: text.chars().take(40).collect(),
        }),
    }
}

/// What a run queueing for a busy CPU hears of it: once when the wait starts (the `Busy`
/// refusal it would have had, naming the holder), once when the CPU came free.
#[derive(Debug)]
pub enum LockWait<'a> {
    Busy(&'a CpuLockError),
    Free { cpu: usize, waited: Duration },
}

/// What a run that must wait is told once per busy CPU: before it waits, and when it ends.
pub type OnWait<'a> = &'a mut dyn FnMut(LockWait<'_>);

/// Locks every CPU of `cpus` for this process (all or none), naming `run_dir` as what it
/// measures for. A busy CPU is waited for up to `wait` (`on_wait` hears of it first, and
/// again when it came free), or until
/// `cancel` is set. CPUs are taken in ascending order, so two waiting runs that want
/// overlapping sets never hold one CPU each while waiting for the other's.
pub fn lock_all(
    dir: &Path,
    cpus: &[usize],
    run_dir: &Path,
    wait: Duration,
    cancel: &AtomicBool,
    on_wait: OnWait<'_>,
) -> Result<Vec<CpuLock>, CpuLockError> {
    let mut order = cpus.to_vec();
    order.sort_unstable();
    order.dedup();
    let started = Instant::now();
    order
        .into_iter()
        .map(|cpu| {
            let mut waiting_since: Option<Instant> = None;
            loop {
                match lock_one(dir, cpu, run_dir) {
                    Err(busy @ CpuLockError::Busy { .. }) => {
                        let waited = started.elapsed();
                        if waited >= wait {
                            return Err(if wait.is_zero() {
                                busy
                            } else {
                                CpuLockError::StillBusy {
                                    busy: Box::new(busy),
                                    waited_s: waited.as_secs(),
                                }
                            });
                        }
                        if cancel.load(Ordering::Relaxed) {
                            return Err(CpuLockError::Cancelled { cpu });
                        }
                        if waiting_since.is_none() {
                            on_wait(LockWait::Busy(&busy));
                            waiting_since = Some(Instant::now());
                        }
                        std::thread::sleep(RETRY.min(wait - waited));
                    }
                    Ok(held) => {
                        if let Some(since) = waiting_since {
                            on_wait(LockWait::Free {
                                cpu,
                                waited: since.elapsed(),
                            });
                        }
                        return Ok(held);
                    }
                    other => return other,
                }
            }
        })
        .collect()
}

/// CPU `cpu` locked in `dir` for this process at once, or `Busy` naming its holder (never
/// waits): for work that can go to any free CPU (long KAT jobs).
pub fn try_lock(dir: &Path, cpu: usize, run_dir: &Path) -> Result<CpuLock, CpuLockError> {
    lock_one(dir, cpu, run_dir)
}

fn lock_one(dir: &Path, cpu: usize, run_dir: &Path) -> Result<CpuLock, CpuLockError> {
    let path = dir.join(format!(".cpu{cpu}.lock"));
    let io = |source| CpuLockError::Io {
        cpu,
        path: path.clone(),
        source,
    };
    let refused = |source| CpuLockError::Unsafe { cpu, source };
    prepare_folder(dir, &machine_lock_dir(), &private_fallback()).map_err(refused)?;
    // Not truncated on open: the holder's note must survive a refused process's open, and a
    // file is only rewritten once it is known to be this user's own lock file.
    let file = owned::open_lock_file(&path).map_err(refused)?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(l) => l,
        Err((file, _)) => {
            let mut note = String::new();
            let _ = file.take(4096).read_to_string(&mut note);
            return Err(CpuLockError::Busy {
                cpu,
                holder: holder_of(&note),
                path,
            });
        }
    };
    let note = format!(
        "pid {}\ncommand {}\nrun {}\n",
        std::process::id(),
        command_line(),
        crate::catalog::display_path(run_dir)
    );
    lock.set_len(0).map_err(io)?;
    lock.rewind().map_err(io)?;
    lock.write_all(note.as_bytes()).map_err(io)?;
    Ok(CpuLock { _lock: lock })
}

/// This process's command line, arguments joined by spaces.
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// `1234 (cyclescope run … → runs/x)` from a lock note; a holder that has not written its
/// note yet is unknown.
fn holder_of(note: &str) -> String {
    let field = |name: &str| {
        note.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    match field("pid") {
        Some(pid) => format!(
            "{pid} ({}{})",
            field("command").unwrap_or("command unknown"),
            field("run").map_or(String::new(), |r| format!(", writing {r}"))
        ),
        None => "(not yet named)".into(),
    }
}

#[cfg(test)]
mod tests;
