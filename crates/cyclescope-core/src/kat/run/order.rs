//! The order a KAT worker speaks in, checked message by message: `loaded` (or `load_failed`)
//! first; then, for each requested file in turn, its progress and `file_done` under the name
//! the parent expects; a `fault` only for the file in progress and only with a status the
//! worker can report; `done` only when every file is done; nothing after the end. Anything
//! else did not come from the worker's own code. Pure bookkeeping: no I/O, no verdicts.

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
}

impl KatOrder {
    pub(super) fn new(files: &[KatFile]) -> Self {
        Self {
            files: files.to_vec(),
            next: 0,
            phase: Phase::Start,
            kat_name: None,
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
            (Phase::Loaded, KatMessage::Done) if self.next == self.files.len() => {
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Loaded, KatMessage::Done) => unexpected("`done` before every file"),
            (Phase::Loaded, KatMessage::Loaded { .. } | KatMessage::LoadFailed { .. }) => {
                unexpected("a second `loaded`")
            }
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

    #[test]
    fn the_workers_own_sequence_is_accepted() {
        let files = [KatFile::Kat2_12, KatFile::Kat2_23];
        let mut o = KatOrder::new(&files);
        for m in [
            loaded(),
            KatMessage::Progress {
                file: KatFile::Kat2_12,
                done: 64,
                total: 4097,
            },
            KatMessage::Log { line: "t".into() },
            done(KatFile::Kat2_12),
            done(KatFile::Kat2_23),
            KatMessage::Done,
        ] {
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
