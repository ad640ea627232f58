//! The profile's words and figures on fixed profiles: moves per function, the library's own
//! lines, the slowdown's doubt, and what valgrind cannot decode.

use super::*;

fn profile(functions: &[(&str, u64)], calls: u64) -> Profile {
    Profile {
        candidate: "c".into(),
        library: "libx.so".into(),
        label: "X".into(),
        input_bytes: 64,
        event: EVENT.into(),
        tool: "valgrind-3.19.0 callgrind".into(),
        calls,
        total: functions.iter().map(|f| f.1).sum(),
        functions: functions
            .iter()
            .map(|&(f, n)| FunctionShare {
                function: f.into(),
                object: "libx.so".into(),
                count: n,
                share: 0.0,
            })
            .collect(),
        lines: Vec::new(),
        overhead: Overhead {
            profiled_loop_s: 1.0,
            native_loop_s: 0.02,
            slowdown: 50.0,
            profile_wall_s: 1.5,
            native_waited_s: None,
        },
        sandbox_relaxed: Vec::new(),
        lost: 0,
    }
}

#[test]
fn own_lines_are_the_librarys_never_another_objects() {
    let mut p = profile(&[("compress", 1000), ("pad", 100)], 10);
    p.functions.push(FunctionShare {
        function: "__memcpy_avx_unaligned_erms".into(),
        object: "libc.so.6".into(),
        count: 1,
        share: 0.0,
    });
    let line = |function: &str| LineShare {
        file: "f.c".into(),
        line: 7,
        function: function.into(),
        count: 1,
        share: 0.0,
    };
    // Only the C library's function has lines: the library has none of its own.
    p.lines = vec![line("__memcpy_avx_unaligned_erms")];
    let c = p.counts();
    assert_eq!(c.own_lines("libx.so"), OwnLines::NoLineInformation);
    let text = p.describe(4).join("\n");
    assert!(
        text.contains(
            "no source lines: libx.so has no line information (building it with -g adds it)"
        ) && !text.contains("f.c:7"),
        "{text}"
    );
    assert_eq!(c.own_lines("liby.so"), OwnLines::NoFunction);
    // The top function with lines is the one shown, even below the top.
    p.lines.push(line("pad"));
    let c = p.counts();
    assert!(
        matches!(c.own_lines("libx.so"), OwnLines::Lines { function: "pad", ref lines } if lines.len() == 1)
    );
}

#[test]
fn valgrinds_undecodable_instruction_says_what_works_instead() {
    use crate::counter::callgrind::CallgrindError;
    let e = ProfileError::undecoded(CallgrindError::Avx512 {
        bytes: "0x62 0xF1".into(),
    });
    let text = e.to_string();
    for fact in [
        "cannot decode",
        "AVX-512",
        "-march=native",
        "SIGILL",
        "--sampled",
    ] {
        assert!(text.contains(fact), "{fact:?} not in {text}");
    }
    assert!(!text.contains("vex amd64"), "{text}");
}

#[test]
fn a_native_leg_that_waited_for_the_cpu_marks_the_ratio_doubtful() {
    let mut p = profile(&[("compress", 1000)], 10);
    p.overhead.slowdown = 1.39;
    // Unknown or short waits leave the ratio bare.
    assert_eq!(p.overhead.slower(), "1.39× slower");
    p.overhead.native_waited_s = Some(0.0005);
    assert_eq!(p.overhead.doubt(), None);
    // 41 % of the native loop spent waiting: the ratio is marked, with why.
    p.overhead.native_waited_s = Some(0.0082);
    assert_eq!(
        p.overhead.slower(),
        "1.39× slower ⚠ the native calls waited 41.0 % of their loop for the CPU, so the \
         ratio reads low"
    );
    let text = p.describe(0).join("\n");
    assert!(
        text.contains("(1.39× slower ⚠ the native calls waited 41.0 %"),
        "{text}"
    );
}

#[test]
fn moves_per_function_are_per_call_and_largest_first() {
    let before = profile(&[("compress", 1000), ("pad", 100)], 10);
    let after = profile(&[("compress", 600), ("pad", 100), ("load", 40)], 5);
    let m = moved(&before.counts(), &after.counts());
    let names: Vec<&str> = m.iter().map(|m| m.function.as_str()).collect();
    assert_eq!(names, ["compress", "pad", "load"]);
    assert_eq!((m[0].delta(), m[1].delta()), (20.0, 10.0));
    assert_eq!((m[2].before, m[2].after), (None, Some(8.0)));
}
