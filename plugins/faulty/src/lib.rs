//! Fault-injection fixture for cyclescope's tests: a `CryptHash` library that computes
//! pseudoXOF correctly at any width unless the environment variable `FAULTY_MODE` tells it to
//! misbehave. It exists to prove that cyclescope contains and names candidate faults; it must
//! never be listed or measured as a real candidate.
//!
//! Grammar: `FAULTY_MODE=<mode>[@<msg_bytes>]`. With `@N` the fault fires only on calls with
//! `msg_len_bits == 8·N`; every other call is correct. Unset or empty: always correct. An
//! unknown value makes every call return -3 (after one line on stderr) so a typo cannot pass
//! for a working library. The variable is read once, at the first call.
//!
//! | mode | behaviour |
//! |---|---|
//! | `segv` | writes through an invalid pointer (address 16): SIGSEGV |
//! | `abort` | `std::process::abort()`: SIGABRT |
//! | `hang` | names its thread `faulty-hang`, then loops forever (only a timeout ends it) |
//! | `error` | returns -3 (`HASH_FAILED`) |
//! | `overflow` | correct digest, then writes 16 bytes past its end, and returns 0 |
//! | `wrong` | correct digest with the first byte flipped (XOR 0xFF) |
//! | `stdout` | prints to stdout (including a line that looks like worker protocol) and stderr, then computes correctly |
//! | `exit` | `std::process::exit(3)` |
//! | `slow` | correct, after sleeping 2 ms |

pub mod mode;

/// The name a thread takes when it starts to hang (what `/proc/PID/comm` then shows).
pub const HANG_NAME: &std::ffi::CStr = c"faulty-hang";

use core::ffi::{c_int, c_ulonglong};
use std::sync::OnceLock;
use std::time::Duration;

use iccs_sm3::ffi::crypt_hash_via;
use iccs_sm3::iccs::{HASH_FAILED, HASH_SUCCESS, pseudo_xof};
use iccs_sm3::meta::{NgccMetaCommon, NgccMetaHash, c_field, iccs_meta};

pub use mode::{Fault, Trigger, parse};

static META: NgccMetaHash = {
    let mut m = iccs_meta("faulty", 0);
    m.h.id = c_field("fixture");
    m.h.algorithm = c_field("fault-injection fixture");
    m.h.variant = c_field("fixture");
    m
};

/// `FAULTY_MODE`, parsed once.
fn trigger() -> &'static Result<Option<Trigger>, String> {
    static MODE: OnceLock<Result<Option<Trigger>, String>> = OnceLock::new();
    MODE.get_or_init(|| {
        let parsed = parse(&std::env::var("FAULTY_MODE").unwrap_or_default());
        if let Err(e) = &parsed {
            eprintln!("faulty: {e}");
        }
        parsed
    })
}

fn xof(bits: u32, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    pseudo_xof(u64::from(bits), msg, msg_bits, out)
}

fn xof_flipped(bits: u32, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    let rc = xof(bits, msg, msg_bits, out);
    if rc == HASH_SUCCESS
        && let Some(first) = out.first_mut()
    {
        *first ^= 0xFF;
    }
    rc
}

/// `int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest)`:
/// pseudoXOF, or the fault `FAULTY_MODE` asks for.
///
/// # Safety
/// The ICCS API contract (see [`crypt_hash_via`]); in `overflow` mode the 16 bytes after the
/// digest must be writable too (cyclescope's guard bytes), which is the fault being injected.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CryptHash(
    digest_len_bits: c_int,
    msg: *const u8,
    msg_len_bits: c_ulonglong,
    digest: *mut u8,
) -> c_int {
    let fault = match trigger() {
        Err(_) => return HASH_FAILED,
        Ok(t) => t.filter(|t| t.fires_for(msg_len_bits)).map(|t| t.fault),
    };
    // SAFETY (every call below): the caller keeps the ICCS API contract, crypt_hash_via's.
    let correct =
        |hash| unsafe { crypt_hash_via(hash, digest_len_bits, msg, msg_len_bits, digest) };
    match fault {
        None => correct(xof),
        Some(Fault::Segv) => {
            let bad = std::ptr::with_exposed_provenance_mut::<u32>(16);
            // SAFETY: none: this is the injected crash. Address 16 lies in the never-mapped
            // zero page, so the write faults; volatile keeps the optimiser from removing it.
            unsafe { std::ptr::write_volatile(bad, 0xDEAD) };
            HASH_FAILED
        }
        Some(Fault::Abort) => std::process::abort(),
        Some(Fault::Hang) => {
            // The thread's name says so (`/proc/PID/comm`): how a test finds the process that
            // hangs, since no worker's command line names its job.
            // SAFETY: PR_SET_NAME copies at most 16 bytes from a NUL-terminated static string.
            unsafe { libc::prctl(libc::PR_SET_NAME, HANG_NAME.as_ptr()) };
            let mut spins = 0u64;
            loop {
                spins = std::hint::black_box(spins.wrapping_add(1));
            }
        }
        Some(Fault::Error) => HASH_FAILED,
        Some(Fault::Overflow) => {
            let rc = correct(xof);
            if rc == HASH_SUCCESS && !digest.is_null() {
                let end = usize::try_from(digest_len_bits).unwrap_or(0).div_ceil(8);
                for i in 0..16 {
                    // SAFETY: none by the ICCS contract: this is the injected overflow. It
                    // lands in the guard bytes cyclescope keeps after every digest buffer.
                    unsafe { std::ptr::write_volatile(digest.wrapping_add(end + i), 0x5A) };
                }
            }
            rc
        }
        Some(Fault::Wrong) => correct(xof_flipped),
        Some(Fault::Stdout) => {
            println!("faulty: candidate chatter on stdout");
            println!(r#"{{"t":"digest","rc":0,"hex":"00","overflow":false}}"#);
            eprintln!("faulty: candidate chatter on stderr");
            correct(xof)
        }
        Some(Fault::Exit) => std::process::exit(3),
        Some(Fault::Slow) => {
            std::thread::sleep(Duration::from_millis(2));
            correct(xof)
        }
    }
}

/// `const ngcc_meta_t *ngcc_meta(void)`: id "fixture", instance "faulty", any width.
#[unsafe(no_mangle)]
pub extern "C" fn ngcc_meta() -> *const NgccMetaCommon {
    core::ptr::addr_of!(META).cast()
}
