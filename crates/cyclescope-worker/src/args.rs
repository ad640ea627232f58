//! The trial worker's job, as the engine sends it on stdin after the session token
//! (`measure::trial_args`, `worker::job_block`; never on the command line): `[worker]
//! measure LIB --digest-bits N --bytes L --iters I --warmups W [--trials T] [--samples S]
//! [--cpu C] [--pmu-type P] [--max-address-space B] [--max-cpu-seconds S] [--max-file-size B]
//! [--max-open-files N] [--abi iccs|supercop] [--fresh-seed S] [--msg-offset O --digest-offset O]
//! [--count] [--hw-instructions] [--sample-period NS] [--loop-only] [--repeat]
//! [--message-fd [--message-bits B | --table [--twice] [--in-place] [--unchecked-input] [--framed [--two-threads]] | --chain]]`. Parsing only; a malformed line is refused with the
//! reason, never guessed at.

use core::ffi::CStr;
use core::fmt;

use super::text::Lossy;

/// Everything one trial worker is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invocation<'a> {
    pub library: &'a CStr,
    pub digest_bits: u32,
    pub input_bytes: u64,
    pub iterations: u64,
    pub warmups: u64,
    pub trials: u32,
    pub sample_calls: u64,
    pub cpu: Option<usize>,
    /// The perf type of the measurement CPU's core PMU on a hybrid CPU (`host::pmu`): the
    /// cycles event names it in its config.
    pub pmu_type: Option<u32>,
    /// The sampled profile (`sampler`): sample the calls' instruction pointers every this
    /// many nanoseconds of cpu-clock (hardware cycles where the PMU allows).
    pub sample_period_ns: Option<u64>,
    pub address_space_bytes: Option<u64>,
    pub cpu_seconds: Option<u64>,
    pub file_size_bytes: Option<u64>,
    pub open_files: Option<u64>,
    /// SUPERCOP's `crypto_hash` instead of ICCS `CryptHash`.
    pub supercop: bool,
    /// The fresh-message probe: each call hashes a message of its own, pseudo-random from
    /// this seed, instead of the harness's message — and with the first 8 bytes of each from a
    /// second seed that arrives on stdin only after `ready` (`setup::read_go_line`), so that
    /// no candidate code can hash a probe message before the engine starts its clock.
    pub fresh_seed: Option<u64>,
    /// A layout of its own (`measure::layout`): the message and the digest this many bytes
    /// past a 64-byte boundary, instead of where their allocations put them.
    pub offsets: Option<(usize, usize)>,
    /// The instruction count (`counter::callgrind`): the process runs under valgrind, its
    /// warm-ups and its counted calls each in a function of their own that the parent finds
    /// in callgrind's call graph, and no per-call phase.
    pub count: bool,
    /// The loop counter is hardware `instructions:u` on the core PMU, and nothing else: where
    /// it does not open, the worker refuses (`--counter hw-instructions`).
    pub hw_instructions: bool,
    /// The fresh-message probe with no candidate: LIB is not loaded, a built-in function
    /// stands in (`library::loop_only`), so the engine learns what the probe's loop itself
    /// costs a call.
    pub loop_only: bool,
    /// The fresh-message probe's twin: the same seeds, go line, loop and digests, but every
    /// call hashes the harness's one message at one address (`proof::Probe`).
    pub repeat: bool,
    /// The message is the `--bytes` bytes of the descriptor the engine hands over beside the
    /// library (`setup::MESSAGE_FD`, a sealed memfd), not the harness's: how a digest of a
    /// message of the engine's choosing is had (a reference digest, a known answer,
    /// `cyclescope hash`) in the program and the job every timed call runs in.
    pub message_fd: bool,
    /// The length each call passes, in bits, where it is not `--bytes` × 8 (a message that
    /// ends mid-byte); only with `--message-fd`.
    pub message_bits: Option<u64>,
    /// The engine's descriptor holds a table of `--iters` messages of their own lengths, each
    /// hashed in turn in a buffer of exactly its length (`trial::table`): how a batch of the
    /// engine's messages is hashed in one job (SUPERCOP's checksums); only with `--message-fd`.
    pub table: bool,
    /// Each message of the table is hashed twice, both digests reported.
    pub twice: bool,
    /// Each message of the table is also hashed in place, the digest written over the message
    /// (`crypto_hash` only: the ICCS API does not promise it).
    pub in_place: bool,
    /// A table's messages are not checked after their calls (the KAT generator's calls: a
    /// change to one message is the conformance checks' to find, not the KAT's).
    pub unchecked_input: bool,
    /// Each record of the table also says where its message and digest sit and what lies
    /// around them (`trial::framed`): the conformance checks' calls; only with `--table`.
    pub framed: bool,
    /// The framed table's records are shared between two threads that start together, the
    /// even records in one and the odd in the other (`trial::together`: the `reentrancy`
    /// check); only with `--framed`.
    pub two_threads: bool,
    /// The engine's message is the first of a chain of `--iters` more calls, each on the last
    /// message rotated and XORed with the last digest (`trial::chain`, the `KAT_Loop` file);
    /// only with `--message-fd`.
    pub chain: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgsError<'a> {
    Usage,
    NoLibrary,
    NotANumber(&'a [u8]),
    NotAnAbi(&'a [u8]),
    Unknown(&'a [u8]),
    Twice(&'a [u8]),
    Missing,
    OutOfRange(&'static str),
}

impl fmt::Display for ArgsError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgsError::Usage => f.write_str(
                "usage: measure LIB --digest-bits N --bytes L --iters I --warmups W [--trials T] \
                 [--samples S] [--cpu C] [--pmu-type P] [--max-address-space B] [--max-cpu-seconds S] \
                 [--max-file-size B] [--max-open-files N] [--abi iccs|supercop] \
                 [--fresh-seed S] [--msg-offset O --digest-offset O] [--count] \
                 [--hw-instructions] [--sample-period NS] [--loop-only] [--repeat] \
                 [--message-fd [--message-bits B | --table [--twice] [--in-place] [--unchecked-input] [--framed [--two-threads]] | --chain]]",
            ),
            ArgsError::NoLibrary => f.write_str("no library given"),
            ArgsError::NotANumber(k) => write!(f, "{} needs a number", Lossy(k)),
            ArgsError::NotAnAbi(k) => write!(f, "{} needs iccs or supercop", Lossy(k)),
            ArgsError::Unknown(k) => write!(f, "unknown option {}", Lossy(k)),
            ArgsError::Twice(k) => write!(f, "{} is given twice", Lossy(k)),
            ArgsError::Missing => {
                f.write_str("--digest-bits, --bytes, --iters and --warmups are required")
            }
            ArgsError::OutOfRange(k) => write!(f, "{k} is out of range"),
        }
    }
}

/// The numeric options, in the order the engine writes them.
const OPTIONS: [&[u8]; 17] = [
    b"--digest-bits",
    b"--bytes",
    b"--iters",
    b"--warmups",
    b"--trials",
    b"--samples",
    b"--cpu",
    b"--max-address-space",
    b"--max-cpu-seconds",
    b"--max-file-size",
    b"--max-open-files",
    b"--fresh-seed",
    b"--msg-offset",
    b"--digest-offset",
    b"--pmu-type",
    b"--sample-period",
    b"--message-bits",
];

/// A decimal u64 (no sign, no spaces, no overflow).
pub(crate) fn number(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// The arguments of a job block's body (`setup::read_job`): each ended by a NUL; bytes after
/// the last NUL are no argument.
pub(crate) fn words(body: &[u8]) -> impl Iterator<Item = &CStr> {
    let mut rest = body;
    core::iter::from_fn(move || {
        let s = CStr::from_bytes_until_nul(rest).ok()?;
        rest = &rest[s.to_bytes().len() + 1..];
        Some(s)
    })
}

/// Reads the job's arguments.
pub fn parse<'a>(
    args: impl IntoIterator<Item = &'a CStr>,
) -> Result<Invocation<'a>, ArgsError<'a>> {
    let mut it = args.into_iter().skip_while(|a| a.to_bytes() == b"worker");
    if it.next().map(CStr::to_bytes) != Some(b"measure") {
        return Err(ArgsError::Usage);
    }
    let library = it.next().ok_or(ArgsError::NoLibrary)?;
    let mut values: [Option<u64>; 17] = [None; 17];
    let mut abi: Option<bool> = None;
    let (mut count, mut hw_instructions, mut loop_only, mut repeat) = (false, false, false, false);
    let (mut message_fd, mut table, mut twice, mut in_place) = (false, false, false, false);
    let (mut chain, mut unchecked_input, mut framed, mut two_threads) =
        (false, false, false, false);
    while let Some(k) = it.next().map(CStr::to_bytes) {
        let flag = match k {
            b"--count" => Some(&mut count),
            b"--hw-instructions" => Some(&mut hw_instructions),
            b"--loop-only" => Some(&mut loop_only),
            b"--repeat" => Some(&mut repeat),
            b"--message-fd" => Some(&mut message_fd),
            b"--table" => Some(&mut table),
            b"--twice" => Some(&mut twice),
            b"--in-place" => Some(&mut in_place),
            b"--chain" => Some(&mut chain),
            b"--unchecked-input" => Some(&mut unchecked_input),
            b"--framed" => Some(&mut framed),
            b"--two-threads" => Some(&mut two_threads),
            _ => None,
        };
        if let Some(flag) = flag {
            if core::mem::replace(flag, true) {
                return Err(ArgsError::Twice(k));
            }
            continue;
        }
        if k == b"--abi" {
            let supercop = match it.next().map(CStr::to_bytes) {
                Some(b"iccs") => false,
                Some(b"supercop") => true,
                _ => return Err(ArgsError::NotAnAbi(k)),
            };
            if abi.replace(supercop).is_some() {
                return Err(ArgsError::Twice(k));
            }
            continue;
        }
        let slot = OPTIONS
            .iter()
            .position(|o| *o == k)
            .ok_or(ArgsError::Unknown(k))?;
        let v = it
            .next()
            .and_then(|v| number(v.to_bytes()))
            .ok_or(ArgsError::NotANumber(k))?;
        if values[slot].replace(v).is_some() {
            return Err(ArgsError::Twice(k));
        }
    }
    let [
        bits,
        bytes,
        iters,
        warmups,
        trials,
        samples,
        cpu,
        space,
        secs,
        file_size,
        open_files,
        fresh_seed,
        msg_offset,
        digest_offset,
        pmu_type,
        sample_period,
        message_bits,
    ] = values;
    let (Some(bits), Some(input_bytes), Some(iterations), Some(warmups)) =
        (bits, bytes, iters, warmups)
    else {
        return Err(ArgsError::Missing);
    };
    let narrow = |v: u64, what| u32::try_from(v).map_err(|_| ArgsError::OutOfRange(what));
    // A message's bits end in its last byte; the harness's message is whole bytes.
    if let Some(b) = message_bits
        && (!message_fd || b.div_ceil(8) != input_bytes)
    {
        return Err(ArgsError::OutOfRange(
            "--message-bits (within the last of --bytes, with --message-fd)",
        ));
    }
    if abi == Some(true) && message_bits.is_some_and(|b| !b.is_multiple_of(8)) {
        return Err(ArgsError::OutOfRange(
            "--message-bits (whole bytes for crypto_hash)",
        ));
    }
    if message_fd && (fresh_seed.is_some() || loop_only) {
        return Err(ArgsError::OutOfRange("--message-fd (not with a probe)"));
    }
    if table && (!message_fd || message_bits.is_some() || count || msg_offset.is_some()) {
        return Err(ArgsError::OutOfRange(
            "--table (with --message-fd, and no --message-bits, --count or offsets)",
        ));
    }
    if chain && (!message_fd || table || message_bits.is_some() || count || msg_offset.is_some()) {
        return Err(ArgsError::OutOfRange(
            "--chain (with --message-fd, and no --table, --message-bits, --count or offsets)",
        ));
    }
    if (twice || in_place || unchecked_input) && !table {
        return Err(ArgsError::OutOfRange(
            "--twice, --in-place and --unchecked-input (with --table)",
        ));
    }
    if framed && (!table || twice || in_place || unchecked_input) {
        return Err(ArgsError::OutOfRange(
            "--framed (with --table, and no --twice, --in-place or --unchecked-input)",
        ));
    }
    if two_threads && !framed {
        return Err(ArgsError::OutOfRange("--two-threads (with --framed)"));
    }
    if in_place && abi != Some(true) {
        return Err(ArgsError::OutOfRange("--in-place (crypto_hash only)"));
    }
    Ok(Invocation {
        library,
        digest_bits: narrow(bits, "--digest-bits")?,
        input_bytes,
        iterations,
        warmups,
        trials: narrow(trials.unwrap_or(1), "--trials")?,
        sample_calls: samples.unwrap_or(0),
        cpu: cpu
            .map(|c| usize::try_from(c).map_err(|_| ArgsError::OutOfRange("--cpu")))
            .transpose()?,
        sample_period_ns: sample_period,
        pmu_type: pmu_type.map(|t| narrow(t, "--pmu-type")).transpose()?,
        address_space_bytes: space,
        cpu_seconds: secs,
        file_size_bytes: file_size,
        open_files,
        supercop: abi.unwrap_or(false),
        fresh_seed,
        offsets: match (msg_offset, digest_offset) {
            (None, None) => None,
            (Some(m), Some(d)) if m < 64 && d < 64 => Some((m as usize, d as usize)),
            (Some(_), Some(_)) => return Err(ArgsError::OutOfRange("an offset (0–63)")),
            _ => return Err(ArgsError::Missing),
        },
        count,
        hw_instructions,
        loop_only,
        repeat,
        message_fd,
        message_bits,
        table,
        twice,
        in_place,
        unchecked_input,
        framed,
        two_threads,
        chain,
    })
}
