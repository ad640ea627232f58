//! One trial process's measurement, the engine's method (`measure::trial` describes it from
//! the parent's side): load the library, prepare the harness's message
//! (`msg[i] = (u8)(131·i + len)`) and the digest buffer inside guard bytes, record baseline
//! RSS, open the counters, report `ready`; run the warm-ups; then per trial (1) the guide's
//! bare loop of ITERS calls between the loop counter's readings and CLOCK_MONOTONIC_RAW,
//! nothing else inside it, and (2) the per-call phase with serialised stamps, sent in batches;
//! finally `done` with the peak RSS. A non-zero return, a broken guard or a message that is no
//! longer the one prepared (checked after the warm-ups and after each phase, never inside a
//! timed loop) ends it with a fault. Each `trial` carries the digest of its loop's last call,
//! for the engine to hold against a separate worker's. With `--fresh` it is the fresh-message
//! probe instead: after `ready` it waits for the seed on stdin (the engine starts its clock on
//! this process as it sends it), then each call of a trial hashes a message of its own
//! (`proof::Fresh`), laid one after another in one allocation, and every call's digest is
//! reported (`digests`) for the engine to spot-check. With `--message-fd` the message is the
//! engine's (a reference digest, a known answer, `cyclescope hash`: one call, no warm-up), read
//! from a descriptor and checked against it. The calls and their loops are `call`'s, the lines
//! sent `messages`'.

use core::ffi::c_int;

mod call;
mod chain;
mod framed;
mod messages;
mod table;
mod together;

pub use super::proof::fill_harness_message;
pub use call::Call;
use call::{cyclescope_counted_calls, cyclescope_warmup_calls};
use messages::send_digests;
pub(crate) use messages::send_instructions_unavailable;
pub use messages::{
    TrialFigures, error, send_counter_fault, send_cryptofail, send_input_changed, send_overflow,
    send_ready, send_trial,
};

use super::args::Invocation;
use super::counter::{self, LoopCounter, Witness};
use super::guarded::Guarded;
use super::json::Channel;
use super::library::{self, Entry, LoadError};
use super::procfs;
use super::proof::{self, Fresh, Probe};
use super::sampler::Sampler;
use super::sandbox::InForce;
use super::setup::MESSAGE_FD;
use super::sys;

/// Samples per batch message, and the longest a batch waits (ns).
const BATCH_SAMPLES: usize = 4096;
const BATCH_INTERVAL_NS: u64 = 25_000_000;
/// Exit codes: measured to the end, could not measure, the candidate misbehaved.
const EXIT_DONE: c_int = 0;
const EXIT_ERROR: c_int = 2;
const EXIT_FAULT: c_int = 3;

/// Runs the invocation and reports on `ch`; the process's exit code.
pub(crate) fn run(inv: &Invocation<'_>, ch: &Channel, in_force: InForce) -> c_int {
    // The loop-only probe loads nothing: its process holds no candidate code.
    let opened = match inv.loop_only {
        true => Ok(library::loop_only()),
        false => library::open(inv.library, inv.supercop),
    };
    let lib = match opened {
        Ok(l) => l,
        Err(LoadError::Dlopen(detail)) => return error(ch, "load", detail),
        Err(LoadError::Symbol) => return error(ch, "symbol", b""),
    };
    // A table is read message by message from its descriptor (`table`): no copy of it here.
    let Ok(msg_len) = usize::try_from(if inv.table { 0 } else { inv.input_bytes }) else {
        return error(
            ch,
            "memory",
            b"the message length does not fit this machine",
        );
    };
    // The probe lays its messages one after another, each hashed once per trial; its twin
    // hashes one.
    let body = inv.fresh_seed.map(|seed| Probe {
        body: Fresh::new(seed),
        heads: 0,
        repeat: inv.repeat,
    });
    let count = match body {
        Some(_) => proof::pool_messages(inv.input_bytes, inv.iterations),
        None => 1,
    };
    if body.is_some() && count < inv.iterations {
        return error(ch, "memory", b"the probe's messages do not fit its pool");
    }
    let digest_len = (inv.digest_bits as usize).div_ceil(8);
    let bytes_of = |n: u64| usize::try_from(n).ok().and_then(|n| msg_len.checked_mul(n));
    let pool_len = bytes_of(if body.is_some_and(|p| !p.repeat) {
        count
    } else {
        1
    });
    // The twin reads a pool like the probe's before each call, and hashes its one message.
    let Ok(mut shadow) = proof::twin_shadow(body, bytes_of(count)) else {
        return error(ch, "memory", b"cannot allocate the twin's pool");
    };
    let buffers = match inv.offsets {
        None => pool_len
            .and_then(Guarded::new)
            .zip(Guarded::new(digest_len)),
        Some((m, d)) => pool_len
            .and_then(|len| Guarded::at_offset(len, m))
            .zip(Guarded::at_offset(digest_len, d)),
    };
    let Some((mut msg, mut digest)) = buffers else {
        return error(
            ch,
            "memory",
            b"cannot allocate the message and digest buffers",
        );
    };
    // The probe's first trial's messages but their heads: written now, out of the engine's
    // clock, page faults and all.
    match body {
        None if inv.message_fd => {
            if !proof::read_message(MESSAGE_FD, msg.data_mut()) {
                return error(
                    ch,
                    "memory",
                    b"the engine's message is shorter than --bytes",
                );
            }
        }
        None => fill_harness_message(msg.data_mut(), inv.input_bytes),
        Some(p) => p.fill_body(0, msg.data_mut()),
    }
    let probe_digests = match inv.fresh_seed {
        None => None,
        Some(_) => match usize::try_from(inv.iterations)
            .ok()
            .and_then(|n| n.checked_mul(digest_len))
            .and_then(|len| sys::alloc_filled(len, 0))
        {
            Some(buf) => Some(buf),
            None => return error(ch, "memory", b"cannot allocate the probe's digests"),
        },
    };
    let baseline_rss_bytes = procfs::resident_bytes();
    let (mut loop_counter, refusal) = if inv.hw_instructions {
        match LoopCounter::open_instructions(inv.pmu_type) {
            Ok(c) => (c, None),
            Err(why) => return send_instructions_unavailable(ch, why),
        }
    } else {
        LoopCounter::open(inv.pmu_type)
    };
    let witness = Witness::open(&loop_counter, inv.cpu);
    let overhead = counter::timer_overhead();
    let entry: *const core::ffi::c_void = match lib.entry {
        Entry::Iccs(f) => f as *const core::ffi::c_void,
        Entry::Supercop(f) => f as *const core::ffi::c_void,
    };
    let mut sampler = match inv.sample_period_ns {
        None => None,
        Some(ns) => match Sampler::open(inv.pmu_type, ns, entry) {
            Some(s) => Some(s),
            None => return error(ch, "sampler", b"no perf_event sampling event opens here"),
        },
    };
    let call = Call {
        entry: lib.entry,
        digest_bits: c_int::try_from(inv.digest_bits).unwrap_or(c_int::MAX),
        msg: msg.ptr(),
        msg_bits: inv.message_bits.unwrap_or(inv.input_bytes.wrapping_mul(8)),
        digest: digest.ptr(),
    };
    // The probe warms up before `ready`, on its first message but for the head, so that first
    // calls (lazy binding, page faults, an emulator's translation) fall outside the engine's
    // clock; no digest of a probe message can be known before the heads come.
    if let Some(p) = body {
        for _ in 0..inv.warmups {
            let rc = call.call_n(1);
            if !(msg.intact() && digest.intact()) {
                send_overflow(ch);
                return EXIT_FAULT;
            }
            if let Some(offset) = p.body_differs(0, msg.data()) {
                send_input_changed(ch, offset as u64);
                return EXIT_FAULT;
            }
            if rc != 0 {
                send_cryptofail(ch, rc);
                return EXIT_FAULT;
            }
        }
    }
    send_ready(
        ch,
        &lib,
        baseline_rss_bytes,
        &loop_counter,
        refusal,
        overhead,
        in_force,
    );
    // A table job hashes the engine's messages one by one (`table`), and times nothing.
    if inv.table && inv.framed {
        return framed::run(inv, ch, lib.entry, MESSAGE_FD);
    }
    if inv.table {
        return table::run(inv, ch, lib.entry, MESSAGE_FD);
    }
    // So does a chain (`chain`), on the engine's message read above.
    if inv.chain {
        return chain::run(inv, ch, lib.entry, &mut msg, &mut digest);
    }
    let fresh = match body {
        None => None,
        Some(body) => match super::setup::read_go_line() {
            Some(heads) => {
                let p = Probe { heads, ..body };
                p.toggle_heads(msg.data_mut(), msg_len);
                if let Some(buf) = shadow.as_deref_mut() {
                    p.shadow().toggle_heads(buf, msg_len);
                }
                Some(p)
            }
            None => return error(ch, "go", b"no seed arrived on stdin after ready"),
        },
    };
    let mut probe_digests = probe_digests;

    // After every phase, outside the timed loop: the guards, then the message, then the
    // return code.
    let check = |rc: c_int, msg: &mut Guarded, digest: &Guarded, state: Option<(Probe, u64)>| {
        if !(msg.intact() && digest.intact()) {
            send_overflow(ch);
            return Some(EXIT_FAULT);
        }
        let changed = match state {
            None if inv.message_fd => proof::message_differs(MESSAGE_FD, msg.data()),
            None => proof::harness_message_differs(msg.data(), inv.input_bytes),
            Some((p, trial)) => p.differs(trial, msg.data_mut(), msg_len),
        };
        if let Some(offset) = changed {
            send_input_changed(ch, offset as u64);
            return Some(EXIT_FAULT);
        }
        (rc != 0).then(|| {
            send_cryptofail(ch, rc);
            EXIT_FAULT
        })
    };
    let warmups = if fresh.is_some() { 0 } else { inv.warmups };
    for _ in 0..warmups {
        let rc = if inv.count {
            cyclescope_warmup_calls(&call)
        } else {
            call.call_n(1)
        };
        if let Some(code) = check(rc, &mut msg, &digest, fresh.map(|p| (p, 0))) {
            return code;
        }
    }
    let mut batch: Option<&'static mut [u8]> = None;
    for trial in 0..inv.trials {
        let state = fresh.map(|p| (p, u64::from(trial)));
        if let Some((p, t)) = state.filter(|&(_, t)| t > 0) {
            p.fill(t, msg.data_mut(), msg_len);
            if let Some(buf) = shadow.as_deref_mut() {
                p.shadow().fill(t, buf, msg_len);
            }
        }
        let touch = shadow
            .as_deref()
            .map_or_else(|| msg.ptr().cast_const(), <[u8]>::as_ptr);
        // The guide's loop: nothing but the calls between the two readings. The run-queue
        // readings go outside them, each between two clock readings (`procfs::WaitWindow`).
        let wait0 = procfs::WaitWindow::open();
        let t0 = sys::clock_ns(sys::CLOCK_MONOTONIC_RAW);
        let outer = witness.outer();
        if let Some(s) = &sampler {
            s.enable();
        }
        loop_counter.start();
        let inner0 = witness.inner();
        let failed_rc = match state {
            None if inv.count => cyclescope_counted_calls(&call, inv.iterations, None),
            None => call.call_n(inv.iterations),
            Some(_) => match probe_digests.as_deref_mut() {
                Some(out) if inv.count => {
                    let stride = body.map_or(msg_len, |p| p.stride(msg_len));
                    cyclescope_counted_calls(&call, inv.iterations, Some((stride, touch, out)))
                }
                Some(out) => {
                    let stride = body.map_or(msg_len, |p| p.stride(msg_len));
                    call.call_pool(inv.iterations, stride, touch, out)
                }
                None => call.call_n(0),
            },
        };
        let inner1 = witness.inner();
        let cycles = match loop_counter.stop_checked() {
            Ok(cycles) => cycles,
            Err(fault) => return send_counter_fault(ch, fault),
        };
        if let Some(s) = &sampler {
            s.disable();
        }
        let clock = witness.pair(outer, (inner0, inner1), cycles);
        let t1 = sys::clock_ns(sys::CLOCK_MONOTONIC_RAW);
        let waited = wait0.close(t1.saturating_sub(t0));
        // The probe's trial line ends the engine's clock on it: it goes first, carrying the
        // XOR of every digest of the trial (which no process can know before it has them all),
        // and the message is checked after it.
        let mut fold = [0u8; 1024];
        let reported = match probe_digests.as_deref() {
            Some(all) if digest_len <= fold.len() => {
                for d in all.chunks(digest_len.max(1)) {
                    fold.iter_mut().zip(d).for_each(|(f, b)| *f ^= b);
                }
                &fold[..digest_len]
            }
            _ => {
                if let Some(code) = check(failed_rc, &mut msg, &digest, state) {
                    return code;
                }
                digest.data()
            }
        };
        send_trial(
            ch,
            TrialFigures {
                iterations: inv.iterations,
                nanoseconds: t1.saturating_sub(t0),
                cycles,
                waited_ns: waited,
                clock,
                digest: reported,
            },
        );
        if state.is_some() {
            // The engine reads this process's CPU clock while it waits here.
            let _ = super::setup::read_go_line();
            super::setup::close_go_lines();
            if let Some(code) = check(failed_rc, &mut msg, &digest, state) {
                return code;
            }
        }
        if let Some(s) = &mut sampler {
            s.drain(ch);
        }
        if let Some(out) = probe_digests.as_deref() {
            send_digests(ch, out, digest_len);
        }
        if inv.sample_calls > 0 {
            if batch.is_none() {
                batch = sys::alloc_filled(BATCH_SAMPLES * 8, 0);
            }
            let Some(buf) = batch.as_deref_mut() else {
                return error(ch, "memory", b"cannot allocate the per-call sample batch");
            };
            let rc = sample_calls(ch, inv.sample_calls, overhead.unwrap_or(0), &call, buf);
            if let Some(code) = check(rc, &mut msg, &digest, state) {
                return code;
            }
        }
    }
    ch.message("done")
        .number("peak_rss_bytes", procfs::peak_resident_bytes())
        .send();
    EXIT_DONE
}

/// The per-call phase: a serialised stamp pair around each call, the overhead subtracted,
/// sent in batches; the last non-zero return, or 0.
pub fn sample_calls(ch: &Channel, calls: u64, overhead: u64, call: &Call, buf: &mut [u8]) -> c_int {
    // SAFETY: a u8 buffer viewed as u64 where aligned (malloc's memory is); every bit pattern
    // is a valid u64.
    let (_, batch, _) = unsafe { buf.align_to_mut::<u64>() };
    let mut filled = 0;
    let mut last_send = sys::clock_ns(sys::CLOCK_MONOTONIC);
    let mut bad_rc = 0;
    for _ in 0..calls {
        let t0 = counter::stamp_start();
        let rc = call.call_n(1);
        let t1 = counter::stamp_end();
        if rc != 0 {
            bad_rc = rc;
        }
        batch[filled] = t1.wrapping_sub(t0).saturating_sub(overhead).max(1);
        filled += 1;
        let now = sys::clock_ns(sys::CLOCK_MONOTONIC);
        if filled == batch.len() || now.wrapping_sub(last_send) >= BATCH_INTERVAL_NS {
            ch.message("samples")
                .numbers("ticks", &batch[..filled])
                .send();
            filled = 0;
            last_send = now;
        }
    }
    if filled > 0 {
        ch.message("samples")
            .numbers("ticks", &batch[..filled])
            .send();
    }
    bad_rc
}
