use super::*;

/// The shape callgrind 3.19 writes with `valgrind_args`' options (abridged): the warm-up's
/// calls, the counted calls (one callee through a trampoline), and self costs to skip.
const OUTPUT: &str = "# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 99999

ob=/cache/cyclescope-worker
fl=???
fn=cyclescope_warmup_calls
0 7
cob=/lib/libx.so
cfi=???
cfn=CryptHash
calls=1 0
0 9000 800 400 30 20 10 30 20 10

fn=cyclescope_counted_calls
0 25 3
cob=/lib/libx.so
cfi=???
cfn=CryptHash
calls=2 0
0 4000 400 200 1 2 3
cfn=CryptHash'2
calls=1 0
0 2000 200 100 0 1 0 0 0 1

fn=CryptHash
0 6000 600
";

#[test]
fn only_the_calls_out_of_the_counted_function_count() {
    let c = parse(OUTPUT).unwrap();
    assert_eq!(
        c,
        Counted {
            calls: 3,
            ir: 6000,
            l1_misses: 1 + 2 + 3 + 1,
            ll_misses: 1,
        }
    );
    assert_eq!(c.estimated_cycles(), 6000 + 10 * 7 + 100);
    assert_eq!(tool_of(OUTPUT), "valgrind-3.19.0 callgrind");
}

#[test]
fn an_output_without_counted_calls_or_events_is_refused() {
    let warmup_only: String = OUTPUT
        .split("fn=cyclescope_counted_calls")
        .next()
        .unwrap()
        .to_string();
    assert_eq!(parse(&warmup_only), Err(CallgrindError::NoCountedCalls));
    assert!(matches!(
        parse("fn=cyclescope_counted_calls\ncalls=1 0\n0 5\n"),
        Err(CallgrindError::Format { .. })
    ));
    assert!(matches!(
        parse("events: Ir\nfn=cyclescope_counted_calls\ncalls=x 0\n"),
        Err(CallgrindError::Format { .. })
    ));
}

#[test]
fn valgrinds_unhandled_instruction_report_names_avx512() {
    // As valgrind 3.19 prints it for `vpxorq %zmm0,%zmm0,%zmm0` (an EVEX prefix first).
    let stderr = "vex amd64->IR: unhandled instruction bytes: 0x62 0xF1 0xFD 0x48 0xEF 0xC0 0x48 0x89\n\
                  vex amd64->IR:   REX=0 REX.W=0 REX.R=0 REX.X=0 REX.B=0\n\
                  ==1== valgrind: Unrecognised instruction at address 0x4849109.\n";
    let e = unhandled_instruction(stderr).unwrap();
    assert_eq!(
        e,
        CallgrindError::Avx512 {
            bytes: "0x62 0xF1 0xFD 0x48 0xEF 0xC0".into()
        }
    );
    assert!(e.to_string().contains("AVX-512"));
    assert!(matches!(
        unhandled_instruction("vex amd64->IR: unhandled instruction bytes: 0x0F 0x0B\n"),
        Some(CallgrindError::Unhandled { .. })
    ));
    assert_eq!(unhandled_instruction("==1== all fine\n"), None);
}
