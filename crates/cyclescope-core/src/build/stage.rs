//! A private copy of what one compile may read, for a compiler that runs as the workers'
//! unprivileged user (cyclescope runs as root, `jail`). That user may not pass the operator's
//! folders (`/root/...`), and must not read the operator's files, so the engine copies the
//! files the build already chose — the instance's sources, every file beside them, in its
//! include folders, and every source or header file of the submission tree — into a work
//! folder of that user's (mode 0700, each file 0600), under one name per root
//! (`cyclescope-staged-0/` for the submission's root). The compiler runs there as its working
//! folder with relative paths only; what it writes stays there until the engine copies the
//! library out through a descriptor that follows no link.
//!
//! A file whose real path leaves the roots is refused by name, as `links` refuses it before
//! (the tree may change between the two looks). Paths in the compiler's output are given back
//! their real names ([`Stage::restore_paths`]), and `-ffile-prefix-map` gives `__FILE__` and
//! debug information the real names too. It never reads a file that a link sends out of the
//! roots, and never follows a link the compiler made.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use super::links::{self, MAX_DEPTH};
use super::{BuildError, InstanceSource, cache};
use crate::jail::identity::Identity;

/// The name of root number `n` in the work folder: unlike any word of a diagnostic, so that
/// giving paths their real names back changes nothing else.
fn root_name(n: usize) -> String {
    format!("cyclescope-staged-{n}")
}

/// A folder a compile reads beneath, as given and as its real path.
#[derive(Debug)]
struct Root {
    given: PathBuf,
    real: PathBuf,
    name: String,
}

/// One compile's private work folder (removed when dropped).
#[derive(Debug)]
pub(crate) struct Stage {
    work: PathBuf,
    roots: Vec<Root>,
    identity: Identity,
}

impl Stage {
    /// Copies what `inst` may read into the new folder `work`, owned by `identity`.
    pub(crate) fn create(
        inst: &InstanceSource,
        work: &Path,
        identity: Identity,
    ) -> Result<Self, BuildError> {
        let _ = std::fs::remove_dir_all(work);
        let mut stage = Self {
            work: work.to_path_buf(),
            roots: Vec::new(),
            identity,
        };
        stage.make_dir(work)?;
        stage.make_dir(&work.join("tmp"))?;
        // The submission's root first; a folder beside it (the ICCS wrappers in the cache)
        // is a root of its own.
        let mut folders: Vec<&Path> = vec![&inst.tree, &inst.folder];
        folders.extend(inst.include_dirs.iter().map(PathBuf::as_path));
        folders.extend(inst.sources.iter().filter_map(|s| s.parent()));
        for f in folders {
            if stage.root_of(f).is_none()
                && let Ok(real) = std::fs::canonicalize(f)
            {
                let name = root_name(stage.roots.len());
                stage.roots.push(Root {
                    given: f.to_path_buf(),
                    real,
                    name,
                });
            }
        }
        for file in cache::inputs(inst) {
            stage.copy(&file)?;
        }
        let tree = inst.tree.clone();
        stage.walk(&tree, 0)?;
        Ok(stage)
    }

    /// The work folder: the compiler's working folder, and all it may read and write.
    pub(crate) fn work(&self) -> &Path {
        &self.work
    }

    /// The user the work folder belongs to.
    pub(crate) fn uid(&self) -> u32 {
        self.identity.uid
    }

    /// `real` as the compiler names it from the work folder (relative); a path beneath no
    /// root is left as it is.
    pub(crate) fn path_of(&self, real: &Path) -> PathBuf {
        match self.root_of(real) {
            Some(r) => Path::new(&r.name).join(real.strip_prefix(&r.given).unwrap_or(real)),
            None => real.to_path_buf(),
        }
    }

    /// `-ffile-prefix-map` for each root: `__FILE__` and debug information name the real
    /// folders, as they would when compiled in place.
    pub(crate) fn prefix_maps(&self) -> Vec<String> {
        self.roots
            .iter()
            .map(|r| format!("-ffile-prefix-map={}={}", r.name, r.given.display()))
            .collect()
    }

    /// `text` (the compiler's output) with each root's name replaced by its real folder.
    pub(crate) fn restore_paths(&self, text: &str) -> String {
        let mut out = text.to_string();
        // Longest names first: `…-1/` is no part of `…-10/` anyway, the slash ends a name.
        for r in self.roots.iter().rev() {
            out = out.replace(&format!("{}/", r.name), &format!("{}/", r.given.display()));
        }
        out
    }

    /// Writes the engine's own file `name` (the shim, the export list) for the compiler.
    pub(crate) fn write(&self, name: &str, text: &str) -> Result<(), BuildError> {
        let path = self.work.join(name);
        let mut f = self.create_file(&path)?;
        io::Write::write_all(&mut f, text.as_bytes()).map_err(super::io_err("cannot write", &path))
    }

    /// Copies the compiler's output `name` to `to` (the engine's): a regular file of the
    /// work folder, opened without following a link, so the compiler cannot hand the engine
    /// another file of the system in its place.
    pub(crate) fn take(&self, name: &str, to: &Path) -> Result<(), BuildError> {
        let from = self.work.join(name);
        let err = |source| BuildError::Io {
            what: "cannot take the compiler's output",
            path: from.clone(),
            source,
        };
        let mut input = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&from)
            .map_err(err)?;
        let meta = input.metadata().map_err(err)?;
        if !meta.is_file() {
            return Err(err(io::Error::other("not a regular file")));
        }
        let mut output = File::create(to).map_err(super::io_err("cannot write", to))?;
        io::copy(&mut input, &mut output).map_err(super::io_err("cannot write", to))?;
        Ok(())
    }

    fn root_of(&self, path: &Path) -> Option<&Root> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(&r.given))
            .max_by_key(|r| r.given.components().count())
    }

    /// Where `real` goes in the work folder: None for a path beneath no root or one that
    /// climbs (`..`) out of its root.
    fn staged(&self, real: &Path) -> Option<PathBuf> {
        let rel = self.path_of(real);
        let plain =
            rel.is_relative() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        plain.then(|| self.work.join(rel))
    }

    /// Copies the file `path` (its content, under its own name) into the work folder. A path
    /// whose real file lies outside every root is refused by name.
    fn copy(&mut self, path: &Path) -> Result<(), BuildError> {
        let Some(to) = self.staged(path) else {
            return Ok(());
        };
        let real = match std::fs::canonicalize(path) {
            Ok(real) => real,
            // A dangling link reads nothing: the compiler says so if it is included.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(BuildError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        if !self.roots.iter().any(|r| real.starts_with(&r.real)) {
            return Err(BuildError::LinkOutOfTree {
                link: path.to_path_buf(),
                target_folder: real.parent().unwrap_or(Path::new("/")).to_path_buf(),
            });
        }
        // Regular files only: a pipe or a device named `x.h` would hang or stir the engine.
        let regular = std::fs::symlink_metadata(&real).is_ok_and(|m| m.is_file());
        if !regular || std::fs::symlink_metadata(&to).is_ok() {
            return Ok(());
        }
        if let Some(parent) = to.parent() {
            self.make_dirs(parent)?;
        }
        // The real path holds no link now; one put in its place since is not followed.
        let read_err = |source| BuildError::Read {
            path: path.to_path_buf(),
            source,
        };
        let mut input = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&real)
            .map_err(read_err)?;
        if !input.metadata().is_ok_and(|m| m.is_file()) {
            return Ok(());
        }
        let mut output = self.create_file(&to)?;
        io::copy(&mut input, &mut output).map_err(read_err)?;
        Ok(())
    }

    /// The source and header files of the tree, as deep as instances are looked for; a link
    /// to a folder inside the roots is made again as a link inside the work folder.
    fn walk(&mut self, dir: &Path, depth: usize) -> Result<(), BuildError> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if depth < MAX_DEPTH {
                    self.walk(&path, depth + 1)?;
                }
            } else if kind.is_symlink() && path.is_dir() {
                self.link_folder(&path)?;
            } else if (kind.is_file() || kind.is_symlink())
                && links::compiler_reads(&entry.file_name().to_string_lossy())
            {
                self.copy(&path)?;
            }
        }
        Ok(())
    }

    /// A link to a folder: made again, relative, when its real folder lies beneath a root.
    fn link_folder(&mut self, link: &Path) -> Result<(), BuildError> {
        let Ok(real) = std::fs::canonicalize(link) else {
            return Ok(());
        };
        let Some(target) = self
            .roots
            .iter()
            .find(|r| real.starts_with(&r.real))
            .map(|r| Path::new(&r.name).join(real.strip_prefix(&r.real).unwrap_or(&real)))
        else {
            return Ok(());
        };
        let Some(at) = self.staged(link) else {
            return Ok(());
        };
        let rel_at = at.strip_prefix(&self.work).unwrap_or(&at).to_path_buf();
        let up = rel_at.components().count().saturating_sub(1);
        let mut pointed = PathBuf::new();
        for _ in 0..up {
            pointed.push("..");
        }
        pointed.push(target);
        if let Some(parent) = at.parent() {
            self.make_dirs(parent)?;
        }
        std::os::unix::fs::symlink(&pointed, &at).map_err(super::io_err("cannot create", &at))?;
        std::os::unix::fs::lchown(&at, Some(self.identity.uid), Some(self.identity.gid))
            .map_err(super::io_err("cannot give to the compiler's user", &at))
    }

    /// `dir` and the folders above it up to the work folder, each the compiler user's.
    fn make_dirs(&self, dir: &Path) -> Result<(), BuildError> {
        if dir == self.work || dir.is_dir() {
            return Ok(());
        }
        if let Some(parent) = dir.parent() {
            self.make_dirs(parent)?;
        }
        self.make_dir(dir)
    }

    fn make_dir(&self, dir: &Path) -> Result<(), BuildError> {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(super::io_err("cannot create", dir))?;
        self.identity
            .hand_over(dir)
            .map_err(super::io_err("cannot give to the compiler's user", dir))
    }

    fn create_file(&self, path: &Path) -> Result<File, BuildError> {
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(super::io_err("cannot write", path))?;
        self.identity
            .hand_over(path)
            .map_err(super::io_err("cannot give to the compiler's user", path))?;
        Ok(f)
    }
}

impl Drop for Stage {
    /// Nothing of the compile stays: the copies, its temporary files and whatever it made
    /// (removing follows no link).
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

#[cfg(test)]
mod tests;
