//! What a trial worker keeps to prove the timed calls did the work, outside every timed loop:
//! the check that the message is still the one it prepared (the harness's pattern, or the
//! fresh-message probe's pseudo-random bytes regenerated from their seed), and the pool of
//! fresh messages the probe hashes once each. It never judges a digest: the worker reports the
//! last one and the engine compares it with the one a separate worker computed.

/// The probe's pool holds at most this many bytes of messages (each used once per trial): a
/// size the caches hold, so that fresh messages cost an honest library their own work and not
/// the memory's bandwidth (an 8 MiB pool put an SM3 library at up to 1.27 times its guide
/// figure, a faster library would pay more).
pub const POOL_BYTES: u64 = 1 << 20;

/// The first offset at which `msg` is not the harness's message of length `len`.
pub(crate) fn harness_message_differs(msg: &[u8], len: u64) -> Option<usize> {
    msg.iter()
        .enumerate()
        .position(|(i, &b)| b != (i as u64).wrapping_mul(131).wrapping_add(len) as u8)
}

/// Fills `msg` from descriptor `fd` (the engine's message); false where it holds fewer bytes.
pub(crate) fn read_message(fd: core::ffi::c_int, msg: &mut [u8]) -> bool {
    read_message_at(fd, msg, 0)
}

/// Fills `msg` from descriptor `fd` at `offset`; false where it holds fewer bytes.
pub(crate) fn read_message_at(fd: core::ffi::c_int, msg: &mut [u8], offset: u64) -> bool {
    let mut got = 0;
    while got < msg.len() {
        let Ok(at) = i64::try_from(offset + got as u64) else {
            return false;
        };
        match super::sys::pread_fd(fd, &mut msg[got..], at) {
            Ok(n) if n > 0 => got += n,
            _ => return false,
        }
    }
    true
}

/// The first offset at which `msg` is not the first bytes of descriptor `fd` (one that can
/// no longer be read counts as differing at once).
pub(crate) fn message_differs(fd: core::ffi::c_int, msg: &[u8]) -> Option<usize> {
    message_differs_at(fd, msg, 0)
}

/// The first offset at which `msg` is not what descriptor `fd` holds at `offset`.
pub(crate) fn message_differs_at(fd: core::ffi::c_int, msg: &[u8], offset: u64) -> Option<usize> {
    let mut chunk = [0u8; 4096];
    let mut at = 0;
    while at < msg.len() {
        let n = (msg.len() - at).min(chunk.len());
        if !read_message_at(fd, &mut chunk[..n], offset + at as u64) {
            return Some(at);
        }
        if let Some(i) = chunk[..n]
            .iter()
            .zip(&msg[at..at + n])
            .position(|(a, b)| a != b)
        {
            return Some(at + i);
        }
        at += n;
    }
    None
}

/// The harness's message: `msg[i] = (uint8_t)(i*131 + len)`.
pub fn fill_harness_message(msg: &mut [u8], len: u64) {
    for (i, b) in msg.iter_mut().enumerate() {
        *b = (i as u64).wrapping_mul(131).wrapping_add(len) as u8;
    }
}

/// SplitMix64: a fast generator whose stream a seed fixes, so the worker can write the
/// probe's messages and later read them back without a copy.
#[derive(Debug, Clone, Copy)]
pub struct Fresh(u64);

impl Fresh {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Fills `bytes` from the stream.
    pub fn fill(mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// The first offset at which `bytes` is not what `fill` wrote from this state.
    pub(crate) fn differs(mut self, bytes: &[u8]) -> Option<usize> {
        for (c, chunk) in bytes.chunks(8).enumerate() {
            let v = self.next().to_le_bytes();
            if let Some(i) = chunk.iter().zip(v.iter()).position(|(a, b)| a != b) {
                return Some(8 * c + i);
            }
        }
        None
    }

    /// The state a trial after this one starts from (each trial gets new messages).
    pub fn advance(self, trial: u64) -> Self {
        Self(self.0 ^ trial.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03))
    }
}

/// The fresh-message probe's pool: messages from the command line's seed (written before
/// `ready`, out of the engine's clock), each with its first 8 bytes XORed with a stream from
/// the go line's seed (written after it, in a few cycles a message): so no probe message is
/// known before the engine starts timing the process. The probe's twin (`repeat`) has the same
/// seeds, go line and loop, but its pool is the harness's one message, hashed at one address
/// by every call: what the same calls cost where nothing is fresh. Before each call both read
/// every line of a fresh message (the twin's from a pool like the probe's, its `shadow`), so
/// the caches' misses fall on both alike.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    pub body: Fresh,
    pub heads: u64,
    pub repeat: bool,
}

impl Probe {
    /// XORs the heads into (or out of) the pool's messages of `len` bytes (the twin's message
    /// stays the harness's).
    pub(crate) fn toggle_heads(self, pool: &mut [u8], len: usize) {
        if len == 0 || self.repeat {
            return;
        }
        let mut heads = Fresh::new(self.heads);
        for message in pool.chunks_mut(len) {
            let v = heads.next().to_le_bytes();
            for (b, h) in message.iter_mut().zip(v) {
                *b ^= h;
            }
        }
    }

    /// Trial `trial`'s pool but for the heads: what is written before `ready`.
    pub fn fill_body(self, trial: u64, pool: &mut [u8]) {
        match self.repeat {
            true => fill_harness_message(pool, pool.len() as u64),
            false => self.body.advance(trial).fill(pool),
        }
    }

    /// The first offset at which `pool` is not what `fill_body` wrote.
    pub(crate) fn body_differs(self, trial: u64, pool: &[u8]) -> Option<usize> {
        match self.repeat {
            true => harness_message_differs(pool, pool.len() as u64),
            false => self.body.advance(trial).differs(pool),
        }
    }

    /// Trial `trial`'s pool, complete.
    pub fn fill(self, trial: u64, pool: &mut [u8], len: usize) {
        self.fill_body(trial, pool);
        self.toggle_heads(pool, len);
    }

    /// The pool the twin reads before each call but never hashes: the probe's, from the same
    /// seeds, so that both pay the same memory traffic.
    pub(crate) fn shadow(self) -> Self {
        Self {
            repeat: false,
            ..self
        }
    }

    /// How far a call's message is from the one before: the twin's calls all hash one.
    pub(crate) fn stride(self, len: usize) -> usize {
        if self.repeat { 0 } else { len }
    }

    /// The first offset at which trial `trial`'s pool is not what `fill` wrote.
    pub fn differs(self, trial: u64, pool: &mut [u8], len: usize) -> Option<usize> {
        if self.repeat {
            return self.body_differs(trial, pool);
        }
        self.toggle_heads(pool, len);
        let at = self.body.advance(trial).differs(pool);
        self.toggle_heads(pool, len);
        at
    }
}

/// The twin's pool could not be allocated.
pub(crate) struct NoMemory;

/// The pool of `len` bytes the twin reads but never hashes (`Probe::shadow`), written but for
/// its heads; None for any other job.
pub(crate) fn twin_shadow(
    probe: Option<Probe>,
    len: Option<usize>,
) -> Result<Option<&'static mut [u8]>, NoMemory> {
    let Some(twin) = probe.filter(|p| p.repeat) else {
        return Ok(None);
    };
    let pool = len
        .and_then(|len| super::sys::alloc_filled(len, 0))
        .ok_or(NoMemory)?;
    twin.shadow().fill_body(0, pool);
    Ok(Some(pool))
}

/// How many fresh messages one probe trial hashes: one per call, all in the pool (the twin's
/// pool is its one message).
pub fn pool_messages(msg_len: u64, iterations: u64) -> u64 {
    if msg_len == 0 {
        return iterations;
    }
    iterations.min(POOL_BYTES / msg_len).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_pattern_is_recognised_and_a_changed_byte_is_named() {
        let mut msg = [0u8; 40];
        for (i, b) in msg.iter_mut().enumerate() {
            *b = (i as u64 * 131 + 40) as u8;
        }
        assert_eq!(harness_message_differs(&msg, 40), None);
        msg[17] ^= 1;
        assert_eq!(harness_message_differs(&msg, 40), Some(17));
    }

    #[test]
    fn fresh_bytes_read_back_from_their_seed_and_differ_per_trial() {
        let mut a = [0u8; 61];
        let f = Fresh::new(7);
        f.fill(&mut a);
        assert_eq!(f.differs(&a), None);
        a[60] ^= 0x80;
        assert_eq!(f.differs(&a), Some(60));
        let mut b = [0u8; 61];
        f.advance(1).fill(&mut b);
        assert_ne!(a[..60], b[..60]);
        assert_eq!(pool_messages(1 << 20, 20), 1);
        assert_eq!(pool_messages(1 << 17, 20), 8);
        assert_eq!(pool_messages(32, 20_000), 20_000);
    }

    #[test]
    fn the_twins_pool_is_the_harness_message_hashed_at_one_address() {
        let twin = Probe {
            body: Fresh::new(7),
            heads: 9,
            repeat: true,
        };
        let mut pool = [0u8; 40];
        twin.fill(0, &mut pool, 40);
        assert_eq!(harness_message_differs(&pool, 40), None);
        // The heads leave it as it is, and every call hashes it where it lies.
        twin.toggle_heads(&mut pool, 40);
        assert_eq!(twin.differs(0, &mut pool, 40), None);
        assert_eq!(twin.stride(40), 0);
        pool[5] ^= 1;
        assert_eq!(twin.differs(0, &mut pool, 40), Some(5));
        let probe = Probe {
            repeat: false,
            ..twin
        };
        assert_eq!(probe.stride(40), 40);
        probe.fill(0, &mut pool, 40);
        assert!(harness_message_differs(&pool, 40).is_some());
        assert_eq!(probe.differs(0, &mut pool, 40), None);
        // What the twin reads before each call is the probe's pool, trial by trial.
        let mut shadow = [0u8; 40];
        for trial in 0..3 {
            probe.fill(trial, &mut pool, 8);
            twin.shadow().fill(trial, &mut shadow, 8);
            assert_eq!(pool, shadow);
        }
    }
}
