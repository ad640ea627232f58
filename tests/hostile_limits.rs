//! Candidates that reach for more than a hash needs: one reserves 1 TiB of address space and
//! touches it, one tries to leave a file of its own in the KAT output folder. Every worker kind
//! runs under an address-space limit (64 MiB here, set through `config.toml`), and no worker of
//! a KAT job may write; a death is named for the limit. The trial worker's 1 GiB message of
//! `KAT_2_33` is refused under a 512 MiB limit, by name too. Nothing here touches more than a
//! few MiB.

mod common;

use std::path::{Path, PathBuf};

use common::{cyclescope_in as cyclescope, output_text as text};

/// A library whose first `CryptHash` call runs `first_call` (C statements).
fn library(dir: &Path, name: &str, first_call: &str) -> PathBuf {
    let body = format!("static int done; if (!done) {{ done = 1; {first_call} }}");
    let prelude = "#include <fcntl.h>\n#include <stdio.h>\n#include <sys/mman.h>\n\
                   #include <unistd.h>";
    let source = common::cc::candidate_source("hash-93", name, 256, &body, prelude);
    common::cc::build_library(dir, name, &source)
}

fn kat(dir: &Path, lib: &Path) -> std::process::Output {
    cyclescope(dir, &["kat", "--lib", lib.to_str().unwrap(), "--out", "k"])
}

#[test]
fn a_reservation_beyond_the_address_space_limit_is_refused_and_named() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("config.toml"),
        "[settings]\nmax_address_space_mib = 64\n",
    )
    .unwrap();
    // Without a limit the reservation succeeds (no page is committed but the two it touches).
    let lib = library(
        t.path(),
        "reserve256",
        "char *p = mmap(0, 1ULL << 40, PROT_READ | PROT_WRITE, \
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0); \
         if (p == MAP_FAILED) perror(\"fixture mmap\"); \
         p[0] = 1; p[1 << 30] = 1; \
         munmap(p, 1ULL << 40);",
    );
    let named = "exceeded the 64.0 MiB address-space limit";
    let o = kat(t.path(), &lib);
    assert_eq!(o.status.code(), Some(7), "CRASH: {}", text(&o));
    assert!(text(&o).contains("CRASH signal=SIGSEGV"), "{}", text(&o));
    assert!(text(&o).contains(named), "{}", text(&o));
    let o = cyclescope(
        t.path(),
        &common::quick_run(lib.to_str().unwrap(), "r", true),
    );
    assert!(text(&o).contains(" measured, 1 failed"), "{}", text(&o));
    assert!(text(&o).contains(named), "{}", text(&o));
}

/// No worker of a KAT job can write a file: the trial worker that makes every call of the
/// files writes nowhere, and the conformance worker, whose working folder is the KAT folder,
/// may only read it. A library that leaves a file of its own there (or in the engine's folder)
/// on its first call in each process leaves none, and the KAT and the run's gate are not
/// voided by one (before, the KAT worker wrote the files and could add its own).
#[test]
fn no_worker_of_a_kat_job_can_leave_a_file() {
    let t = tempfile::tempdir().unwrap();
    let lib = library(
        t.path(),
        "stash256",
        "static char block[100 * 1024]; \
         int fd = open(\"stash.bin\", O_WRONLY | O_CREAT | O_TRUNC, 0644); \
         if (fd >= 0) { write(fd, block, sizeof block); close(fd); }",
    );
    let o = kat(t.path(), &lib);
    assert!(!text(&o).contains("TAMPERED"), "{}", text(&o));
    assert!(text(&o).contains("RESULT "), "{}", text(&o));
    assert_eq!(
        common::hostile::files_named(t.path(), "stash.bin"),
        Vec::<PathBuf>::new()
    );
    let o = cyclescope(
        t.path(),
        &common::quick_run(lib.to_str().unwrap(), "r", false),
    );
    assert!(!text(&o).contains("TAMPERED"), "{}", text(&o));
    assert_eq!(
        common::hostile::files_named(t.path(), "stash.bin"),
        Vec::<PathBuf>::new()
    );
    let o = cyclescope(t.path(), &["validate", "r"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The trial worker's 1 GiB message of KAT_2_33 under a 512 MiB limit (`kat`'s own flag
/// reaches the workers that make the files): the allocation is refused before any page is
/// touched, and the crash is named for the limit.
#[test]
fn the_kat_workers_own_allocation_refused_at_the_limit_is_named() {
    let t = tempfile::tempdir().unwrap();
    let o = common::cyclescope()
        .args([
            "kat",
            "pseudoXOF-256",
            "--full",
            "--max-address-space-mib",
            "512",
            "--out",
            "k",
        ])
        .env("RUST_BACKTRACE", "1")
        .current_dir(t.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(7), "CRASH: {}", text(&o));
    assert!(
        text(&o).contains("CRASH the trial worker could not allocate the message"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains(" in KAT_2_33_pseudoXOF-256.txt"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("exceeded the 512.0 MiB address-space limit"),
        "{}",
        text(&o)
    );
}
