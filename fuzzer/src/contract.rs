//! A kernel's [`KernelContract`], built from the IR at run time: the same content as the
//! `static` contract the Rust back end writes into generated stubs, leaked to `'static`
//! (once per kernel per fuzzing run, a few hundred bytes).
//!
//! The argument expansion follows `ima_codegen`'s `abi` module (a quantized argument is a
//! logical `[K, N, G]` argument followed by its buffers, [`ir::Quant::buffers`]) and the
//! per-argument rules of its Rust back end. This crate cannot depend on `ima-codegen`
//! (the `imac` binary there depends on it), so the expansion is restated here; the test
//! below holds it equal, field by field, to every contract the generator wrote for
//! `specs/*.ima` and `tests/in/planted_bugs.ima`.

use ima_dsl::abi::{ArgKind, contract_args};
use ima_dsl::ir::{self, Role as IrRole};
use ima_runtime::{
    Binding, Constraint, EmptyPolicy, Expr, Extent, KernelContract, Launch, Param, Role,
    SharedArray, Symbol, TensorArg, ValueContract,
};

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn leak_str(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// An IR expression as a runtime one, its subexpressions leaked.
pub fn expr(e: &ir::Expr) -> Expr {
    let boxed = |e: &ir::Expr| -> &'static Expr { Box::leak(Box::new(expr(e))) };
    match e {
        ir::Expr::Const(v) => Expr::Const(*v),
        ir::Expr::Sym(s) => Expr::Sym(*s),
        ir::Expr::Param(p) => Expr::Param(*p),
        ir::Expr::Neg(a) => Expr::Neg(boxed(a)),
        ir::Expr::Not(a) => Expr::Not(boxed(a)),
        ir::Expr::Bin(op, a, b) => Expr::Bin(*op, boxed(a), boxed(b)),
    }
}

fn extent(d: &ir::Extent) -> Extent {
    Extent {
        text: leak_str(d.text.clone()),
        expr: expr(&d.expr),
    }
}

fn extents(dims: &[ir::Extent]) -> &'static [Extent] {
    leak(dims.iter().map(extent).collect())
}

pub use ima_dsl::abi::contract_index;

/// Every contract argument of `k`, in ABI order (`ima_dsl::abi`, as the generated stubs).
fn args(k: &ir::Kernel) -> Vec<TensorArg> {
    contract_args(k)
        .into_iter()
        .map(|a| TensorArg {
            name: leak_str(a.name.clone()),
            role: match a.kind {
                ArgKind::Logical => Role::Logical,
                ArgKind::Buffer => role(a.role()),
            },
            dtype: a.dtype,
            dims: extents(&a.dims),
            stored: leak(a.stored.clone()),
            strided: a.strided,
            align: a.align as usize,
            values: a.values.as_ref().map(|v| ValueContract {
                text: leak_str(v.text.clone()),
                lo: extent(&v.lo),
                hi: extent(&v.hi),
                sentinel: v.sentinel,
                ascending: v.ascending,
            }),
        })
        .collect()
}

fn role(r: IrRole) -> Role {
    match r {
        IrRole::In => Role::In,
        IrRole::Out => Role::Out,
        IrRole::InOut => Role::InOut,
    }
}

/// The contract of kernel `k` of module `m`, as the generated stub holds it.
pub fn build(m: &ir::Module, k: &ir::Kernel) -> &'static KernelContract {
    let index = contract_index(k);
    let contract = KernelContract {
        name: leak_str(k.name.clone()),
        signature: leak_str(k.signature()),
        location: leak_str(format!("{}:{}", m.file, k.line)),
        symbols: leak(
            k.symbols
                .iter()
                .map(|s| Symbol {
                    name: leak_str(s.name.clone()),
                    bound_by: Binding {
                        arg: index[s.arg],
                        dim: s.dim,
                    },
                })
                .collect(),
        ),
        args: leak(args(k)),
        params: leak(
            k.params
                .iter()
                .map(|p| Param {
                    name: leak_str(p.name.clone()),
                    dtype: p.dtype,
                })
                .collect(),
        ),
        constraints: leak(
            k.constraints
                .iter()
                .map(|c| Constraint {
                    text: leak_str(c.text.clone()),
                    expr: expr(&c.expr),
                })
                .collect(),
        ),
        shared: leak(
            k.shared
                .iter()
                .map(|s| SharedArray {
                    name: leak_str(s.name.clone()),
                    dtype: s.dtype,
                    dims: extents(&s.dims),
                })
                .collect(),
        ),
        launch: match &k.launch {
            ir::Launch::Threads { arg, .. } => Launch::Threads { arg: index[*arg] },
            ir::Launch::Blocks { arg, indices } => Launch::Blocks {
                arg: index[*arg],
                outer: indices.len(),
            },
            ir::Launch::Grid { grid } => Launch::Grid {
                dims: leak(grid.iter().map(expr).collect()),
            },
        },
        empty: match k.empty {
            ir::EmptyPolicy::Skip => EmptyPolicy::Skip,
            ir::EmptyPolicy::Refuse => EmptyPolicy::Refuse,
        },
        block: k.block,
        block_from_occupancy: k.block_from_occupancy,
        entry_i32: leak_str(format!("{}_i32", k.name)),
        entry_i64: leak_str(format!("{}_i64", k.name)),
    };
    Box::leak(Box::new(contract))
}

/// Every kernel's contract, in declaration order.
pub fn build_all(m: &ir::Module) -> Vec<&'static KernelContract> {
    m.kernels.iter().map(|k| build(m, k)).collect()
}

/// Parses and checks a spec's text, naming it `file` (as `imac` names it on the command line).
pub fn load(file: &str, text: &str) -> Result<ir::Module, String> {
    let source = ima_dsl::Source::new(file, text);
    ima_dsl::compile(&source).map_err(|diags| source.render(&diags))
}

#[cfg(test)]
mod tests {
    //! Every contract built here equals the one generated into `tests/out/`.
    #![allow(dead_code, clippy::all)]

    use super::*;

    mod attn {
        include!("../../tests/out/specs/attn.rs");
    }
    mod index {
        include!("../../tests/out/specs/index.rs");
    }
    mod quant {
        include!("../../tests/out/specs/quant.rs");
    }
    mod checkpoint {
        include!("../../tests/out/specs/checkpoint.rs");
    }
    mod rmsnorm {
        include!("../../tests/out/specs/rmsnorm.rs");
    }
    mod rope {
        include!("../../tests/out/specs/rope.rs");
    }
    mod strided {
        include!("../../tests/out/specs/strided.rs");
    }
    mod transpose {
        include!("../../tests/out/specs/transpose.rs");
    }
    mod paged {
        include!("../../tests/out/specs/paged.rs");
    }
    mod planted {
        include!("../../tests/out/planted_bugs.rs");
    }

    fn built(file: &str) -> Vec<&'static KernelContract> {
        let text = std::fs::read_to_string(format!("{}/../{file}", env!("CARGO_MANIFEST_DIR")))
            .expect("the spec");
        build_all(&load(file, &text).expect("the spec compiles"))
    }

    /// Compares field by field first, so a failure names the field, then as a whole.
    fn same(built: &KernelContract, generated: &KernelContract) {
        let name = generated.name;
        assert_eq!(built.name, generated.name);
        assert_eq!(built.signature, generated.signature, "{name}: signature");
        assert_eq!(built.location, generated.location, "{name}: location");
        assert_eq!(built.symbols, generated.symbols, "{name}: symbols");
        assert_eq!(built.args.len(), generated.args.len(), "{name}: args");
        for (b, g) in built.args.iter().zip(generated.args) {
            assert_eq!(b, g, "{name}: argument {}", g.name);
        }
        assert_eq!(built.params, generated.params, "{name}: params");
        assert_eq!(
            built.constraints, generated.constraints,
            "{name}: constraints"
        );
        assert_eq!(built.shared, generated.shared, "{name}: shared");
        assert_eq!(built.launch, generated.launch, "{name}: launch");
        assert_eq!(built.empty, generated.empty, "{name}: empty");
        assert_eq!(built.block, generated.block, "{name}: block");
        assert_eq!(
            built.block_from_occupancy, generated.block_from_occupancy,
            "{name}: block_from_occupancy"
        );
        assert_eq!(built.entry_i32, generated.entry_i32, "{name}: entry_i32");
        assert_eq!(built.entry_i64, generated.entry_i64, "{name}: entry_i64");
        assert_eq!(*built, *generated);
    }

    fn all_same(file: &str, generated: &[&KernelContract]) {
        let built = built(file);
        let names: Vec<_> = built.iter().map(|c| c.name).collect();
        let expected: Vec<_> = generated.iter().map(|c| c.name).collect();
        assert_eq!(names, expected, "{file}: kernels");
        for (b, g) in built.iter().zip(generated) {
            same(b, g);
        }
    }

    #[test]
    fn attn_contracts_equal_the_generated_ones() {
        all_same(
            "specs/attn.ima",
            &[
                attn::AttnScores::CONTRACT,
                attn::SoftmaxRows::CONTRACT,
                attn::AttnPv::CONTRACT,
                attn::AttnScoresTiled::CONTRACT,
            ],
        );
    }

    #[test]
    fn index_contracts_equal_the_generated_ones() {
        all_same(
            "specs/index.ima",
            &[
                index::Embedding::CONTRACT,
                index::ReshapeAndCache::CONTRACT,
                index::MoeRoute::CONTRACT,
                index::MeanPoolVarlen::CONTRACT,
            ],
        );
    }

    #[test]
    fn quant_contracts_equal_the_generated_ones() {
        all_same(
            "specs/quant.ima",
            &[
                quant::GptqDequant::CONTRACT,
                quant::GptqDequantAnyN::CONTRACT,
                quant::GptqActOrderDequant::CONTRACT,
                quant::AwqDequant::CONTRACT,
                quant::AwqDequantAnyN::CONTRACT,
                quant::Int8Dequant::CONTRACT,
                quant::GptqGemv::CONTRACT,
                quant::AwqGemv::CONTRACT,
            ],
        );
    }

    #[test]
    fn checkpoint_contracts_equal_the_generated_ones() {
        all_same(
            "specs/checkpoint.ima",
            &[
                checkpoint::GptqV1ActOrderDequant::CONTRACT,
                checkpoint::GptqV2Dequant::CONTRACT,
                checkpoint::GptqSymDequant::CONTRACT,
                checkpoint::GptqSymActOrderDequant::CONTRACT,
                checkpoint::GptqV1ActOrderGemv::CONTRACT,
                checkpoint::GptqV2Gemv::CONTRACT,
                checkpoint::GptqV2ActOrderGemv::CONTRACT,
                checkpoint::GptqSymGemv::CONTRACT,
                checkpoint::GptqSymActOrderGemv::CONTRACT,
            ],
        );
    }

    #[test]
    fn rmsnorm_rope_strided_transpose_contracts_equal_the_generated_ones() {
        all_same("specs/rmsnorm.ima", &[rmsnorm::RmsNorm::CONTRACT]);
        all_same("specs/rope.ima", &[rope::Rope::CONTRACT]);
        all_same("specs/strided.ima", &[strided::AffineView::CONTRACT]);
        all_same(
            "specs/transpose.ima",
            &[
                transpose::Transpose::CONTRACT,
                transpose::TransposeTiled::CONTRACT,
            ],
        );
    }

    #[test]
    fn paged_contracts_equal_the_generated_ones() {
        all_same(
            "specs/paged.ima",
            &[
                paged::PagedAttnPartition::CONTRACT,
                paged::PagedAttnReduce::CONTRACT,
            ],
        );
    }

    #[test]
    fn planted_bug_contracts_equal_the_generated_ones() {
        all_same(
            "tests/in/planted_bugs.ima",
            &[
                planted::ScoresOffByOne::CONTRACT,
                planted::TransposeSwapped::CONTRACT,
                planted::SharedOverrun::CONTRACT,
                planted::DequantWrongGroup::CONTRACT,
                planted::SumTilesAcrossGroups::CONTRACT,
            ],
        );
    }

    #[test]
    fn every_example_spec_is_covered() {
        let mut specs: Vec<String> =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs"))
                .expect("specs/")
                .map(|e| {
                    e.expect("an entry")
                        .file_name()
                        .to_string_lossy()
                        .into_owned()
                })
                .filter(|n| n.ends_with(".ima"))
                .collect();
        specs.sort();
        assert_eq!(
            specs,
            [
                "attn.ima",
                "checkpoint.ima",
                "index.ima",
                "paged.ima",
                "quant.ima",
                "rmsnorm.ima",
                "rope.ima",
                "strided.ima",
                "transpose.ima"
            ],
            "a new spec needs its generated contracts compared above"
        );
    }
}
