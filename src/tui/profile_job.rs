//! The workbench's profile job (`P`): one instance at its lengths, each profiled in trials of
//! its own by the core (`profile::profile_observed`: the calls counted under valgrind's
//! callgrind, then run natively for the overhead), on a helper thread so the UI never waits.
//! Every step is sent back as it happens — waiting for the CPU, counting, the exact counts the
//! moment callgrind gave them, the finished profile — so the panel fills as the work does. It
//! holds the measurement CPU's machine lock while it runs, as `cyclescope profile` does: no
//! other measurement shares the CPU with its native trial. It never touches a timed trial.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::catalog::Instance;
use crate::profile::{self, Counts, Profile, ProfileRequest, ProfileStep};

/// Calls counted per length (as `cyclescope profile`'s default: the counts are exact, a few
/// calls suffice).
pub const PROFILE_CALLS: u64 = 20;

/// What to profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileSpec {
    /// The workbench's number for this job: messages of an older job are told apart.
    pub job: u64,
    pub instance: Instance,
    pub lengths: Vec<u64>,
    pub cpu: usize,
    pub calls: u64,
}

/// One step of a profile job.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileEvent {
    /// Another process measures on the CPU: the job waits for it (what the lock said).
    WaitingForCpu(String),
    /// The calls at this length run under callgrind.
    Counting {
        length: u64,
    },
    /// Callgrind's exact counts at this length; the native trial runs next.
    Counted {
        length: u64,
        counts: Box<Counts>,
    },
    Done {
        length: u64,
        profile: Box<Profile>,
    },
    Failed {
        length: u64,
        why: String,
    },
    /// The job could not start (the CPU lock, a bad setting).
    Refused(String),
    /// Every length was profiled, failed, or the job was cancelled.
    Finished {
        cancelled: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProfileMsg {
    pub job: u64,
    pub event: ProfileEvent,
}

pub struct Profiler {
    tx: Sender<ProfileMsg>,
    rx: Receiver<ProfileMsg>,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    address_space_mib: u64,
}

impl Profiler {
    /// A profiler whose workers get the settings' address-space limit (as a run's do).
    pub fn new(max_address_space_mib: Option<u64>) -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            tx,
            rx,
            cancel: Arc::new(AtomicBool::new(false)),
            thread: None,
            address_space_mib: crate::worker::limits::address_space_mib(
                None,
                max_address_space_mib,
            )
            .unwrap_or(crate::worker::limits::DEFAULT_ADDRESS_SPACE_MIB),
        }
    }

    /// Starts `spec` on a helper thread (the app starts one job at a time).
    pub fn start(&mut self, spec: ProfileSpec) {
        self.cancel = Arc::new(AtomicBool::new(false));
        let cancel = self.cancel.clone();
        let tx = self.tx.clone();
        let mib = self.address_space_mib;
        self.thread = Some(std::thread::spawn(move || {
            let job = spec.job;
            let send = |event| {
                let _ = tx.send(ProfileMsg { job, event });
            };
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&spec, mib, &cancel, &send)
            }));
            if let Err(p) = ran {
                let why = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                send(ProfileEvent::Refused(format!(
                    "the profile job failed (a bug): {why}"
                )));
            }
            send(ProfileEvent::Finished {
                cancelled: cancel.load(Ordering::SeqCst),
            });
        }));
    }

    /// Stops the job: the worker in flight is killed, no further length starts.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }

    pub fn drain(&self) -> Vec<ProfileMsg> {
        self.rx.try_iter().collect()
    }

    /// Cancels the job and waits up to `limit` for its thread (its workers reaped).
    pub fn shutdown(&mut self, limit: Duration) {
        self.cancel();
        let deadline = Instant::now() + limit;
        while self.thread.as_ref().is_some_and(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The job: the CPU's lock, then each length in turn.
fn run(spec: &ProfileSpec, mib: u64, cancel: &Arc<AtomicBool>, send: &dyn Fn(ProfileEvent)) {
    let lock_dir = crate::cpu::lock::machine_lock_dir();
    let held = crate::cpu::lock::lock_wait().and_then(|wait| {
        crate::cpu::lock::lock_all(
            &lock_dir,
            &[spec.cpu],
            Path::new("profile"),
            wait,
            cancel,
            &mut |heard| {
                if let crate::cpu::lock::LockWait::Busy(busy) = heard {
                    send(ProfileEvent::WaitingForCpu(busy.to_string()));
                }
            },
        )
    });
    let _held = match held {
        Ok(h) => h,
        Err(e) => return send(ProfileEvent::Refused(e.to_string())),
    };
    for &length in &spec.lengths {
        if cancel.load(Ordering::SeqCst) {
            return;
        }
        let req = ProfileRequest {
            instance: spec.instance.clone(),
            input_bytes: length,
            cpu: spec.cpu,
            calls: spec.calls,
            limits: crate::worker::Limits::standard(mib),
            cancel: Some(cancel.clone()),
        };
        let result = profile::profile_observed(&req, &mut |step| match step {
            ProfileStep::Counting => send(ProfileEvent::Counting { length }),
            ProfileStep::Counted(c) => send(ProfileEvent::Counted {
                length,
                counts: Box::new(c.clone()),
            }),
        });
        send(match result {
            Ok(p) => ProfileEvent::Done {
                length,
                profile: Box::new(p),
            },
            Err(e) => ProfileEvent::Failed {
                length,
                why: e.to_string(),
            },
        });
    }
}
