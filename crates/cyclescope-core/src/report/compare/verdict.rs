//! The verdict of one compared job and the side a one-sided row comes from, with the words
//! every output format shows for them.

/// How B compares with A for one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Faster,
    Slower,
    WithinNoise,
    OnlyInA,
    OnlyInB,
    NotComparable(String),
    /// A figure of this job is marked ⚠ (on the side named): no faster/slower verdict.
    Doubtful(Side, String),
    /// The record of this job in one run breaks a rule of the record check: the record and
    /// its first finding.
    Invalid(Side, String),
    /// Both runs counted instructions exactly (`valgrind:callgrind:Ir`): B's count against A's,
    /// with no interval because there is no noise to weigh.
    Exact(std::cmp::Ordering),
}

/// Which of the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::A => "A",
            Side::B => "B",
        })
    }
}

impl Verdict {
    /// The verdict as exports write it.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within_noise",
            Verdict::OnlyInA => "only_in_a",
            Verdict::OnlyInB => "only_in_b",
            Verdict::NotComparable(_) => "not_comparable",
            Verdict::Doubtful(..) => "doubtful",
            Verdict::Invalid(..) => "invalid",
            Verdict::Exact(std::cmp::Ordering::Less) => "fewer_instructions",
            Verdict::Exact(std::cmp::Ordering::Equal) => "same_instructions",
            Verdict::Exact(std::cmp::Ordering::Greater) => "more_instructions",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Faster => f.write_str("faster (beyond run-to-run noise)"),
            Verdict::Slower => f.write_str("slower (beyond run-to-run noise)"),
            Verdict::WithinNoise => f.write_str("within noise"),
            Verdict::OnlyInA => f.write_str("only in A"),
            Verdict::OnlyInB => f.write_str("only in B"),
            Verdict::NotComparable(why) => write!(f, "not comparable: {why}"),
            Verdict::Doubtful(side, why) => write!(f, "doubtful (⚠ {side}: {why})"),
            Verdict::Invalid(side, finding) => write!(f, "invalid ({side}): {finding}"),
            Verdict::Exact(o) => write!(
                f,
                "{} (exact count, no interval needed)",
                match o {
                    std::cmp::Ordering::Less => "fewer instructions",
                    std::cmp::Ordering::Equal => "the same instructions",
                    std::cmp::Ordering::Greater => "more instructions",
                }
            ),
        }
    }
}
