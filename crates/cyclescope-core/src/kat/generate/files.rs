//! The four file generators, in the official generator's exact order of DRNG draws, hash calls
//! and printed lines. Buffers are sized exactly to the message so that guard bytes sit right
//! behind it; the 1 GiB `KAT_2_33` message is one buffer, reused by all three records and
//! filled in place by the DRNG.

use std::io::Write;

use super::{GenerateError, KatFile, LOOP_BITS, LOOP_ITERATIONS, checked_call, records};
use crate::kat::drng::Drng;
use crate::plugin::GuardedBuffer;

/// `KAT_2_12`: every length 0…4096 bits, a fresh DRNG draw per record.
pub(super) fn kat_2_12<H, W>(
    digest_bits: u32,
    digest_len: usize,
    hash: &mut H,
    w: &mut W,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), GenerateError>
where
    H: FnMut(&GuardedBuffer, u64, &mut GuardedBuffer) -> Result<i32, GenerateError>,
    W: Write,
{
    let file = KatFile::Kat2_12;
    let mut drng = Drng::new(&file.seed());
    let mut digest = GuardedBuffer::new(digest_len);
    let mut text = Vec::with_capacity(4096);
    let total = file.total_steps();
    for bits in 0..total {
        let mut msg = GuardedBuffer::new(bits.div_ceil(8) as usize);
        drng.generate(msg.data_mut(), bits);
        text.clear();
        records::full_message(&mut text, msg.data(), bits);
        digest.data_mut().fill(0);
        checked_call(hash, &msg, bits, &mut digest, true)?;
        records::digest(&mut text, digest.data(), digest_bits);
        w.write_all(&text)?;
        progress(bits + 1, total);
    }
    Ok(())
}

/// `KAT_2_23` / `KAT_2_33`: an all-zero, an all-0xFF and a DRNG message of `msg_bits` bits.
pub(super) fn partial<H, W>(
    file: KatFile,
    msg_bits: u64,
    digest_bits: u32,
    digest_len: usize,
    hash: &mut H,
    w: &mut W,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), GenerateError>
where
    H: FnMut(&GuardedBuffer, u64, &mut GuardedBuffer) -> Result<i32, GenerateError>,
    W: Write,
{
    let seed = file.seed();
    let len = usize::try_from(msg_bits / 8).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            "message larger than the address space",
        )
    })?;
    let mut msg = GuardedBuffer::new(len);
    let mut digest = GuardedBuffer::new(digest_len);
    let mut text = Vec::with_capacity(1024);
    for record in 0..3u64 {
        let record_seed = match record {
            0 => None, // the buffer starts zeroed
            1 => {
                msg.data_mut().fill(0xFF);
                None
            }
            _ => {
                Drng::new(&seed).generate(msg.data_mut(), msg_bits);
                Some(seed.as_slice())
            }
        };
        text.clear();
        records::partial_message(&mut text, msg.data(), msg_bits, record_seed);
        digest.data_mut().fill(0);
        checked_call(hash, &msg, msg_bits, &mut digest, true)?;
        records::digest(&mut text, digest.data(), digest_bits);
        w.write_all(&text)?;
        progress(record + 1, 3);
    }
    Ok(())
}

/// `KAT_Loop`: `m0` (8192 DRNG bits), then 10^6 times rotate the message left by the digest
/// length, XOR the last digest into its front and hash it again. Return codes are ignored, as
/// by the official generator; guard bytes are not.
pub(super) fn kat_loop<H, W>(
    digest_bits: u32,
    digest_len: usize,
    hash: &mut H,
    w: &mut W,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), GenerateError>
where
    H: FnMut(&GuardedBuffer, u64, &mut GuardedBuffer) -> Result<i32, GenerateError>,
    W: Write,
{
    let mut msg = GuardedBuffer::new(1024);
    msg.data_mut().copy_from_slice(&loop_first_message());
    let mut text = Vec::with_capacity(4096);
    records::full_message(&mut text, msg.data(), LOOP_BITS);
    let mut digest = GuardedBuffer::new(digest_len);
    checked_call(hash, &msg, LOOP_BITS, &mut digest, false)?;
    // A digest wider than the message is not a width the API can have (≤ 2048 bits in NGCC).
    let d = digest_len.min(1024);
    for i in 0..LOOP_ITERATIONS {
        let m = msg.data_mut();
        m.rotate_left(d);
        for (x, h) in m[..d].iter_mut().zip(digest.data()) {
            *x ^= h;
        }
        checked_call(hash, &msg, LOOP_BITS, &mut digest, false)?;
        progress(i + 1, LOOP_ITERATIONS);
    }
    records::digest(&mut text, digest.data(), digest_bits);
    w.write_all(&text)?;
    Ok(())
}

/// `KAT_Loop`'s first message, `m0`: 8192 DRNG bits.
pub(crate) fn loop_first_message() -> Vec<u8> {
    let mut m = vec![0u8; (LOOP_BITS / 8) as usize];
    Drng::new(&KatFile::Loop.seed()).generate(&mut m, LOOP_BITS);
    m
}

/// `KAT_Loop`'s text from its first message and the chain's last digest, worked out elsewhere
/// (the trial worker's `--chain`).
pub(super) fn loop_text<W: Write>(
    digest_bits: u32,
    first: &[u8],
    last: &[u8],
    w: &mut W,
) -> Result<(), GenerateError> {
    let mut text = Vec::with_capacity(4096);
    records::full_message(&mut text, first, LOOP_BITS);
    records::digest(&mut text, last, digest_bits);
    w.write_all(&text)?;
    Ok(())
}
