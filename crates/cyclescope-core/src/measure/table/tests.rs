//! The table job's protocol, as the engine reads it.

use super::*;
use crate::counter::CycleSource;

fn ready() -> TrialMessage {
    TrialMessage::Ready {
        meta_block: None,
        build_flags: None,
        baseline_rss_bytes: 1,
        cycle_source: CycleSource::Tsc,
        perf_unavailable: None,
        per_call_source: None,
        timer_overhead_ticks: 0,
        sandbox: None,
    }
}

fn digests(bytes: usize) -> TrialMessage {
    TrialMessage::Digests {
        hex: "ab".repeat(bytes),
    }
}

/// Three messages of 4-byte digests, hashed twice (8 bytes a message): `lines` taken in
/// turn, and whether any was refused.
fn take(lines: Vec<TrialMessage>) -> (Got, bool) {
    take_as(lines, false)
}

/// As [`take`], of a framed table or not.
fn take_as(lines: Vec<TrialMessage>, framed: bool) -> (Got, bool) {
    let spec = one_call::spec(32, Abi::Iccs, 0, 3);
    let mut got = Got {
        ready: false,
        digests: Vec::new(),
        end: None,
        wrote: Vec::new(),
    };
    let refused = lines
        .into_iter()
        .any(|m| got.take(m, &spec, 8, 3, framed).is_err());
    (got, refused)
}

fn wrote(record: u64, buffer: &str, offset: i64) -> TrialMessage {
    TrialMessage::Wrote {
        record,
        buffer: buffer.into(),
        offset,
        expected: 1,
        found: 2,
    }
}

/// A framed table's worker reports the first change on each side once, about a record it
/// holds; a plain table's never reports one.
#[test]
fn a_framed_table_reports_one_change_a_side_and_a_plain_one_none() {
    let done = TrialMessage::Done { peak_rss_bytes: 1 };
    let lines = vec![
        ready(),
        digests(8),
        wrote(1, "message", -3),
        wrote(1, "digest", 32),
        digests(16),
        done.clone(),
    ];
    let (got, refused) = take_as(lines.clone(), true);
    assert!(!refused && matches!(got.end, Some(End::Done)));
    assert_eq!(got.wrote.len(), 2);
    assert_eq!((got.wrote[0].record, got.wrote[0].offset), (1, -3));
    assert!(take_as(lines, false).1, "a plain table sends no `wrote`");
    for bad in [
        wrote(3, "message", 0),
        wrote(0, "elsewhere", 0),
        wrote(0, "message", -65),
    ] {
        assert!(take_as(vec![ready(), bad.clone()], true).1, "{bad:?}");
    }
    let twice = vec![ready(), wrote(0, "digest", 32), wrote(2, "digest", 33)];
    assert!(take_as(twice, true).1);
}

#[test]
fn a_table_answers_whole_messages_in_order_and_ends_once() {
    let (got, refused) = take(vec![
        ready(),
        digests(16),
        digests(8),
        TrialMessage::Done { peak_rss_bytes: 1 },
    ]);
    assert!(!refused && matches!(got.end, Some(End::Done)));
    assert_eq!(got.digests.len(), 24);
    // A fault after two messages: the third is the one it names.
    let (got, refused) = take(vec![
        ready(),
        digests(16),
        TrialMessage::Cryptofail { rc: 7 },
    ]);
    assert!(!refused && matches!(got.end, Some(End::Fault(Fault::Returned(7)))));
    assert_eq!(got.digests.len() / 8, 2);
}

#[test]
fn digests_the_table_does_not_hold_are_refused() {
    let done = || TrialMessage::Done { peak_rss_bytes: 1 };
    for lines in [
        // More messages than the table holds.
        vec![ready(), digests(24), digests(8)],
        // Half a message.
        vec![ready(), digests(12)],
        // Done before every message has its digests.
        vec![ready(), digests(16), done()],
        // Digests before ready, and a line after the end.
        vec![digests(8)],
        vec![ready(), digests(24), done(), digests(8)],
        vec![ready(), TrialMessage::Overflow { buffer: None }, done()],
    ] {
        let shown = format!("{lines:?}");
        assert!(take(lines).1, "{shown}");
    }
}
