//! Several instances' KAT jobs, each on a CPU nobody measures on. A long job (`KAT_Loop`'s
//! million chained calls, `KAT_2_33`'s gigabyte messages) holds a CPU for seconds to minutes:
//! it takes that CPU's measurement lock (`cpu::lock`, machine-wide and in the runs folder)
//! for as long as it runs, its worker pinned there, so no measuring run shares the CPU with
//! it and it never lands on one that is measuring. With several free CPUs the jobs run side
//! by side, one per CPU; with one they run one after another; with none they wait for one as
//! long as `CYCLESCOPE_LOCK_WAIT` allows, as a measuring run would. Short default-scope jobs
//! run one after another where the caller's threads run, as before. Results come back in the
//! instances' order. It never judges a result (that is `run_kat`'s).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::run::{KatError, KatEvent, KatOptions, KatReport, KatScope, run_kat};
use crate::catalog::Instance;
use crate::cpu::lock::{self, CpuLock, CpuLockError};

/// How often a job waiting for a free CPU looks again (and at the cancel flag).
const RETRY: Duration = Duration::from_millis(50);

/// Where the pool takes its CPUs from, and how long it may wait for one.
#[derive(Debug, Clone)]
pub struct CpuPool {
    /// The machine-wide lock folder (`lock::machine_lock_dir`).
    pub lock_dir: PathBuf,
    /// The CPUs this process may use.
    pub cpus: Vec<usize>,
    pub wait: Duration,
}

impl CpuPool {
    /// This process's CPUs, the machine-wide lock folder and `CYCLESCOPE_LOCK_WAIT`.
    pub fn of_this_process() -> Result<Self, CpuLockError> {
        Ok(Self {
            lock_dir: lock::machine_lock_dir(),
            cpus: crate::cpu::allowed().to_vec(),
            wait: lock::lock_wait()?,
        })
    }
}

/// What the caller hears while jobs run: which instance (by its index), and what happened.
#[derive(Debug, Clone)]
pub enum PoolEvent<'a> {
    /// The job got CPU `cpu` and starts.
    Started {
        cpu: usize,
    },
    Kat(&'a KatEvent),
    /// Every CPU is taken; the job waits for one (said once per job).
    Waiting(&'a CpuLockError),
}

/// Why a job of the pool did not run.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error(transparent)]
    Kat(#[from] KatError),
    #[error("no free CPU for the KAT of {label}: {source}")]
    NoCpu { label: String, source: CpuLockError },
}

/// True for the scopes whose jobs are long enough to need a CPU of their own.
pub fn is_long(scope: KatScope) -> bool {
    scope != KatScope::Default
}

/// Runs the KAT of every instance: long scopes on free CPUs side by side (see the module), the
/// default scope one after another. `on_event` hears each job's events with its index.
pub fn run_kats(
    instances: &[Instance],
    opts: &KatOptions,
    pool: &CpuPool,
    on_event: &(dyn Fn(usize, PoolEvent<'_>) + Sync),
) -> Vec<Result<KatReport, PoolError>> {
    if !is_long(opts.scope) {
        return instances
            .iter()
            .enumerate()
            .map(|(i, inst)| {
                run_kat(inst, opts, &mut |e| on_event(i, PoolEvent::Kat(e))).map_err(Into::into)
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<KatReport, PoolError>>>> =
        Mutex::new(instances.iter().map(|_| None).collect());
    let threads = instances.len().min(pool.cpus.len()).max(1);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(inst) = instances.get(i) else { break };
                    let r = on_free_cpu(inst, opts, pool, &|e| on_event(i, e));
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .zip(instances)
        .map(|(r, inst)| {
            r.unwrap_or_else(|| {
                Err(PoolError::Kat(KatError::Internal {
                    label: inst.label.clone(),
                    detail: "its thread ended without a result".into(),
                }))
            })
        })
        .collect()
}

/// One job on the first CPU whose locks this process can take, pinned there, the locks held
/// until it ends.
fn on_free_cpu(
    inst: &Instance,
    opts: &KatOptions,
    pool: &CpuPool,
    on_event: &dyn Fn(PoolEvent<'_>),
) -> Result<KatReport, PoolError> {
    let (cpu, _locks) =
        free_cpu(pool, &opts.run_dir, opts.cancel.as_deref(), on_event).map_err(|source| {
            match source {
                CpuLockError::Cancelled { .. } => {
                    PoolError::Kat(KatError::Cancelled(inst.label.clone()))
                }
                source => PoolError::NoCpu {
                    label: inst.label.clone(),
                    source,
                },
            }
        })?;
    on_event(PoolEvent::Started { cpu });
    let mut mine = opts.clone();
    mine.cpu = Some(cpu);
    Ok(run_kat(inst, &mine, &mut |e| on_event(PoolEvent::Kat(e)))?)
}

/// A CPU of the pool and its locks: the first one free in every lock folder, waiting for one
/// as long as the pool allows.
fn free_cpu(
    pool: &CpuPool,
    run_dir: &Path,
    cancel: Option<&AtomicBool>,
    on_event: &dyn Fn(PoolEvent<'_>),
) -> Result<(usize, Vec<CpuLock>), CpuLockError> {
    let dirs = lock::lock_dirs(&pool.lock_dir, run_dir);
    let started = Instant::now();
    let mut told = false;
    loop {
        let mut last_busy = None;
        for &cpu in &pool.cpus {
            match lock_everywhere(&dirs, cpu, run_dir) {
                Ok(held) => return Ok((cpu, held)),
                Err(busy @ CpuLockError::Busy { .. }) => last_busy = Some(busy),
                Err(e) => return Err(e),
            }
        }
        let Some(busy) = last_busy else {
            return Err(CpuLockError::Io {
                cpu: 0,
                path: pool.lock_dir.clone(),
                source: std::io::Error::other("this process may use no CPU"),
            });
        };
        let waited = started.elapsed();
        if waited >= pool.wait {
            return Err(if pool.wait.is_zero() {
                busy
            } else {
                CpuLockError::StillBusy {
                    busy: Box::new(busy),
                    waited_s: waited.as_secs(),
                }
            });
        }
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(CpuLockError::Cancelled { cpu: 0 });
        }
        if !told {
            on_event(PoolEvent::Waiting(&busy));
            told = true;
        }
        std::thread::sleep(RETRY.min(pool.wait - waited));
    }
}

/// `cpu` locked in every folder of `dirs`, or in none (a busy one frees the others).
fn lock_everywhere(
    dirs: &[PathBuf],
    cpu: usize,
    run_dir: &Path,
) -> Result<Vec<CpuLock>, CpuLockError> {
    dirs.iter()
        .map(|d| lock::try_lock(d, cpu, run_dir))
        .collect()
}

#[cfg(test)]
mod tests;
