//! `--two-threads`: a framed table hashed by two threads at once, the `reentrancy` check's
//! calls. The records are shared by parity (the even ones in this thread, the odd ones in a
//! second), each thread with buffers of its own, and both start together. Nothing is sent
//! until both have ended: then the digests, and the first change seen on each side, go out in
//! record order, as a one-thread framed table sends them. A record whose call returned
//! non-zero ends the job there; the other thread stops before the records past it, and
//! finishes those before it. A crash sends nothing, and the engine's check fails on it.

use core::ffi::{c_int, c_ulong, c_void};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::error;
use super::framed::{Change, Lane, Table, Unread, done, next, no_memory, send_wrote, unread};
use super::table::{Fault, Out};
use crate::sys;

/// What both threads share.
struct Shared<'t> {
    table: &'t Table,
    /// How many threads are ready: each waits for the other before its first call.
    started: AtomicU32,
    /// The first record that stopped a thread (the table's length while none has).
    end: AtomicU64,
    /// The digests, one slot a record; each thread writes only its own records' slots.
    digests: *mut u8,
}

/// Why a thread stopped before its last record.
#[derive(Debug, Clone, Copy)]
enum Stopped {
    Returned(c_int),
    Unread(Unread),
    Memory,
}

/// How one thread's records went: where it stopped, and the first change it saw on each side.
#[derive(Default)]
struct Ended {
    stop: Option<(u64, Stopped)>,
    message: Option<(u64, Change)>,
    digest: Option<(u64, Change)>,
}

/// The second thread's part, and where it leaves what it saw.
struct Second<'s, 't> {
    shared: &'s Shared<'t>,
    ended: Ended,
}

extern "C" fn second(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the `Second` that `run` made for this thread and keeps, unread and in
    // place, until it has joined the thread.
    let second = unsafe { &mut *arg.cast::<Second<'_, '_>>() };
    second.ended = lane(second.shared, 1);
    core::ptr::null_mut()
}

/// Hashes the records of parity `which` until the table or another thread's stop ends them.
fn lane(s: &Shared<'_>, which: u64) -> Ended {
    let t = s.table;
    let mut ended = Ended::default();
    let buffers = Lane::new(t);
    s.started.fetch_add(1, Ordering::AcqRel);
    while s.started.load(Ordering::Acquire) < 2 {
        core::hint::spin_loop();
    }
    let stop = |ended: &mut Ended, record: u64, why: Stopped| {
        ended.stop = Some((record, why));
        s.end.fetch_min(record, Ordering::AcqRel);
    };
    let Some(mut buffers) = buffers else {
        stop(&mut ended, which, Stopped::Memory);
        return ended;
    };
    let mut at = 0u64;
    for record in 0..t.count {
        if record >= s.end.load(Ordering::Acquire) {
            break;
        }
        if record % 2 != which {
            match next(t.fd, at) {
                Some(n) => at = n,
                None => {
                    stop(&mut ended, record, Stopped::Unread(Unread::Changed));
                    break;
                }
            }
            continue;
        }
        let watch = (ended.message.is_none(), ended.digest.is_none());
        let (hashed, n) = match buffers.hash(t, at, watch) {
            Ok(h) => h,
            Err(why) => {
                stop(&mut ended, record, Stopped::Unread(why));
                break;
            }
        };
        at = n;
        ended.message = ended.message.or(hashed.message.map(|c| (record, c)));
        ended.digest = ended.digest.or(hashed.digest.map(|c| (record, c)));
        if hashed.rc != 0 {
            stop(&mut ended, record, Stopped::Returned(hashed.rc));
            break;
        }
        let digest = buffers.digest();
        // SAFETY: the slot of `record` (below the table's length) in `digests`, which holds
        // `count` slots of `digest_len` bytes; only this thread writes it (its parity's
        // records), and `run` reads it only after both threads have ended.
        unsafe {
            let slot = s.digests.add(record as usize * t.digest_len);
            core::ptr::copy_nonoverlapping(digest.as_ptr(), slot, digest.len());
        }
    }
    ended
}

/// Runs table `t` in two threads, then sends what they saw through `out`.
pub(super) fn run(t: &Table, out: &mut Out<'_>) -> c_int {
    let ch = out.ch;
    let slots = usize::try_from(t.count)
        .ok()
        .and_then(|n| n.checked_mul(t.digest_len));
    let Some(digests) = slots.and_then(|n| sys::alloc_filled(n, 0)) else {
        return no_memory(ch);
    };
    let shared = Shared {
        table: t,
        started: AtomicU32::new(0),
        end: AtomicU64::new(t.count),
        digests: digests.as_mut_ptr(),
    };
    let mut odd = Second {
        shared: &shared,
        ended: Ended::default(),
    };
    let mut thread: c_ulong = 0;
    let arg = (&raw mut odd).cast::<c_void>();
    // SAFETY: `second` takes `arg`, a `Second` that lives on this stack until the join below;
    // the default attributes (a stack the C library maps).
    if unsafe { sys::pthread_create(&mut thread, core::ptr::null(), second, arg) } != 0 {
        return error(ch, "thread", b"cannot start the second thread");
    }
    let even = lane(&shared, 0);
    // SAFETY: the thread started above, joined once.
    if unsafe { sys::pthread_join(thread, core::ptr::null_mut()) } != 0 {
        return error(ch, "thread", b"cannot join the second thread");
    }
    let ends = [even, odd.ended];
    let end = shared.end.load(Ordering::Acquire);
    let first = |side: fn(&Ended) -> Option<(u64, Change)>| {
        ends.iter()
            .filter_map(side)
            .min_by_key(|&(record, _)| record)
            .filter(|&(record, _)| record <= end)
    };
    let (message, digest) = (first(|e| e.message), first(|e| e.digest));
    for record in 0..t.count.min(end.saturating_add(1)) {
        if let Some((_, change)) = message.filter(|&(r, _)| r == record) {
            send_wrote(ch, record, "message", change);
        }
        if let Some((_, change)) = digest.filter(|&(r, _)| r == record) {
            send_wrote(ch, record, "digest", change);
        }
        if record == end {
            break;
        }
        let at = record as usize * t.digest_len;
        out.push(&digests[at..at + t.digest_len]);
        out.flush(true);
    }
    let stop = ends
        .iter()
        .filter_map(|e| e.stop)
        .find(|&(record, _)| record == end);
    match stop {
        None => done(ch),
        Some((_, Stopped::Returned(rc))) => Fault::Returned(rc).send(out),
        Some((_, Stopped::Unread(why))) => unread(ch, why),
        Some((_, Stopped::Memory)) => no_memory(ch),
    }
}
