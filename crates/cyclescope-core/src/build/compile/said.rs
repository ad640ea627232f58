//! Reading what the compiler said in its log: the lines worth showing, its warnings, whether
//! it ran out of memory.

/// The lines that say what went wrong: those with `error` first, else the first lines.
pub(crate) fn excerpt(log: &str) -> String {
    const LINES: usize = 8;
    // The first line is the command (`$ cc …`), whose `-Wno-error=` flags are no errors.
    let said = || log.lines().filter(|l| !l.starts_with("$ "));
    let errors: Vec<&str> = said()
        .filter(|l| l.contains("error") || l.contains("undefined reference"))
        .take(LINES)
        .collect();
    let lines = if errors.is_empty() {
        said().take(LINES).collect()
    } else {
        errors
    };
    lines.join("\n")
}

/// Whether the compiler's output says it ran out of memory (gcc: `out of memory allocating`,
/// `virtual memory exhausted`; clang: `Cannot allocate memory`, `std::bad_alloc`).
pub(super) fn out_of_memory(log: &str) -> bool {
    log.lines().filter(|l| !l.starts_with("$ ")).any(|l| {
        l.contains("out of memory")
            || l.contains("memory exhausted")
            || l.contains("Cannot allocate memory")
            || l.contains("bad_alloc")
    })
}

/// The compiler's warning lines.
pub(crate) fn warnings(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("warning:"))
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_prefer_error_lines() {
        let log =
            "$ cc -Wno-error=x a.c\na.c: In function 'f':\na.c:3:1: error: expected ';'\nnote\n";
        assert_eq!(excerpt(log), "a.c:3:1: error: expected ';'");
        assert_eq!(
            warnings("x.c:1: warning: unused\nok\n"),
            ["x.c:1: warning: unused"]
        );
    }
}
