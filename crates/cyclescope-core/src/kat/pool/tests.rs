use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::*;

fn pool(dir: &Path, cpus: &[usize], wait: Duration) -> CpuPool {
    CpuPool {
        lock_dir: dir.to_path_buf(),
        cpus: cpus.to_vec(),
        wait,
    }
}

/// A measuring process's locks on `cpus` (in the lock folder and the runs folder `runs`).
fn measuring(dir: &Path, runs: &Path, cpus: &[usize]) -> Vec<CpuLock> {
    let run = runs.join("measuring");
    let mut held = Vec::new();
    for d in lock::lock_dirs(dir, &run) {
        held.extend(
            lock::lock_all(
                &d,
                cpus,
                &run,
                Duration::ZERO,
                &AtomicBool::new(false),
                &mut |_| {},
            )
            .unwrap(),
        );
    }
    held
}

#[test]
fn a_job_takes_a_cpu_nobody_measures_on_and_holds_it() {
    let locks = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();
    let run = runs.path().join("kat-1");
    let _measuring = measuring(locks.path(), runs.path(), &[5]);
    let p = pool(locks.path(), &[5, 6, 7], Duration::ZERO);
    let (cpu, held) = free_cpu(&p, &run, None, &|_| {}).unwrap();
    assert_eq!(cpu, 6, "CPU 5 is measuring");
    assert_eq!(held.len(), 2, "the lock folder's and the runs folder's");
    // While it runs, a second job gets the next free CPU, and a run wanting CPU 6 is refused.
    let (second, _held2) = free_cpu(&p, &run, None, &|_| {}).unwrap();
    assert_eq!(second, 7);
    let refused = lock::try_lock(locks.path(), 6, Path::new("runs/x")).unwrap_err();
    assert!(
        matches!(refused, CpuLockError::Busy { cpu: 6, .. }),
        "{refused}"
    );
    drop(held);
    assert!(lock::try_lock(locks.path(), 6, Path::new("runs/x")).is_ok());
}

#[test]
fn with_every_cpu_measuring_a_job_waits_within_the_bound_or_is_cancelled() {
    let locks = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();
    let run = runs.path().join("kat-1");
    let _measuring = measuring(locks.path(), runs.path(), &[1, 2]);
    let refused = free_cpu(
        &pool(locks.path(), &[1, 2], Duration::ZERO),
        &run,
        None,
        &|_| {},
    );
    assert!(matches!(refused, Err(CpuLockError::Busy { .. })));
    let told = std::sync::Mutex::new(0);
    let bounded = free_cpu(
        &pool(locks.path(), &[1, 2], Duration::from_millis(120)),
        &run,
        None,
        &|e| {
            assert!(matches!(e, PoolEvent::Waiting(_)));
            *told.lock().unwrap() += 1;
        },
    );
    assert!(matches!(bounded, Err(CpuLockError::StillBusy { .. })));
    assert_eq!(*told.lock().unwrap(), 1, "told once");
    let cancelled = AtomicBool::new(true);
    let c = free_cpu(
        &pool(locks.path(), &[1, 2], Duration::from_secs(600)),
        &run,
        Some(&cancelled),
        &|_| {},
    );
    assert!(matches!(c, Err(CpuLockError::Cancelled { .. })));
}

#[test]
fn only_the_long_scopes_need_a_cpu_of_their_own() {
    assert!(!is_long(KatScope::Default));
    assert!(is_long(KatScope::Loop));
    assert!(is_long(KatScope::Full));
}
