use std::ffi::CString;
use std::path::PathBuf;

use super::*;
use crate::companion::args::{Invocation, parse};
use crate::plugin::Abi;

fn invocation(cpu: Option<usize>, limits: Limits) -> MeasureInvocation {
    MeasureInvocation {
        spec: TrialSpec {
            library: PathBuf::from("target/release/libpseudoxof.so"),
            warmups: 3,
            trials: 5,
            sample_calls: 250,
            ..crate::measure::one_call::spec(512, Abi::Iccs, 1024, 17_583)
        },
        cpu,
        pmu_type: None,
        sample_period_ns: None,
        limits,
    }
}

fn c_args(args: &[String]) -> Vec<CString> {
    args.iter()
        .map(|a| CString::new(a.as_str()).unwrap())
        .collect()
}

/// What the worker read, as the engine's types.
fn read_back(args: &[CString]) -> Result<MeasureInvocation, String> {
    let inv: Invocation<'_> =
        parse(args.iter().map(|a| a.as_c_str())).map_err(|e| e.to_string())?;
    Ok(MeasureInvocation {
        spec: TrialSpec {
            library: PathBuf::from(inv.library.to_str().unwrap()),
            digest_bits: inv.digest_bits,
            input_bytes: inv.input_bytes,
            iterations: inv.iterations,
            warmups: inv.warmups,
            trials: inv.trials,
            sample_calls: inv.sample_calls,
            abi: if inv.supercop {
                Abi::Supercop
            } else {
                Abi::Iccs
            },
            fresh_seed: inv.fresh_seed,
            fresh_heads: None,
            offsets: inv
                .offsets
                .map(|(m, d)| crate::measure::layout::BufferOffsets {
                    message: m as u32,
                    digest: d as u32,
                }),
            count: inv.count,
            hardware_instructions: inv.hw_instructions,
            loop_only: inv.loop_only,
            repeat: inv.repeat,
            any_width: false,
        },
        cpu: inv.cpu,
        pmu_type: inv.pmu_type,
        sample_period_ns: inv.sample_period_ns,
        limits: Limits {
            address_space_bytes: inv.address_space_bytes,
            cpu_seconds: inv.cpu_seconds,
            file_size_bytes: inv.file_size_bytes,
            open_files: inv.open_files,
        },
    })
}

#[test]
fn every_spec_round_trips_through_the_workers_parser() {
    let full = Limits {
        cpu_seconds: Some(7),
        ..Limits::standard(8 << 10)
    };
    for inv in [
        invocation(Some(1), full),
        invocation(None, Limits::default()),
        invocation(
            Some(0),
            Limits {
                cpu_seconds: Some(1),
                open_files: Some(3),
                ..Limits::default()
            },
        ),
    ] {
        let args = inv.to_args();
        assert_eq!(read_back(&c_args(&args)), Ok(inv.clone()));
        let mut supercop = inv.clone();
        supercop.spec.abi = Abi::Supercop;
        assert_eq!(read_back(&c_args(&supercop.to_args())), Ok(supercop));
        let mut probe = inv.clone();
        probe.spec.fresh_seed = Some(u64::MAX);
        assert_eq!(read_back(&c_args(&probe.to_args())), Ok(probe.clone()));
        // The heads' seed travels on stdin after `ready`, never in the command line.
        let mut probe = probe.clone();
        probe.spec.fresh_heads = Some(987_654_321);
        assert!(!probe.to_args().iter().any(|a| a.contains("987654321")));
        assert_eq!(probe.go_line().as_deref(), Some("987654321"));
        let mut atom = inv.clone();
        atom.pmu_type = Some(10);
        atom.sample_period_ns = Some(20_000);
        assert_eq!(read_back(&c_args(&atom.to_args())), Ok(atom));
        let mut placed = inv.clone();
        placed.spec.offsets = Some(crate::measure::layout::LAYOUTS[7]);
        assert_eq!(read_back(&c_args(&placed.to_args())), Ok(placed));
        let mut bare = probe.clone();
        bare.spec.loop_only = true;
        bare.spec.fresh_heads = None;
        assert_eq!(read_back(&c_args(&bare.to_args())), Ok(bare));
        let mut counted = inv.clone();
        counted.spec.count = true;
        assert_eq!(read_back(&c_args(&counted.to_args())), Ok(counted));
        let mut retired = inv.clone();
        retired.spec.hardware_instructions = true;
        assert_eq!(read_back(&c_args(&retired.to_args())), Ok(retired));
        let mut with_worker = vec!["worker".to_string()];
        with_worker.extend(args);
        assert_eq!(read_back(&c_args(&with_worker)), Ok(inv));
    }
}

#[test]
fn the_recorded_command_keeps_its_order() {
    let args = invocation(Some(1), Limits::default()).to_args();
    assert_eq!(
        args.join(" "),
        "measure target/release/libpseudoxof.so --digest-bits 512 --bytes 1024 --iters 17583 \
         --warmups 3 --trials 5 --samples 250 --cpu 1"
    );
}

#[test]
fn bad_command_lines_are_refused_with_the_reason() {
    let refusal = |s: &str| {
        let args: Vec<CString> = s
            .split_whitespace()
            .map(|a| CString::new(a).unwrap())
            .collect();
        match parse(args.iter().map(|a| a.as_c_str())) {
            Ok(_) => panic!("{s:?} was accepted"),
            Err(e) => (format!("{e:?}"), e.to_string()),
        }
    };
    const FRAMED: &str = "--framed (with --table, and no --twice, --in-place or --unchecked-input)";
    let cases = [
        ("probe x", "Usage", "usage: measure LIB"),
        ("measure", "NoLibrary", "no library given"),
        (
            "measure l --bytes 32",
            "Missing",
            "--digest-bits, --bytes, --iters and --warmups are required",
        ),
        (
            "measure l --bytes x",
            "NotANumber",
            "--bytes needs a number",
        ),
        (
            "measure l --bytes -1",
            "NotANumber",
            "--bytes needs a number",
        ),
        (
            "measure l --bytes 99999999999999999999",
            "NotANumber",
            "--bytes needs a number",
        ),
        ("measure l --fast 1", "Unknown", "unknown option --fast"),
        (
            "measure l --abi rsa",
            "NotAnAbi",
            "--abi needs iccs or supercop",
        ),
        (
            "measure l --bytes 1 --bytes 2",
            "Twice",
            "--bytes is given twice",
        ),
        (
            "measure l --digest-bits 4294967296 --bytes 1 --iters 1 --warmups 0",
            "OutOfRange",
            "--digest-bits is out of range",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-bits 17 \
             --message-fd",
            "OutOfRange",
            "--message-bits (within the last of --bytes",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-bits 9",
            "OutOfRange",
            "--message-bits (within the last of --bytes",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-bits 9 \
             --message-fd --abi supercop",
            "OutOfRange",
            "--message-bits (whole bytes",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd \
             --fresh-seed 3",
            "OutOfRange",
            "--message-fd (not with a probe)",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --table",
            "OutOfRange",
            "--table (with --message-fd",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --message-bits 9",
            "OutOfRange",
            "--table (with --message-fd",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --twice",
            "OutOfRange",
            "--twice, --in-place and --unchecked-input (with --table)",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd \
             --unchecked-input",
            "OutOfRange",
            "--twice, --in-place and --unchecked-input (with --table)",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --in-place",
            "OutOfRange",
            "--in-place (crypto_hash only)",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --table",
            "Twice",
            "--table is given twice",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --framed",
            "OutOfRange",
            FRAMED,
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --framed --twice",
            "OutOfRange",
            FRAMED,
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --framed --unchecked-input",
            "OutOfRange",
            FRAMED,
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --framed --in-place --abi supercop",
            "OutOfRange",
            FRAMED,
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --two-threads",
            "OutOfRange",
            "--two-threads (with --framed)",
        ),
        (
            "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 --message-fd --table \
             --framed --framed",
            "Twice",
            "--framed is given twice",
        ),
    ];
    // A message of the engine's that ends mid-byte, in the bytes it is handed.
    let ok: Vec<CString> = "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 \
                            --message-fd --message-bits 9"
        .split_whitespace()
        .map(|a| CString::new(a).unwrap())
        .collect();
    let inv = parse(ok.iter().map(|a| a.as_c_str())).unwrap();
    assert_eq!((inv.message_fd, inv.message_bits), (true, Some(9)));
    // A table of the engine's messages, each hashed twice and in place.
    let table: Vec<CString> = "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 \
                               --message-fd --table --twice --in-place --abi supercop"
        .split_whitespace()
        .map(|a| CString::new(a).unwrap())
        .collect();
    let inv = parse(table.iter().map(|a| a.as_c_str())).unwrap();
    assert!(inv.table && inv.twice && inv.in_place && inv.supercop);
    // The conformance checks' framed table.
    let framed: Vec<CString> = "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 \
                                --message-fd --table --framed"
        .split_whitespace()
        .map(|a| CString::new(a).unwrap())
        .collect();
    let inv = parse(framed.iter().map(|a| a.as_c_str())).unwrap();
    assert!(inv.table && inv.framed && !inv.twice && !inv.unchecked_input);
    assert!(!inv.two_threads);
    // `reentrancy`'s: the same, in two threads.
    let two: Vec<CString> = "measure l --digest-bits 8 --bytes 2 --iters 1 --warmups 0 \
                             --message-fd --table --framed --two-threads"
        .split_whitespace()
        .map(|a| CString::new(a).unwrap())
        .collect();
    let inv = parse(two.iter().map(|a| a.as_c_str())).unwrap();
    assert!(inv.framed && inv.two_threads);
    for (line, variant, text) in cases {
        let (debug, shown) = refusal(line);
        assert!(debug.starts_with(variant), "{line:?}: {debug}");
        assert!(shown.starts_with(text), "{line:?}: {shown}");
    }
}
