//! The static half of "a count the candidate cannot steer": the candidate library's executable
//! segments are searched for valgrind's client-request preamble before a count or a profile
//! runs it. Valgrind has no option that ignores client requests (3.19's manual and
//! `--help-debug` list none; `VALGRIND_CLO_CHANGE` even lets a program change some options),
//! so a library carrying the preamble can switch callgrind's collection off around its work
//! (`CALLGRIND_TOGGLE_COLLECT`, `…_STOP_INSTRUMENTATION`, `…_ZERO_STATS`, `…_DUMP_STATS`) or
//! ask `RUNNING_ON_VALGRIND` and take a cheaper path while counted. Such a library is refused
//! by name, whatever the request does. The scan cannot see code the library builds at run
//! time: `counter::callgrind::collection` checks what callgrind saw, for that case. Reading
//! only; it never runs the library.

use std::path::Path;

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};

/// The preambles valgrind's decoders recognise, by architecture: four rotations of a scratch
/// register by 64 bits in total (so a no-op natively), which no compiler emits by itself.
const PREAMBLES: [(&str, &[u8]); 2] = [
    // amd64: rolq $3,%rdi; rolq $13,%rdi; rolq $61,%rdi; rolq $51,%rdi
    (
        "amd64",
        &[
            0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d, 0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1,
            0xc7, 0x33,
        ],
    ),
    // arm64: ror x12,x12,#3; ror x12,x12,#13; ror x12,x12,#51; ror x12,x12,#61 (EXTR
    // 0x93CC0D8C, 0x93CC358C, 0x93CCCD8C, 0x93CCF58C, little-endian)
    (
        "arm64",
        &[
            0x8c, 0x0d, 0xcc, 0x93, 0x8c, 0x35, 0xcc, 0x93, 0x8c, 0xcd, 0xcc, 0x93, 0x8c, 0xf5,
            0xcc, 0x93,
        ],
    ),
];

/// Where a library carries a client-request preamble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// The file offset of its first byte.
    pub offset: u64,
    /// The architecture whose preamble it is.
    pub arch: &'static str,
}

/// The first client-request preamble in `bytes` (a whole ELF file) that lies in an executable
/// `PT_LOAD` segment, or None. A file that is not ELF64 is searched whole: nothing that
/// cannot be parsed is given the benefit of the doubt.
pub fn find(bytes: &[u8]) -> Option<Found> {
    match executable_ranges(bytes) {
        Some(ranges) => ranges.into_iter().find_map(|(start, end)| {
            search(bytes.get(start..end)?).map(|f| Found {
                offset: f.offset + start as u64,
                ..f
            })
        }),
        None => search(bytes),
    }
}

/// Reads `path` and searches it ([`find`]).
pub fn find_in_file(path: &Path) -> std::io::Result<Option<Found>> {
    Ok(find(&std::fs::read(path)?))
}

fn search(bytes: &[u8]) -> Option<Found> {
    PREAMBLES.iter().find_map(|(arch, p)| {
        bytes.windows(p.len()).position(|w| w == *p).map(|i| Found {
            offset: i as u64,
            arch,
        })
    })
}

/// The file ranges of the executable `PT_LOAD` segments (None: not a readable ELF64).
fn executable_ranges(bytes: &[u8]) -> Option<Vec<(usize, usize)>> {
    let header = elf::FileHeader64::<object::Endianness>::parse(bytes).ok()?;
    let endian = header.endian().ok()?;
    let segments = header.program_headers(endian, bytes).ok()?;
    Some(
        segments
            .iter()
            .filter(|p| p.p_type(endian) == elf::PT_LOAD && p.p_flags(endian) & elf::PF_X != 0)
            .filter_map(|p| {
                let start = usize::try_from(p.p_offset(endian)).ok()?;
                let len = usize::try_from(p.p_filesz(endian)).ok()?;
                Some((start, start.checked_add(len)?.min(bytes.len())))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_preambles_are_found_where_they_are() {
        for (arch, p) in PREAMBLES {
            let mut bytes = vec![0x90u8; 100];
            bytes.extend_from_slice(p);
            bytes.extend_from_slice(&[0x48, 0x87, 0xdb]);
            assert_eq!(find(&bytes), Some(Found { offset: 100, arch }));
        }
    }

    #[test]
    fn three_rotations_or_other_amounts_are_not_a_preamble() {
        let p = PREAMBLES[0].1;
        assert_eq!(find(&p[..12]), None);
        let mut other = p.to_vec();
        other[15] = 0x34;
        assert_eq!(find(&other), None);
    }

    #[test]
    fn only_executable_segments_of_an_elf_are_searched() {
        // A bundled library, compiled here with fixed flags from Rust that never names valgrind
        // (this test's own binary would do too, but where the linker lays its constants — the
        // preambles above among them — depends on the build); the same bytes with a preamble
        // appended after every segment are still clean.
        let lib = std::fs::read(crate::catalog::bundled::library("sm3hash").unwrap()).unwrap();
        assert!(executable_ranges(&lib).is_some_and(|r| !r.is_empty()));
        assert_eq!(find(&lib), None);
        let mut tail = lib.clone();
        tail.extend_from_slice(PREAMBLES[0].1);
        assert_eq!(find(&tail), None);
    }
}
