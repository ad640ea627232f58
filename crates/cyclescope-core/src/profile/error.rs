//! Why a profile could not be taken, each reason in words that say what to change.

use super::GraphError;

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    Valgrind(#[from] crate::counter::callgrind::CallgrindError),
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Bundled(#[from] crate::catalog::bundled::BundledError),
    #[error(transparent)]
    Seal(#[from] crate::plugin::sealed::SealError),
    #[error("the profile's worker failed: {0}")]
    Worker(String),
    #[error("cannot read the symbols of {path}: {why}")]
    Symbols { path: String, why: String },
    #[error("the sampled profile caught no sample in the candidate's calls")]
    NoSamples,
    #[error("cannot make the profile's scratch folder: {0}")]
    Scratch(std::io::Error),
    #[error(
        "callgrind collected no instructions of the candidate's calls ({calls} calls out of the \
         worker's counted-calls function)"
    )]
    Empty { calls: u64 },
    /// valgrind stopped the worker with SIGILL at an instruction it cannot decode.
    #[error("{}", undecodable(bytes, *avx512))]
    Undecodable { bytes: String, avx512: bool },
}

/// What happened when valgrind met an instruction it cannot decode, and what works instead.
fn undecodable(bytes: &str, avx512: bool) -> String {
    let what = if avx512 {
        "AVX-512, which -march=native turns on where the CPU has it"
    } else {
        "likely an extension that -march=native turned on"
    };
    format!(
        "this valgrind cannot decode an instruction the library's build uses ({bytes}: {what}), \
         so it stopped the profiled calls with SIGILL. What works instead: the sampled profile \
         (`cyclescope profile --sampled`), which runs the calls natively, or a build without \
         -march=native"
    )
}

impl ProfileError {
    /// The profile's error for valgrind's report of an instruction it cannot decode.
    pub(super) fn undecoded(e: crate::counter::callgrind::CallgrindError) -> Self {
        use crate::counter::callgrind::CallgrindError;
        match e {
            CallgrindError::Avx512 { bytes } => Self::Undecodable {
                bytes,
                avx512: true,
            },
            CallgrindError::Unhandled { bytes } => Self::Undecodable {
                bytes,
                avx512: false,
            },
            e => Self::Valgrind(e),
        }
    }
}
