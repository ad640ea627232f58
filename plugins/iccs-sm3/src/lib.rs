//! Shared code of the bundled ICCS baseline libraries.
pub mod meta;
