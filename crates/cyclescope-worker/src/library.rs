//! Loading the candidate in the trial worker: `dlopen(RTLD_NOW | RTLD_LOCAL)` as the harness
//! does, the entry point of its ABI, and the raw `ngcc_meta` block and `ngcc_build_flags`
//! string copied out as bytes. It validates nothing of the metadata: the engine decodes and
//! checks the block with the same code it uses for every other library (`plugin`), because
//! the parent trusts nothing it can check itself. The file was checked to be an ELF object for
//! this machine by the parent before this process started.

use core::ffi::{CStr, c_char, c_int};

use super::sys;

pub(crate) type CryptHashFn = unsafe extern "C" fn(c_int, *const u8, u64, *mut u8) -> c_int;
pub(crate) type SupercopHashFn = unsafe extern "C" fn(*mut u8, *const u8, u64) -> c_int;
type MetaFn = unsafe extern "C" fn() -> *const u8;
type BuildFlagsFn = unsafe extern "C" fn() -> *const c_char;

/// `sizeof(ngcc_meta_common_t)` and `sizeof(ngcc_meta_hash_t)` (checked against the engine's
/// definitions in a test), and where `struct_size` sits in the common header.
pub const META_COMMON_BYTES: usize = 640;
pub const META_HASH_BYTES: usize = 656;
const STRUCT_SIZE_OFFSET: usize = 12;
/// The longest `ngcc_build_flags()` string copied.
const BUILD_FLAGS_MAX: usize = 4096;

#[derive(Clone, Copy)]
pub enum Entry {
    Iccs(CryptHashFn),
    Supercop(SupercopHashFn),
}

/// The `ngcc_meta` export of a library (one per process, on the stack: no allocator to box the
/// bytes with).
#[allow(clippy::large_enum_variant)]
pub(crate) enum MetaBlock {
    /// No such symbol.
    Absent,
    /// `ngcc_meta()` returned NULL.
    Null,
    /// The common header, and the hash part when `struct_size` says it is there.
    Bytes([u8; META_HASH_BYTES], usize),
}

pub struct Library {
    pub(crate) entry: Entry,
    pub(crate) meta: MetaBlock,
    pub(crate) build_flags: Option<&'static [u8]>,
}

pub enum LoadError {
    /// `dlopen` failed: the dynamic linker's message.
    Dlopen(&'static [u8]),
    /// The ABI's entry point is missing.
    Symbol,
}

/// The probe loop's own cost, measured with no candidate in the process
/// (`--loop-only`): a built-in `CryptHash` that does the least any hash must — read the
/// message, one byte per 64-byte line (so a fresh message's cache misses are paid, as they are
/// by a library), and write every byte of the digest — and nothing else.
pub(crate) fn loop_only() -> Library {
    Library {
        entry: Entry::Iccs(touch_only),
        meta: MetaBlock::Absent,
        build_flags: None,
    }
}

/// The built-in function of [`loop_only`].
///
/// # Safety
/// `msg` holds `bits.div_ceil(8)` readable bytes and `digest` `hashbitlen.div_ceil(8)`
/// writable ones, as for any `CryptHash`.
unsafe extern "C" fn touch_only(
    hashbitlen: c_int,
    msg: *const u8,
    bits: u64,
    digest: *mut u8,
) -> c_int {
    let len = bits.div_ceil(8) as usize;
    let mut fold = 0u8;
    for i in (0..len).step_by(64) {
        // SAFETY: `i < len`, within the message (above); volatile, so the read is not elided.
        fold ^= unsafe { core::ptr::read_volatile(msg.add(i)) };
    }
    let width = usize::try_from(hashbitlen).unwrap_or(0).div_ceil(8);
    for i in 0..width {
        // SAFETY: `i < width`, within the digest (above).
        unsafe { core::ptr::write_volatile(digest.add(i), fold) };
    }
    0
}

fn symbol(handle: *mut core::ffi::c_void, name: &CStr) -> *mut core::ffi::c_void {
    // SAFETY: a handle dlopen returned and a NUL-terminated name; dlsym only looks it up.
    unsafe { sys::dlsym(handle, name.as_ptr()) }
}

/// Loads `path` and resolves its entry point (`crypto_hash` for SUPERCOP, else `CryptHash`).
pub fn open(path: &CStr, supercop: bool) -> Result<Library, LoadError> {
    // SAFETY: loading a library runs its initialisers: foreign code this process exists to
    // contain (its sandbox is in force). The handle is never closed: the process ends with it.
    let handle = unsafe { sys::dlopen(path.as_ptr(), sys::RTLD_NOW | sys::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(LoadError::Dlopen(sys::dl_error()));
    }
    let name = if supercop {
        c"crypto_hash"
    } else {
        c"CryptHash"
    };
    let f = symbol(handle, name);
    if f.is_null() {
        return Err(LoadError::Symbol);
    }
    let entry = if supercop {
        // SAFETY: SUPERCOP declares `int crypto_hash(unsigned char *out, const unsigned char
        // *in, unsigned long long inlen)`; the library stays loaded for the process's life.
        Entry::Supercop(unsafe {
            core::mem::transmute::<*mut core::ffi::c_void, SupercopHashFn>(f)
        })
    } else {
        // SAFETY: the ICCS API declares `int CryptHash(int, const unsigned char *, unsigned
        // long long, unsigned char *)`; as above.
        Entry::Iccs(unsafe { core::mem::transmute::<*mut core::ffi::c_void, CryptHashFn>(f) })
    };
    let meta = read_meta(handle);
    let build_flags = match meta {
        MetaBlock::Bytes(..) => read_build_flags(handle),
        _ => None,
    };
    Ok(Library {
        entry,
        meta,
        build_flags,
    })
}

fn read_meta(handle: *mut core::ffi::c_void) -> MetaBlock {
    let f = symbol(handle, c"ngcc_meta");
    if f.is_null() {
        return MetaBlock::Absent;
    }
    // SAFETY: the harness's link ABI declares `const ngcc_meta_t *ngcc_meta(void)`.
    let meta_fn = unsafe { core::mem::transmute::<*mut core::ffi::c_void, MetaFn>(f) };
    // SAFETY: calling the ABI's metadata getter, which takes nothing.
    let p = unsafe { meta_fn() };
    if p.is_null() {
        return MetaBlock::Null;
    }
    let mut bytes = [0u8; META_HASH_BYTES];
    // SAFETY: a non-NULL pointer from ngcc_meta points at at least the common header, which
    // every ABI-1 library defines (the engine's loader makes the same assumption); bytes are
    // copied, never interpreted here.
    unsafe { core::ptr::copy_nonoverlapping(p, bytes.as_mut_ptr(), META_COMMON_BYTES) };
    let size_field = &bytes[STRUCT_SIZE_OFFSET..STRUCT_SIZE_OFFSET + 4];
    let struct_size =
        u32::from_ne_bytes([size_field[0], size_field[1], size_field[2], size_field[3]]);
    let len = if struct_size as usize >= META_HASH_BYTES {
        // SAFETY: the library says the block is a whole `ngcc_meta_hash_t`.
        unsafe {
            core::ptr::copy_nonoverlapping(
                p.add(META_COMMON_BYTES),
                bytes.as_mut_ptr().add(META_COMMON_BYTES),
                META_HASH_BYTES - META_COMMON_BYTES,
            )
        };
        META_HASH_BYTES
    } else {
        META_COMMON_BYTES
    };
    MetaBlock::Bytes(bytes, len)
}

fn read_build_flags(handle: *mut core::ffi::c_void) -> Option<&'static [u8]> {
    let f = symbol(handle, c"ngcc_build_flags");
    if f.is_null() {
        return None;
    }
    // SAFETY: newer harness builds export `const char *ngcc_build_flags(void)`.
    let flags_fn = unsafe { core::mem::transmute::<*mut core::ffi::c_void, BuildFlagsFn>(f) };
    // SAFETY: calling it takes nothing; the result is NULL or a NUL-terminated static string
    // (read up to a bound).
    unsafe { sys::c_string(flags_fn(), BUILD_FLAGS_MAX) }
}
