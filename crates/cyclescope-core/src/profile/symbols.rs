//! Symbolises a sampled profile's instruction pointers with `addr2line` (gimli's DWARF and the
//! ELF symbol table): each pointer made relative to where the candidate library was loaded,
//! then its function (demangled) and, where the library has line tables, its source line. A
//! pointer outside the library's `.text` (the C library, the vDSO, the worker) is counted as
//! outside it, never guessed at. Reading only.

use std::collections::BTreeMap;
use std::path::Path;

use super::ProfileError;

/// Where the samples fell: per function, per (file, line, function), and outside the library.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) functions: BTreeMap<String, u64>,
    pub(crate) lines: BTreeMap<(String, u64, String), u64>,
    pub(crate) outside: u64,
}

/// Name under which samples outside the library are counted.
pub(crate) const OUTSIDE: &str = "(outside the library: C library, vDSO, worker)";

/// Tallies `ips`, the library at `library` having been loaded at `base`.
pub(crate) fn tally(library: &Path, base: u64, ips: &[u64]) -> Result<Tally, ProfileError> {
    let symbols_error = |why: String| ProfileError::Symbols {
        path: library.display().to_string(),
        why,
    };
    let loader = addr2line::Loader::new(library).map_err(|e| symbols_error(e.to_string()))?;
    let text = loader
        .get_section_range(b".text")
        .ok_or_else(|| symbols_error("no .text section".into()))?;
    let mut t = Tally::default();
    for &ip in ips {
        let probe = ip.wrapping_sub(base);
        if ip < base || probe < text.begin || probe >= text.end {
            t.outside += 1;
            continue;
        }
        let function = loader.find_symbol(probe).map_or_else(
            || format!("0x{probe:x}"),
            |name| addr2line::demangle_auto(name.into(), None).into_owned(),
        );
        if let Ok(Some(loc)) = loader.find_location(probe)
            && let (Some(file), Some(line)) = (loc.file, loc.line)
        {
            *t.lines
                .entry((file.to_string(), u64::from(line), function.clone()))
                .or_default() += 1;
        }
        *t.functions.entry(function).or_default() += 1;
    }
    Ok(t)
}
