//! The KAT and the digests the timed calls are held to, through the real binary, against
//! libraries that behave by job (issue 30): the KAT files are written with digests from the
//! program the timed calls run in, every KAT answer is asked again there in one job with the
//! reference digests, and SUPERCOP's checksums come from there too. C fixtures
//! (`tests/fixtures/hostile/*.c`) each behave one way; statuses and words are asserted, never
//! timings.

mod common;
use common::hostile as support;
use common::proof::{bound, run_failure_with};

use std::path::Path;

use support::*;

/// `cheat`'s run into folder `run` (labelled `label`, with `env` for its workers) against a
/// manifest of the honest fixture's KAT under that label (written once): the run's one
/// failure and what it printed.
fn run_against_honest_manifest(
    tmp: &Path,
    cheat: &str,
    label: &str,
    run: &str,
    env: &[(&str, &str)],
) -> (Option<String>, String) {
    let honest = build_fixture("proof_honest", tmp);
    let cheat = build_fixture(cheat, tmp);
    let manifest = tmp.join(format!("{label}.sha256"));
    if !manifest.is_file() {
        let kat_out = tmp.join(format!("{label}-kat"));
        let m = marker(&format!("{label}-manifest"));
        let _sweep = Sweep(m.clone());
        let write = [
            "kat",
            "--lib",
            path_str(&honest),
            "--label",
            label,
            "--digest-bits",
            "256",
            "--out",
            path_str(&kat_out),
            "--write-manifest",
            path_str(&manifest),
        ];
        let (o, _) = run_bounded(command(&write, &m, &[]), bound());
        assert!(manifest.is_file(), "{}", text(&o));
    }
    let out = tmp.join(run);
    let args = labelled_run(
        path_str(&cheat),
        label,
        path_str(&out),
        &[
            "--no-baselines",
            "--no-reference-jobs",
            "--manifest",
            path_str(&manifest),
        ],
    );
    run_failure_with(&format!("{label}-run"), &args, env)
}

/// A library that computes the proved function only in its KAT files' jobs (it finds their
/// words in memory): its KAT files match a manifest of the honest function; the conformance
/// checks (another program) and the job that asks the KAT's answers again (the same program,
/// other words) both see the other function, and the job is refused before any timing.
#[test]
fn a_library_right_only_in_its_kat_job_is_refused_by_a_known_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (failure, out) =
        run_against_honest_manifest(tmp.path(), "kat_job_only", "katonly", "run", &[]);
    // Its KAT files pass; the conformance checks, held to the vectors of the file the engine
    // wrote, find the other function too (`alignment`).
    assert!(out.contains("KAT katonly: NONCONFORM alignment"), "{out}");
    let failure = failure.unwrap_or_default();
    assert!(
        failure.starts_with("TAMPERED: the ") && failure.contains("outside its KAT job"),
        "{failure}\n{out}"
    );
}

/// The reference digests come from the job that asks the KAT's answers again: a library
/// right in every table job of the trial worker (the KAT files', the conformance checks' the
/// engine runs, the known answers') and wrong elsewhere passes its KAT and its known answers,
/// and its trials' digests then miss the reference (before, the reference came from a
/// one-call job, where it was as wrong as the trials, and the wrong function would have been
/// measured).
#[test]
fn a_library_right_only_in_table_jobs_misses_the_reference_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let (failure, out) =
        run_against_honest_manifest(tmp.path(), "table_jobs_only", "tablesonly", "run", &[]);
    assert!(out.contains("KAT tablesonly: PASS"), "{out}");
    let failure = failure.unwrap_or_default();
    assert!(
        failure.starts_with("CRYPTOFAIL: ")
            && failure.contains("differs from the one a separate worker computed before timing"),
        "{failure}\n{out}"
    );
}

/// Every answer of the KAT is held against the program the timed calls run in, not one drawn
/// at random: a library wrong at one length (1000 bits, or 2^23) outside its KAT job, right
/// wherever else it is asked, passes its KAT and is refused before any timing, that length
/// named.
#[test]
fn a_library_wrong_at_one_length_outside_its_kat_job_is_refused_by_the_known_answers() {
    let tmp = tempfile::tempdir().unwrap();
    // At a length of KAT_2_12's, and at KAT_2_23's (its three 1 MiB messages made again).
    for (bits, file) in [("1000", "KAT_2_12_"), ("8388608", "KAT_2_23_")] {
        let env = [("CYCLESCOPE_WRONG_BITS", bits)];
        let run = format!("run-{bits}");
        let (failure, out) =
            run_against_honest_manifest(tmp.path(), "kat_job_one_length", "onelength", &run, &env);
        assert!(out.contains("KAT onelength: PASS"), "{out}");
        let failure = failure.unwrap_or_default();
        assert!(
            failure.starts_with(&format!("TAMPERED: the {bits}-bit message of {file}"))
                && failure.contains("outside its KAT job"),
            "{failure}\n{out}"
        );
    }
}

/// Every worker starts with the same command line and reads its job from stdin: a library that
/// looks for `kat` on its command line never finds it, computes its cheap function in the KAT
/// job too, and fails the KAT against the manifest, never reaching a timed call. (Before jobs
/// came on stdin its KAT passed.)
#[test]
fn a_library_that_tells_its_kat_job_by_the_command_line_finds_no_kat_job() {
    let tmp = tempfile::tempdir().unwrap();
    let honest = build_fixture("proof_honest", tmp.path());
    let cheat = build_fixture("kat_cmdline_only", tmp.path());
    let manifest = tmp.path().join("kat.sha256");
    let m = marker("kat-cmdline-only");
    let _sweep = Sweep(m.clone());
    let kat = |lib: &Path, out: &str, extra: &[&str]| {
        let mut args = vec![
            "kat",
            "--lib",
            path_str(lib),
            "--label",
            "katonly",
            "--digest-bits",
            "256",
            "--out",
        ];
        let out = tmp.path().join(out);
        args.push(path_str(&out));
        args.extend_from_slice(extra);
        let (o, _) = run_bounded(command(&args, &m, &[]), bound());
        text(&o)
    };
    let wrote = kat(&honest, "k1", &["--write-manifest", path_str(&manifest)]);
    assert!(manifest.is_file(), "{wrote}");
    let out = kat(&cheat, "k2", &["--manifest", path_str(&manifest)]);
    assert!(out.contains("RESULT adhoc katonly MISMATCH"), "{out}");
    assert!(!out.contains("PASS"), "{out}");
}

/// The KAT files are written with digests from the program the timed calls run in: every
/// digest of `program_told`'s `KAT_2_12` and `KAT_2_23` is 0x5A bytes, its answer there
/// (before, the files came from the large program and held the library's other function's).
#[test]
fn kat_files_are_written_with_digests_from_the_program_the_timed_calls_run_in() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("program_told", tmp.path());
    let out = tmp.path().join("k");
    let m = marker("program-told-kat");
    let _sweep = Sweep(m.clone());
    let args = [
        "kat",
        "--lib",
        path_str(&lib),
        "--label",
        "told",
        "--digest-bits",
        "256",
        "--out",
        path_str(&out),
    ];
    let (o, _) = run_bounded(command(&args, &m, &[]), bound());
    let shown = text(&o);
    assert_none_left(&m);
    for (file, records) in [("KAT_2_12", 4097), ("KAT_2_23", 3)] {
        let name = format!("{file}_TOLD-256.txt");
        let kat = files_named(&out, &name)
            .first()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_else(|| panic!("no {name}\n{shown}"));
        let digests: Vec<&str> = kat
            .lines()
            .filter_map(|l| l.strip_prefix("Dst = "))
            .collect();
        assert_eq!(digests.len(), records, "{file}");
        assert!(
            digests.iter().all(|d| *d == "5A".repeat(32)),
            "{file}: {kat:.400}"
        );
    }
}

/// SUPERCOP's checksums come from the program the timed calls run in (one table job of the
/// trial worker): `program_told` answers 0x5A bytes there, so both checksums are a constant
/// function's (before, they came from the large program and were the library's other
/// function's). A library that writes into its message is named with that message's length.
#[test]
fn supercop_checksums_come_from_the_program_the_timed_calls_run_in() {
    use cyclescope_core::plugin::GuardedBuffer;
    use cyclescope_core::supercop::{self, BIG, ByteHash, SMALL};
    struct Constant;
    impl ByteHash for Constant {
        fn hash(&mut self, out: &mut GuardedBuffer, _: &GuardedBuffer, _: usize) -> i32 {
            out.data_mut().fill(0x5A);
            0
        }
        fn hash_in_place(&mut self, _: &mut GuardedBuffer, _: usize) -> Option<i32> {
            None
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let checksum = |name: &str| {
        let lib = build_fixture(name, tmp.path());
        let m = marker(&format!("checksum-{name}"));
        let _sweep = Sweep(m.clone());
        let args = [
            "supercop-checksum",
            "--lib",
            path_str(&lib),
            "--digest-bits",
            "256",
        ];
        let (o, _) = run_bounded(command(&args, &m, &[]), bound());
        assert_none_left(&m);
        o
    };
    let o = checksum("program_told");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let small = supercop::checksum(&mut Constant, 32, SMALL).unwrap();
    let big = supercop::checksum(&mut Constant, 32, BIG).unwrap();
    assert!(
        out.contains(&format!("checksumsmall {small}"))
            && out.contains(&format!("checksumbig   {big}")),
        "{out}"
    );
    // `proof_modify_input` writes into its message from its fifth call on (each message is
    // hashed twice): the first such message that has a byte is the one named.
    let o = checksum("proof_modify_input");
    let out = text(&o);
    let lengths = supercop::messages(SMALL)
        .iter()
        .map(Vec::len)
        .collect::<Vec<_>>();
    let written = (0..lengths.len())
        .find(|&i| 2 * i + 2 >= 5 && lengths[i] > 0)
        .map(|i| lengths[i])
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!(
            "FAILED: the hash function changed its input ({written}-byte message)"
        )),
        "{out}"
    );
}
