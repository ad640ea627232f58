//! Loading candidate libraries: the only place that calls into foreign code (besides the cycle
//! counters). It checks a file before `dlopen` (exists, ELF, this machine's architecture),
//! resolves the entry point of its ABI (ICCS `CryptHash` or SUPERCOP `crypto_hash`), reads and
//! validates the optional `ngcc_meta` block, and hands out calls that keep the library loaded.
//! No part of the engine calls a candidate through it: every call is the trial worker's
//! (`cyclescope-worker`, its own loader), and the engine only reads metadata and ELF headers
//! here; the tests call the bundled libraries in-process through it.

mod abi;
mod elf;
mod guarded;
pub mod sealed;

pub use abi::{Abi, SUPERCOP_PARTIAL_BYTE};
pub use elf::{ElfCheck, check_elf, elf_load_bytes};
pub use guarded::GuardedBuffer;

use abi::{CryptHashFn, HashFn, SupercopHashFn};
use std::ffi::c_int;
use std::path::{Path, PathBuf};

use crate::name::SafeName;
use iccs_sm3::meta::{
    NGCC_LINK_ABI, NGCC_META_MAGIC, NGCC_TYPE_HASH, NgccMetaCommon, NgccMetaHash, field_str,
};

type MetaFn = unsafe extern "C" fn() -> *const NgccMetaCommon;
type BuildFlagsFn = unsafe extern "C" fn() -> *const std::ffi::c_char;

/// `INVALID_DIGESTBITLEN` of the ICCS helper file.
pub const INVALID_DIGESTBITLEN: i32 = -4;

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("library {0} does not exist")]
    Missing(PathBuf),
    #[error("library {path} cannot be read: {source}")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("library {0} is not an ELF shared object (no ELF magic)")]
    NotElf(PathBuf),
    #[error("library {path} is a truncated or corrupt ELF file: {detail}")]
    BadElf { path: PathBuf, detail: String },
    #[error("library {path} is built for {found}, but this machine is {expected}")]
    WrongArchitecture {
        path: PathBuf,
        found: String,
        expected: &'static str,
    },
    #[error("library {path} cannot be loaded: {detail}")]
    Dlopen { path: PathBuf, detail: String },
    #[error(
        "library {path} has no symbol CryptHash (is it built with the ICCS API? a SUPERCOP crypto_hash library needs --abi supercop)"
    )]
    MissingSymbol { path: PathBuf },
    #[error("library {path} has no symbol crypto_hash (the SUPERCOP ABI was asked for)")]
    MissingSupercopSymbol { path: PathBuf },
    #[error("library {path} exports ngcc_meta but it is invalid: {detail}")]
    BadMetadata { path: PathBuf, detail: String },
    #[error(
        "library {path} says digest_bits = {library} in ngcc_meta, but the catalog says {catalog}"
    )]
    DigestBitsDisagree {
        path: PathBuf,
        library: u64,
        catalog: u32,
    },
}

/// The `ngcc_meta` block of a library, copied out of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NgccMeta {
    pub id: String,
    pub kind: String,
    pub(crate) algorithm: String,
    pub instance: String,
    pub variant: String,
    pub(crate) source_dir: String,
    pub(crate) compiler: String,
    pub(crate) build_flags: String,
    /// 0: the library serves several widths and the caller chooses.
    pub digest_bits: u64,
    pub digest_len: u64,
}

/// A loaded candidate library.
pub struct HashLibrary {
    path: PathBuf,
    entry: HashFn,
    meta: Option<NgccMeta>,
    // Declared last so it is dropped after everything that came from it.
    _library: libloading::Library,
}

impl std::fmt::Debug for HashLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashLibrary")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .finish()
    }
}

impl HashLibrary {
    /// Checks and loads an ICCS library `path` (`RTLD_NOW | RTLD_LOCAL`, as the harness does).
    pub fn open(path: &Path) -> Result<Self, PluginError> {
        Self::open_abi(path, Abi::Iccs)
    }

    /// Checks and loads `path`, resolving the entry point of `abi`.
    pub fn open_abi(path: &Path, abi: Abi) -> Result<Self, PluginError> {
        check_elf(path)?;
        // RTLD_NODELETE: a library's code stays mapped when it is dropped, so a thread it
        // started (one spinning for ever, say) is not left running in unmapped memory while
        // the worker ends: that crashed a `hash` worker after its reply, one time in five.
        let flags =
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL | libc::RTLD_NODELETE;
        // SAFETY: loading a library runs its initialisers, which is foreign code we cannot
        // vet; that is the point of this tool. The file was checked to be an ELF object for
        // this architecture, and callers only do this in processes meant to host candidates
        // (workers) or for metadata listing.
        let os_lib =
            unsafe { libloading::os::unix::Library::open(Some(path), flags) }.map_err(|e| {
                PluginError::Dlopen {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                }
            })?;
        let library = libloading::Library::from(os_lib);
        let entry = match abi {
            // SAFETY: the symbol is declared by the ICCS API with exactly this C signature;
            // the copied function pointer is only used while `library` (stored in the same
            // struct and dropped last) keeps the code mapped.
            Abi::Iccs => unsafe { library.get::<CryptHashFn>(abi.symbol()) }
                .map(|s| HashFn::Iccs(*s))
                .map_err(|_| PluginError::MissingSymbol {
                    path: path.to_path_buf(),
                })?,
            // SAFETY: as above, for SUPERCOP's `crypto_hash(out, in, inlen)` signature.
            Abi::Supercop => unsafe { library.get::<SupercopHashFn>(abi.symbol()) }
                .map(|s| HashFn::Supercop(*s))
                .map_err(|_| PluginError::MissingSupercopSymbol {
                    path: path.to_path_buf(),
                })?,
        };
        let meta = read_meta(&library, path)?;
        Ok(Self {
            path: path.to_path_buf(),
            entry,
            meta,
            _library: library,
        })
    }

    pub fn meta(&self) -> Option<&NgccMeta> {
        self.meta.as_ref()
    }

    pub fn abi(&self) -> Abi {
        match self.entry {
            HashFn::Iccs(_) => Abi::Iccs,
            HashFn::Supercop(_) => Abi::Supercop,
        }
    }

    /// Checks that the catalog's width agrees with the library's own (when it states one).
    pub fn check_digest_bits(&self, catalog: u32) -> Result<(), PluginError> {
        check_digest_bits(&self.path, self.meta.as_ref(), catalog)
    }

    /// Calls `CryptHash(digest_bits, msg, msg_bits, digest)` on guarded buffers — or, for a
    /// SUPERCOP library, `crypto_hash(digest, msg, msg_bits / 8)` (a length that ends mid-byte
    /// returns [`SUPERCOP_PARTIAL_BYTE`] without a call). The guards let the caller detect
    /// writes outside either buffer afterwards.
    ///
    /// # Panics
    /// If `msg_bits` exceeds the message buffer or the digest buffer is too small for
    /// `digest_bits`: both are caller bugs, not candidate faults.
    #[inline]
    pub fn crypt_hash(
        &self,
        digest_bits: u32,
        msg: &GuardedBuffer,
        msg_bits: u64,
        digest: &mut GuardedBuffer,
    ) -> i32 {
        assert!(
            msg_bits.div_ceil(8) <= msg.len() as u64,
            "message shorter than msg_bits"
        );
        assert!(
            (digest_bits as usize).div_ceil(8) <= digest.len(),
            "digest buffer shorter than digest_bits"
        );
        let bits = c_int::try_from(digest_bits).unwrap_or(c_int::MAX);
        match self.entry {
            // SAFETY: both pointers point at live buffers of at least the lengths the ICCS API
            // lets the callee touch (checked above), framed by guard bytes that belong to the
            // same allocations; the function pointer is valid while `self` holds the library.
            // What the candidate does beyond its contract is what the worker process is there
            // to contain.
            HashFn::Iccs(f) => unsafe { f(bits, msg.as_ptr(), msg_bits, digest.as_mut_ptr()) },
            HashFn::Supercop(_) if !msg_bits.is_multiple_of(8) => SUPERCOP_PARTIAL_BYTE,
            // SAFETY: as above; SUPERCOP's callee reads `msg_bits / 8` bytes and writes its
            // fixed digest, which the caller sized from the catalog's width.
            HashFn::Supercop(f) => unsafe { f(digest.as_mut_ptr(), msg.as_ptr(), msg_bits / 8) },
        }
    }

    /// `crypto_hash(buf, buf, mlen)` (SUPERCOP) or `CryptHash(bits, buf, 8·mlen, buf)` (ICCS):
    /// the digest written over its own message, as SUPERCOP's overlap test asks.
    ///
    /// # Panics
    /// If the buffer is shorter than the message or the digest (a caller bug).
    pub fn hash_in_place(&self, digest_bits: u32, buf: &mut GuardedBuffer, mlen: usize) -> i32 {
        assert!(
            mlen <= buf.len() && (digest_bits as usize).div_ceil(8) <= buf.len(),
            "buffer shorter than the message or the digest"
        );
        let bits = c_int::try_from(digest_bits).unwrap_or(c_int::MAX);
        let p = buf.as_mut_ptr();
        match self.entry {
            // SAFETY: `p` points at a live buffer at least as long as the message and the
            // digest (checked above), inside its guards; reading and writing the same bytes is
            // what this call tests, and the library stays mapped while `self` lives.
            HashFn::Iccs(f) => unsafe { f(bits, p, 8 * mlen as u64, p) },
            // SAFETY: as above.
            HashFn::Supercop(f) => unsafe { f(p, p, mlen as u64) },
        }
    }
}

fn read_meta(library: &libloading::Library, path: &Path) -> Result<Option<NgccMeta>, PluginError> {
    // SAFETY: `ngcc_meta` is `const ngcc_meta_t *ngcc_meta(void)` in the harness's link ABI.
    let Ok(meta_fn) = (unsafe { library.get::<MetaFn>(b"ngcc_meta\0") }).map(|s| *s) else {
        return Ok(None);
    };
    // SAFETY: calling the ABI's metadata getter, which takes nothing and returns a pointer to
    // a static block (or NULL, handled by `meta_from_block`).
    let ptr = unsafe { meta_fn() };
    let mut block = Vec::new();
    if !ptr.is_null() {
        // SAFETY: a non-NULL pointer from ngcc_meta points at at least the common header,
        // which every ABI-1 library defines; `struct_size` is read by value before anything
        // else is trusted.
        let struct_size = unsafe { std::ptr::read_unaligned(ptr) }.struct_size as usize;
        let len = if struct_size >= size_of::<NgccMetaHash>() {
            size_of::<NgccMetaHash>()
        } else {
            size_of::<NgccMetaCommon>()
        };
        // SAFETY: the common header is always there, the hash block when `struct_size` says
        // so; the bytes are copied, and checked by `meta_from_block`.
        block.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) });
    }
    let mut build_flags = None;
    // SAFETY: optional `const char *ngcc_build_flags(void)` of newer harness builds, returning
    // a NUL-terminated static string (or NULL, checked).
    if let Ok(flags_fn) = unsafe { library.get::<BuildFlagsFn>(b"ngcc_build_flags\0") } {
        // SAFETY: as above; the string is copied before the library can be unloaded.
        let s = unsafe { flags_fn() };
        if !s.is_null() {
            // SAFETY: non-NULL, NUL-terminated per the ABI.
            build_flags = Some(unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes().to_vec());
        }
    }
    meta_from_block(path, &block, build_flags.as_deref()).map(Some)
}

/// Decodes and checks an `ngcc_meta` block copied out of `path` as bytes (empty when
/// `ngcc_meta()` returned NULL), with its `ngcc_build_flags()` string if it has one: the one
/// validation for a library loaded here and for the block a trial worker sends.
pub(crate) fn meta_from_block(
    path: &Path,
    block: &[u8],
    build_flags: Option<&[u8]>,
) -> Result<NgccMeta, PluginError> {
    let bad = |detail: String| PluginError::BadMetadata {
        path: path.to_path_buf(),
        detail,
    };
    if block.is_empty() {
        return Err(bad("ngcc_meta() returned NULL".into()));
    }
    if block.len() < size_of::<NgccMetaCommon>() {
        return Err(bad(format!("a block of {} bytes", block.len())));
    }
    // SAFETY: `block` holds at least a whole `NgccMetaCommon`, a plain C struct of integers
    // and char arrays for which every bit pattern is valid; read unaligned, by value.
    let common = unsafe { std::ptr::read_unaligned(block.as_ptr().cast::<NgccMetaCommon>()) };
    if common.magic != NGCC_META_MAGIC {
        return Err(bad(format!(
            "magic is {:#010x}, expected {NGCC_META_MAGIC:#010x}",
            common.magic
        )));
    }
    if common.abi != NGCC_LINK_ABI {
        return Err(bad(format!(
            "ABI {} (expected {NGCC_LINK_ABI})",
            common.abi
        )));
    }
    if common.kind != NGCC_TYPE_HASH {
        return Err(bad(format!(
            "type {} ({}), not hash",
            common.kind,
            kind_name(common.kind)
        )));
    }
    if (common.struct_size as usize) < size_of::<NgccMetaHash>()
        || block.len() < size_of::<NgccMetaHash>()
    {
        return Err(bad(format!(
            "struct_size {} is smaller than the hash block ({} bytes)",
            common.struct_size,
            size_of::<NgccMetaHash>()
        )));
    }
    // SAFETY: `block` holds a whole `NgccMetaHash` (checked above); as for the header.
    let hash = unsafe { std::ptr::read_unaligned(block.as_ptr().cast::<NgccMetaHash>()) };
    if hash.digest_bits != 0 && hash.digest_len != hash.digest_bits / 8 {
        return Err(bad(format!(
            "digest_len {} is not digest_bits/8 ({})",
            hash.digest_len,
            hash.digest_bits / 8
        )));
    }
    if hash.digest_bits != 0 {
        crate::catalog::bounds::check_digest_bits(hash.digest_bits).map_err(&bad)?;
    }
    let (id, instance) = (field_str(&common.id), field_str(&common.instance));
    // The id and instance name become file names (records, KAT logs, KAT text): a library
    // must not be able to choose where cyclescope writes.
    for (what, value) in [("ngcc_meta id", &id), ("ngcc_meta instance", &instance)] {
        if !value.is_empty() {
            SafeName::new(what, value).map_err(|e| bad(e.to_string()))?;
        }
    }
    let build_flags = match build_flags {
        Some(flags) => String::from_utf8_lossy(flags).into_owned(),
        None => field_str(&common.build_flags),
    };
    Ok(NgccMeta {
        id,
        kind: kind_name(common.kind).to_string(),
        algorithm: field_str(&common.algorithm),
        instance,
        variant: field_str(&common.variant),
        source_dir: field_str(&common.source_dir),
        compiler: field_str(&common.compiler),
        build_flags,
        digest_bits: hash.digest_bits,
        digest_len: hash.digest_len,
    })
}

/// The catalog's width against the one `meta` states (a width of 0 serves any).
pub(crate) fn check_digest_bits(
    path: &Path,
    meta: Option<&NgccMeta>,
    catalog: u32,
) -> Result<(), PluginError> {
    match meta {
        Some(m) if m.digest_bits != 0 && m.digest_bits != u64::from(catalog) => {
            Err(PluginError::DigestBitsDisagree {
                path: path.to_path_buf(),
                library: m.digest_bits,
                catalog,
            })
        }
        _ => Ok(()),
    }
}

fn kind_name(kind: u32) -> &'static str {
    match kind {
        1 => "kem",
        2 => "sig",
        3 => "kex",
        4 => "hash",
        _ => "unknown",
    }
}
