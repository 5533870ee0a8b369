//! The modes the environment sets for every kernel of a process, `IMA_CHECKED` and
//! `IMA_SYNC`, read once: how each is spelled, and what a spelling imac does not know
//! means. A safety switch misspelled (`IMA_CHECKED=true` once left checking off without a
//! word) is taken as on, and a line on stderr says so.

use std::ffi::OsString;

use crate::checked::CheckedMode;

/// A mode's name as `IMA_CHECKED` (or Python's `set_checked`) gives it, case aside: `1`,
/// `wait`, `on`, `true` or `yes` is [`CheckedMode::Wait`], `deferred`
/// [`CheckedMode::Deferred`], `0`, `off`, `false`, `no` or nothing [`CheckedMode::Off`];
/// None for another.
pub fn checked_mode(name: &str) -> Option<CheckedMode> {
    match name.trim().to_ascii_lowercase().as_str() {
        "deferred" => Some(CheckedMode::Deferred),
        "wait" => Some(CheckedMode::Wait),
        other => Some(match switch(other)? {
            true => CheckedMode::Wait,
            false => CheckedMode::Off,
        }),
    }
}

/// A switch as `IMA_SYNC` gives it, case aside: `1`, `on`, `true` or `yes` on; `0`,
/// `off`, `false`, `no` or nothing off; None for another.
pub fn switch(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Some(true),
        "" | "0" | "off" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// Variable `var`'s mode, given its value in the environment (`value`, None where it is
/// not set: `off`), as `named` reads it; a value it does not name is `on`, with a line
/// on stderr (once: each mode is read once a process).
pub(crate) fn read<T: Copy>(
    var: &str,
    value: Option<OsString>,
    named: fn(&str) -> Option<T>,
    off: T,
    on: T,
    spellings: &str,
) -> T {
    let Some(value) = value else {
        return off;
    };
    match value.to_str().and_then(named) {
        Some(mode) => mode,
        None => {
            eprintln!(
                "imac: {var}={value:?} is none of {spellings}; taken as on, since it was \
                 set"
            );
            on
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{checked_mode, read, switch};
    use crate::checked::CheckedMode::{Deferred, Off, Wait};

    /// Each spelling the docs give reads as its mode; case and spaces aside; another is
    /// none.
    #[test]
    fn each_spelling_names_its_mode() {
        for (name, mode) in [
            ("1", Wait),
            ("wait", Wait),
            ("ON", Wait),
            ("true", Wait),
            ("yes", Wait),
            ("deferred", Deferred),
            (" Deferred ", Deferred),
            ("0", Off),
            ("off", Off),
            ("False", Off),
            ("no", Off),
            ("", Off),
        ] {
            assert_eq!(checked_mode(name), Some(mode), "{name:?}");
        }
        for name in ["2", "full", "deffered", "y"] {
            assert_eq!(checked_mode(name), None, "{name:?}");
        }
        assert_eq!(
            ["1", "TRUE", "on", "0", "", "off", "sync"].map(switch),
            [
                Some(true),
                Some(true),
                Some(true),
                Some(false),
                Some(false),
                Some(false),
                None
            ]
        );
    }

    /// Unset is off; a spelling imac does not know is on (a safety switch someone set),
    /// as is one that is not UTF-8.
    #[test]
    fn an_unknown_spelling_is_on() {
        let mode = |v: Option<&str>| {
            read(
                "IMA_CHECKED",
                v.map(Into::into),
                checked_mode,
                Off,
                Wait,
                "1, wait, deferred or 0",
            )
        };
        assert_eq!(
            [None, Some("deferred"), Some("0"), Some("full")].map(mode),
            [Off, Deferred, Off, Wait]
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            let not_utf8 = std::ffi::OsString::from_vec(vec![0xff]);
            assert!(read(
                "IMA_SYNC",
                Some(not_utf8),
                switch,
                false,
                true,
                "1 or 0"
            ));
        }
    }
}
