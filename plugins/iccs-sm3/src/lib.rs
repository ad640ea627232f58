//! Shared code of the bundled ICCS baseline libraries: a bit-granular SM3 ([`sm3`]), HMAC-SM3
//! ([`hmac`]), the ICCS helper constructions `sm3hash`, `pseudohash` and `pseudoXOF`
//! ([`iccs`], spec §1.3), the `CryptHash` pointer boundary the cdylibs share ([`ffi`]), and the
//! `ngcc_meta` block ([`meta`]) that cyclescope's loader reads. Pure Rust with no dependencies;
//! nothing here loads libraries or does I/O.

pub mod ffi;
pub mod hmac;
pub mod iccs;
pub mod meta;
pub mod sm3;

pub use sm3::{Sm3, sm3, sm3_bits};
