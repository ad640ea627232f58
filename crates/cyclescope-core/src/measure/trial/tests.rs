//! The protocol as the trial worker writes it (its own modules, compiled into these tests)
//! and as the engine reads it: every message parses into the engine's `TrialMessage`, with
//! the values that were written.

use std::ffi::CString;
use std::io::{Read, Seek};
use std::os::fd::AsRawFd;

use super::*;
use crate::companion::counter::{LoopCounter, PerfRefusal as WorkerRefusal};
use crate::companion::json::Channel;
use crate::companion::library::{self, Entry};
use crate::companion::trial as worker;

const TOKEN: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

/// Runs `write` against a channel on a file and parses every line it wrote.
fn lines(write: impl FnOnce(&Channel)) -> Vec<TrialMessage> {
    let mut file = tempfile::tempfile().unwrap();
    write(&Channel::new(file.as_raw_fd(), *TOKEN));
    let mut text = Vec::new();
    file.seek(std::io::SeekFrom::Start(0)).unwrap();
    file.read_to_end(&mut text).unwrap();
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let json = l
                .strip_prefix(&TOKEN[..])
                .and_then(|r| r.strip_prefix(b" "));
            let json = json.unwrap_or_else(|| panic!("no token: {}", String::from_utf8_lossy(l)));
            serde_json::from_slice(json)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(json)))
        })
        .collect()
}

#[test]
fn trials_and_their_clock_pairs_are_read_as_written() {
    let got = lines(|ch| {
        worker::send_trial(
            ch,
            worker::TrialFigures {
                iterations: 1000,
                nanoseconds: 2_500_000,
                cycles: 7_000_000,
                waited_ns: Some(12),
                clock: None,
                digest: &[0xde, 0xad],
            },
        );
        worker::send_trial(
            ch,
            worker::TrialFigures {
                iterations: 5,
                nanoseconds: 1,
                cycles: u64::MAX,
                waited_ns: None,
                clock: Some(("aperf_mperf", 30, 20)),
                digest: &[],
            },
        );
    });
    assert_eq!(
        got,
        [
            TrialMessage::Trial {
                measurements: 1000,
                nanoseconds: 2_500_000,
                cycles: 7_000_000,
                waited_ns: Some(12),
                clock: None,
                digest: "dead".into(),
            },
            TrialMessage::Trial {
                measurements: 5,
                nanoseconds: 1,
                cycles: u64::MAX,
                waited_ns: None,
                clock: Some(ClockPair {
                    kind: crate::counter::witness::WitnessKind::AperfMperf,
                    core: 30,
                    reference: 20,
                }),
                digest: String::new(),
            },
        ]
    );
}

#[test]
fn faults_errors_and_the_end_are_read_as_written() {
    let got = lines(|ch| {
        worker::send_cryptofail(ch, -7);
        worker::send_overflow(ch);
        worker::send_input_changed(ch, 31);
        worker::send_counter_fault(
            ch,
            crate::companion::perf_attr::CounterFault::Multiplexed {
                enabled_ns: 900,
                running_ns: 450,
            },
        );
        worker::send_counter_fault(ch, crate::companion::perf_attr::CounterFault::Zero);
        worker::error(ch, "load", b"lib\"x\\y\n\xff.so: no");
        ch.message("done")
            .number("peak_rss_bytes", 1_515_520u64)
            .send();
    });
    assert_eq!(
        got,
        [
            TrialMessage::Cryptofail { rc: -7 },
            TrialMessage::Overflow { buffer: None },
            TrialMessage::InputChanged { offset: 31 },
            TrialMessage::CounterFault {
                fault: CounterFaultKind::Multiplexed,
                enabled_ns: 900,
                running_ns: 450
            },
            TrialMessage::CounterFault {
                fault: CounterFaultKind::Zero,
                enabled_ns: 0,
                running_ns: 0
            },
            TrialMessage::Error {
                stage: LoadStage::Load,
                detail: "lib\"x\\y\n\u{FFFD}.so: no".into(),
            },
            TrialMessage::Done {
                peak_rss_bytes: 1_515_520
            },
        ]
    );
}

extern "C" fn constant_hash(_bits: i32, _msg: *const u8, _len: u64, _digest: *mut u8) -> i32 {
    0
}

/// A batch is longer than the writer's buffer: it goes out in pieces and still reads as one
/// line with every sample.
#[test]
fn per_call_samples_arrive_whole_in_batches() {
    let (msg, mut digest) = ([0u8; 4], [0u8; 32]);
    let call = worker::Call {
        entry: Entry::Iccs(constant_hash),
        digest_bits: 256,
        msg: msg.as_ptr(),
        msg_bits: 32,
        digest: digest.as_mut_ptr(),
    };
    let calls = 10_000;
    let got = lines(|ch| {
        let mut buf = vec![0u64; 4096];
        // SAFETY: the u64 buffer viewed as bytes, as the worker's malloc'd batch is.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), 4096 * 8) };
        assert_eq!(worker::sample_calls(ch, calls, 0, &call, bytes), 0);
    });
    let ticks: Vec<u64> = got
        .into_iter()
        .flat_map(|m| match m {
            TrialMessage::Samples { ticks } => ticks,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ticks.len() as u64, calls);
    assert!(ticks.iter().all(|&t| t >= 1));
}

/// `ready` from a real library: the metadata block the worker copies out decodes, in the
/// engine, to what the engine's own loader reads from the same file.
#[test]
fn ready_carries_the_metadata_the_engine_would_read_itself() {
    let path = crate::catalog::bundled::library("pseudoxof").unwrap();
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let Ok(lib) = library::open(&c_path, false) else {
        panic!("the worker's loader cannot open {}", path.display())
    };
    let got = lines(|ch| {
        worker::send_ready(
            ch,
            &lib,
            1_200_000,
            &LoopCounter::Reference(0),
            Some(WorkerRefusal::Errno(2)),
            Some(41),
            crate::companion::sandbox::InForce {
                landlock: true,
                seccomp: false,
            },
        )
    });
    let [
        TrialMessage::Ready {
            meta_block,
            build_flags,
            baseline_rss_bytes,
            cycle_source,
            perf_unavailable,
            per_call_source,
            timer_overhead_ticks,
            sandbox,
        },
    ] = &got[..]
    else {
        panic!("{got:?}")
    };
    assert_eq!(*baseline_rss_bytes, 1_200_000);
    assert_eq!(Some(*cycle_source), crate::counter::REFERENCE_SOURCE);
    assert_eq!(*per_call_source, crate::counter::REFERENCE_SOURCE);
    assert_eq!(*timer_overhead_ticks, 41);
    assert_eq!(
        *sandbox,
        Some(super::SandboxInForce {
            landlock: true,
            seccomp: false
        })
    );
    assert_eq!(*perf_unavailable, Some(PerfRefusal::Errno(2)));
    assert!(
        perf_unavailable
            .unwrap()
            .explain()
            .contains("no hardware cycle counter")
    );
    let block = hex::decode(meta_block.as_deref().expect("pseudoxof exports ngcc_meta")).unwrap();
    assert_eq!(block.len(), library::META_HASH_BYTES);
    let flags = build_flags.as_deref().map(|f| hex::decode(f).unwrap());
    let decoded = crate::plugin::meta_from_block(&path, &block, flags.as_deref()).unwrap();
    let engine = crate::plugin::HashLibrary::open(&path).unwrap();
    assert_eq!(Some(&decoded), engine.meta());
}

/// The sizes the worker copies are the C structs' (`iccs_sm3::meta`).
#[test]
fn the_worker_copies_whole_metadata_structs() {
    use iccs_sm3::meta::{NgccMetaCommon, NgccMetaHash};
    assert_eq!(library::META_COMMON_BYTES, size_of::<NgccMetaCommon>());
    assert_eq!(library::META_HASH_BYTES, size_of::<NgccMetaHash>());
    assert_eq!(std::mem::offset_of!(NgccMetaCommon, struct_size), 12);
}

#[test]
fn the_message_is_the_harness_pattern() {
    let mut m = [0u8; 3];
    worker::fill_harness_message(&mut m, 32);
    assert_eq!(m, [32, 163, (262u64 + 32) as u8]);
}

#[test]
fn self_readings_are_taken() {
    use crate::companion::procfs;
    let a = procfs::runqueue_wait_ns().expect("schedstat is available on Linux");
    assert!(procfs::runqueue_wait_ns().unwrap() >= a);
    assert!(procfs::resident_bytes() > 0);
    assert!(procfs::peak_resident_bytes() >= procfs::resident_bytes() / 2);
    assert_eq!(
        procfs::status_kib(b"Name:\tx\nVmHWM:\t  1480 kB\nVmRSS:\t1200 kB\n", b"VmHWM:"),
        Some(1480)
    );
}

#[test]
fn the_token_is_32_hex_digits() {
    use crate::companion::setup::parse_token;
    assert_eq!(
        parse_token(b"0123456789abcdef0123456789abcdef\n"),
        Some(*TOKEN)
    );
    assert_eq!(parse_token(b"0123456789abcdef0123456789abcdeg"), None);
    assert_eq!(parse_token(b"0123"), None);
    assert_eq!(parse_token(b""), None);
}
