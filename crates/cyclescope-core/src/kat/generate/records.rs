//! The record printers of the official generator: uppercase `%02X` hex, `Key = value` lines,
//! an empty line after every record. Text only; no hashing, no I/O beyond appending to a buffer.

/// Appends the uppercase hex of `bytes`.
pub(crate) fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(2 * bytes.len());
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
}

fn push_len(out: &mut Vec<u8>, key: &str, bits: u64) {
    out.extend_from_slice(format!("{key} = {bits}\n").as_bytes());
}

/// `Msg_Len = <bits>` and `Msg = <hex>`: `floor(bits/8)` bytes, plus the last byte masked to
/// its high `bits % 8` bits when the length ends mid-byte.
pub(crate) fn full_message(out: &mut Vec<u8>, msg: &[u8], bits: u64) {
    push_len(out, "Msg_Len", bits);
    out.extend_from_slice(b"Msg = ");
    let whole = (bits / 8) as usize;
    push_hex(out, &msg[..whole]);
    let partial = (bits % 8) as u32;
    if partial != 0 {
        push_hex(out, &[msg[whole] & (0xFFu8 << (8 - partial))]);
    }
    out.push(b'\n');
}

/// `Msg_Len`, `Msg_Seed = <seed hex or nothing>`, `Msg_Exp = <first 8> .... <last 8>` of a
/// long message (`msg` holds at least `bits / 8` bytes, `bits / 8 >= 8`).
pub(crate) fn partial_message(out: &mut Vec<u8>, msg: &[u8], bits: u64, seed: Option<&[u8]>) {
    push_len(out, "Msg_Len", bits);
    out.extend_from_slice(b"Msg_Seed = ");
    if let Some(seed) = seed {
        push_hex(out, seed);
    }
    out.extend_from_slice(b"\nMsg_Exp = ");
    let end = (bits / 8) as usize;
    push_hex(out, &msg[..8]);
    out.extend_from_slice(b" .... ");
    push_hex(out, &msg[end - 8..end]);
    out.push(b'\n');
}

/// `Dst_Len = <bits>`, `Dst = <hex>` and the record's closing empty line.
pub(crate) fn digest(out: &mut Vec<u8>, digest: &[u8], digest_bits: u32) {
    push_len(out, "Dst_Len", u64::from(digest_bits));
    out.extend_from_slice(b"Dst = ");
    push_hex(out, digest);
    out.extend_from_slice(b"\n\n");
}

/// Decimal digits of `n`.
fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

/// Bytes [`full_message`] appends for a message of `bits` bits.
pub(crate) fn full_message_bytes(bits: u64) -> u64 {
    "Msg_Len = \nMsg = \n".len() as u64 + digits(bits) + 2 * bits.div_ceil(8)
}

/// Bytes [`partial_message`] appends for `bits` bits and a seed of `seed_bytes` bytes.
pub(crate) fn partial_message_bytes(bits: u64, seed_bytes: u64) -> u64 {
    "Msg_Len = \nMsg_Seed = \nMsg_Exp =  .... \n".len() as u64 + digits(bits) + 2 * seed_bytes + 32
}

/// Bytes [`digest`] appends for a `digest_bits` digest.
pub(crate) fn digest_bytes(digest_bits: u32) -> u64 {
    let bits = u64::from(digest_bits);
    "Dst_Len = \nDst = \n\n".len() as u64 + digits(bits) + 2 * bits.div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_counts_are_the_printed_lengths() {
        for bits in [0u64, 1, 7, 8, 9, 99, 100, 4096, 8192] {
            let mut out = Vec::new();
            full_message(&mut out, &vec![0xA5; bits.div_ceil(8) as usize], bits);
            assert_eq!(out.len() as u64, full_message_bytes(bits), "{bits}");
        }
        for (bits, seed) in [(128u64, None), (1 << 23, Some(&[7u8; 64][..]))] {
            let mut out = Vec::new();
            partial_message(&mut out, &vec![0; (bits / 8) as usize], bits, seed);
            let seed_bytes = seed.map_or(0, |s| s.len() as u64);
            assert_eq!(out.len() as u64, partial_message_bytes(bits, seed_bytes));
        }
        for bits in [8u32, 256, 2048, 8] {
            let mut out = Vec::new();
            digest(&mut out, &vec![1; (bits / 8) as usize], bits);
            assert_eq!(out.len() as u64, digest_bytes(bits), "{bits}");
        }
    }

    #[test]
    fn records_print_like_the_official_generator() {
        let mut out = Vec::new();
        full_message(&mut out, &[], 0);
        full_message(&mut out, &[0x0E, 0x0F], 9);
        digest(&mut out, &[0xab, 0x01], 16);
        partial_message(&mut out, &[0u8; 16], 128, None);
        partial_message(&mut out, &[0xFFu8; 16], 128, Some(&[1, 2]));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Msg_Len = 0\nMsg = \nMsg_Len = 9\nMsg = 0E00\nDst_Len = 16\nDst = AB01\n\n\
             Msg_Len = 128\nMsg_Seed = \nMsg_Exp = 0000000000000000 .... 0000000000000000\n\
             Msg_Len = 128\nMsg_Seed = 0102\nMsg_Exp = FFFFFFFFFFFFFFFF .... FFFFFFFFFFFFFFFF\n"
        );
    }
}
