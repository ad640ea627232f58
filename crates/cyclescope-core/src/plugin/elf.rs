//! Pre-`dlopen` checks of a library file, and its static memory figure (spec §3.1: the sum of
//! the `PT_LOAD` segments' MemSiz), read with the `object` crate rather than by running readelf.

use std::path::Path;

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use object::read::{ReadCache, ReadRef};
use std::io::Read as _;

use super::PluginError;

/// What the header check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfCheck {
    pub(crate) machine: u16,
}

/// The ELF `e_machine` of the machine this binary runs on.
const HOST_MACHINE: (u16, &str) = if cfg!(target_arch = "x86_64") {
    (elf::EM_X86_64, "x86-64")
} else if cfg!(target_arch = "aarch64") {
    (elf::EM_AARCH64, "AArch64")
} else {
    (elf::EM_NONE, "an unsupported architecture")
};

fn machine_name(m: u16) -> String {
    match m {
        elf::EM_X86_64 => "x86-64".into(),
        elf::EM_AARCH64 => "AArch64".into(),
        elf::EM_386 => "i386".into(),
        elf::EM_ARM => "32-bit ARM".into(),
        elf::EM_RISCV => "RISC-V".into(),
        elf::EM_PPC64 => "PowerPC64".into(),
        elf::EM_S390 => "s390".into(),
        other => format!("ELF machine {other}"),
    }
}

/// Checks that `path` exists, is an ELF file and targets this machine, without loading it.
pub fn check_elf(path: &Path) -> Result<ElfCheck, PluginError> {
    // Only the headers are read: the check runs in the worker before `dlopen`, and reading a
    // whole library (megabytes with debug info) would inflate the worker's peak RSS.
    let mut file = open(path)?;
    let mut head = Vec::with_capacity(64);
    std::io::Read::by_ref(&mut file)
        .take(64)
        .read_to_end(&mut head)
        .map_err(|source| PluginError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
    let data = head.as_slice();
    let cache = ReadCache::new(file);
    if data.len() < 4 || &data[..4] != b"\x7fELF" {
        return Err(PluginError::NotElf(path.to_path_buf()));
    }
    // e_machine sits at offset 18 in both ELF classes; read it before a full parse so that a
    // foreign-architecture library is named as such even when it is 32-bit.
    if data.len() < 20 {
        return Err(PluginError::BadElf {
            path: path.to_path_buf(),
            detail: format!("only {} bytes, shorter than an ELF header", data.len()),
        });
    }
    let machine = match data[5] {
        2 => u16::from_be_bytes([data[18], data[19]]),
        _ => u16::from_le_bytes([data[18], data[19]]),
    };
    if machine != HOST_MACHINE.0 {
        return Err(PluginError::WrongArchitecture {
            path: path.to_path_buf(),
            found: machine_name(machine),
            expected: HOST_MACHINE.1,
        });
    }
    // The file and program headers, which is what dlopen maps by: parsing the whole file
    // (section and symbol tables, tens of KiB for a Rust library) would leave that much heap
    // touched in the worker, and count it in the candidate's baseline RSS.
    load_segments(&cache).map_err(|detail| PluginError::BadElf {
        path: path.to_path_buf(),
        detail,
    })?;
    Ok(ElfCheck { machine })
}

/// Sum of `p_memsz` over the `PT_LOAD` program headers (code + rodata + data + bss).
pub fn elf_load_bytes(path: &Path) -> Result<u64, PluginError> {
    let cache = ReadCache::new(open(path)?);
    load_segments(&cache).map_err(|detail| PluginError::BadElf {
        path: path.to_path_buf(),
        detail,
    })
}

/// Parses the ELF64 file header and program headers of `data` and sums the `PT_LOAD` sizes.
fn load_segments<'a, R: ReadRef<'a>>(data: R) -> Result<u64, String> {
    let header = elf::FileHeader64::<object::Endianness>::parse(data).map_err(|e| e.to_string())?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let segments = header
        .program_headers(endian, data)
        .map_err(|e| e.to_string())?;
    Ok(segments
        .iter()
        .filter(|p| p.p_type(endian) == elf::PT_LOAD)
        .map(|p| p.p_memsz(endian))
        .sum())
}

fn open(path: &Path) -> Result<std::fs::File, PluginError> {
    std::fs::File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            PluginError::Missing(path.to_path_buf())
        } else {
            PluginError::Unreadable {
                path: path.to_path_buf(),
                source: e,
            }
        }
    })
}
