//! The order a KAT job's messages come in, checked message by message: `loaded` (or
//! `load_failed`) first; then, for each requested file in turn, its progress and `file_done`
//! under the name the job expects; a `fault` only for the file in progress and only with a
//! status a file's job can end with; then each conformance check in `RUN_ORDER`, its steps and
//! its outcome (of a grade the check can have: a finding only from one whose calls are out of
//! domain); `done` only when every file and every check is done; nothing after the end. The
//! engine speaks every message; this holds its own bookkeeping to the protocol. Pure
//! bookkeeping: no I/O, no verdicts.

use crate::conform::run::RUN_ORDER;
use crate::kat::KatStatus;
use crate::kat::generate::KatFile;
use crate::kat::job::KatMessage;
use crate::worker::Tampering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Loaded,
    Ended,
}

/// Where a KAT worker is in its protocol.
#[derive(Debug, Clone)]
pub(super) struct KatOrder {
    files: Vec<KatFile>,
    next: usize,
    phase: Phase,
    kat_name: Option<String>,
    /// Conformance checks whose outcome arrived.
    checks: usize,
}

impl KatOrder {
    pub(super) fn new(files: &[KatFile]) -> Self {
        Self {
            files: files.to_vec(),
            next: 0,
            phase: Phase::Start,
            kat_name: None,
            checks: 0,
        }
    }

    /// Accepts `m` if it may come now, and moves on.
    pub(super) fn accept(&mut self, m: &KatMessage) -> Result<(), Tampering> {
        let unexpected = |what: &str| Err(Tampering(format!("{what} out of the protocol's order")));
        match (self.phase, m) {
            (Phase::Ended, _) => unexpected("a message after the worker's last"),
            (_, KatMessage::Error { .. }) => {
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Start, KatMessage::LoadFailed { .. }) => {
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Start, KatMessage::Loaded { kat_name, .. }) => {
                if kat_name.is_empty() || kat_name.contains('/') || kat_name.contains('\0') {
                    return Err(Tampering(format!(
                        "a KAT name that is no file name: {kat_name:?}"
                    )));
                }
                self.kat_name = Some(kat_name.clone());
                self.phase = Phase::Loaded;
                Ok(())
            }
            (Phase::Start, _) => unexpected("a message before `loaded`"),
            (Phase::Loaded, KatMessage::Log { .. }) => Ok(()),
            (Phase::Loaded, KatMessage::Progress { file, done, total }) => {
                self.expect_current(*file)?;
                if *total != file.total_steps() || done > total {
                    return Err(Tampering(format!(
                        "progress {done}/{total} for {}, which has {} steps",
                        file.tag(),
                        file.total_steps()
                    )));
                }
                Ok(())
            }
            (Phase::Loaded, KatMessage::FileDone { file, name, .. }) => {
                self.expect_current(*file)?;
                let expected = file.file_name(self.kat_name.as_deref().unwrap_or_default());
                if *name != expected {
                    return Err(Tampering(format!(
                        "`file_done` names {name:?}, the worker writes {expected:?}"
                    )));
                }
                self.next += 1;
                Ok(())
            }
            (Phase::Loaded, KatMessage::Fault { file, status, .. }) => {
                self.expect_current(*file)?;
                if !matches!(status, KatStatus::Cryptofail | KatStatus::Overflow) {
                    return Err(Tampering(format!(
                        "a fault with status {status}, which the worker never reports"
                    )));
                }
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Loaded, KatMessage::CheckStep { check, .. }) => self.expect_check(*check),
            (Phase::Loaded, KatMessage::CheckDone { result }) => {
                self.expect_check(result.check)?;
                if let Some(grade) = result.outcome.grade()
                    && !result.check.grades().contains(&grade)
                {
                    return Err(Tampering(format!(
                        "a {} from {}, which cannot report one",
                        result.outcome.word(),
                        result.check
                    )));
                }
                self.checks += 1;
                Ok(())
            }
            (Phase::Loaded, KatMessage::Done)
                if self.next == self.files.len() && self.checks == RUN_ORDER.len() =>
            {
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Loaded, KatMessage::Done) => unexpected("`done` before every file"),
            (Phase::Loaded, KatMessage::Loaded { .. } | KatMessage::LoadFailed { .. }) => {
                unexpected("a second `loaded`")
            }
        }
    }

    /// A conformance message is about the check in turn, once every file is written.
    fn expect_check(&self, check: crate::conform::Check) -> Result<(), Tampering> {
        if self.next != self.files.len() {
            return Err(Tampering(format!(
                "a message about the check {check} before every KAT file was written"
            )));
        }
        match RUN_ORDER.get(self.checks) {
            Some(&c) if c == check => Ok(()),
            Some(c) => Err(Tampering(format!(
                "a message about the check {check} while {c} is in turn"
            ))),
            None => Err(Tampering(format!(
                "a message about the check {check} after every check ended"
            ))),
        }
    }

    fn expect_current(&self, file: KatFile) -> Result<(), Tampering> {
        match self.files.get(self.next) {
            Some(&f) if f == file => Ok(()),
            Some(f) => Err(Tampering(format!(
                "a message about {} while {} is being written",
                file.tag(),
                f.tag()
            ))),
            None => Err(Tampering(format!(
                "a message about {} after every file was written",
                file.tag()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conform::Outcome;

    fn loaded() -> KatMessage {
        KatMessage::Loaded {
            meta: None,
            kat_name: "x".into(),
        }
    }

    fn done(file: KatFile) -> KatMessage {
        KatMessage::FileDone {
            file,
            name: file.file_name("x"),
            bytes: 1,
            seconds: 0.0,
            sha256_strict: String::new(),
            sha256_nolen: String::new(),
        }
    }

    fn checks() -> Vec<KatMessage> {
        RUN_ORDER
            .iter()
            .flat_map(|&check| {
                [
                    KatMessage::CheckStep {
                        check,
                        bits: None,
                        note: String::new(),
                    },
                    KatMessage::CheckDone {
                        result: crate::conform::CheckResult::new(check, Outcome::Pass),
                    },
                ]
            })
            .collect()
    }

    #[test]
    fn checks_come_in_turn_after_the_files_and_before_done() {
        let files = [KatFile::Kat2_12];
        let run = |msgs: Vec<KatMessage>| {
            let mut o = KatOrder::new(&files);
            msgs.iter().map(|m| o.accept(m)).find_map(Result::err)
        };
        let mut early = vec![loaded()];
        early.extend(checks());
        assert!(run(early).is_some(), "checks before the files");
        let mut skipped = vec![loaded(), done(KatFile::Kat2_12)];
        skipped.extend(checks().into_iter().skip(2));
        assert!(run(skipped).is_some(), "a check left out");
        let mut unfinished = vec![loaded(), done(KatFile::Kat2_12)];
        unfinished.extend(checks().into_iter().take(4));
        unfinished.push(KatMessage::Done);
        assert!(run(unfinished).is_some(), "done before every check");
        let mut finding = vec![loaded(), done(KatFile::Kat2_12)];
        finding.push(KatMessage::CheckDone {
            result: crate::conform::CheckResult::new(
                RUN_ORDER[0],
                Outcome::Finding {
                    evidence: crate::conform::Evidence {
                        bits: 0,
                        offset: None,
                        byte: None,
                        what: "x".into(),
                    },
                },
            ),
        });
        assert!(run(finding).is_some(), "a finding from a failing check");
    }

    #[test]
    fn the_workers_own_sequence_is_accepted() {
        let files = [KatFile::Kat2_12, KatFile::Kat2_23];
        let mut o = KatOrder::new(&files);
        let mut msgs = vec![
            loaded(),
            KatMessage::Progress {
                file: KatFile::Kat2_12,
                done: 64,
                total: 4097,
            },
            KatMessage::Log { line: "t".into() },
            done(KatFile::Kat2_12),
            done(KatFile::Kat2_23),
        ];
        msgs.extend(checks());
        msgs.push(KatMessage::Done);
        for m in msgs {
            o.accept(&m).unwrap();
        }
        assert!(
            o.accept(&KatMessage::Done).is_err(),
            "nothing after the end"
        );
    }

    #[test]
    fn forged_or_reordered_messages_are_refused() {
        let files = [KatFile::Kat2_12, KatFile::Kat2_23];
        let reject = |msgs: &[KatMessage]| {
            let mut o = KatOrder::new(&files);
            msgs.iter().map(|m| o.accept(m)).find_map(Result::err)
        };
        assert!(reject(&[done(KatFile::Kat2_12)]).is_some(), "before loaded");
        assert!(reject(&[loaded(), loaded()]).is_some(), "loaded twice");
        assert!(
            reject(&[loaded(), KatMessage::Done]).is_some(),
            "done early"
        );
        assert!(
            reject(&[loaded(), done(KatFile::Kat2_23)]).is_some(),
            "skips a file"
        );
        let renamed = KatMessage::FileDone {
            file: KatFile::Kat2_12,
            name: "../../escape.txt".into(),
            bytes: 1,
            seconds: 0.0,
            sha256_strict: String::new(),
            sha256_nolen: String::new(),
        };
        assert!(reject(&[loaded(), renamed]).is_some(), "a foreign name");
        let pass_fault = KatMessage::Fault {
            file: KatFile::Kat2_12,
            status: KatStatus::Pass,
            detail: String::new(),
        };
        assert!(
            reject(&[loaded(), pass_fault]).is_some(),
            "a fault saying PASS"
        );
        let slashed = KatMessage::Loaded {
            meta: None,
            kat_name: "../x".into(),
        };
        assert!(reject(&[slashed]).is_some());
    }
}
