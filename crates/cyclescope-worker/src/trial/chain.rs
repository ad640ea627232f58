//! A chain job (`--chain`): the loop of the official `KAT_Loop` generator, on the engine's
//! first message (the descriptor's `--bytes` bytes, hashed whole): one call on it, then
//! `--iters` times rotate the message left by the digest's length, XOR the last digest into
//! its front and hash it again. Return codes are ignored, as the official generator ignores
//! them; guard bytes are checked after every call. The last digest goes back as one `digests`
//! line; the engine holds it against the file it writes.

use core::ffi::c_int;

use super::messages::send_overflow_of;
use super::{Call, EXIT_DONE, EXIT_FAULT, error};
use crate::args::Invocation;
use crate::guarded::Guarded;
use crate::json::Channel;
use crate::library::Entry;

/// Runs the chain on the message in `msg` (read from the descriptor), after `ready`.
pub(super) fn run(
    inv: &Invocation<'_>,
    ch: &Channel,
    entry: Entry,
    msg: &mut Guarded,
    digest: &mut Guarded,
) -> c_int {
    let d = digest.data().len().min(msg.data().len());
    let Ok(msg_bits) = u64::try_from(msg.data().len()).map(|n| n * 8) else {
        return error(ch, "table", b"the chain's message is too long");
    };
    let call = Call {
        entry,
        digest_bits: c_int::try_from(inv.digest_bits).unwrap_or(c_int::MAX),
        msg: msg.ptr(),
        msg_bits,
        digest: digest.ptr(),
    };
    for i in 0..=inv.iterations {
        if i > 0 {
            let (m, last) = (msg.data_mut(), digest.data());
            m.rotate_left(d);
            m[..d].iter_mut().zip(last).for_each(|(x, h)| *x ^= h);
        }
        let _ = call.call_n(1);
        for (buffer, intact) in [("digest", digest.intact()), ("message", msg.intact())] {
            if !intact {
                send_overflow_of(ch, buffer);
                return EXIT_FAULT;
            }
        }
    }
    ch.message("digests").hex("hex", digest.data()).send();
    ch.message("done")
        .number("peak_rss_bytes", crate::procfs::peak_resident_bytes())
        .send();
    EXIT_DONE
}
