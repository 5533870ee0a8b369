//! `imac --color WHEN`: whether diagnostics are written with colour.
//!
//! As rustc and cargo do, `auto` (the default) colours only a terminal, so that a pipe, a
//! file or a CI log gets plain text; it also stays plain where `NO_COLOR` is set to
//! anything but the empty string (no-color.org) or `TERM` is `dumb`. `always` and `never`
//! are the user's explicit word for this one command and win over the environment: cargo's
//! `--color always` colours with `NO_COLOR=1` set too, and no-color.org asks that a
//! command-line flag override `NO_COLOR`.

use std::ffi::OsStr;
use std::io::IsTerminal;

use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};

/// The `--color` flag's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour where the output is a terminal and neither `NO_COLOR` nor `TERM=dumb` says no.
    #[default]
    Auto,
    /// Colour wherever the output goes.
    Always,
    /// Never colour.
    Never,
}

/// What `auto` decides from: the stream and the environment.
#[derive(Debug, Clone, Copy)]
pub struct Surroundings<'a> {
    pub is_terminal: bool,
    /// `NO_COLOR`, if set.
    pub no_color: Option<&'a OsStr>,
    /// `TERM`, if set.
    pub term: Option<&'a OsStr>,
}

impl ColorWhen {
    /// termcolor's choice for a stream in these surroundings. termcolor's own `Auto` is not
    /// used: it colours a pipe too, as it never asks whether the stream is a terminal.
    pub fn choice(self, around: Surroundings<'_>) -> ColorChoice {
        let colour = match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => {
                around.is_terminal
                    && around.no_color.is_none_or(OsStr::is_empty)
                    && around.term.is_none_or(|t| t != "dumb")
            }
        };
        if colour {
            ColorChoice::Always
        } else {
            ColorChoice::Never
        }
    }

    /// Standard error, where imac writes its diagnostics, coloured as `self` says there.
    pub fn stderr(self) -> StandardStream {
        let (no_color, term) = (std::env::var_os("NO_COLOR"), std::env::var_os("TERM"));
        let choice = self.choice(Surroundings {
            is_terminal: std::io::stderr().is_terminal(),
            no_color: no_color.as_deref(),
            term: term.as_deref(),
        });
        StandardStream::stderr(choice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn around<'a>(
        is_terminal: bool,
        no_color: Option<&'a str>,
        term: Option<&'a str>,
    ) -> Surroundings<'a> {
        Surroundings {
            is_terminal,
            no_color: no_color.map(OsStr::new),
            term: term.map(OsStr::new),
        }
    }

    #[test]
    fn auto_colours_only_a_terminal_that_nothing_turned_plain() {
        let auto = |a| ColorWhen::Auto.choice(a);
        assert_eq!(auto(around(true, None, Some("xterm"))), ColorChoice::Always);
        assert_eq!(auto(around(true, None, None)), ColorChoice::Always);
        assert_eq!(auto(around(false, None, Some("xterm"))), ColorChoice::Never);
        assert_eq!(
            auto(around(true, Some("1"), Some("xterm"))),
            ColorChoice::Never
        );
        // no-color.org: an empty NO_COLOR is as if it were unset.
        assert_eq!(
            auto(around(true, Some(""), Some("xterm"))),
            ColorChoice::Always
        );
        assert_eq!(auto(around(true, None, Some("dumb"))), ColorChoice::Never);
    }

    #[test]
    fn always_and_never_win_over_the_surroundings() {
        for a in [
            around(false, Some("1"), Some("dumb")),
            around(true, None, Some("xterm")),
        ] {
            assert_eq!(ColorWhen::Always.choice(a), ColorChoice::Always);
            assert_eq!(ColorWhen::Never.choice(a), ColorChoice::Never);
        }
    }
}
