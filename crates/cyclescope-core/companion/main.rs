//! The root of the `cyclescope-worker` program (see `worker.rs`): no `std`, C's `main`, and a
//! panic that aborts (a panic here is a bug in this program, never the candidate's doing).

#![no_std]
#![no_main]

#[path = "worker.rs"]
mod worker;

use core::ffi::{c_char, c_int};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: abort() takes nothing and never returns.
    unsafe { worker::sys::abort() }
}

/// # Safety
/// Called by the C runtime with the process's arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: the C runtime passes `argc` valid argument strings.
    unsafe { worker::main(argc, argv) }
}

/// The precompiled `core` carries unwind tables that name this symbol; with `panic=abort`
/// nothing ever unwinds, so it is never called.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}
