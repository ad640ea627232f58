//! The root of the `cyclescope-worker` program (the library of this crate is the rest of it):
//! no `std`, C's `main`, and a panic that aborts (a panic here is a bug in this program, never
//! the candidate's doing). Not a Cargo target (`autobins = false`): `cyclescope-core`'s
//! `build.rs` compiles it with panic=abort against the library it compiled the same way.

#![no_std]
#![no_main]

use core::ffi::{c_char, c_int};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    cyclescope_worker::abort()
}

/// # Safety
/// Called by the C runtime with the process's arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: the C runtime passes `argc` valid argument strings.
    unsafe { cyclescope_worker::main(argc, argv) }
}

/// The precompiled `core` carries unwind tables that name this symbol; with `panic=abort`
/// nothing ever unwinds, so it is never called.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}
