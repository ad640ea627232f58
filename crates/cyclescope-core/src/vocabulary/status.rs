//! How a record, one of its worker processes and a whole run ended, with the exact words the
//! harness's schema 2 and `campaign.json` use for them.

use serde::{Deserialize, Serialize};

/// A timing record's `status`: every process complete and as many trials as planned, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RecordStatus {
    #[serde(rename = "complete")]
    Complete,
    #[serde(rename = "failed_or_partial")]
    FailedOrPartial,
}

impl RecordStatus {
    pub fn is_complete(self) -> bool {
        self == RecordStatus::Complete
    }

    /// The word in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordStatus::Complete => "complete",
            RecordStatus::FailedOrPartial => "failed_or_partial",
        }
    }
}

impl std::fmt::Display for RecordStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One driver process of a record: it delivered every trial it was asked for, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessStatus {
    Complete,
    Partial,
}

/// `campaign.json`'s `cyclescope.state`: where the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CampaignState {
    Running,
    Finished,
    Cancelled,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_serialise_to_the_schema_words() {
        let r = |s: RecordStatus| serde_json::to_string(&s).unwrap();
        assert_eq!(r(RecordStatus::Complete), "\"complete\"");
        assert_eq!(r(RecordStatus::FailedOrPartial), "\"failed_or_partial\"");
        for s in [RecordStatus::Complete, RecordStatus::FailedOrPartial] {
            assert_eq!(r(s), format!("\"{s}\""));
        }
        let p = |s: ProcessStatus| serde_json::to_string(&s).unwrap();
        assert_eq!(p(ProcessStatus::Complete), "\"complete\"");
        assert_eq!(p(ProcessStatus::Partial), "\"partial\"");
        let c = |s: CampaignState| serde_json::to_string(&s).unwrap();
        assert_eq!(
            [
                c(CampaignState::Running),
                c(CampaignState::Finished),
                c(CampaignState::Cancelled)
            ],
            ["\"running\"", "\"finished\"", "\"cancelled\""]
        );
        assert!(serde_json::from_str::<RecordStatus>("\"done\"").is_err());
    }
}
