//! The kernel ABI: the parameters of a generated entry point, in order, defined here
//! once. The CUDA back end writes every entry point's parameter list from
//! [`KernelContract::entry_params`] (codegen/src/cuda.rs, through the owned form), and the
//! runtime pushes a launch's values in the order the same function gives
//! (runtime/src/abi.rs, for direct launches and graph nodes), so the two cannot disagree.

use crate::{KernelContract, Role, SHARED_ALIGN, owned};

/// One parameter of an entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryParam {
    /// The data pointer of contract argument `arg`, at its view's first element.
    Pointer { arg: usize },
    /// The stride of logical dimension `dim` of contract argument `arg`, in elements, in
    /// the entry point's index type.
    Stride { arg: usize, dim: usize },
    /// The TMA tensor map of contract argument `arg` (`tma(ROWS, COLS)`): 128 bytes, passed
    /// by value as a `const __grid_constant__ ImaTensorMap` (ima.cuh's stand-in for
    /// `CUtensorMap`), encoded by the runtime from the
    /// same view as the pointer and strides before it.
    TensorMap { arg: usize },
    /// The value of the contract's symbol `.0`, in the entry point's index type.
    Symbol(usize),
    /// The contract's scalar param `.0`, in its own type.
    Param(usize),
    /// The violation record (`ImaRecord*`, codegen/include/ima.cuh).
    Record,
}

/// The parameters of an entry point of a contract whose arguments have these roles and
/// ranks: for each argument the kernel receives (all but a quantized argument's logical
/// shape), its pointer, then its strides in logical order, then its tensor map where it
/// has one; each symbol's value; each
/// scalar param; and last the violation record, which checked entry points take, and every
/// entry point of a kernel with a value contract (release ones report a bad entry too).
fn entry_params(
    args: impl Iterator<Item = (Role, usize, bool)>,
    symbols: usize,
    params: usize,
    record: bool,
) -> impl Iterator<Item = EntryParam> {
    let buffers = args
        .enumerate()
        .filter(|(_, (role, _, _))| *role != Role::Logical)
        .flat_map(|(arg, (_, rank, tma))| {
            std::iter::once(EntryParam::Pointer { arg })
                .chain((0..rank).map(move |dim| EntryParam::Stride { arg, dim }))
                .chain(tma.then_some(EntryParam::TensorMap { arg }))
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

    /// An argument is read through TMA (`tma(...)`), or the blocks run in thread-block
    /// clusters (`cluster(...)`): the kernel runs only where the module is compiled for
    /// sm_90a, on devices of compute capability 9.0, whose architecture-specific features
    /// (TMA, warpgroup MMA, `setmaxnreg`, clusters and their distributed shared memory) its
    /// body may use.
    pub fn needs_sm90a(&self) -> bool {
        self.args.iter().any(|a| a.tma.is_some()) || self.launch.cluster().is_some()
    }

    /// What in the kernel needs sm_90a ([`KernelContract::needs_sm90a`]), for an error.
    pub fn sm90a_use(&self) -> &'static str {
        sm90a_use(self.args.iter().any(|a| a.tma.is_some()))
    }

    /// Bytes of dynamic shared memory a launch reserves beyond its arrays: the kernel
    /// rounds the start of its arrays up to the largest alignment among them, from a base
    /// that is only 16-byte aligned.
    pub fn shared_slack(&self) -> usize {
        let most = self.shared.iter().map(|s| s.align).max();
        most.unwrap_or(SHARED_ALIGN).max(SHARED_ALIGN) - SHARED_ALIGN
    }

    /// The parameters of the kernel's checked (`checked`) or release entry points, in order.
    pub fn entry_params(&self, checked: bool) -> impl Iterator<Item = EntryParam> + '_ {
        entry_params(
            self.args
                .iter()
                .map(|a| (a.role, a.dims.len(), a.tma.is_some())),
            self.symbols.len(),
            self.params.len(),
            checked || self.checks_values(),
        )
    }
}

/// What needs sm_90a in a kernel that reads through TMA (`tma`) or else runs in clusters.
fn sm90a_use(tma: bool) -> &'static str {
    if tma {
        "reads its `tma` arguments with TMA and warpgroup MMA"
    } else {
        "runs its blocks in thread-block clusters"
    }
}

impl owned::KernelContract {
    /// As [`KernelContract::checks_values`], for the owned form.
    pub fn checks_values(&self) -> bool {
        self.args.iter().any(|a| a.values.is_some())
    }

    /// As [`KernelContract::needs_sm90a`], for the owned form.
    pub fn needs_sm90a(&self) -> bool {
        self.args.iter().any(|a| a.tma.is_some()) || self.launch.cluster().is_some()
    }

    /// As [`KernelContract::sm90a_use`], for the owned form.
    pub fn sm90a_use(&self) -> &'static str {
        sm90a_use(self.args.iter().any(|a| a.tma.is_some()))
    }

    /// As [`KernelContract::entry_params`], for the owned form.
    pub fn entry_params(&self, checked: bool) -> impl Iterator<Item = EntryParam> + '_ {
        entry_params(
            self.args
                .iter()
                .map(|a| (a.role, a.dims.len(), a.tma.is_some())),
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

    /// A contract of `args` (leaked) with nothing else: no symbols, params, constraints or
    /// shared arrays.
    fn contract(args: Vec<TensorArg>) -> KernelContract {
        KernelContract {
            name: "k",
            signature: "",
            location: "",
            symbols: &[],
            args: Box::leak(args.into_boxed_slice()),
            params: &[],
            constraints: &[],
            shared: &[],
            launch: crate::Launch::Grid {
                dims: &[],
                resident: crate::Resident::No,
                cluster: None,
            },
            empty: crate::EmptyPolicy::Skip,
            block: [256, 1, 1],
            block_from_occupancy: false,
            entry_i32: "k_i32",
            entry_i64: "k_i64",
        }
    }

    fn arg(role: Role, dims: &'static [Extent]) -> TensorArg {
        TensorArg {
            name: "a",
            role,
            dtype: DType::F32,
            dims,
            stored: &[0, 1],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
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
        let symbols = [crate::Symbol {
            name: "N",
            bound_by: crate::Binding { arg: 1, dim: 0 },
        }];
        let params = [crate::Param {
            name: "scale",
            dtype: DType::F32,
        }];
        let c = KernelContract {
            symbols: Box::leak(Box::new(symbols)),
            params: Box::leak(Box::new(params)),
            ..contract(vec![arg(Role::Logical, &[E, E]), arg(Role::In, &[E, E])])
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
        assert!(!c.needs_sm90a());
    }

    /// A `tma` argument's tensor map follows its strides, before the next argument; the
    /// kernel then needs sm_90a.
    #[test]
    fn a_tensor_map_follows_its_arguments_strides() {
        const E: Extent = Extent {
            text: "N",
            expr: crate::Expr::Sym(0),
        };
        let tma = TensorArg {
            tma: Some(crate::TmaBox {
                rows: 64,
                cols: 64,
                layout: crate::TmaLayout::Swizzled,
            }),
            ..arg(Role::In, &[E, E])
        };
        let c = contract(vec![tma, arg(Role::Out, &[E])]);
        use EntryParam::*;
        assert_eq!(
            c.entry_params(false).collect::<Vec<_>>(),
            [
                Pointer { arg: 0 },
                Stride { arg: 0, dim: 0 },
                Stride { arg: 0, dim: 1 },
                TensorMap { arg: 0 },
                Pointer { arg: 1 },
                Stride { arg: 1, dim: 0 },
            ]
        );
        assert!(c.needs_sm90a());
    }

    /// The slack is what rounds the arrays' start up from a 16-byte-aligned base to the
    /// largest alignment among them.
    #[test]
    fn shared_slack_is_the_largest_alignment_less_sixteen() {
        let array = |align| crate::SharedArray {
            name: "s",
            dtype: DType::F16,
            dims: &[],
            align,
        };
        let with = |shared: &'static [crate::SharedArray]| KernelContract {
            shared,
            ..contract(Vec::new())
        };
        assert_eq!(with(&[]).shared_slack(), 0);
        assert_eq!(
            with(Box::leak(Box::new([array(16), array(16)]))).shared_slack(),
            0
        );
        assert_eq!(
            with(Box::leak(Box::new([array(16), array(1024)]))).shared_slack(),
            1008
        );
    }
}
