//! The `FAULTY_MODE` grammar: `<mode>[@<msg_bytes>]`. Parsing only; acting on a fault is the
//! crate root's job.

/// One injected misbehaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Segv,
    Abort,
    Hang,
    Error,
    Overflow,
    Wrong,
    Stdout,
    Exit,
    Slow,
}

impl Fault {
    const ALL: [(&'static str, Fault); 9] = [
        ("segv", Fault::Segv),
        ("abort", Fault::Abort),
        ("hang", Fault::Hang),
        ("error", Fault::Error),
        ("overflow", Fault::Overflow),
        ("wrong", Fault::Wrong),
        ("stdout", Fault::Stdout),
        ("exit", Fault::Exit),
        ("slow", Fault::Slow),
    ];
}

/// A fault and the message length (bytes) it is limited to, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    pub fault: Fault,
    pub msg_bytes: Option<u64>,
}

impl Trigger {
    /// Whether a call hashing `msg_len_bits` bits misbehaves.
    pub fn fires_for(&self, msg_len_bits: u64) -> bool {
        self.msg_bytes
            .is_none_or(|n| n.checked_mul(8) == Some(msg_len_bits))
    }
}

/// Parses a `FAULTY_MODE` value; empty (or only blanks) means no fault.
pub fn parse(value: &str) -> Result<Option<Trigger>, String> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(None);
    }
    let (name, at) = match value.split_once('@') {
        Some((n, a)) => (n, Some(a)),
        None => (value, None),
    };
    let fault = Fault::ALL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, f)| f)
        .ok_or_else(|| {
            let known: Vec<&str> = Fault::ALL.iter().map(|(n, _)| *n).collect();
            format!("unknown FAULTY_MODE {name:?} (known: {})", known.join(", "))
        })?;
    let msg_bytes = at
        .map(|a| {
            a.parse::<u64>()
                .map_err(|_| format!("FAULTY_MODE {value:?}: {a:?} after @ is not a byte count"))
        })
        .transpose()?;
    Ok(Some(Trigger { fault, msg_bytes }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        assert_eq!(parse(""), Ok(None));
        assert_eq!(
            parse("segv"),
            Ok(Some(Trigger {
                fault: Fault::Segv,
                msg_bytes: None
            }))
        );
        assert_eq!(
            parse("overflow@32"),
            Ok(Some(Trigger {
                fault: Fault::Overflow,
                msg_bytes: Some(32)
            }))
        );
        for (name, fault) in Fault::ALL {
            assert_eq!(parse(name).map(|t| t.map(|t| t.fault)), Ok(Some(fault)));
        }
        assert!(parse("segfault").unwrap_err().contains("known: segv"));
        assert!(parse("error@x").is_err());
        assert!(parse("error@").is_err());
    }

    #[test]
    fn at_limits_the_fault_to_one_message_length() {
        let t = parse("error@2").unwrap().unwrap();
        assert!(t.fires_for(16));
        assert!(!t.fires_for(8));
        assert!(!t.fires_for(17));
        assert!(parse("error").unwrap().unwrap().fires_for(12345));
        assert!(
            !parse("error@3000000000000000000")
                .unwrap()
                .unwrap()
                .fires_for(0)
        );
    }
}
