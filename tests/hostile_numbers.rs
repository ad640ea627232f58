//! Numbers are numbers, and the blame goes to the right party: values a careless user can type
//! (`inf`, `nan`, widths beyond `int`, an address-space limit beyond 2^64 bytes, a length
//! twice, a CPU this process may not use) are refused when the arguments or the config are
//! read, with the allowed range, before any run directory or worker exists.

mod common;

use common::{cyclescope_in as cyclescope, output_text as text};

/// A CPU number no process on this machine may use.
const NO_SUCH_CPU: &str = "4095";

#[test]
fn run_options_out_of_range_are_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--kat-timeout", "inf"],
            "KAT timeout inf is outside the allowed range 0.1 … 604800 seconds",
        ),
        (
            &["--trial-target", "nan"],
            "trial target NaN is outside the allowed range",
        ),
        (
            &["--trial-target", "inf"],
            "trial target inf is outside the allowed range",
        ),
        (
            &["--op-budget", "nan"],
            "op budget NaN is outside the allowed range",
        ),
        (
            &["--op-budget", "inf"],
            "op budget inf is outside the allowed range",
        ),
        (
            &["--max-address-space-mib", "17592186044416"],
            "64 … 17592186044415",
        ),
        (
            &["--max-cpu-seconds", "18446744073709551615"],
            "CPU-time limit (s) 18446744073709551615 is outside",
        ),
        (
            &["--lengths", "32,1024,32"],
            "message length 32 is listed twice",
        ),
        (
            &["--lengths", "0"],
            "message length 0 is outside the allowed range 1 … 16777216",
        ),
        (
            &["--trials", "0"],
            "trials 0 is outside the allowed range 1 … 16",
        ),
        (&["--adaptive", "nan"], "between 0 and 1"),
        (
            &["--cpu", NO_SUCH_CPU],
            "CPU 4095 is not one this process may run on (allowed: ",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["run", "pseudoXOF-512", "--out", "r", "--allow-unfixed-host"];
        args.extend_from_slice(extra);
        let o = cyclescope(t.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{extra:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{extra:?}: {}", text(&o));
        assert!(
            !t.path().join("r").exists(),
            "{extra:?} created the run directory"
        );
    }
}

#[test]
fn kat_and_instance_options_out_of_range_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let lib = cyclescope_core::catalog::bundled_library("pseudoxof");
    let lib = lib.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["kat", "pseudoXOF-512", "--timeout", "inf", "--out", "k"],
            "KAT timeout inf is outside",
        ),
        (
            &["kat", "pseudoXOF-512", "--timeout", "nan", "--out", "k"],
            "KAT timeout NaN is outside",
        ),
        (
            &[
                "hash",
                "--lib",
                lib,
                "--digest-bits",
                "4294967288",
                "--hex",
                "00",
            ],
            "digest bits 4294967288 is outside the allowed range 8 … 8192",
        ),
        (
            &["kat", "--lib", lib, "--digest-bits", "12", "--out", "k"],
            "not a multiple of 8",
        ),
    ];
    for (args, needle) in cases {
        let o = cyclescope(t.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
        assert!(
            !t.path().join("k").exists(),
            "{args:?} created the run directory"
        );
    }
}

#[test]
fn a_config_with_out_of_range_numbers_names_the_setting() {
    let t = tempfile::tempdir().unwrap();
    let lib = cyclescope_core::catalog::bundled_library("pseudoxof");
    let instance = format!(
        "[[candidate]]\nid = \"x\"\nalgorithm = \"X\"\n[[candidate.instance]]\nlabel = \"x\"\nlibrary = \"{}\"\n",
        lib.display()
    );
    for (toml, needle) in [
        (
            format!("{instance}digest_bits = 4294967288\n"),
            "digest bits 4294967288 is outside the allowed range 8 … 8192",
        ),
        (
            format!("[settings]\nkat_timeout_s = inf\n{instance}digest_bits = 256\n"),
            "settings.kat_timeout_s: KAT timeout inf",
        ),
        (
            format!("[settings]\nlengths = [64, 64]\n{instance}digest_bits = 256\n"),
            "settings.lengths: message length 64 is listed twice",
        ),
    ] {
        let cfg = t.path().join("c.toml");
        std::fs::write(&cfg, toml).unwrap();
        let o = cyclescope(t.path(), &["list", "--config", cfg.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(needle), "{}", text(&o));
    }
    // A config naming a CPU this process may not use is refused by `run` before any job.
    let cfg = t.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!("[settings]\ncpu = {NO_SUCH_CPU}\n{instance}digest_bits = 256\n"),
    )
    .unwrap();
    let o = cyclescope(
        t.path(),
        &[
            "run",
            "x",
            "--config",
            cfg.to_str().unwrap(),
            "--out",
            "r",
            "--allow-unfixed-host",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("measurement CPU: CPU 4095 is not one"),
        "{}",
        text(&o)
    );
    assert!(!t.path().join("r").exists());
}

#[test]
fn listing_a_library_that_crashes_when_loaded_names_the_library() {
    let t = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source(
        "hash-98",
        "boom256",
        256,
        "",
        "__attribute__((constructor)) static void boom(void) { *(volatile int *)16 = 1; }",
    );
    let lib = common::cc::build_library(t.path(), "boom256", &source);
    let o = cyclescope(t.path(), &["list", "--lib", lib.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    let want = format!("library {} crashed (SIGSEGV) in its worker", lib.display());
    assert!(text(&o).contains(&want), "{}", text(&o));
}
