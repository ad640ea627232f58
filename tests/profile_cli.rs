//! `cyclescope profile`: a fixture library built with `-g`, whose cost is split between named
//! functions by construction (`tests/fixtures/profile/split.c`), profiled under the real
//! valgrind. The counts are exact, so nothing here depends on a quiet machine.

mod common;

use std::path::Path;

use serde_json::Value;

fn split_library(dir: &Path) -> std::path::PathBuf {
    let prelude = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profile/split.c"),
    )
    .unwrap();
    let source = common::cc::candidate_source(
        "split",
        "split-256",
        256,
        "profile_work(msg, msg_len_bits);",
        &prelude,
    );
    common::cc::build_library_with(dir, "split", &source, &["-O1", "-g"])
}

fn profile(dir: &Path, lib: &Path) -> Value {
    let out = common::cyclescope_in(
        dir,
        &[
            "profile",
            "--lib",
            lib.to_str().unwrap(),
            "--no-baselines",
            "--length",
            "256",
            "--calls",
            "4",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", common::output_text(&out));
    let all: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(all.as_array().map(Vec::len), Some(1), "{all}");
    all[0].clone()
}

#[test]
fn a_library_built_with_debug_info_is_profiled_per_function_and_line() {
    let t = tempfile::tempdir().unwrap();
    let lib = split_library(t.path());
    let p = profile(t.path(), &lib);
    assert_eq!(p["event"], "valgrind:callgrind:Ir");
    assert_eq!(p["calls"], 4);
    let functions = p["functions"].as_array().expect("functions");
    let share = |name: &str| {
        functions
            .iter()
            .find(|f| f["function"] == name)
            .and_then(|f| f["share"].as_f64())
            .unwrap_or_else(|| panic!("no {name} in {functions:?}"))
    };
    // Named, and split as built: 8 multiply-adds a byte over 256 bytes against 400 once.
    let (absorb, finish) = (share("profile_absorb"), share("profile_finish"));
    assert!(
        absorb > 0.6 && finish > 0.05 && absorb > 3.0 * finish,
        "{absorb} {finish}"
    );
    share("CryptHash");
    assert!(
        functions.iter().all(|f| f["object"] == "libsplit.so"
            || f["object"].as_str().is_some_and(|o| o.starts_with("libc"))),
        "{functions:?}"
    );
    let sum: f64 = functions.iter().filter_map(|f| f["share"].as_f64()).sum();
    assert!((sum - 1.0).abs() <= 0.01, "shares sum to {sum}");
    let n: u64 = functions.iter().filter_map(|f| f["count"].as_u64()).sum();
    assert_eq!(Some(n), p["total"].as_u64());
    // Per source line: the library's own lines, from its DWARF.
    let lines = p["lines"].as_array().expect("lines");
    let own: Vec<&Value> = lines
        .iter()
        .filter(|l| l["file"].as_str().is_some_and(|f| f.ends_with("split.c")))
        .collect();
    assert!(!own.is_empty(), "no line of split.c in {lines:?}");
    assert!(own.iter().any(|l| l["function"] == "profile_absorb"));
    let line_sum: f64 = own.iter().filter_map(|l| l["share"].as_f64()).sum();
    assert!(line_sum > 0.9 && line_sum <= 1.0 + 1e-9, "{line_sum}");
    // The overhead is measured, both sides.
    let o = &p["overhead"];
    assert!(o["native_loop_s"].as_f64().unwrap() > 0.0);
    assert!(o["profiled_loop_s"].as_f64().unwrap() > 0.0, "{o}");
}

/// The sampled profile (perf_event cpu-clock here: no PMU on the CI machine) of the same
/// library: its instruction pointers, symbolised, put most samples in the function built to
/// hold most of the work (about 85 % of the instructions, far from any other), and every
/// sample somewhere.
#[test]
fn the_sampled_profile_names_the_function_that_does_the_work() {
    let t = tempfile::tempdir().unwrap();
    let lib = split_library(t.path());
    let out = common::cyclescope_in(
        t.path(),
        &[
            "profile",
            "--lib",
            lib.to_str().unwrap(),
            "--no-baselines",
            "--length",
            "256",
            "--calls",
            "4",
            "--sampled",
            "0.1",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", common::output_text(&out));
    let all: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let s = &all[1];
    assert!(
        s["event"]
            .as_str()
            .is_some_and(|e| e.starts_with("perf_event:")),
        "{s}"
    );
    let functions = s["functions"].as_array().expect("functions");
    assert_eq!(functions[0]["function"], "profile_absorb", "{functions:?}");
    let n: u64 = functions.iter().filter_map(|f| f["count"].as_u64()).sum();
    assert_eq!(Some(n), s["total"].as_u64());
    assert!(n >= 50, "only {n} samples");
    let sum: f64 = functions.iter().filter_map(|f| f["share"].as_f64()).sum();
    assert!((sum - 1.0).abs() <= 0.01, "shares sum to {sum}");
    let lines = s["lines"].as_array().expect("lines");
    assert!(
        lines
            .iter()
            .any(|l| l["file"].as_str().is_some_and(|f| f.ends_with("split.c"))),
        "{lines:?}"
    );
}

/// `profile --out` keeps the profile in a run's `profiles.json`, and the candidate page of that
/// run gets the section on where the cost goes.
#[test]
fn a_kept_profile_is_a_section_of_the_candidate_page() {
    let t = tempfile::tempdir().unwrap();
    let lib = split_library(t.path());
    let lib = lib.to_str().unwrap();
    let run = common::cyclescope_in(t.path(), &common::quick_run(lib, "R", true));
    assert!(run.status.success(), "{}", common::output_text(&run));
    let out = common::cyclescope_in(
        t.path(),
        &[
            "profile",
            "--lib",
            lib,
            "--no-baselines",
            "--length",
            "32",
            "--calls",
            "3",
            "--out",
            "R",
        ],
    );
    assert!(out.status.success(), "{}", common::output_text(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("profile_finish"), "{text}");
    let kept: Value =
        serde_json::from_slice(&std::fs::read(t.path().join("R/profiles.json")).unwrap()).unwrap();
    assert_eq!(kept["profiles"][0]["candidate"], "split");
    let report = common::cyclescope_in(t.path(), &["report", "R", "--out", "P"]);
    assert!(report.status.success(), "{}", common::output_text(&report));
    let page = std::fs::read_to_string(t.path().join("P/split/perf_local.md"))
        .or_else(|_| {
            let dir = t.path().join("P/split");
            let name = std::fs::read_dir(&dir)?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "md"))
                .ok_or_else(|| std::io::Error::other("no page"))?;
            std::fs::read_to_string(name)
        })
        .expect("the candidate page");
    assert!(
        page.contains("## 9. Where the cost goes (cyclescope)"),
        "{page}"
    );
    assert!(
        page.contains("| `profile_finish` | libsplit.so |"),
        "{page}"
    );
}

/// A build that uses AVX-512 (as `-march=native` makes one on such a CPU): valgrind cannot
/// decode it and stops the calls with SIGILL. `profile` says so in its own words and what
/// works instead, never valgrind's raw report; with `--sampled` it takes the sampled profile
/// alone. Runs only where the CPU has AVX-512 (the native calls need it).
#[test]
fn a_build_valgrind_cannot_decode_is_explained_and_the_sampled_profile_still_runs() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if !cpuinfo.split_whitespace().any(|w| w == "avx512f") {
        eprintln!(
            "skipped: this CPU has no AVX-512 (avx512f), so the fixture could not run natively"
        );
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // One EVEX-encoded instruction per call, as -march=native's vectorised code has.
    let source = common::cc::candidate_source(
        "avx512",
        "avx512-256",
        256,
        r#"__asm__ volatile("vpxorq %%zmm1, %%zmm1, %%zmm1" ::: "xmm1");"#,
        "",
    );
    let lib = common::cc::build_library(t.path(), "avx512", &source);
    let args = |sampled: bool| {
        let mut a = vec![
            "profile",
            "--lib",
            lib.to_str().unwrap(),
            "--no-baselines",
            "--length",
            "64",
            "--calls",
            "4",
            "--json",
        ];
        if sampled {
            a.extend(["--sampled", "0.05"]);
        }
        a
    };
    let out = common::cyclescope_in(t.path(), &args(false));
    let text = common::output_text(&out);
    assert!(!out.status.success(), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for fact in [
        "cannot decode an instruction",
        "AVX-512",
        "SIGILL",
        "-march=native",
        "cyclescope profile --sampled",
    ] {
        assert!(stderr.contains(fact), "{fact:?} missing:\n{text}");
    }
    assert!(
        !stderr.contains("vex amd64"),
        "valgrind's raw text:\n{text}"
    );
    // What it advises works: the sampled profile, alone.
    let out = common::cyclescope_in(t.path(), &args(true));
    let text = common::output_text(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("taking the sampled profile"),
        "{text}"
    );
    let all: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(all.as_array().map(Vec::len), Some(1), "{all}");
    assert!(
        all[0]["event"]
            .as_str()
            .is_some_and(|e| e.starts_with("perf_event:")),
        "{all}"
    );
    assert!(
        all[0]["functions"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["function"] == "CryptHash")),
        "{all}"
    );
}
