//! Buffers for the conformance checks: page-aligned memory between two `PROT_NONE` pages, so
//! that a message placed flush against either end makes a read past it fault, and a message
//! or digest can sit at any offset the checks choose. The checks (in `conform`) fill and
//! compare the bytes; this module only maps the memory and makes the call, since both need
//! `unsafe`.

use std::ffi::c_int;

use super::{HashFn, HashLibrary, SUPERCOP_PARTIAL_BYTE};

/// Usable bytes between two inaccessible pages.
pub struct Arena {
    /// The whole mapping: guard page, usable pages, guard page.
    map: *mut u8,
    map_len: usize,
    /// Usable bytes (a whole number of pages, at least what was asked for).
    len: usize,
    page: usize,
}

/// Where a call's message and digest sit in their arenas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Offset of the message's first byte.
    pub msg_at: usize,
    pub msg_bits: u64,
    /// Offset of the digest's first byte.
    pub out_at: usize,
    /// How many bytes from `out_at` the callee may write (at least the digest's).
    pub out_bytes: usize,
}

/// The page size (4 KiB when the kernel does not say).
fn page_size() -> usize {
    // SAFETY: sysconf takes no pointer and only reads a constant of the system.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

impl Arena {
    /// At least `len` usable bytes (zeroed), with a `PROT_NONE` page before and after them.
    pub fn new(len: usize) -> std::io::Result<Self> {
        let page = page_size();
        let len = len.max(1).div_ceil(page) * page;
        let map_len = len + 2 * page;
        // SAFETY: an anonymous private mapping at an address the kernel picks; no existing
        // memory is touched. The result is checked against MAP_FAILED before use.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let map = map.cast::<u8>();
        let arena = Self {
            map,
            map_len,
            len,
            page,
        };
        // SAFETY: both ranges are whole pages inside the mapping just made; making them
        // inaccessible changes no memory that anything refers to.
        let guarded = unsafe {
            libc::mprotect(map.cast(), page, libc::PROT_NONE) == 0
                && libc::mprotect(map.add(page + len).cast(), page, libc::PROT_NONE) == 0
        };
        if !guarded {
            return Err(std::io::Error::last_os_error());
        }
        Ok(arena)
    }

    /// The usable bytes (a whole number of pages).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn start(&self) -> *mut u8 {
        // One page in: the first usable byte.
        self.map.wrapping_add(self.page)
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `start()..start()+len` is the readable, writable part of the live mapping
        // this value owns; the borrow of `self` keeps it mapped.
        unsafe { std::slice::from_raw_parts(self.start(), self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`; `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.start(), self.len) }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` made; no slice outlives `self`.
        unsafe {
            libc::munmap(self.map.cast(), self.map_len);
        }
    }
}

impl HashLibrary {
    /// `CryptHash(digest_bits, msg + msg_at, msg_bits, out + out_at)` (or SUPERCOP's
    /// `crypto_hash`, which takes whole bytes only and returns [`SUPERCOP_PARTIAL_BYTE`]
    /// otherwise) on arena memory, where a read or write past either end faults.
    ///
    /// # Panics
    /// If the message or the digest does not fit its arena where `at` puts it (a caller bug).
    pub fn crypt_hash_in(
        &self,
        digest_bits: u32,
        msg: &Arena,
        out: &mut Arena,
        at: Placement,
    ) -> i32 {
        let Placement {
            msg_at,
            msg_bits,
            out_at,
            out_bytes,
        } = at;
        let msg_bytes = usize::try_from(msg_bits.div_ceil(8)).unwrap_or(usize::MAX);
        assert!(
            msg_at
                .checked_add(msg_bytes)
                .is_some_and(|e| e <= msg.len()),
            "message outside its arena"
        );
        assert!(
            out_at
                .checked_add(out_bytes)
                .is_some_and(|e| e <= out.len())
                && (digest_bits as usize).div_ceil(8) <= out_bytes,
            "digest outside its arena"
        );
        let bits = c_int::try_from(digest_bits).unwrap_or(c_int::MAX);
        let m = msg.start().wrapping_add(msg_at).cast_const();
        let d = out.start().wrapping_add(out_at);
        match self.entry {
            // SAFETY: `m` has `msg_bytes` readable bytes and `d` at least the digest's bytes
            // writable (checked above), inside live mappings; the library stays loaded while
            // `self` lives. A read or write past them hits a PROT_NONE page, which the worker
            // process exists to contain.
            HashFn::Iccs(f) => unsafe { f(bits, m, msg_bits, d) },
            HashFn::Supercop(_) if !msg_bits.is_multiple_of(8) => SUPERCOP_PARTIAL_BYTE,
            // SAFETY: as above, for `crypto_hash(out, in, inlen)`.
            HashFn::Supercop(f) => unsafe { f(d, m, msg_bits / 8) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_is_whole_pages_of_zeroes() {
        let mut a = Arena::new(10).unwrap();
        assert_eq!(a.len() % page_size(), 0);
        assert!(a.len() >= 10);
        assert!(a.bytes().iter().all(|&b| b == 0));
        let last = a.len() - 1;
        a.bytes_mut()[last] = 7;
        assert_eq!(a.bytes()[last], 7);
        assert_eq!(a.start() as usize % page_size(), 0);
    }
}
