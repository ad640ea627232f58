//! One measuring process per CPU: an advisory `flock` on `.cpu<N>.lock` in the lock folder,
//! held for the whole run, with the holder's pid, command line and run directory written into
//! it so a refused process can say who is measuring there. The folder is the runs folder (the
//! parent of the run directory), where the harness keeps its `.cpu<N>.lock` too, unless
//! `CYCLESCOPE_LOCK_DIR` names one shared by every runs folder on the machine. The kernel drops
//! a lock when its holder dies, so a killed run never leaves a CPU locked. Never pins anything.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// The environment variable naming a machine-wide lock folder.
pub const LOCK_DIR_ENV: &str = "CYCLESCOPE_LOCK_DIR";

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

/// Where the CPU locks of a run writing `run_dir` live.
pub fn lock_dir(run_dir: &Path) -> PathBuf {
    match std::env::var_os(LOCK_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => run_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    }
}

/// Locks every CPU of `cpus` for this process (all or none), naming `run_dir` as what it
/// measures for.
pub fn lock_all(dir: &Path, cpus: &[usize], run_dir: &Path) -> Result<Vec<CpuLock>, CpuLockError> {
    cpus.iter().map(|&c| lock_one(dir, c, run_dir)).collect()
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
        let held = lock_all(tmp.path(), &[3, 5], Path::new("runs/a")).unwrap();
        // flock locks belong to the open file description: a second open in this process is
        // refused like another process would be.
        let e = lock_all(tmp.path(), &[4, 5], Path::new("runs/b")).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, CpuLockError::Busy { cpu: 5, .. }), "{text}");
        assert!(text.contains(&std::process::id().to_string()), "{text}");
        assert!(text.contains("writing runs/a"), "{text}");
        drop(held);
        assert!(lock_all(tmp.path(), &[4, 5], Path::new("runs/b")).is_ok());
    }

    #[test]
    fn the_lock_folder_is_the_runs_folder() {
        if std::env::var_os(LOCK_DIR_ENV).is_none() {
            assert_eq!(lock_dir(Path::new("runs/x")), PathBuf::from("runs"));
            assert_eq!(lock_dir(Path::new("x")), PathBuf::from("."));
        }
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
