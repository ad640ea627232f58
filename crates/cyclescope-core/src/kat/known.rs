//! Known answers: vectors of a KAT file whose whole text matched its reference (a manifest
//! entry or a `--kat-dir` file), read back from disk by the engine, so each is an answer the
//! engine holds and no worker wrote for it. The campaign hashes every one of `KAT_2_12`'s
//! again before timing, in one job of the program the timed calls run in: a library that
//! computes the right function only in its KAT job (it can tell that job by what is in its
//! memory) gives another digest there and is refused. Parsing only.

use std::io::{BufRead, BufReader};
use std::path::Path;

/// One vector: the first `bits` bits of `msg` hash to `digest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownAnswer {
    pub(crate) msg: Vec<u8>,
    pub(crate) bits: u64,
    pub(crate) digest: Vec<u8>,
    /// The KAT file it comes from (its name), for the failure's words.
    pub(crate) file: String,
}

/// The vector of `path` whose message is `bits` long (`Msg_Len = bits`), if the file has it.
#[cfg(test)]
pub(crate) fn read(path: &Path, bits: u64) -> Option<KnownAnswer> {
    let file = std::fs::File::open(path).ok()?;
    let name = path.file_name()?.to_string_lossy().into_owned();
    parse(BufReader::new(file), &[bits], &name).pop()
}

/// Every vector of a `KAT_2_12` file at `path` (0 to 4096 bits, in that order); none when
/// one is missing or the file is unreadable.
pub(crate) fn read_all(path: &Path) -> Vec<KnownAnswer> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lengths: Vec<u64> = (0..crate::kat::KatFile::Kat2_12.total_steps()).collect();
    parse(BufReader::new(file), &lengths, &name)
}

/// The three vectors of a `KAT_2_23` file at `path`: its all-zero, all-0xFF and DRNG messages
/// of 2^23 bits (which the text names, not prints), made again here as the generator makes
/// them, with the file's three digests; none when the file does not hold three.
pub(crate) fn read_partial(path: &Path) -> Vec<KnownAnswer> {
    use crate::kat::KatFile;
    use crate::kat::generate::MSG_LEN_BITS_2_23 as BITS;
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let digests: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Dst = "))
        .filter_map(|d| hex::decode(d.trim()).ok())
        .collect();
    if digests.len() != 3 {
        return Vec::new();
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let len = (BITS / 8) as usize;
    let mut drng = vec![0u8; len];
    crate::kat::drng::Drng::new(&KatFile::Kat2_23.seed()).generate(&mut drng, BITS);
    [vec![0u8; len], vec![0xFF; len], drng]
        .into_iter()
        .zip(digests)
        .map(|(msg, digest)| KnownAnswer {
            msg,
            bits: BITS,
            digest,
            file: name.clone(),
        })
        .collect()
}

/// The vectors of a KAT text whose messages are `lengths` long, in the order of `lengths`;
/// all or none (an empty list when one is missing or unreadable).
pub(crate) fn parse(text: impl BufRead, lengths: &[u64], name: &str) -> Vec<KnownAnswer> {
    let mut found: Vec<Option<KnownAnswer>> = vec![None; lengths.len()];
    let mut len = None;
    let mut msg = None;
    for line in text.lines() {
        let Ok(line) = line else {
            return Vec::new();
        };
        let Some((key, value)) = line.split_once(" = ").or_else(|| line.split_once(" =")) else {
            continue;
        };
        let wanted = len.and_then(|l| lengths.iter().position(|&b| b == l));
        match (key.trim(), wanted) {
            ("Msg_Len", _) => len = value.trim().parse::<u64>().ok(),
            ("Msg", Some(_)) => msg = hex::decode(value.trim()).ok(),
            ("Dst", Some(i)) => {
                found[i] = msg
                    .take()
                    .zip(hex::decode(value.trim()).ok())
                    .map(|(m, d)| KnownAnswer {
                        msg: m,
                        bits: lengths[i],
                        digest: d,
                        file: name.to_string(),
                    });
            }
            _ => {}
        }
    }
    found
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of every byte and the length, so a message made otherwise than the
    /// generator made it gives another digest.
    fn weigh(msg: &[u8], bits: u64) -> Vec<u8> {
        let sum = msg.iter().enumerate().fold(0u64, |acc, (i, &b)| {
            acc.wrapping_add((i as u64 + 1) * u64::from(b))
        });
        [sum.to_le_bytes(), bits.to_le_bytes()].concat()
    }

    #[test]
    fn a_partial_files_messages_are_made_again_as_the_generator_made_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KAT_2_23_x.txt");
        let mut hash =
            |m: &crate::plugin::GuardedBuffer, bits: u64, d: &mut crate::plugin::GuardedBuffer| {
                d.data_mut().copy_from_slice(&weigh(m.data(), bits));
                Ok(0)
            };
        let file = std::fs::File::create(&path).unwrap();
        crate::kat::generate(
            crate::kat::KatFile::Kat2_23,
            128,
            &mut hash,
            file,
            &mut |_, _| {},
        )
        .unwrap();
        let kas = read_partial(&path);
        assert_eq!(kas.len(), 3);
        for ka in &kas {
            assert_eq!(weigh(&ka.msg, ka.bits), ka.digest);
        }
        // A file that does not hold three digests gives none.
        std::fs::write(&path, "Dst = 00\n").unwrap();
        assert!(read_partial(&path).is_empty());
    }

    #[test]
    fn a_vector_is_read_by_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KAT_2_12_x.txt");
        std::fs::write(
            &path,
            "Msg_Len = 0\nMsg = \nDst_Len = 16\nDst = 0102\n\n\
             Msg_Len = 9\nMsg = AB80\nDst_Len = 16\nDst = A1B2\n",
        )
        .unwrap();
        let ka = read(&path, 9).unwrap();
        assert_eq!(
            (ka.msg, ka.bits, ka.digest),
            (vec![0xAB, 0x80], 9, vec![0xA1, 0xB2])
        );
        assert_eq!(read(&path, 0).unwrap().msg, Vec::<u8>::new());
        assert_eq!(read(&path, 10), None);
    }
}
