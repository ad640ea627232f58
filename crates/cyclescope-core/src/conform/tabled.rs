//! The checks the engine runs in framed table jobs of the trial worker
//! (`measure::table::hash_framed`), the program every timed call runs in: `outside_bytes`,
//! `determinism`, `alignment`, `unused_bits`, `reentrancy` (`reentrancy`: two threads of one
//! job), `over_read` (`over_read`: messages against an inaccessible page) and `digest_length`
//! (`widths`: a job at each width the instance does not have). The engine draws every message
//! and every byte around it, places each call, and judges the digests that come back; the
//! worker only hashes, and reports the first change it sees around or in a buffer, which is
//! kept here as the evidence of `input_unchanged` and `output_bounds`. `outside_bytes` runs
//! first: the lengths it hashed are the sample the others compare with.

use std::path::Path;

use super::buffers::clear_unused;
use super::buffers::{LENGTHS, OFFSETS, Sample};
use super::calls::DETERMINISM_CALLS;
use super::noise::Noise;
use super::verdict::{Compared, Digests, alignment_offsets, alignment_what};
use super::{Check, Evidence, Outcome};
use crate::kat::known::KnownAnswer;
use crate::measure::table::{AROUND, Account, Fault, Framed, Side, TableError, TableJob, Wrote};
use crate::worker::Exit;

/// Why a check gave no digests to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The outcome, decided without digests (a skip, or how the worker ended during it).
    Decided(Outcome),
    /// The worker wrote to its protocol channel or left its place: TAMPERED, in these words.
    Tampered(String),
    Cancelled,
}

/// One call's answer: its digest, or its error return.
type Answer = Result<Vec<u8>, i32>;

/// One `alignment` call: the message, its length, the digest it must give, the vector it is
/// (if one), and the (message, digest) offsets.
type Planned<'m> = (&'m [u8], u64, Vec<u8>, Option<u64>, (usize, usize));

/// The library under test and what its jobs showed so far.
pub struct Tabled<'a> {
    library: &'a Path,
    job: TableJob,
    takes_bits: bool,
    noise: Noise,
    samples: Vec<Sample>,
    /// The first change seen around or in a message, and around a digest, in any job.
    pub input: Option<Evidence>,
    pub output: Option<Evidence>,
    /// What its jobs' control groups saw.
    pub account: Account,
}

impl<'a> Tabled<'a> {
    /// `job` gives the width, ABI, deadline, CPU and limits of every job.
    pub fn new(library: &'a Path, job: TableJob) -> Self {
        Self {
            library,
            takes_bits: job.abi.is_iccs(),
            job,
            noise: Noise::fresh(),
            samples: Vec::new(),
            input: None,
            output: None,
            account: Account::default(),
        }
    }

    /// Runs `check`; `vectors` are the `KAT_2_12` vectors the engine verified (`alignment`).
    pub fn run(&mut self, check: Check, vectors: &[KnownAnswer]) -> Result<Digests, Stop> {
        // `alignment` with the engine's vectors needs no sample.
        let needs_sample =
            check != Check::OutsideBytes && (check != Check::Alignment || vectors.is_empty());
        if needs_sample && self.samples.is_empty() {
            return Err(Stop::Decided(super::buffers::no_sample()));
        }
        match check {
            Check::OutsideBytes => self.outside_bytes(),
            Check::Determinism => self.determinism(),
            Check::Alignment => self.alignment(vectors),
            Check::UnusedBits if !self.takes_bits => Err(Stop::Decided(Outcome::Skipped {
                why: "this ABI takes whole bytes only".into(),
            })),
            Check::Reentrancy => self.reentrancy(),
            Check::OverRead => self.over_read(),
            Check::DigestLength => Err(Stop::Decided(self.digest_length()?)),
            _ => self.unused_bits(),
        }
    }

    /// A random message of `bits` bits, its unused low bits clear.
    fn message(&mut self, bits: u64) -> Vec<u8> {
        let mut m = vec![0u8; bits.div_ceil(8) as usize];
        self.noise.fill(&mut m);
        clear_unused(&mut m, bits);
        m
    }

    fn around(&mut self) -> ([u8; AROUND], [u8; AROUND]) {
        let (mut before, mut after) = ([0u8; AROUND], [0u8; AROUND]);
        self.noise.fill(&mut before);
        self.noise.fill(&mut after);
        (before, after)
    }

    /// `outside_bytes`, and the sample: each length hashed twice, between surroundings that
    /// differ in every byte.
    fn outside_bytes(&mut self) -> Result<Digests, Stop> {
        let lengths: Vec<u64> = LENGTHS
            .iter()
            .copied()
            .filter(|b| self.takes_bits || b % 8 == 0)
            .collect();
        let messages: Vec<Vec<u8>> = lengths.iter().map(|&b| self.message(b)).collect();
        // Every length between one pair of surroundings, then again between another that
        // differs from it in every byte: the length changes from each call to the next.
        let mut first = Vec::new();
        let mut second = Vec::new();
        for (m, &bits) in messages.iter().zip(&lengths) {
            let (before, after) = self.around();
            let (mut before2, mut after2) = ([0u8; AROUND], [0u8; AROUND]);
            self.noise.fill_unlike(&mut before2, &before);
            self.noise.fill_unlike(&mut after2, &after);
            first.push(framed(m, bits, (0, 0), before, after));
            second.push(framed(m, bits, (0, 0), before2, after2));
        }
        first.append(&mut second);
        let answers = self.hash(Check::OutsideBytes, &first)?;
        let (a_side, b_side) = answers.split_at(lengths.len());
        let what = "the digest, with other random bytes around the message,".to_string();
        let mut digests = Digests::default();
        for (i, pair) in a_side.iter().zip(b_side).enumerate() {
            let bits = lengths[i];
            let c = match pair {
                (Ok(a), Ok(b)) => {
                    self.samples.push(Sample {
                        bits,
                        msg: messages[i].clone(),
                        digest: a.clone(),
                    });
                    compared(bits, &what, a.clone(), Ok(b.clone()))
                }
                (Err(rc), _) | (_, Err(rc)) => compared(bits, &what, Vec::new(), Err(*rc)),
            };
            digests.calls.push(c);
        }
        Ok(digests)
    }

    /// `determinism`: the sample's messages over and over, each between fresh bytes, each
    /// digest against the sample's.
    fn determinism(&mut self) -> Result<Digests, Stop> {
        let samples = self.samples.clone();
        let n = DETERMINISM_CALLS.max(samples.len());
        let mut frames = Vec::with_capacity(n);
        for i in 0..n {
            let s = &samples[i % samples.len()];
            let (before, after) = self.around();
            frames.push(framed(&s.msg, s.bits, (0, 0), before, after));
        }
        let answers = self.hash(Check::Determinism, &frames)?;
        let mut digests = Digests::default();
        for (i, got) in answers.into_iter().enumerate() {
            let s = &samples[i % samples.len()];
            let what = format!("the digest of a message hashed before, {i} calls into the check,");
            digests.push_distinct(compared(s.bits, &what, s.digest.clone(), got));
            if digests.differs() {
                break;
            }
        }
        Ok(digests)
    }

    /// `alignment`: each `KAT_2_12` vector at every offset pair, (0, 0) among them, against
    /// its `Dst`; without them, each sample at every other offset pair against its digest.
    fn alignment(&mut self, vectors: &[KnownAnswer]) -> Result<Digests, Stop> {
        let mut plan: Vec<Planned> = Vec::new();
        let samples = self.samples.clone();
        if vectors.is_empty() {
            for &at in OFFSETS {
                for s in &samples {
                    plan.push((&s.msg, s.bits, s.digest.clone(), None, at));
                }
            }
        }
        // Offsets outer, messages inner: the length changes from each call to the next.
        for at in alignment_offsets() {
            for v in vectors {
                plan.push((&v.msg, v.bits, v.digest.clone(), Some(v.bits), at));
            }
        }
        let mut frames = Vec::with_capacity(plan.len());
        for &(msg, bits, _, _, (m, d)) in &plan {
            let (before, after) = self.around();
            frames.push(framed(msg, bits, (m as u8, d as u8), before, after));
        }
        let answers = self.hash(Check::Alignment, &frames)?;
        let mut digests = Digests::default();
        for ((_, bits, want, vector, (m, d)), got) in plan.into_iter().zip(answers) {
            let c = compared(bits, &alignment_what(m, d), want, got);
            digests.calls.push(Compared { vector, ..c });
        }
        Ok(digests)
    }

    /// `unused_bits`: the sample's lengths that end mid-byte, the unused low bits of the last
    /// byte set, each against the sample's digest. A write seen first in this job is a failure.
    fn unused_bits(&mut self) -> Result<Digests, Stop> {
        let seen_before = (self.input.is_some(), self.output.is_some());
        let partial: Vec<Sample> = self
            .samples
            .iter()
            .filter(|s| s.bits % 8 != 0)
            .cloned()
            .collect();
        let set: Vec<Vec<u8>> = partial
            .iter()
            .map(|s| {
                let mut m = s.msg.clone();
                if let Some(last) = m.last_mut() {
                    *last |= 0xffu8 >> (s.bits % 8);
                }
                m
            })
            .collect();
        let mut frames = Vec::new();
        for (m, s) in set.iter().zip(&partial) {
            let (before, after) = self.around();
            frames.push(framed(m, s.bits, (0, 0), before, after));
        }
        let answers = self.hash(Check::UnusedBits, &frames)?;
        let input = self.input.as_ref().filter(|_| !seen_before.0);
        let output = self.output.as_ref().filter(|_| !seen_before.1);
        let what = "the digest with the unused low bits of the last byte set";
        Ok(Digests {
            claim: input.or(output).cloned(),
            calls: partial
                .iter()
                .zip(answers)
                .map(|(s, got)| compared(s.bits, what, s.digest.clone(), got))
                .collect(),
        })
    }

    /// The answers of `frames` in one job, continuing past an error return (the record after
    /// it starts a new job); a crash or a stop decides `check`'s outcome.
    fn hash(&mut self, check: Check, frames: &[Framed<'_>]) -> Result<Vec<Answer>, Stop> {
        let mut answers: Vec<Answer> = Vec::with_capacity(frames.len());
        let two_threads = check == Check::Reentrancy;
        while answers.len() < frames.len() {
            let from = answers.len();
            let rest = &frames[from..];
            let run =
                crate::measure::table::hash_framed(self.library, &self.job, rest, two_threads);
            for w in &run.wrote {
                self.note(w, &frames[from + w.record]);
            }
            match run.answer {
                Ok(a) => {
                    self.account.add_answer(&a);
                    answers.extend(a.digests.into_iter().map(Ok));
                }
                Err(TableError::Fault {
                    fault: Fault::Returned(rc),
                    before,
                    ..
                }) => {
                    answers.extend(before.into_iter().map(Ok));
                    answers.push(Err(rc));
                    // Judged to its first difference: no job again for the calls after it.
                    if two_threads {
                        break;
                    }
                }
                Err(TableError::Cancelled) => return Err(Stop::Cancelled),
                Err(TableError::Ended {
                    outcome, before, ..
                }) => {
                    let at = from + before.len();
                    if let Exit::Tampered(_) | Exit::Moved(_) = outcome.exit {
                        return Err(Stop::Tampered(format!(
                            "the library's table job for {check}: its worker ended ({}){}",
                            outcome.exit, outcome.limit_note
                        )));
                    }
                    return Err(Stop::Decided(died(check, frames.get(at), &outcome)));
                }
                Err(e) => {
                    return Err(Stop::Decided(Outcome::Fail {
                        evidence: Evidence {
                            bits: frames.get(from).map_or(0, |f| f.bits),
                            offset: None,
                            byte: None,
                            what: format!("the library's table job gave no digests ({e})"),
                        },
                    }));
                }
            }
        }
        Ok(answers)
    }

    /// Keeps the first change seen on each side.
    fn note(&mut self, w: &Wrote, frame: &Framed<'_>) {
        let (slot, buffer, len) = match w.side {
            Side::Message => (&mut self.input, "message", frame.bits.div_ceil(8) as i64),
            Side::Digest => (
                &mut self.output,
                "digest",
                i64::from(self.job.digest_bits.div_ceil(8)),
            ),
        };
        // The digest's own bytes after a refusal: `digest_length`'s question, no write past
        // a buffer.
        if slot.is_some() || (w.side == Side::Digest && (0..len).contains(&w.offset)) {
            return;
        }
        let what = if w.offset < 0 {
            format!("a write into the {AROUND} bytes before the {buffer}")
        } else if w.offset < len {
            format!("a write into the {buffer} itself")
        } else {
            format!("a write into the {AROUND} bytes after the {buffer}")
        };
        *slot = Some(Evidence {
            bits: frame.bits,
            offset: Some(w.offset),
            byte: Some((w.expected, w.found)),
            what,
        });
    }
}

/// How the worker's end decides `check`: a failure, or a finding for a check whose calls are
/// all out of domain.
fn died(check: Check, at: Option<&Framed<'_>>, outcome: &crate::worker::Outcome) -> Outcome {
    let during = match at.and_then(|f| over_read::flush_note(f.msg_offset)) {
        Some(note) => format!("hashing {note}"),
        None => "during this check".into(),
    };
    let evidence = Evidence {
        bits: at.map_or(0, |f| f.bits),
        offset: None,
        byte: None,
        what: format!(
            "the worker ended ({}{}) {during}",
            outcome.exit, outcome.limit_note
        ),
    };
    Outcome::graded(check.death_grade(), evidence)
}

fn framed<'m>(
    msg: &'m [u8],
    bits: u64,
    (msg_offset, out_offset): (u8, u8),
    before: [u8; AROUND],
    after: [u8; AROUND],
) -> Framed<'m> {
    Framed {
        msg,
        bits,
        msg_offset,
        out_offset,
        before,
        after,
    }
}

/// One compared call: against `want`, the digest or error return it got.
fn compared(bits: u64, what: &str, want: Vec<u8>, got: Answer) -> Compared {
    let (got, failed) = match got {
        Ok(d) => (d, None),
        Err(rc) => (
            Vec::new(),
            Some(Evidence {
                bits,
                offset: None,
                byte: None,
                what: format!("CryptHash returned {rc}"),
            }),
        ),
    };
    Compared {
        bits,
        what: what.to_string(),
        vector: None,
        want,
        got,
        failed,
    }
}

mod over_read;
mod reentrancy;
#[cfg(test)]
mod tests;
mod widths;
