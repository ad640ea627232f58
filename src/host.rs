//! (filled by the host work)
