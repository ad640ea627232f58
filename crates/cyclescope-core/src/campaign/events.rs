//! The campaign's one sink of events: each goes to the run's event log (the journal of the
//! run), to the frontend, and, for a finished job, to the user's tuning journal. What a
//! worker's protections lacked is said once a run, however many jobs and lanes meet it.

use std::collections::BTreeSet;

use crate::record::journal::JournalWriter;
use crate::vocabulary::EngineEvent;

/// How a warning about a missing protection begins; the rest is the gap in words
/// (`worker::observed::Protections::gaps`).
pub(super) const PROTECTION_GAP: &str = "the workers run without a protection: ";

/// Sends events to the frontend and appends the journal's form of them.
pub(super) struct Events<'a> {
    pub(super) journal: JournalWriter,
    /// The tuning journal (the user's index of every measurement), not the run's event log.
    pub(super) index: crate::journal::JournalWriter,
    pub(super) emit: &'a mut dyn FnMut(EngineEvent),
    pub(super) run_dir: &'a std::path::Path,
    /// The protection gaps already said in this run.
    pub(super) said: BTreeSet<String>,
}

impl Events<'_> {
    pub(super) fn send(&mut self, ev: EngineEvent) {
        if let EngineEvent::Warning { message } = &ev
            && message.starts_with(PROTECTION_GAP)
            && !self.said.insert(message.clone())
        {
            return;
        }
        if let Some(j) = crate::record::journal::JournalEvent::from_event(&ev, self.run_dir) {
            // A journal that cannot be appended (disk full) must not stop the measurement;
            // records are what counts, and they are written atomically.
            let _ = self.journal.append(j);
        }
        let indexed = match &ev {
            EngineEvent::JobFinished { record, .. } => self.index.add(self.run_dir, record),
            _ => None,
        };
        (self.emit)(ev);
        if let Some(message) = indexed {
            self.send(EngineEvent::Warning { message });
        }
    }
}
