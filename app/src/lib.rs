//! The rxpipe application: the `rxpipe` program's benchmarks ([`bench`](mod@bench): the papers'
//! tables measured on this machine) and its window ([`viewer`]), on top of the `rxpipe` library.
//! The program itself is `src/bin/rxpipe/` (one module per command).

pub mod bench;
mod named;
pub mod viewer;

pub use named::named;

/// How many notes a command prints before it counts the rest ([`noted`]).
pub const NOTES_SHOWN: usize = 20;

/// The lines `note: ...` a command prints for `notes`: the first [`NOTES_SHOWN`], then how many
/// more there are and where to find them (`more`), so that a scene with thousands of missing
/// textures does not bury the output.
pub fn noted<'a>(notes: impl IntoIterator<Item = &'a String>, more: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rest = 0usize;
    for n in notes {
        if lines.len() < NOTES_SHOWN {
            lines.push(format!("note: {n}"));
        } else {
            rest += 1;
        }
    }
    if rest > 0 {
        lines.push(format!("note: ... and {rest} more notes{more}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    #[test]
    fn notes_beyond_the_shown_are_counted() {
        let few: Vec<String> = (0..3).map(|i| format!("n{i}")).collect();
        assert_eq!(super::noted(&few, ""), ["note: n0", "note: n1", "note: n2"]);
        let many: Vec<String> = (0..super::NOTES_SHOWN + 5)
            .map(|i| format!("n{i}"))
            .collect();
        let lines = super::noted(&many, " (--json lists them all)");
        assert_eq!(lines.len(), super::NOTES_SHOWN + 1);
        assert_eq!(
            lines[super::NOTES_SHOWN - 1],
            format!("note: n{}", super::NOTES_SHOWN - 1)
        );
        assert_eq!(
            lines[super::NOTES_SHOWN],
            "note: ... and 5 more notes (--json lists them all)"
        );
    }
}
