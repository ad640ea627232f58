//! Number formatting shared by the CLI, the TUI and the report pages (spec §6): one place, so
//! a figure reads the same everywhere. Never formats anything but numbers.
