//! A worker's protocol lines as the parent reads them: each must carry the session token and
//! one JSON message, or the worker is called tampered with; and how its exit status reads.

use serde::de::DeserializeOwned;

use super::exchange::{self, Framing};
use super::{Exit, SessionToken, Tampering};

/// One protocol line: the session token, a space, a JSON message.
pub(super) fn parse_line<M: DeserializeOwned>(
    line: Result<&[u8], Framing>,
    token: &SessionToken,
) -> Result<M, Tampering> {
    let line = line.map_err(|f| {
        Tampering(match f {
            Framing::TooLong => format!(
                "a protocol line longer than {} bytes",
                exchange::MAX_LINE_BYTES
            ),
            Framing::Unterminated => "an unterminated protocol line".into(),
        })
    })?;
    let Some(json) = token.strip(line) else {
        return Err(Tampering(format!(
            "a protocol line the worker did not write: {}",
            shown_line(line)
        )));
    };
    serde_json::from_slice(json).map_err(|e| {
        Tampering(format!(
            "a malformed protocol message ({e}): {}",
            shown_line(json)
        ))
    })
}

/// The start of a foreign line, escaped and quoted, for the record.
fn shown_line(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    format!("\"{}\"", crate::sanitize::escaped(&text, 80))
}

pub(super) fn classify(status: Option<std::process::ExitStatus>) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(sig)) => Exit::Signal {
                number: sig,
                name: signal_name(sig),
            },
            (None, None) => Exit::Code(-1),
        },
        None => Exit::Code(-1),
    }
}

/// `SIGSEGV`, `SIGABRT`, … for a signal number.
pub(crate) fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}
