//! The generators against a stand-in hash: sizes of the published logs, DRNG messages in the
//! text, and the CRYPTOFAIL message.

use super::*;
use crate::kat::manifest::{CanonicalMode, canonical_sha256};

/// A stand-in hash: the digest is the message length in bits, repeated (sizes never depend on
/// digest values).
fn fake(msg: &GuardedBuffer, bits: u64, digest: &mut GuardedBuffer) -> Result<i32, GenerateError> {
    assert!(msg.len() as u64 >= bits.div_ceil(8));
    for (i, d) in digest.data_mut().iter_mut().enumerate() {
        *d = (bits as u8).wrapping_add(i as u8);
    }
    Ok(0)
}

fn run(file: KatFile, bits: u32) -> (Vec<u8>, Written) {
    let mut out = Vec::new();
    let mut steps = 0;
    let written = generate(file, bits, &mut fake, &mut out, &mut |done, total| {
        assert!(done <= total);
        steps = done;
    })
    .unwrap();
    assert_eq!(steps, file.total_steps());
    (out, written)
}

const WIDTHS: [u32; 8] = [256, 384, 512, 768, 1024, 1152, 1280, 2048];

#[test]
fn kat_2_12_sizes_match_the_published_logs() {
    let sizes = [
        2_542_614, 2_673_718, 2_804_822, 3_067_030, 3_333_335, 3_464_439, 3_595_543, 4_382_167,
    ];
    for (bits, size) in WIDTHS.into_iter().zip(sizes) {
        let (text, written) = run(KatFile::Kat2_12, bits);
        assert_eq!((text.len() as u64, written.bytes), (size, size), "{bits}");
        assert_eq!(KatFile::Kat2_12.expected_bytes(bits), size, "{bits}");
        assert_eq!(
            written.sha256_strict,
            canonical_sha256(&text, CanonicalMode::Strict)
        );
        assert_eq!(
            written.sha256_nolen,
            canonical_sha256(&text, CanonicalMode::NoLen)
        );
    }
}

#[test]
fn kat_2_23_sizes_match_the_published_logs() {
    let sizes = [623, 719, 815, 1007, 1202, 1298, 1394, 1970];
    for (bits, size) in WIDTHS.into_iter().zip(sizes) {
        let (text, written) = run(KatFile::Kat2_23, bits);
        assert_eq!((text.len() as u64, written.bytes), (size, size), "{bits}");
        assert_eq!(KatFile::Kat2_23.expected_bytes(bits), size, "{bits}");
        // Three records whose `Msg_Len` has 10 digits instead of 7.
        assert_eq!(KatFile::Kat2_33.expected_bytes(bits), size + 9, "{bits}");
    }
}

#[test]
fn kat_2_12_text_starts_like_the_official_file() {
    let (text, _) = run(KatFile::Kat2_12, 256);
    let text = String::from_utf8(text).unwrap();
    let head: Vec<&str> = text.lines().take(15).collect();
    assert_eq!(
        &head[..5],
        [
            "Msg_Len = 0",
            "Msg = ",
            "Dst_Len = 256",
            &format!(
                "Dst = {}",
                "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
            ),
            ""
        ]
    );
    assert_eq!(&head[5..7], ["Msg_Len = 1", "Msg = 80"]);
    assert_eq!(&head[10..12], ["Msg_Len = 2", "Msg = 40"]);
    assert!(text.contains("Msg_Len = 8\nMsg = 3D\n"));
    assert!(text.contains("Msg_Len = 4096\nMsg = 425349930E8EC11A078FEC7A"));
    assert!(text.ends_with("\n\n"));
}

#[test]
fn kat_2_23_records_are_zero_ff_and_random() {
    let (text, _) = run(KatFile::Kat2_23, 256);
    let text = String::from_utf8(text).unwrap();
    let exp: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Msg_Exp = "))
        .collect();
    assert_eq!(
        exp,
        [
            "Msg_Exp = 0000000000000000 .... 0000000000000000",
            "Msg_Exp = FFFFFFFFFFFFFFFF .... FFFFFFFFFFFFFFFF",
            "Msg_Exp = B6E2C825BE0E7D79 .... 70B7D148BC6FCCEC",
        ]
    );
    let seeds: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Msg_Seed ="))
        .collect();
    assert_eq!(seeds[..2], ["Msg_Seed = ", "Msg_Seed = "]);
    assert_eq!(
        seeds[2],
        format!("Msg_Seed = {}", hex::encode_upper("KAT_2_23".repeat(8)))
    );
}

#[test]
fn a_nonzero_return_stops_the_file_with_the_harness_message() {
    let mut failing =
        |_: &GuardedBuffer, bits: u64, _: &mut GuardedBuffer| Ok(if bits == 17 { -4 } else { 0 });
    let mut out = Vec::new();
    let err = generate(
        KatFile::Kat2_12,
        256,
        &mut failing,
        &mut out,
        &mut |_, _| {},
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "CryptHash returned -4 for msg_len=17 bits");
    assert_eq!(err.status(), Some(KatStatus::Cryptofail));
}

/// A million calls of the stand-in hash (a few seconds); not skipped by default, like every test.
#[test]
fn kat_loop_size_and_shape() {
    let (text, _) = run(KatFile::Loop, 512);
    let text = String::from_utf8(text).unwrap();
    assert_eq!(text.len(), 15 + 6 + 2048 + 1 + 14 + 6 + 128 + 1 + 1);
    assert_eq!(KatFile::Loop.expected_bytes(512), text.len() as u64);
    assert!(text.starts_with("Msg_Len = 8192\nMsg = 2D911820A8ED0879"));
    // The same text from the chain's last digest alone, as the engine writes it from the trial
    // worker's `--chain`.
    let last = text.lines().find_map(|l| l.strip_prefix("Dst = ")).unwrap();
    let mut again = Vec::new();
    generate_loop_from(512, &hex::decode(last).unwrap(), &mut again).unwrap();
    assert_eq!(String::from_utf8(again).unwrap(), text);
}

#[test]
fn file_names_and_seeds() {
    assert_eq!(
        KatFile::Loop.file_name("uHash-512"),
        "KAT_Loop_uHash-512.txt"
    );
    assert_eq!(KatFile::Kat2_33.seed().len(), 64);
    assert_eq!(KatFile::from_tag("KAT_2_23"), Some(KatFile::Kat2_23));
}
