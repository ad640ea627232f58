//! Reading the pages `report` writes, for the report tests (`report_reference.rs`,
//! `report_run.rs`): the facts their own words must state, and a figure's SVG elements.

use std::path::Path;

/// Every one of `facts` appears in `text`.
pub fn assert_states(text: &str, facts: &[&str]) {
    for fact in facts {
        assert!(text.contains(fact), "{fact:?} missing from:\n{text}");
    }
}

/// The SVG elements of a figure, parsed as XML (a malformed file fails here).
pub fn svg_elements(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc =
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.is_element())
        .map(|n| {
            let text = n.text().unwrap_or_default().trim().to_string();
            (n.tag_name().name().to_string(), text)
        })
        .collect()
}
