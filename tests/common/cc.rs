//! Small C libraries written for a test and built with the system's `cc` at test time: the
//! hostile candidates (odd metadata, forbidden system calls) are easiest to say in C, and a
//! real compiler and a real `dlopen` are what a submitter's library goes through. A missing
//! `cc` fails the test with the reason; it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A `candidate_source` body that reads every byte of the message into a sink the compiler must
/// keep: a library that skips its message is refused as IMPLAUSIBLE at long lengths (more bytes
/// per nanosecond than a core can load), so a test timing megabytes needs one that reads them.
pub const READ_WHOLE_MESSAGE: &str = "static volatile unsigned char sink; unsigned char acc = 0; \
    for (unsigned long long i = 0; i < (msg_len_bits + 7) / 8; i++) acc ^= msg[i]; sink = acc;";

/// The `ngcc_meta` block and a `CryptHash` that writes a fixed pattern (enough to load, list,
/// KAT-check and time). `prelude` is inserted before them; `body` runs first in `CryptHash`.
pub fn candidate_source(
    id: &str,
    instance: &str,
    digest_bits: u64,
    body: &str,
    prelude: &str,
) -> String {
    format!(
        r#"#include <stdint.h>
#include <string.h>
{prelude}
typedef struct {{
    uint32_t magic, abi, type, struct_size;
    char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64], build_flags[128];
}} ngcc_meta_common_t;
typedef struct {{ ngcc_meta_common_t h; uint64_t digest_bits, digest_len; }} ngcc_meta_hash_t;
static const ngcc_meta_hash_t META = {{
    {{ 0x4347474Eu, 1, 4, sizeof(ngcc_meta_hash_t), "{id}", "hostile fixture", "{instance}",
       "fixture", "tests", "cc", "-O1" }},
    {digest_bits}u, {digest_bits}u / 8u
}};
const ngcc_meta_hash_t *ngcc_meta(void) {{ return &META; }}
int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest) {{
    {body}
    (void)msg; (void)msg_len_bits;
    memset(digest, 0x5a, (size_t)digest_len_bits / 8);
    return 0;
}}
"#
    )
}

/// Compiles `source` into `dir/lib<name>.so` with `cc -shared -fPIC -O1`.
pub fn build_library(dir: &Path, name: &str, source: &str) -> PathBuf {
    build_library_with(dir, name, source, &["-O1"])
}

/// [`build_library`] with these compiler flags instead of `-O1` (`-g` for debug information).
pub fn build_library_with(dir: &Path, name: &str, source: &str, flags: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).expect("write the C source");
    let lib = dir.join(format!("lib{name}.so"));
    let out = Command::new("cc")
        .args(["-shared", "-fPIC"])
        .args(flags)
        .arg("-o")
        .arg(&lib)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test builds a C fixture library and needs a C compiler `cc` on PATH: {e}")
        });
    assert!(
        out.status.success(),
        "cc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}
