//! The kernel ABI: the parameters of a generated entry point, in order, defined here
//! once. The CUDA back end writes every entry point's parameter list from
//! [`KernelContract::entry_params`] (codegen/src/cuda.rs, through the owned form), and the
//! runtime pushes a launch's values in the order the same function gives
//! (runtime/src/kernel.rs), so the two cannot disagree.

use crate::{KernelContract, Role, owned};

/// One parameter of an entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryParam {
    /// The data pointer of contract argument `arg`, at its view's first element.
    Pointer { arg: usize },
    /// The stride of logical dimension `dim` of contract argument `arg`, in elements, in
    /// the entry point's index type.
    Stride { arg: usize, dim: usize },
    /// The value of the contract's symbol `.0`, in the entry point's index type.
    Symbol(usize),
    /// The contract's scalar param `.0`, in its own type.
    Param(usize),
    /// The violation record (`ImaRecord*`, codegen/include/ima.cuh).
    Record,
}

/// The parameters of an entry point of a contract whose arguments have these roles and
/// ranks: for each argument the kernel receives (all but a quantized argument's logical
/// shape), its pointer and then its strides in logical order; each symbol's value; each
/// scalar param; and last the violation record, which checked entry points take, and every
/// entry point of a kernel with a value contract (release ones report a bad entry too).
fn entry_params(
    args: impl Iterator<Item = (Role, usize)>,
    symbols: usize,
    params: usize,
    record: bool,
) -> impl Iterator<Item = EntryParam> {
    let buffers = args
        .enumerate()
        .filter(|(_, (role, _))| *role != Role::Logical)
        .flat_map(|(arg, (_, rank))| {
            std::iter::once(EntryParam::Pointer { arg })
                .chain((0..rank).map(move |dim| EntryParam::Stride { arg, dim }))
        });
    buffers
        .chain((0..symbols).map(EntryParam::Symbol))
        .chain((0..params).map(EntryParam::Param))
        .chain(record.then_some(EntryParam::Record))
}

impl KernelContract {
    /// An argument has a value contract: every entry point, release ones too, checks the
    /// entries it reads and takes the violation record to report a bad one.
    pub fn checks_values(&self) -> bool {
        self.args.iter().any(|a| a.values.is_some())
    }

    /// The parameters of the kernel's checked (`checked`) or release entry points, in order.
    pub fn entry_params(&self, checked: bool) -> impl Iterator<Item = EntryParam> + '_ {
        entry_params(
            self.args.iter().map(|a| (a.role, a.dims.len())),
            self.symbols.len(),
            self.params.len(),
            checked || self.checks_values(),
        )
    }
}

impl owned::KernelContract {
    /// As [`KernelContract::checks_values`], for the owned form.
    pub fn checks_values(&self) -> bool {
        self.args.iter().any(|a| a.values.is_some())
    }

    /// As [`KernelContract::entry_params`], for the owned form.
    pub fn entry_params(&self, checked: bool) -> impl Iterator<Item = EntryParam> + '_ {
        entry_params(
            self.args.iter().map(|a| (a.role, a.dims.len())),
            self.symbols.len(),
            self.params.len(),
            checked || self.checks_values(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, Extent, TensorArg};

    fn arg(role: Role, dims: &'static [Extent]) -> TensorArg {
        TensorArg {
            name: "a",
            role,
            dtype: DType::F32,
            dims,
            stored: &[0, 1],
            strided: false,
            align: 4,
            values: None,
        }
    }

    /// A quantized argument's logical shape takes no parameter; its buffers, the symbols,
    /// the params and the record follow in that order.
    #[test]
    fn entry_params_skip_logical_arguments_and_end_with_the_record() {
        const E: Extent = Extent {
            text: "N",
            expr: crate::Expr::Sym(0),
        };
        let args = [arg(Role::Logical, &[E, E]), arg(Role::In, &[E, E])];
        let symbols = [crate::Symbol {
            name: "N",
            bound_by: crate::Binding { arg: 1, dim: 0 },
        }];
        let params = [crate::Param {
            name: "scale",
            dtype: DType::F32,
        }];
        let c = KernelContract {
            name: "k",
            signature: "",
            location: "",
            symbols: Box::leak(Box::new(symbols)),
            args: Box::leak(Box::new(args)),
            params: Box::leak(Box::new(params)),
            constraints: &[],
            shared: &[],
            launch: crate::Launch::Threads { arg: 1 },
            empty: crate::EmptyPolicy::Skip,
            block: [256, 1, 1],
            block_from_occupancy: false,
            entry_i32: "k_i32",
            entry_i64: "k_i64",
        };
        use EntryParam::*;
        let release = [
            Pointer { arg: 1 },
            Stride { arg: 1, dim: 0 },
            Stride { arg: 1, dim: 1 },
            Symbol(0),
            Param(0),
        ];
        assert_eq!(c.entry_params(false).collect::<Vec<_>>(), release);
        let checked: Vec<_> = release.into_iter().chain([Record]).collect();
        assert_eq!(c.entry_params(true).collect::<Vec<_>>(), checked);
    }
}
