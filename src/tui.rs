//! The terminal workbench (ratatui + crossterm): the operator's face of the same engine the
//! headless CLI drives. State lives in `app` and changes only by engine events and actions;
//! `screen` and the one-file-per-panel `panel/*` draw it; `keymap` is the single key table;
//! `event_loop` owns the terminal (restored on every exit, panics included) and the engine
//! link. Nothing here measures: the engine runs on its own thread and in worker processes,
//! and this module keeps itself off the measurement CPU.

pub mod action;
pub mod app;
pub mod demo;
pub mod engine_link;
pub mod event_loop;
pub mod export;
pub mod host_tune;
pub mod keymap;
pub mod monochrome;
pub mod panel;
pub mod profile_job;
pub mod protections;
pub mod records;
pub mod screen;
pub mod svg;

#[cfg(test)]
mod screen_tests;

#[cfg(test)]
use app::App;
