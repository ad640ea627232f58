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
//! campaigns, the test suite). Never pins anything.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

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
         finish or choose other CPUs with --cpus",
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
        None => std::env::temp_dir().join(format!("cyclescope-cpus-{uid}")),
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
    let meta = std::fs::metadata(&path).ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = flock_holder(&locks, meta.dev(), meta.ino())?;
    if pid == std::process::id() {
        return None;
    }
    let mut note = String::new();
    let _ = std::fs::File::open(&path).map(|f| f.take(4096).read_to_string(&mut note));
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

/// What a run that must wait is told once per busy CPU (the holder named), before it waits.
pub type OnWait<'a> = &'a mut dyn FnMut(&CpuLockError);

/// Locks every CPU of `cpus` for this process (all or none), naming `run_dir` as what it
/// measures for. A busy CPU is waited for up to `wait` (`on_wait` hears of it first), or until
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
            let mut told = false;
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
                        if !told {
                            on_wait(&busy);
                            told = true;
                        }
                        std::thread::sleep(RETRY.min(wait - waited));
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
    std::fs::create_dir_all(dir).map_err(io)?;
    // Not truncated on open: the holder's note must survive a refused process's open.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
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
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_names_the_first_holder_and_a_dropped_lock_frees_the_cpu() {
        let tmp = tempfile::tempdir().unwrap();
        let held = lock_all(
            tmp.path(),
            &[3, 5],
            Path::new("runs/a"),
            NO_WAIT,
            &GO,
            &mut |_| {},
        )
        .unwrap();
        // flock locks belong to the open file description: a second open in this process is
        // refused like another process would be.
        let e = lock_all(
            tmp.path(),
            &[4, 5],
            Path::new("runs/b"),
            NO_WAIT,
            &GO,
            &mut |_| {},
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, CpuLockError::Busy { cpu: 5, .. }), "{text}");
        assert!(text.contains(&std::process::id().to_string()), "{text}");
        assert!(text.contains("writing runs/a"), "{text}");
        drop(held);
        assert!(
            lock_all(
                tmp.path(),
                &[4, 5],
                Path::new("runs/b"),
                NO_WAIT,
                &GO,
                &mut |_| {}
            )
            .is_ok()
        );
    }

    const NO_WAIT: Duration = Duration::ZERO;
    static GO: AtomicBool = AtomicBool::new(false);

    #[test]
    fn a_waiting_run_is_told_once_and_gets_the_cpu_when_it_is_freed() {
        let tmp = tempfile::tempdir().unwrap();
        let held = lock_all(
            tmp.path(),
            &[1],
            Path::new("runs/a"),
            NO_WAIT,
            &GO,
            &mut |_| {},
        )
        .unwrap();
        let dir = tmp.path().to_path_buf();
        let (told_tx, told_rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let mut told = Vec::new();
            let got = lock_all(
                &dir,
                &[1, 0],
                Path::new("runs/b"),
                Duration::from_secs(600),
                &GO,
                &mut |e| {
                    told.push(e.to_string());
                    let _ = told_tx.send(());
                },
            );
            (got.map(|l| l.len()), told)
        });
        // Released only once the waiter has said it waits: the wait, not a race, is tested.
        told_rx.recv().unwrap();
        drop(held);
        let (got, told) = waiter.join().unwrap();
        assert_eq!(got.unwrap(), 2, "both CPUs, CPU 0 taken before CPU 1");
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0].contains("CPU 1 is taken"), "{told:?}");
    }

    #[test]
    fn a_wait_is_bounded_and_a_cancel_ends_it() {
        let tmp = tempfile::tempdir().unwrap();
        let _held = lock_all(
            tmp.path(),
            &[2],
            Path::new("runs/a"),
            NO_WAIT,
            &GO,
            &mut |_| {},
        )
        .unwrap();
        let short = lock_all(
            tmp.path(),
            &[2],
            Path::new("runs/b"),
            Duration::from_millis(120),
            &GO,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(short, CpuLockError::StillBusy { .. }), "{short}");
        assert!(short.to_string().contains(LOCK_WAIT_ENV), "{short}");
        let cancelled = AtomicBool::new(true);
        let e = lock_all(
            tmp.path(),
            &[2],
            Path::new("runs/b"),
            Duration::from_secs(600),
            &cancelled,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(e, CpuLockError::Cancelled { cpu: 2 }), "{e}");
    }

    #[test]
    fn the_locks_are_machine_wide_and_in_the_runs_folder() {
        let m = Path::new("/m");
        assert_eq!(lock_dirs(m, Path::new("runs/x")), [m, Path::new("runs")]);
        assert_eq!(lock_dirs(m, Path::new("x"))[1], PathBuf::from("."));
        assert_eq!(lock_dirs(m, Path::new("/m/x")), [m]);
        if std::env::var_os(LOCK_DIR_ENV).is_none() {
            let m = machine_lock_dir();
            assert!(
                m.is_absolute() && m.ends_with("cyclescope") || m.starts_with(std::env::temp_dir()),
                "{m:?}"
            );
        }
    }

    #[test]
    fn the_holder_is_read_from_the_kernel_and_this_process_is_no_other() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(holder(tmp.path(), 6), None, "no lock file");
        let held = lock_all(
            tmp.path(),
            &[6],
            Path::new("runs/a"),
            NO_WAIT,
            &GO,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(holder(tmp.path(), 6), None, "held by this process");
        drop(held);
        assert_eq!(holder(tmp.path(), 6), None, "freed");
        let locks = "1: FLOCK  ADVISORY  WRITE 5817 fe:00:10035508 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 77 fe:01:42 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 6553 fe:01:42 0 EOF\n";
        let dev = libc::makedev(0xfe, 0x01);
        assert_eq!(flock_holder(locks, dev as u64, 42), Some(6553));
        assert_eq!(flock_holder(locks, dev as u64, 43), None);
    }

    #[test]
    fn an_unwritten_note_is_an_unnamed_holder() {
        assert_eq!(holder_of(""), "(not yet named)");
        assert_eq!(
            holder_of("pid 7\ncommand cyclescope run x\nrun r\n"),
            "7 (cyclescope run x, writing r)"
        );
    }
}
