//! Per-call histograms in files: hdrhistogram's compressed V2 encoding in base64, the form the
//! records and the journal carry.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

pub(crate) fn encode(h: &Histogram<u64>) -> Option<String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).ok()?;
    Some(STANDARD.encode(bytes))
}

pub fn decode(text: &str) -> Option<Histogram<u64>> {
    let bytes = STANDARD.decode(text).ok()?;
    Deserializer::new().deserialize(&mut bytes.as_slice()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_counts_and_percentiles() {
        let mut h = crate::measure::stats::new_histogram();
        for v in [100u64, 120, 130, 5000] {
            h.record_n(v, 10).unwrap();
        }
        let back = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(back.len(), 40);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode("not base64!").is_none());
    }
}
