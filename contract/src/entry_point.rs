//! A kernel's four entry points (`extern "C"` functions): release or checked, with 32- or
//! 64-bit indices, each instantiating the kernel's body (`ima_body<I, IMA_CHECKED>`) for
//! its index type and mode. Their names and template arguments are defined here once:
//! the generated CUDA's entry points (codegen), the contract's release names (ima-dsl's
//! abi), the runtime's checked twins, `imac waits --entry` and the reading of NVRTC's
//! instantiations (`imac check --arch`) all take them from [`EntryPoint`].

/// One of a kernel's entry points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPoint {
    /// 64-bit indices (`I = long long`), else 32-bit (`int`).
    pub wide: bool,
    /// Its accessors check every index (`IMA_CHECKED`).
    pub checked: bool,
}

/// What a checked entry point's name adds to its release twin's.
const CHECKED: &str = "_checked";

impl EntryPoint {
    pub const I32: EntryPoint = EntryPoint {
        wide: false,
        checked: false,
    };
    pub const I64: EntryPoint = EntryPoint {
        wide: true,
        checked: false,
    };
    pub const I32_CHECKED: EntryPoint = EntryPoint {
        wide: false,
        checked: true,
    };
    pub const I64_CHECKED: EntryPoint = EntryPoint {
        wide: true,
        checked: true,
    };

    /// Its name for kernel `kernel`: `rms_norm_i32`, `rms_norm_i64_checked`.
    pub fn name(self, kernel: &str) -> String {
        let bits = if self.wide { 64 } else { 32 };
        let release = format!("{kernel}_i{bits}");
        match self.checked {
            true => Self::checked_twin(&release),
            false => release,
        }
    }

    /// The name of the checked twin of the release entry point `release`, whatever a
    /// contract names that (a hand-written module's may not follow [`EntryPoint::name`]).
    pub fn checked_twin(release: &str) -> String {
        format!("{release}{CHECKED}")
    }

    /// The C++ type of its indices, the body's `I`.
    pub fn index_type(self) -> &'static str {
        if self.wide { "long long" } else { "int" }
    }

    /// The template arguments of its instantiations as a compiler names them: `I=int,
    /// IMA_CHECKED=false`.
    pub fn template_args(self) -> String {
        format!("I={}, IMA_CHECKED={}", self.index_type(), self.checked)
    }
}

/// The four, in the order the generated module declares them.
pub const ENTRY_POINTS: [EntryPoint; 4] = [
    EntryPoint::I32,
    EntryPoint::I64,
    EntryPoint::I32_CHECKED,
    EntryPoint::I64_CHECKED,
];

#[cfg(test)]
mod tests {
    use super::{ENTRY_POINTS, EntryPoint};

    /// The names module.cu's entry points have had, hand-written here; a checked one is
    /// its release twin's name and `_checked`.
    #[test]
    fn each_entry_point_is_named_as_the_modules_declare_it() {
        assert_eq!(
            ENTRY_POINTS.map(|e| e.name("k")),
            ["k_i32", "k_i64", "k_i32_checked", "k_i64_checked"]
        );
        assert_eq!(EntryPoint::checked_twin("custom"), "custom_checked");
        assert_eq!(
            EntryPoint::I64_CHECKED.template_args(),
            "I=long long, IMA_CHECKED=true"
        );
    }
}
