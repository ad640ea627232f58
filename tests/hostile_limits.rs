//! Candidates that reach for more than a hash needs: one reserves 1 TiB of address space and
//! touches it, one leaves a file of its own in the KAT output folder (the one folder it may
//! write), one writes a file larger than any KAT text. Every worker kind runs under an
//! address-space limit (64 MiB here, set through `config.toml`), a file-size limit and a
//! budget for its KAT folder; each death is named for the limit, and a foreign file voids the
//! KAT. The KAT worker's own 1 GiB message is refused under a 512 MiB limit, by name too.
//! Nothing here touches more than a few MiB.

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

#[test]
fn a_file_the_generator_did_not_write_voids_the_kat() {
    let t = tempfile::tempdir().unwrap();
    // The KAT worker runs in its KAT folder (<out>/katgen/<id>/<label>, for `kat --out k`
    // and `run --out r`), the one folder it may write.
    let lib = library(
        t.path(),
        "stash256",
        "static char block[100 * 1024]; \
         int fd = open(\"stash.bin\", O_WRONLY | O_CREAT | O_TRUNC, 0644); \
         if (fd >= 0) { write(fd, block, sizeof block); close(fd); }",
    );
    let o = kat(t.path(), &lib);
    assert_eq!(o.status.code(), Some(8), "TAMPERED: {}", text(&o));
    assert!(
        text(&o).contains("stash.bin (100 KiB), which the generator did not write"),
        "{}",
        text(&o)
    );
    // A run's KAT gate says the same, and `validate` names the file afterwards.
    let o = cyclescope(
        t.path(),
        &common::quick_run(lib.to_str().unwrap(), "r", false),
    );
    assert!(text(&o).contains("TAMPERED"), "{}", text(&o));
    let o = cyclescope(t.path(), &["validate", "r"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("stash.bin: a file the KAT generator does not write (100 KiB)"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_file_over_the_size_limit_kills_the_worker_by_name() {
    let t = tempfile::tempdir().unwrap();
    // 8 MiB, in 64 KiB writes: more than the largest KAT text of a 256-bit instance (2.4 MiB).
    let lib = library(
        t.path(),
        "big256",
        "int fd = open(\"big.bin\", O_WRONLY | O_CREAT | O_TRUNC, 0644); \
         static char block[64 * 1024]; \
         for (int i = 0; fd >= 0 && i < 128; i++) if (write(fd, block, sizeof block) < 0) break; \
         if (fd >= 0) close(fd);",
    );
    let o = kat(t.path(), &lib);
    assert_eq!(o.status.code(), Some(7), "CRASH: {}", text(&o));
    assert!(text(&o).contains("CRASH signal=SIGXFSZ"), "{}", text(&o));
    assert!(
        text(&o).contains("exceeded the 2.5 MiB file-size limit"),
        "{}",
        text(&o)
    );
    let big = t.path().join("k/katgen/hash-93/big256/big.bin");
    let size = std::fs::metadata(&big).unwrap().len();
    assert!(size < 3 << 20, "the file grew to {size} bytes");
    assert!(text(&o).contains("big.bin (2.5 MiB)"), "{}", text(&o));
}

/// The KAT worker's own 1 GiB message of KAT_2_33 under a 512 MiB limit: the allocation is
/// refused before any page is touched, and the crash is named for the limit even when a
/// backtrace (RUST_BACKTRACE) pushes the allocator's words out of the stderr tail.
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
        text(&o).contains("CRASH signal=SIGABRT in KAT_2_33_pseudoXOF-256.txt"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("exceeded the 512.0 MiB address-space limit"),
        "{}",
        text(&o)
    );
}
