//! `cyclescope supercop-checksum`: SUPERCOP's `checksumsmall` and `checksumbig` of each
//! instance and — given eBASH's published values — whether they match. The messages of both
//! are hashed in one table job of the trial worker (`measure::table`), the program every timed
//! call runs in; `supercop` makes the messages and folds the digests, judging each message's
//! (the procedure is in docs/supercop.md).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::InstanceArgs;
use crate::catalog::Instance;
use crate::measure::table::{self, Fault, TableError, TableJob};
use crate::plugin::Abi;
use crate::supercop::{self as procedure, Answer, Folder, SupercopError};

/// How long hashing both checksums' messages may take.
const TABLE_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Args)]
pub struct SupercopArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// eBASH's published checksumsmall (64 hex digits) to compare with.
    #[arg(long, value_name = "HEX")]
    pub expect_small: Option<String>,
    /// eBASH's published checksumbig (64 hex digits) to compare with.
    #[arg(long, value_name = "HEX")]
    pub expect_big: Option<String>,
}

pub fn run(config: Option<&Path>, args: &SupercopArgs) -> anyhow::Result<ExitCode> {
    let (_, instances) = args.select.resolve(config, false)?;
    let expected = |e: &Option<String>| e.as_ref().map(|h| h.trim().to_ascii_lowercase());
    let (want_small, want_big) = (expected(&args.expect_small), expected(&args.expect_big));
    let mut worst = ExitCode::SUCCESS;
    for inst in &instances {
        match checksums(inst) {
            Ok((small, big)) => {
                let verdict = |got: &str, want: &Option<String>| match want {
                    None => String::new(),
                    Some(w) if w == got => "  (matches)".into(),
                    Some(w) => format!("  (MISMATCH: expected {w})"),
                };
                let bad = want_small.as_ref().is_some_and(|w| *w != small)
                    || want_big.as_ref().is_some_and(|w| *w != big);
                outln!(
                    "{} [{}] checksumsmall {small}{}",
                    inst.label,
                    inst.abi.name(),
                    verdict(&small, &want_small)
                );
                outln!(
                    "{} [{}] checksumbig   {big}{}",
                    inst.label,
                    inst.abi.name(),
                    verdict(&big, &want_big)
                );
                if bad {
                    worst = ExitCode::from(1);
                }
            }
            Err(e) => {
                outln!("{} [{}] FAILED: {e}", inst.label, inst.abi.name());
                worst = ExitCode::from(1);
            }
        }
    }
    Ok(worst)
}

/// SUPERCOP's checksumsmall and checksumbig of `inst`: both checksums' messages hashed in one
/// table job (each twice, and in place where `crypto_hash` promises it), folded here.
pub fn checksums(inst: &Instance) -> Result<(String, String), String> {
    if !inst.digest_bits.is_multiple_of(8) {
        return Err(SupercopError::PartialByteDigest(inst.digest_bits).to_string());
    }
    let small = procedure::messages(procedure::SMALL);
    let big = procedure::messages(procedure::BIG);
    let all: Vec<(&[u8], u64)> = small
        .iter()
        .chain(&big)
        .map(|m| (m.as_slice(), 8 * m.len() as u64))
        .collect();
    let job = TableJob {
        twice: true,
        in_place: inst.abi == Abi::Supercop,
        ..TableJob::plain(inst.digest_bits, inst.abi, TABLE_TIMEOUT)
    };
    let answers = table::hash_table(&inst.library, &job, &all)
        .map(|a| a.digests)
        .map_err(|e| match e {
            TableError::Fault { index, fault, .. } => {
                let mlen = all.get(index).map_or(0, |(m, _)| m.len());
                match fault {
                    Fault::Overflow(_) => SupercopError::Overflow { mlen },
                    Fault::InputChanged(_) => SupercopError::WroteInput { mlen },
                    Fault::Returned(rc) => SupercopError::Returned { rc, mlen },
                }
                .to_string()
            }
            e => e.to_string(),
        })?;
    let (first, second) = answers.split_at(small.len().min(answers.len()));
    let fold = |messages: &[Vec<u8>], answers: &[Vec<u8>]| {
        let hlen = inst.digest_bits as usize / 8;
        let mut folder = Folder::default();
        for (m, a) in messages.iter().zip(answers) {
            let answer = Answer {
                first: &a[..hlen],
                second: &a[hlen..2 * hlen],
                in_place: job.in_place.then(|| &a[2 * hlen..3 * hlen]),
            };
            folder.take(m.len(), answer).map_err(|e| e.to_string())?;
        }
        Ok::<_, String>(folder.finish())
    };
    Ok((fold(&small, first)?, fold(&big, second)?))
}
