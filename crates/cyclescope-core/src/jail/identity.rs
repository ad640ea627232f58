//! The user a worker runs as. When cyclescope runs as root, every worker (the std worker, the
//! `no_std` trial worker, valgrind and whatever runs under it) becomes `nobody` before `exec`:
//! a root-owned file is then no more the candidate's to read or write than any other user's,
//! and the engine (root) is out of reach of its signals. The account is looked up in the
//! password database before the fork ([`Identity::for_workers`]: the lookup allocates and may
//! read files); the switch itself ([`Identity::apply`]) is three raw system calls in the
//! forked child. A process that is not root runs its workers as itself: it has no other uid
//! to give them.
//!
//! What a worker must write (a KAT job's folder, valgrind's scratch folder) is lent to the
//! worker's user for the job ([`Identity::lend`]) and given back after it; what it must read
//! comes as descriptors (the sealed library, the program's image) or lies in such a folder,
//! which it reaches as its working folder or through a folder of its own (folders above it
//! may be closed to it).

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The account workers run as when cyclescope runs as root.
const WORKER_USER: &str = "nobody";

/// `nobody`'s uid and gid on Linux distributions, used where the database has no such user.
const NOBODY_ID: u32 = 65534;

/// An unprivileged uid and gid for workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
}

impl Identity {
    /// The identity workers of this process take: `nobody` (its primary group) when this
    /// process is root, None otherwise. Asked before the fork.
    pub fn for_workers() -> Option<Self> {
        if !nix::unistd::geteuid().is_root() {
            return None;
        }
        let user = nix::unistd::User::from_name(WORKER_USER).ok().flatten();
        Some(match user {
            Some(u) if !u.uid.is_root() && u.gid.as_raw() != 0 => Self {
                uid: u.uid.as_raw(),
                gid: u.gid.as_raw(),
            },
            _ => Self {
                uid: NOBODY_ID,
                gid: NOBODY_ID,
            },
        })
    }

    /// Becomes this identity: no supplementary group, then gid, then uid (real, effective and
    /// saved alike, so nothing can switch back). Runs in the forked child while it still holds
    /// CAP_SETUID and CAP_SETGID: raw system calls only, no allocation, no lock.
    pub(crate) fn apply(&self) -> io::Result<()> {
        let (uid, gid) = (self.uid as libc::uid_t, self.gid as libc::gid_t);
        // SAFETY: setgroups reads zero entries (the pointer is never read); setresgid and
        // setresuid take integers only.
        unsafe {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setresgid(gid, gid, gid) != 0
                || libc::setresuid(uid, uid, uid) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Gives `path` (a file the engine just made for one job) to this identity, so the
    /// worker can read it whatever its mode.
    pub fn hand_over(&self, path: &Path) -> io::Result<()> {
        std::os::unix::fs::lchown(path, Some(self.uid), Some(self.gid))
    }

    /// Lends folder `dir` and what is directly in it to this identity for one job: the worker
    /// may write there. Dropped, the loan gives back what this identity then owns.
    pub fn lend(&self, dir: &Path) -> io::Result<Loan> {
        for entry in std::fs::read_dir(dir)?.flatten() {
            self.hand_over(&entry.path())?;
        }
        self.hand_over(dir)?;
        Ok(Loan {
            dir: dir.to_path_buf(),
            identity: *self,
        })
    }
}

/// A folder lent to a worker's identity ([`Identity::lend`]).
#[derive(Debug)]
pub struct Loan {
    dir: PathBuf,
    identity: Identity,
}

impl Drop for Loan {
    /// Gives the folder and what the worker's user owns directly in it back to this
    /// process's user: what the job left is the engine's again, and no later worker owns it.
    /// Links are changed themselves, never followed; a file with a second name (a hard link
    /// the worker made to a file elsewhere) is left as it is.
    fn drop(&mut self) {
        let (uid, gid) = (
            nix::unistd::geteuid().as_raw(),
            nix::unistd::getegid().as_raw(),
        );
        let worker_owns =
            |m: &std::fs::Metadata| m.uid() == self.identity.uid && (m.is_dir() || m.nlink() == 1);
        let entries = std::fs::read_dir(&self.dir).into_iter().flatten().flatten();
        for path in entries.map(|e| e.path()).chain([self.dir.clone()]) {
            if std::fs::symlink_metadata(&path).is_ok_and(|m| worker_owns(&m)) {
                // Nothing to say when it fails: the next loan hands it over again.
                let _ = std::os::unix::fs::lchown(&path, Some(uid), Some(gid));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_folder_comes_back_with_what_the_worker_made_but_not_a_second_name() {
        let Some(id) = Identity::for_workers() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "x").unwrap();
        id.hand_over(&elsewhere).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("old.txt"), "").unwrap();
        let loan = id.lend(&out).unwrap();
        let owner = |p: &Path| std::fs::symlink_metadata(p).unwrap().uid();
        assert_eq!((owner(&out), owner(&out.join("old.txt"))), (id.uid, id.uid));
        std::fs::write(out.join("new.txt"), "").unwrap();
        id.hand_over(&out.join("new.txt")).unwrap();
        std::fs::hard_link(&elsewhere, out.join("second-name")).unwrap();
        drop(loan);
        for name in ["old.txt", "new.txt"] {
            assert_eq!(owner(&out.join(name)), 0, "{name}");
        }
        assert_eq!(owner(&out), 0);
        assert_eq!(owner(&elsewhere), id.uid, "a second name was followed");
    }

    #[test]
    fn root_gives_its_workers_an_unprivileged_identity() {
        match Identity::for_workers() {
            Some(id) => {
                assert!(nix::unistd::geteuid().is_root());
                assert!(id.uid != 0 && id.gid != 0, "{id:?}");
            }
            None => assert!(!nix::unistd::geteuid().is_root()),
        }
    }
}
