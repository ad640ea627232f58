//! What the pages say about the KAT gate's conformance checks: the KAT cell of an instance
//! that failed one (`NONCONFORM (alignment)`), and §3's short summary of every instance's
//! checks, read from the records. Records without checks (a harness dataset, an older run)
//! add nothing, so published pages still reproduce byte for byte.

use super::dataset::InstanceEvidence;
use crate::conform::{self, RecordedChecks};
use crate::sanitize::markdown;

/// The checks stored with the instance's records (the first record that has them).
pub(crate) fn checks_of(i: &InstanceEvidence) -> Option<&RecordedChecks> {
    i.records
        .iter()
        .find_map(|(_, r)| r.cyclescope.as_ref()?.conformance.as_ref())
}

/// The KAT word, with the failed check beside NONCONFORM.
pub(crate) fn kat_cell(i: &InstanceEvidence) -> String {
    let word = markdown(&i.kat.to_string()).into_owned();
    match checks_of(i).and_then(|c| conform::first_failure(&c.checks)) {
        Some(failed) => format!("{word} ({})", failed.check),
        None => word,
    }
}

/// §3's conformance paragraph and one line per instance; empty without checks.
pub(crate) fn summary(l: &mut Vec<String>, instances: &[InstanceEvidence]) {
    let with: Vec<(&InstanceEvidence, &RecordedChecks)> = instances
        .iter()
        .filter_map(|i| checks_of(i).map(|c| (i, c)))
        .collect();
    if with.is_empty() {
        return;
    }
    l.push(
        "Beyond the KAT, the same worker process checked each library's conduct: that it leaves \
         its message and the bytes around it alone, writes nothing but its digest, reads nothing \
         past its message (which ended against an inaccessible page), ignores the bytes around \
         the message, gives the same digest at every buffer offset, after thousands of calls and \
         from two threads at once, and the same as a second build of the instance where one \
         exists. A failed check holds the instance back like a failed KAT; a finding — a \
         crash, an error or another digest at a call neither the KAT nor the timing makes — is \
         only reported, and the instance was measured."
            .into(),
    );
    l.push(String::new());
    for (i, c) in with {
        let mut line = format!(
            "- `{}`: {}",
            i.label,
            markdown(&conform::summary(&c.checks))
        );
        if let Some(failed) = conform::first_failure(&c.checks) {
            line += &format!(
                "; {} failed: {}",
                failed.check,
                markdown(&failed.outcome.detail())
            );
        }
        for found in conform::findings(&c.checks) {
            line += &format!(
                "; {} found (not blocking): {}",
                found.check,
                markdown(&found.outcome.detail())
            );
        }
        l.push(line);
    }
    l.push(String::new());
}
