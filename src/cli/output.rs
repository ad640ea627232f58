//! How a command prints its table: Markdown (the default, as the pages write tables), JSON
//! or CSV. One flag group shared by `run` and `compare`, so both spell the choice alike.

use clap::Args;

#[derive(Debug, Clone, Copy, Default, Args)]
#[group(multiple = false)]
pub struct OutputFormat {
    /// Print the results as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print the results as CSV on stdout (one line per job, numbers unformatted).
    #[arg(long)]
    pub csv: bool,
    /// Print the results as a Markdown table (the default).
    #[arg(long)]
    pub markdown: bool,
}

/// The chosen format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Json,
    Csv,
}

impl OutputFormat {
    pub fn format(self) -> Format {
        if self.json {
            Format::Json
        } else if self.csv {
            Format::Csv
        } else {
            Format::Markdown
        }
    }
}
