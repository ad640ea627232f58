//! What cyclescope's engine (`cyclescope-core`'s `counter`) and its `no_std` trial worker
//! (`cyclescope-worker`) must read the same way, in one place both link: the architecture's
//! reference counter (`reference`) and the `perf_event_attr` the cycle counter is opened with
//! (`perf_attr`). Raw reads and plain layouts only: it opens nothing, makes no system call
//! and judges no figure — which source a count is, and whether it is one, is decided by its
//! users. `core` alone, no dependencies, so that `cyclescope-core`'s build script can compile
//! it with rustc for the worker (panic=abort) as Cargo compiles it for the engine.

#![no_std]

pub mod perf_attr;
pub mod reference;
