//! The trial process is `cyclescope-worker`, a `no_std` program that links the C library and
//! nothing else, so a record's baseline and peak RSS describe the candidate rather than the
//! tool. A real run places it in the cache and measures with it; this reads the placed program
//! back: its dynamic dependencies, its symbols, its permissions. The figures themselves are
//! `bench/worker_rss.py`'s job.

mod common;

use std::path::{Path, PathBuf};

use object::read::elf::{Dyn, ElfFile64, FileHeader};
use object::{Object, ObjectSymbol};

/// Runs one short measurement of a bundled instance with its own cache folder; the run's
/// records and the cache.
fn measure_once(dir: &Path) -> (Vec<serde_json::Value>, PathBuf) {
    let cache = dir.join("cache");
    let out = common::cyclescope()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CYCLESCOPE_CACHE_DIR", &cache)
        .args([
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "64",
            "--trials",
            "2",
        ])
        .args(["--trial-target", "0.01", "--allow-unfixed-host", "--out"])
        .arg(dir.join("run"))
        .output()
        .expect("running cyclescope");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut records = Vec::new();
    let mut stack = vec![dir.join("run/records")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                records.push(serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap());
            }
        }
    }
    (records, cache)
}

/// The libraries an ELF file names as DT_NEEDED.
fn needed(data: &[u8]) -> Vec<String> {
    let elf = ElfFile64::<object::Endianness>::parse(data).unwrap();
    let endian = elf.endian();
    let sections = elf.elf_header().sections(endian, data).unwrap();
    let (entries, link) = sections
        .dynamic(endian, data)
        .unwrap()
        .expect("a dynamic section");
    let strings = sections.strings(endian, data, link).unwrap();
    entries
        .iter()
        .filter(|d| d.d_tag(endian) == u64::from(object::elf::DT_NEEDED))
        .map(|d| String::from_utf8_lossy(d.string(endian, strings).unwrap()).into_owned())
        .collect()
}

#[test]
fn trials_run_in_the_libc_only_worker() {
    let dir = tempfile::tempdir().unwrap();
    let (records, cache) = measure_once(dir.path());
    assert!(!records.is_empty());
    for r in &records {
        assert_eq!(r["cyclescope"]["worker"], "cyclescope-worker", "{r}");
        assert_eq!(r["status"], "complete", "{r}");
        let baseline: u64 = r["processes"][0]["meta"]["baseline_rss_bytes"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("a baseline RSS");
        assert!(baseline > 0, "{r}");
        // Root on a machine with cgroups (CI): the peak its workers' control groups saw, read
        // from outside, beside the harness's self-reported peak RSS.
        if nix::unistd::geteuid().is_root() && Path::new("/sys/fs/cgroup").exists() {
            let peak = r["cyclescope"]["peak_memory_bytes"].as_u64().unwrap_or(0);
            assert!(peak > 0, "{r}");
            // And the KAT worker's, which this run ran (the journal is the test's own).
            let kat = &r["cyclescope"]["kat_worker"];
            assert!(
                kat["peak_memory_bytes"].as_u64().unwrap_or(0) > 1 << 20,
                "{r}"
            );
            if common::cgroup_cpu_accounted() {
                assert!(kat["cpu_time_s"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
            }
        }
        // The CPU time of all its trial workers, by their groups: more than none, and no more
        // than the processes were alive (one thread measures; the rest only wait).
        if common::cgroup_cpu_accounted() {
            let cpu = r["cyclescope"]["cpu_time_s"].as_f64().unwrap_or(0.0);
            let wall: f64 = r["processes"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["wall_s"].as_f64())
                .sum();
            assert!(
                cpu > 0.0 && cpu <= wall * 1.05 + 0.05,
                "cpu {cpu} s, wall {wall} s: {r}"
            );
        }
    }
    let placed: Vec<PathBuf> = std::fs::read_dir(cache.join("bundled"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("cyclescope-worker"))
        .filter(|p| p.is_file())
        .collect();
    let [worker] = &placed[..] else {
        panic!("one trial worker expected in the cache: {placed:?}")
    };
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(worker).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "owner-only, runnable");

    let data = std::fs::read(worker).unwrap();
    let libs = needed(&data);
    assert_eq!(
        libs,
        ["libc.so.6"],
        "{} links more than the C library",
        worker.display()
    );
    let file = object::File::parse(&*data).unwrap();
    let names: Vec<&str> = file.symbols().filter_map(|s| s.name().ok()).collect();
    assert!(
        names.iter().any(|n| n.contains("cyclescope_worker")),
        "the symbol table names none of the worker's items: the checks below would prove nothing"
    );
    for foreign in ["3std", "5alloc", "serde", "clap", "ratatui"] {
        let found: Vec<&&str> = names
            .iter()
            .filter(|n| n.contains(foreign))
            .take(3)
            .collect();
        assert!(found.is_empty(), "the worker links {foreign}: {found:?}");
    }
    // The main program does link std: the test can tell the two apart.
    let main = std::fs::read(env!("CARGO_BIN_EXE_cyclescope")).unwrap();
    assert!(needed(&main).iter().any(|l| l.starts_with("libgcc_s")));
}
