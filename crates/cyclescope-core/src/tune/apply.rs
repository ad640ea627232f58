//! Applying a tuning plan and undoing it. The restore file
//! (`<root>/run/cyclescope/tune-restore.json`, written atomically and fsynced together with its
//! folder) is on disk before the first setting changes; it names its owner (pid and start time)
//! when a process holds the tuning, so a later start can tell a crashed owner from a live one.
//! Restoring writes back every saved text byte for byte, in reverse order, then removes the
//! file. Nothing is changed that the file does not hold.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::partition::{self, Partition};
use super::plan::{FileChange, TunePlan};
use super::shield::{self, Shield};
use super::tasks::{self, TaskMove};
use super::{TuneError, restore_path};
use crate::host::HostRoot;

/// The restore file, relative to the root (`/run` is a tmpfs: it goes with a reboot, exactly
/// like the settings it restores).
pub const RESTORE_FILE: &str = "run/cyclescope/tune-restore.json";
const FORMAT: &str = "cyclescope-tune-restore/1";

/// The process that holds the tuning and restores it when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`, so a recycled pid is not taken for the owner.
    pub start_time: u64,
}

impl Owner {
    pub fn this_process() -> Option<Owner> {
        let pid = std::process::id();
        let start_time = tasks::start_time(pid as i32)?;
        Some(Owner { pid, start_time })
    }

    /// Whether the owner still runs (owners are live processes even for a fixture root).
    pub fn is_alive(&self) -> bool {
        i32::try_from(self.pid)
            .ok()
            .and_then(tasks::start_time)
            .is_some_and(|s| s == self.start_time)
    }

    pub fn describe(owner: Option<&Owner>) -> String {
        match owner {
            None => "held until `cyclescope tune --restore`".into(),
            Some(o) if o.is_alive() => format!("held by running pid {}", o.pid),
            Some(o) => format!("left by pid {}, which is gone", o.pid),
        }
    }
}

/// What the restore file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedTuning {
    pub format: String,
    pub cpu: usize,
    /// None: tuning stays until `tune --restore` (or a reboot).
    pub owner: Option<Owner>,
    pub saved_at: String,
    /// In the order applied; restored in reverse.
    pub files: Vec<FileChange>,
    pub tasks: Vec<TaskMove>,
    /// The shield, applied last and restored first (absent in files older than the shield).
    #[serde(default)]
    pub shield: Option<Shield>,
    /// The v2 partition, applied last and restored first (absent in files older than it).
    #[serde(default)]
    pub partition: Option<Partition>,
    /// Folders made to hold the restore file, removed again (when empty) after restoring.
    pub created_dirs: Vec<String>,
}

/// The outcome of applying: settings changed, and those the kernel refused (with why).
#[derive(Debug, Clone, Default)]
pub struct Applied {
    pub changed: usize,
    pub refused: Vec<String>,
}

/// The outcome of restoring.
#[derive(Debug, Clone)]
pub struct Restored {
    pub owner: Option<Owner>,
    pub files: usize,
    pub tasks: usize,
    /// Threads moved out of the shield's cpuset, back to the root cpuset.
    pub unshielded: usize,
    /// Settings that could not be written back, and threads gone since (with why).
    pub refused: Vec<String>,
}

fn require_root() -> Result<(), TuneError> {
    let euid = nix::unistd::geteuid();
    if euid.is_root() {
        Ok(())
    } else {
        Err(TuneError::NotRoot {
            euid: euid.as_raw(),
        })
    }
}

/// The restore file of `root`, if there is one.
pub fn read_saved(root: &HostRoot) -> Result<Option<SavedTuning>, TuneError> {
    let path = restore_path(root);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(TuneError::ReadFailed { path, source }),
    };
    let saved: SavedTuning = serde_json::from_slice(&bytes).map_err(|e| TuneError::Damaged {
        path: path.clone(),
        message: e.to_string(),
    })?;
    if saved.format != FORMAT {
        return Err(TuneError::Damaged {
            path,
            message: format!("format {:?}, expected {FORMAT:?}", saved.format),
        });
    }
    Ok(Some(saved))
}

fn write_text(path: &Path, text: &str) -> std::io::Result<()> {
    // No `create`: a setting that is not there is not invented, in sysfs or in a fixture.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Saves the previous values, then applies `plan` (root only). `owner` None leaves the tuning
/// in place until `tune --restore`.
pub fn apply(plan: &TunePlan, owner: Option<Owner>) -> Result<Applied, TuneError> {
    require_root()?;
    let path = restore_path(&plan.root);
    if let Some(saved) = read_saved(&plan.root)? {
        return Err(TuneError::AlreadyTuned {
            path,
            owner: Owner::describe(saved.owner.as_ref()),
        });
    }
    let save_err = |source| TuneError::SaveFailed {
        path: path.clone(),
        source,
    };
    let mut created_dirs = Vec::new();
    let mut rel = Path::new(RESTORE_FILE).parent();
    while let Some(dir) = rel.filter(|d| !d.as_os_str().is_empty()) {
        if !plan.root.dir().join(dir).exists() {
            created_dirs.push(dir.to_string_lossy().into_owned());
        }
        rel = dir.parent();
    }
    let mut saved = SavedTuning {
        format: FORMAT.into(),
        cpu: plan.cpu,
        owner,
        saved_at: chrono::Utc::now().to_rfc3339(),
        files: plan.files.clone(),
        tasks: plan.tasks.clone(),
        shield: plan.shield.clone(),
        partition: plan.partition.clone(),
        created_dirs,
    };
    save(&path, &saved).map_err(save_err)?;
    let mut applied = Applied::default();
    for f in &plan.files {
        match write_text(&plan.root.join(&f.rel), &f.after) {
            Ok(()) => applied.changed += 1,
            Err(e) => applied.refused.push(format!("/{}: {e}", f.rel)),
        }
    }
    for t in &plan.tasks {
        match tasks::set_allowed(t.tid, t.start_time, &t.after) {
            Ok(()) => applied.changed += 1,
            Err(e) => applied
                .refused
                .push(format!("task {} ({}): {e}", t.tid, t.comm)),
        }
    }
    if let Some(s) = &plan.shield {
        match shield::apply(&plan.root, s) {
            Ok((moved, refused)) => {
                applied.changed += moved;
                applied.refused.extend(refused);
            }
            Err(not_made) => {
                // Not ours (made by someone else since the plan): restoring must not touch it.
                applied.refused.push(not_made);
                saved.shield = None;
                save(&path, &saved).map_err(save_err)?;
            }
        }
    }
    if let Some(p) = &plan.partition {
        match partition::apply(&plan.root, p) {
            Ok(refused) => {
                applied.changed += usize::from(refused.is_empty());
                applied.refused.extend(refused);
            }
            Err(not_made) => {
                // Not ours (made by someone else since the plan): restoring must not touch it.
                applied.refused.push(not_made);
                saved.partition = None;
                save(&path, &saved).map_err(save_err)?;
            }
        }
    }
    Ok(applied)
}

/// Writes the restore file through a temporary file and fsyncs it and its folder.
fn save(path: &Path, saved: &SavedTuning) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(saved)?;
    crate::record::pyjson::write_atomic(path, &json)?;
    match path.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

/// Writes back everything the restore file of `root` holds and removes it (root only).
pub fn restore(root: &HostRoot) -> Result<Restored, TuneError> {
    require_root()?;
    let path = restore_path(root);
    let saved = read_saved(root)?.ok_or_else(|| TuneError::NothingToRestore(path.clone()))?;
    let mut out = Restored {
        owner: saved.owner,
        files: 0,
        tasks: 0,
        unshielded: 0,
        refused: Vec::new(),
    };
    if let Some(p) = &saved.partition {
        let (moved, refused) = partition::restore(root, p);
        out.unshielded += moved;
        out.refused.extend(refused);
    }
    if let Some(s) = &saved.shield {
        let (moved, refused) = shield::restore(root, s);
        out.unshielded += moved;
        out.refused.extend(refused);
    }
    for t in saved.tasks.iter().rev() {
        match tasks::set_allowed(t.tid, t.start_time, &t.before) {
            Ok(()) => out.tasks += 1,
            Err(e) => out
                .refused
                .push(format!("task {} ({}): {e}", t.tid, t.comm)),
        }
    }
    for f in saved.files.iter().rev() {
        // One the kernel refused to change holds its saved text still: nothing to write back.
        if std::fs::read(root.join(&f.rel)).is_ok_and(|now| now == f.before.as_bytes()) {
            out.files += 1;
            continue;
        }
        match write_text(&root.join(&f.rel), &f.before) {
            Ok(()) => out.files += 1,
            Err(e) => out.refused.push(format!("/{}: {e}", f.rel)),
        }
    }
    std::fs::remove_file(&path).map_err(|source| TuneError::RemoveFailed {
        path: path.clone(),
        source,
    })?;
    if let Some(dir) = path.parent() {
        // The removal itself must survive a crash, or the next start restores again.
        let _ = sync_dir(dir);
    }
    for dir in &saved.created_dirs {
        // Only when empty: anything else put there is not ours to remove.
        let _ = std::fs::remove_dir(root.join(dir));
    }
    Ok(out)
}

/// Restores a tuning whose owner process died (crash, SIGKILL) — called as any command
/// starts. A tuning held by a live process, or until `tune --restore`, is left alone.
pub fn recover_stale(root: &HostRoot) -> Result<Option<Restored>, TuneError> {
    match read_saved(root)? {
        Some(SavedTuning {
            owner: Some(owner), ..
        }) if !owner.is_alive() => restore(root).map(Some),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::Setting;

    /// An IRQ the kernel would not move (here: a file that takes no write) still holds its
    /// saved text at restore: it counts as restored, not as a refusal.
    #[test]
    fn a_setting_the_kernel_never_changed_is_not_written_back() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: restoring needs root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = HostRoot::new(dir.path());
        let irq = dir.path().join("proc/irq/36");
        std::fs::create_dir_all(&irq).unwrap();
        std::os::unix::fs::symlink("/proc/version", irq.join("smp_affinity_list")).unwrap();
        let before = std::fs::read_to_string("/proc/version").unwrap();
        let saved = SavedTuning {
            format: FORMAT.into(),
            cpu: 1,
            owner: None,
            saved_at: String::new(),
            files: vec![FileChange {
                setting: Setting::IrqAffinity,
                rel: "proc/irq/36/smp_affinity_list".into(),
                before,
                after: "0".into(),
            }],
            tasks: Vec::new(),
            shield: None,
            partition: None,
            created_dirs: Vec::new(),
        };
        let path = restore_path(&root);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_vec(&saved).unwrap()).unwrap();
        let r = restore(&root).unwrap();
        assert_eq!((r.files, r.refused), (1, Vec::<String>::new()));
        assert!(!path.exists());
    }

    /// A cpuset of the shield's name made by someone else after the plan is not ours: apply
    /// says so, and restoring leaves it and its tasks alone.
    #[test]
    fn a_shield_cpuset_made_by_another_after_the_plan_is_left_alone() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: applying needs root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = HostRoot::new(dir.path());
        let cs = dir.path().join("sys/fs/cgroup/cpuset");
        std::fs::create_dir_all(&cs).unwrap();
        std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
        std::fs::write(dir.path().join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
        for (f, t) in [
            ("cpuset.cpus", "0-1\n"),
            ("cpuset.mems", "0\n"),
            ("tasks", "5\n"),
        ] {
            std::fs::write(cs.join(f), t).unwrap();
        }
        let plan = crate::tune::plan(&root, 1, 0).unwrap();
        assert_eq!(plan.shield.as_ref().map(|s| s.tasks.len()), Some(1));
        let foreign = cs.join(crate::host::SHIELD_SET);
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("tasks"), "99\n").unwrap();
        let applied = apply(&plan, None).unwrap();
        assert!(
            applied
                .refused
                .iter()
                .any(|r| r.starts_with("no shield: cpuset")),
            "{:?}",
            applied.refused
        );
        assert_eq!(read_saved(&root).unwrap().unwrap().shield, None);
        restore(&root).unwrap();
        assert_eq!(
            std::fs::read_to_string(foreign.join("tasks")).unwrap(),
            "99\n"
        );
        assert_eq!(std::fs::read_to_string(cs.join("tasks")).unwrap(), "5\n");
    }
}
