//! Taking the terminal and giving it back: raw mode, the alternate screen and mouse reporting
//! on entry, and the same undone exactly once on every way out — the guard's drop on a normal
//! return or an error, the panic hook on a panic of the UI thread.

use std::io::{self, Stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Restores the terminal when dropped.
pub(super) struct TerminalGuard;

impl TerminalGuard {
    pub(super) fn enter() -> io::Result<(Self, Terminal<CrosstermBackend<Stdout>>)> {
        install_panic_hook();
        enable_raw_mode()?;
        TERMINAL_TAKEN.store(true, Ordering::SeqCst);
        // From here on the guard restores whatever else fails.
        let guard = TerminalGuard;
        execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
        let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        terminal.hide_cursor()?;
        terminal.clear()?;
        Ok((guard, terminal))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Whether this process holds the terminal (raw mode, alternate screen).
static TERMINAL_TAKEN: AtomicBool = AtomicBool::new(false);

/// Gives the terminal back: cooked mode, main screen, no mouse reporting, a cursor. Only
/// once: leaving the alternate screen twice would move the cursor over what was printed in
/// between (the panic message).
pub fn restore_terminal() {
    if !TERMINAL_TAKEN.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A helper thread's panic is caught and reported in the workbench; only the UI
            // thread's takes the terminal down with it.
            if std::thread::current().name() == Some("main") {
                restore_terminal();
            }
            previous(info);
        }));
    });
}
