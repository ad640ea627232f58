//! The `ngcc_meta` block of a harness-built library (`api/link_common.h`, `link_hash.h`), laid
//! out exactly as the C structs. The bundled libraries export it and cyclescope's loader reads
//! it through this one definition, so producer and reader cannot drift apart.

use core::ffi::c_char;

/// `NGCC_META_MAGIC`; stored little-endian its bytes are `4E 47 47 43` ("NGGC", not "NGCC").
pub const NGCC_META_MAGIC: u32 = 0x4347_474E;
/// `NGCC_LINK_ABI`.
pub const NGCC_LINK_ABI: u32 = 1;
/// `type` values of `ngcc_meta_common_t`.
pub const NGCC_TYPE_UNKNOWN: u32 = 0;
pub const NGCC_TYPE_KEM: u32 = 1;
pub const NGCC_TYPE_SIG: u32 = 2;
pub const NGCC_TYPE_KEX: u32 = 3;
pub const NGCC_TYPE_HASH: u32 = 4;

/// `ngcc_meta_common_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NgccMetaCommon {
    pub magic: u32,
    pub abi: u32,
    pub kind: u32,
    pub struct_size: u32,
    pub id: [c_char; 16],
    pub algorithm: [c_char; 64],
    pub instance: [c_char; 64],
    pub variant: [c_char; 32],
    pub source_dir: [c_char; 256],
    pub compiler: [c_char; 64],
    pub build_flags: [c_char; 128],
}

/// `ngcc_meta_hash_t`. `digest_bits == 0` is cyclescope's extension for a library that serves
/// several widths: the caller (the catalog) chooses.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NgccMetaHash {
    pub h: NgccMetaCommon,
    pub digest_bits: u64,
    pub digest_len: u64,
}

/// Copies `s` into a NUL-terminated fixed C field, truncating like the harness's `snprintf`
/// (at most `N - 1` bytes kept). Usable in a `static` initialiser.
pub const fn c_field<const N: usize>(s: &str) -> [c_char; N] {
    let bytes = s.as_bytes();
    let mut out = [0 as c_char; N];
    let mut i = 0;
    while i < bytes.len() && i + 1 < N {
        out[i] = c_char::from_ne_bytes([bytes[i]]);
        i += 1;
    }
    out
}

/// Reads a fixed C field up to its first NUL (or its whole length), replacing invalid UTF-8.
pub fn field_str(field: &[c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .map(|&c| c.to_ne_bytes()[0])
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Metadata of a bundled ICCS baseline library (variant `iccs-baseline`).
pub const fn iccs_meta(instance: &str, digest_bits: u64) -> NgccMetaHash {
    NgccMetaHash {
        h: NgccMetaCommon {
            magic: NGCC_META_MAGIC,
            abi: NGCC_LINK_ABI,
            kind: NGCC_TYPE_HASH,
            struct_size: core::mem::size_of::<NgccMetaHash>() as u32,
            id: c_field("iccs"),
            algorithm: c_field("ICCS hash helpers"),
            instance: c_field(instance),
            variant: c_field("iccs-baseline"),
            source_dir: c_field("plugins"),
            compiler: c_field("rustc"),
            build_flags: c_field("rustc -C opt-level=3 -C codegen-units=1"),
        },
        digest_bits,
        digest_len: digest_bits / 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_c_structs() {
        // 16 bytes of u32s + 16+64+64+32+256+64+128 chars = 640; + two u64 = 656.
        assert_eq!(core::mem::size_of::<NgccMetaCommon>(), 640);
        assert_eq!(core::mem::size_of::<NgccMetaHash>(), 656);
    }

    #[test]
    fn c_field_truncates_to_n_minus_one() {
        let f: [c_char; 4] = c_field("abcdef");
        assert_eq!(field_str(&f), "abc");
    }
}
