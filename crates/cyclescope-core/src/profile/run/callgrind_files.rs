//! What the profile asks of callgrind and what it reads back: the arguments that confine
//! collection to the counted calls, and the counted part of the three output files.

use std::path::Path;

use crate::counter::callgrind::{self, COUNTED_FN};

/// The files of a profile's callgrind run: the part after the counted calls (written at
/// exit), the part before them, and the counted calls' own.
pub(super) const OUT_FILES: [&str; 3] = ["callgrind.out", "callgrind.out.1", "callgrind.out.2"];

/// valgrind's arguments for a profile: call graph and lines, collection only inside the
/// worker's counted calls, and a dump on entering and on leaving them, so that what ran in
/// them can be held against what was collected (`callgrind::collection`).
pub(super) fn valgrind_args(out_file: &Path) -> Vec<String> {
    vec![
        "--tool=callgrind".into(),
        // No gdbserver: its FIFOs would need unlink(2), which the worker's filter refuses.
        "--vgdb=no".into(),
        callgrind::collection::ONE_INSTRUCTION_BLOCKS.into(),
        "--compress-strings=no".into(),
        "--compress-pos=no".into(),
        format!("--toggle-collect={COUNTED_FN}"),
        format!("--dump-before={COUNTED_FN}"),
        format!("--dump-after={COUNTED_FN}"),
        format!("--callgrind-out-file={}", out_file.display()),
    ]
}

/// The counted calls' part of the call graph, once the three parts show that the library did
/// not steer what callgrind collected.
pub(super) fn counted_part(dir: &Path) -> Result<String, callgrind::CallgrindError> {
    use callgrind::collection;
    collection::check_files(dir, &OUT_FILES)?;
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .map_err(|e| callgrind::CallgrindError::NoOutput { why: e.to_string() })
    };
    let [after, before, counted] = OUT_FILES.map(read);
    let counted = counted?;
    collection::check_counted(&before?, &counted, &after?)?;
    Ok(counted)
}
