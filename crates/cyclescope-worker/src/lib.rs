//! `cyclescope-worker`, the trial process: one candidate library measured by the engine's
//! method, in a program that links nothing but the C library, so that the resident memory
//! the pages publish for a trial (baseline and peak RSS) is the candidate's and not the
//! tool's. No `std`, no allocator, no unwinding: its memory is its stack, the buffers it
//! `malloc`s for the measurement, and what the candidate brings. It runs only as a child of
//! the engine, which starts it as `cyclescope-worker worker` whatever the job, writes a session
//! token and then the job (the arguments of `measure::trial_args`, `worker::job_block`) on its
//! stdin, and reads its protocol lines; everything it reports is checked there.
//!
//! This library is the whole program but its C entry point (`main.rs`). `cyclescope-core`'s
//! `build.rs` compiles both with `rustc -C panic=abort` (Cargo cannot give one binary of a
//! workspace its own panic strategy) and carries the program inside the engine like the
//! bundled libraries; the engine's tests link this library (a dev-dependency) to hold its
//! modules against the engine's side of each interface, which is what the `pub` items here
//! are for.

#![cfg_attr(not(test), no_std)]

pub mod args;
pub mod counter;
mod guarded;
pub mod json;
pub mod library;
pub mod procfs;
pub mod proof;
mod sampler;
pub mod sandbox;
pub mod setup;
mod sys;
mod text;
pub mod trial;

/// The layout of the perf_event the counters open, the engine's own.
pub use cyclescope_counter_raw::perf_attr;

use core::ffi::{c_char, c_int};
use core::fmt::Write;

/// The program: set up, sandbox, read the job, measure. Returns the exit code. Its command
/// line is the same for every job (`worker`) and is not read.
///
/// # Safety
/// Called once, as `main`.
pub unsafe fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    // The system-call filter the engine handed over, read before setup closes its descriptor.
    let mut filters = sandbox::FilterBytes::new();
    let (ch, in_force) = match sandbox::take_filters(&mut filters)
        .and_then(|()| setup::enter())
        .and_then(|ch| sandbox::install(&filters).map(|f| (ch, f)))
    {
        Ok(pair) => pair,
        Err(e) => return fail(format_args!("{e}")),
    };
    let mut job = [0u8; setup::JOB_BYTES];
    let words = match setup::read_job(&mut job) {
        Ok(w) => w,
        Err(e) => return fail(format_args!("{e}")),
    };
    let inv = match args::parse(args::words(words)) {
        Ok(inv) => inv,
        Err(e) => return fail(format_args!("{e}")),
    };
    if let Err(e) = setup::limit(&inv) {
        return fail(format_args!("{e}"));
    }
    trial::run(&inv, &ch, in_force)
}

/// `cyclescope worker: <why>` on stderr; exit code 2.
fn fail(why: core::fmt::Arguments<'_>) -> c_int {
    let mut buf = [0u8; 1024];
    let mut w = text::ByteWriter::new(&mut buf);
    let _ = w.write_fmt(format_args!("cyclescope worker: {why}\n"));
    sys::write_all(2, w.written());
    2
}

/// Ends the process at once: the program's panic handler (a panic here is a bug in this
/// program, never the candidate's doing).
pub fn abort() -> ! {
    // SAFETY: abort() takes nothing and never returns.
    unsafe { sys::abort() }
}
