//! (filled by the kat work)
