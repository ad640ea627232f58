//! The framed checks on a real trial worker.

use super::*;
use crate::plugin::Abi;

/// The bundled pseudoXOF through every framed check, each a job of the real trial
/// worker: each passes, on the calls it should make, and no change is seen around a buffer.
#[test]
fn an_honest_library_passes_the_framed_checks_on_every_planned_call() {
    let path = crate::catalog::bundled_library("pseudoxof");
    let job = TableJob::plain(256, Abi::Iccs, std::time::Duration::from_secs(120));
    let mut t = Tabled::new(&path, job);
    // Nothing to compare with before the sample.
    assert!(matches!(
        t.run(Check::Determinism, &[]),
        Err(Stop::Decided(Outcome::Skipped { .. }))
    ));
    let sample = t.run(Check::OutsideBytes, &[]).unwrap();
    assert_eq!(sample.calls.len(), LENGTHS.len());
    for check in [
        Check::Determinism,
        Check::Alignment,
        Check::UnusedBits,
        Check::Reentrancy,
        Check::OverRead,
    ] {
        let d = t.run(check, &[]).unwrap();
        assert!(!d.calls.is_empty(), "{check}");
        assert_eq!(
            super::super::verdict::judge(check, &d),
            Outcome::Pass,
            "{check}: {d:?}"
        );
    }
    // A job a width, each width the instance does not have: nothing wrote past its bytes.
    assert!(matches!(
        t.run(Check::DigestLength, &[]),
        Err(Stop::Decided(Outcome::Pass))
    ));
    assert_eq!(t.samples.len(), LENGTHS.len());
    assert!(t.input.is_none() && t.output.is_none());
}
