//! A KAT job's files, written by the engine with every digest from the trial worker, the
//! program every timed call runs in (`measure::table`): the generator runs here, once to make a
//! file's messages (they depend on nothing the function returns) and once more to write its
//! text with the digests that came back. `KAT_2_12` and `KAT_2_23` are one table job each;
//! `KAT_2_33`'s gigabyte messages one job a message; `KAT_Loop`'s million chained calls one
//! chain job. The worker sees a table of messages, as for SUPERCOP's checksums or the known
//! answers, in the same program, job kind and descriptors as every other job. Faults the worker
//! reports, and how it ended when it ended early, come back as the generator's errors.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::generate::{self, GenerateError, KatFile, Written};
use super::{KatOptions, KatStatus};
use crate::catalog::Instance;
use crate::measure::table::{self, Fault, TableError, TableJob};
use crate::plugin::GuardedBuffer;
use crate::worker::Exit;

/// The trial-worker jobs of one KAT job, within its deadline.
pub(crate) struct Producer {
    library: PathBuf,
    job: TableJob,
    deadline: Instant,
    /// Its workers' control groups' account.
    pub(crate) account: table::Account,
    /// The job's cancel flag stopped a worker.
    pub(crate) cancelled: bool,
}

impl Producer {
    pub(crate) fn new(inst: &Instance, opts: &KatOptions) -> Self {
        let job = TableJob {
            unchecked_input: true,
            cancel: opts.cancel.clone(),
            cpu: opts.cpu,
            limits: Some(opts.limits),
            ..TableJob::plain(inst.digest_bits, inst.abi, opts.timeout)
        };
        Self {
            library: inst.library.clone(),
            job,
            deadline: Instant::now() + opts.timeout,
            account: table::Account::default(),
            cancelled: false,
        }
    }

    /// Writes `file` (named `file_name`) to `out`: the generator's text, every call's digest
    /// from the trial worker; `progress` after each record (the loop: once, at its end).
    pub(crate) fn file(
        &mut self,
        file: KatFile,
        file_name: &str,
        out: impl std::io::Write,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Written, GenerateError> {
        let bits = self.job.digest_bits;
        match file {
            KatFile::Loop => {
                let first = generate::loop_first_message();
                let last = self.chain(&first, file_name)?;
                progress(file.total_steps(), file.total_steps());
                generate::generate_loop_from(bits, &last, out)
            }
            // A gigabyte a message: one job each, made and hashed in turn.
            KatFile::Kat2_33 => {
                let mut hash = |msg: &GuardedBuffer, msg_bits: u64, d: &mut GuardedBuffer| {
                    let mut got = self.table(&[(msg.data(), msg_bits)], file_name);
                    replay(&mut got, 0, msg_bits, d)
                };
                generate::generate(file, bits, &mut hash, out, progress)
            }
            KatFile::Kat2_12 | KatFile::Kat2_23 => {
                let mut messages: Vec<(Vec<u8>, u64)> = Vec::new();
                let mut collect = |msg: &GuardedBuffer, msg_bits: u64, _: &mut GuardedBuffer| {
                    messages.push((msg.data().to_vec(), msg_bits));
                    Ok(0)
                };
                generate::generate(file, bits, &mut collect, std::io::sink(), &mut |_, _| {})?;
                let refs: Vec<(&[u8], u64)> =
                    messages.iter().map(|(m, b)| (m.as_slice(), *b)).collect();
                let mut got = self.table(&refs, file_name);
                let mut call = 0;
                let mut hash = |_: &GuardedBuffer, msg_bits: u64, d: &mut GuardedBuffer| {
                    call += 1;
                    replay(&mut got, call - 1, msg_bits, d)
                };
                generate::generate(file, bits, &mut hash, out, progress)
            }
        }
    }

    /// The digests of `messages`, or where and why the worker stopped.
    fn table(&mut self, messages: &[(&[u8], u64)], file_name: &str) -> Answer {
        let job = self.job_now();
        let answer = table::hash_table(&self.library, &job, messages);
        self.settle(answer, file_name)
    }

    /// The last digest of `KAT_Loop`'s chain from `first`.
    fn chain(&mut self, first: &[u8], file_name: &str) -> Result<Vec<u8>, GenerateError> {
        let job = self.job_now();
        let answer = table::hash_chain(&self.library, &job, first, generate::LOOP_ITERATIONS);
        let mut got = self.settle(answer, file_name);
        let mut digest = GuardedBuffer::new((self.job.digest_bits as usize).div_ceil(8));
        replay(&mut got, 0, generate::LOOP_BITS, &mut digest)?;
        Ok(digest.data().to_vec())
    }

    /// The job with what is left of the KAT job's deadline.
    fn job_now(&self) -> TableJob {
        let left = self.deadline.saturating_duration_since(Instant::now());
        TableJob {
            timeout: left.max(Duration::from_secs(1)),
            ..self.job.clone()
        }
    }

    /// Adds a worker's account, and turns its answer into digests or a stop.
    fn settle(
        &mut self,
        answer: Result<table::TableAnswer, TableError>,
        file_name: &str,
    ) -> Answer {
        match answer {
            Ok(a) => {
                self.account.add_answer(&a);
                Answer {
                    digests: a.digests,
                    stop: None,
                }
            }
            Err(e) => {
                self.cancelled |= matches!(e, TableError::Cancelled);
                let (index, stop, before) = stopped(e, file_name, self.job.limits);
                Answer {
                    digests: before,
                    stop: Some((index, stop)),
                }
            }
        }
    }
}

/// What a job gave: its digests, or the message it stopped at and why.
struct Answer {
    digests: Vec<Vec<u8>>,
    stop: Option<(usize, Stop)>,
}

/// Why a job stopped at a message.
enum Stop {
    Returned(i32),
    Overflow(Option<&'static str>),
    Ended(KatStatus, String),
}

/// The `call`-th call of the generator: its digest into `digest` (return 0), or at the message
/// the worker stopped at, what stopped it.
fn replay(
    got: &mut Answer,
    call: usize,
    msg_bits: u64,
    digest: &mut GuardedBuffer,
) -> Result<i32, GenerateError> {
    if let Some(d) = got.digests.get(call) {
        digest.data_mut().copy_from_slice(d);
        return Ok(0);
    }
    match &got.stop {
        Some((at, stop)) if *at <= call => match stop {
            Stop::Returned(rc) => Ok(*rc),
            Stop::Overflow(buffer) => Err(GenerateError::Overflow {
                buffer: buffer.unwrap_or("message or digest"),
                msg_bits,
            }),
            Stop::Ended(status, detail) => Err(GenerateError::Worker {
                status: *status,
                detail: detail.clone(),
            }),
        },
        // Digests for every message were asked, and none is missing unless the job stopped.
        _ => Err(GenerateError::Worker {
            status: KatStatus::Tampered,
            detail: format!("the worker sent no digest for call {call}"),
        }),
    }
}

/// Where (the message's index) and why a job stopped; a worker that ended early stops the
/// file at its first message, in the words a KAT job's end has always had (`signal=SIGSEGV in
/// KAT_2_12_….txt`).
fn stopped(
    e: TableError,
    file_name: &str,
    limits: Option<crate::worker::Limits>,
) -> (usize, Stop, Vec<Vec<u8>>) {
    let inside = format!(" in {file_name}");
    let (index, stop) = match e {
        TableError::Fault {
            index,
            fault,
            before,
        } => {
            return (
                index,
                match fault {
                    Fault::Returned(rc) => Stop::Returned(rc),
                    Fault::Overflow(buffer) => Stop::Overflow(buffer),
                    Fault::InputChanged(offset) => Stop::Ended(
                        KatStatus::Tampered,
                        format!(
                            "the worker checked a message it was told not to check (byte \
                             {offset}){inside}"
                        ),
                    ),
                },
                before,
            );
        }
        TableError::Ended { outcome, .. } => {
            let (status, detail) = match &outcome.exit {
                Exit::Tampered(why) => (KatStatus::Tampered, format!("{why}{inside}")),
                Exit::Moved(why) => (
                    KatStatus::Tampered,
                    format!("the candidate left its place: {why}{inside}"),
                ),
                Exit::Signal { name, .. } => (
                    KatStatus::Crash,
                    format!("signal={name}{inside}{}", outcome.death_note()),
                ),
                Exit::Stopped(stopped) => (KatStatus::Crash, format!("{stopped}{inside}")),
                Exit::TimedOut(d) => (
                    KatStatus::Timeout,
                    format!("timeout after {:.0} s{inside}", d.as_secs_f64()),
                ),
                exit @ (Exit::Code(_) | Exit::Cancelled) => (
                    KatStatus::Crash,
                    format!("{exit}{inside}{}", outcome.limit_note),
                ),
            };
            (0, Stop::Ended(status, detail))
        }
        TableError::Cancelled => (0, Stop::Ended(KatStatus::Crash, "cancelled".into())),
        TableError::Memory(why) => {
            let limit = limits.map_or_else(String::new, |l| l.note(&Exit::Code(2), true, None));
            (
                0,
                Stop::Ended(
                    KatStatus::Crash,
                    format!(
                        "the trial worker could not allocate the message ({why}){limit}{inside}"
                    ),
                ),
            )
        }
        TableError::Worker(why)
        | TableError::OneShot(crate::worker::one_shot::OneShotError::Start(why)) => (
            0,
            Stop::Ended(KatStatus::Loadfail, format!("{why}{inside}")),
        ),
        TableError::OneShot(e) => (0, Stop::Ended(KatStatus::Crash, format!("{e}{inside}"))),
    };
    (index, stop, Vec::new())
}
