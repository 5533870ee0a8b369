//! The contract's argument list, shared by both back ends: a plain tensor is one contract
//! argument; a quantized one is a logical `[K, N, G]` argument (shape only, never passed
//! to the kernel) followed by its real buffers. The runtime's checker and the kernel's
//! parameter list both follow this order, and checked-mode reports name arguments by
//! their index in it.

use crate::ir::{self, DType, Extent, Role};
pub use ima_contract::owned;
use ima_contract::{Binding, Role as ContractRole, TmaBox, TmaLayout};

pub struct ContractArg<'a> {
    /// `q`, or `w.qzeros` for a quantized argument's buffer.
    pub name: String,
    /// C identifier: `q`, `w_qzeros`.
    pub ident: String,
    pub ir: &'a ir::TensorArg,
    pub kind: ArgKind,
    pub dtype: DType,
    pub dims: Vec<Extent>,
    /// `stored[p]` is the logical dimension at physical position `p`.
    pub stored: Vec<usize>,
    /// Any strides accepted (a logical argument has no memory, so it takes any).
    pub strided: bool,
    /// Alignment of the data pointer in bytes.
    pub align: u64,
    /// What its entries may hold: a plain argument's `values(...)`, a `g_idx`'s groups.
    pub values: Option<ir::Values>,
    /// The box of the TMA tensor map the kernel receives with it.
    pub tma: Option<TmaBox>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A buffer the kernel reads or writes.
    Buffer,
    /// The logical shape of a quantized argument: checked and bound, never passed.
    Logical,
}

impl ContractArg<'_> {
    pub fn role(&self) -> Role {
        self.ir.role
    }
}

/// Every contract argument of a kernel, in order.
pub fn contract_args(k: &ir::Kernel) -> Vec<ContractArg<'_>> {
    let mut out = Vec::new();
    for a in &k.args {
        match &a.quant {
            None => out.push(ContractArg {
                name: a.name.clone(),
                ident: a.name.clone(),
                ir: a,
                kind: ArgKind::Buffer,
                dtype: a.dtype,
                dims: a.dims.clone(),
                stored: a.stored.clone(),
                strided: a.strided,
                align: a.align,
                values: a.values.clone(),
                tma: a.tma,
            }),
            Some(q) => {
                let mut logical = a.dims.clone();
                logical.push(q.group.clone());
                out.push(ContractArg {
                    name: a.name.clone(),
                    ident: a.name.clone(),
                    ir: a,
                    kind: ArgKind::Logical,
                    dtype: a.dtype,
                    stored: (0..logical.len()).collect(),
                    dims: logical,
                    strided: true,
                    align: a.dtype.size() as u64,
                    values: None,
                    tma: None,
                });
                for b in q.buffers(&a.dims[0], &a.dims[1], a.dtype) {
                    out.push(ContractArg {
                        name: format!("{}.{}", a.name, b.part),
                        ident: crate::names::quant_buffer(&a.name, b.part),
                        ir: a,
                        kind: ArgKind::Buffer,
                        dtype: b.dtype,
                        stored: (0..b.dims.len()).collect(),
                        dims: b.dims,
                        strided: false,
                        align: buffer_align(a, b.part, b.dtype),
                        values: b.values,
                        tma: a.tma.map(|t| buffer_tma(t, b.part)),
                    });
                }
            }
        }
    }
    out
}

/// `align(16)` on a quantized argument holds for the buffers its tiles read in vectors:
/// 4-bit qweight and scales. (The checker makes `N` a multiple of 8, so every row of them
/// starts aligned too.)
pub fn buffer_align(a: &ir::TensorArg, part: &str, dtype: DType) -> u64 {
    let four_bit = a
        .quant
        .as_ref()
        .is_some_and(|q| q.format != ir::QuantFormat::Int8);
    if part == "scales" || (part == "qweight" && four_bit) {
        a.align.max(dtype.size() as u64)
    } else {
        dtype.size() as u64
    }
}

/// The box of a GPTQ buffer's tensor map, from its argument's `tma(ROWS, COLS)` (`t`, in
/// rows of K by columns; the checker allows it on GPTQ without act-order): qweight's is
/// ROWS / 8 packed rows by COLS words, 128-byte swizzled, where COLS is 32, and plain
/// boxes of `plain_box_words(COLS)` words side by side where it is wider (the accessor
/// copies COLS / that many a tile); the scales' and zeros' hold the tile's ROWS / G groups
/// (`Groups`) of COLS scales, or of COLS / 8 zero words.
pub fn buffer_tma(t: TmaBox, part: &str) -> TmaBox {
    match part {
        "qweight" if t.cols == 32 => TmaBox {
            rows: t.rows / 8,
            cols: t.cols,
            layout: TmaLayout::Swizzled,
        },
        "qweight" => TmaBox {
            rows: t.rows / 8,
            cols: plain_box_words(t.cols),
            layout: TmaLayout::Plain,
        },
        "qzeros" => TmaBox {
            cols: t.cols / 8,
            layout: TmaLayout::Groups,
            ..t
        },
        _ => TmaBox {
            layout: TmaLayout::Groups,
            ..t
        },
    }
}

/// The width in words of a plain qweight box for tiles `cols` words wide (a multiple of
/// 32): the widest divisor of `cols` that is an odd multiple of 16, so that a box's rows
/// lie an odd multiple of 64 bytes apart. The pair decode's LDS.64 (`tma_wg_pairs_unscaled`)
/// reads 64 bytes of each of 4 consecutive packed rows a warp: rows a multiple of 128
/// bytes apart put all four on the same 16 banks (ncu: 8 wavefronts a load where 2 would
/// do, in gptq_gemm_wg16 with one box of 192 words); an odd multiple of 64 spreads them
/// over all 32 (4 wavefronts: each half warp's 4 rows of 32 bytes still pair up, which
/// rows an odd multiple of 32 bytes apart would avoid, but boxes of 24 words slowed the
/// TMA stream more than that costs). At COLS = 192 that is 48, four boxes a tile:
/// gptq_gemm_wg16 38.4 -> 37.6 µs and gptq_gemm_wg32 49.5 -> 44.7 at K = 8192, N = 28672,
/// where twelve boxes of 16 words (64-byte rows) took 44.1 (bench/RESULTS.md, "The pair
/// decode's bank conflicts").
pub fn plain_box_words(cols: u32) -> u32 {
    let sixteens = cols / 16;
    16 * (sixteens >> sixteens.trailing_zeros())
}

/// What a GPTQ argument's `tma(ROWS, COLS)` needs of its shapes, as constraints the
/// checker adds to the kernel's (so that the launch checks them like the spec's own, and
/// `imac fuzz` and `imac explain` see them): G divides ROWS, so that a tile holds whole
/// groups, and is at least 32, as the accessor has room for ROWS / 32 groups a tile; G is
/// a power of two (it divides 2048, the largest ROWS), so that the consumers find a row's
/// group by a shift: a division's branch in their unrolled steps left gptq_gemm_wg 3 to 14%
/// behind its twin; and, with zeros, N a multiple of 32, so that qzeros' rows (N / 8
/// words) are the multiple of 16 bytes a tensor map's stride must be.
pub fn quant_tma_constraints(a: &ir::TensorArg) -> Vec<ir::Constraint> {
    let (Some(t), Some(q)) = (a.tma, &a.quant) else {
        return Vec::new();
    };
    let bin = |op, l: ir::Expr, r: ir::Expr| ir::Expr::Bin(op, Box::new(l), Box::new(r));
    let (g, n) = (&q.group, &a.dims[1]);
    let (g_text, n_text) = (ir::paren(&g.text), ir::paren(&n.text));
    let name = &a.name;
    let mut out = vec![
        ir::Constraint {
            text: format!(
                "{} % {g_text} == 0 (tma({}, {}) on {name})",
                t.rows, t.rows, t.cols
            ),
            expr: bin(
                ir::BinOp::Eq,
                bin(
                    ir::BinOp::Rem,
                    ir::Expr::Const(t.rows.into()),
                    g.expr.clone(),
                ),
                ir::Expr::Const(0),
            ),
        },
        ir::Constraint {
            text: format!("{g_text} >= 32 (tma on {name})"),
            expr: bin(ir::BinOp::Ge, g.expr.clone(), ir::Expr::Const(32)),
        },
        ir::Constraint {
            text: format!("2048 % {g_text} == 0 (tma on {name}: G a power of two)"),
            expr: bin(
                ir::BinOp::Eq,
                bin(ir::BinOp::Rem, ir::Expr::Const(2048), g.expr.clone()),
                ir::Expr::Const(0),
            ),
        },
    ];
    let has_zeros = q
        .buffers(&a.dims[0], n, a.dtype)
        .iter()
        .any(|b| b.part == "qzeros");
    if has_zeros {
        out.push(ir::Constraint {
            text: format!("{n_text} % 32 == 0 (tma on {name}'s zeros)"),
            expr: bin(
                ir::BinOp::Eq,
                bin(ir::BinOp::Rem, n.expr.clone(), ir::Expr::Const(32)),
                ir::Expr::Const(0),
            ),
        });
    }
    out
}

/// Whether any of the kernel's arguments has a value contract: then every entry point,
/// release ones too, takes the violation record that reports an entry outside it.
pub fn has_value_contracts(k: &ir::Kernel) -> bool {
    contract_args(k).iter().any(|a| a.values.is_some())
}

/// The contract index of each IR argument (its logical argument, for a quantized one).
pub fn contract_index(k: &ir::Kernel) -> Vec<usize> {
    let mut next = 0;
    k.args
        .iter()
        .map(|a| {
            let index = next;
            next += 1 + a
                .quant
                .as_ref()
                .map_or(0, |q| q.buffers(&a.dims[0], &a.dims[1], a.dtype).len());
            index
        })
        .collect()
}

/// The contract of kernel `k` of module `m`, built from the IR in the one place: the Rust
/// back end prints it as the generated stub's `static KernelContract`, and `imac fuzz`
/// leaks it into the same static form at run time.
pub fn kernel_contract(m: &ir::Module, k: &ir::Kernel) -> owned::KernelContract {
    let index = contract_index(k);
    owned::KernelContract {
        name: k.name.clone(),
        signature: k.signature(),
        location: format!("{}:{}", m.file, k.line),
        symbols: k
            .symbols
            .iter()
            .map(|s| owned::Symbol {
                name: s.name.clone(),
                bound_by: Binding {
                    arg: index[s.arg],
                    dim: s.dim,
                },
            })
            .collect(),
        args: contract_args(k)
            .into_iter()
            .map(|a| owned::TensorArg {
                role: match (a.kind, a.role()) {
                    (ArgKind::Logical, _) => ContractRole::Logical,
                    (ArgKind::Buffer, Role::In) => ContractRole::In,
                    (ArgKind::Buffer, Role::Out) => ContractRole::Out,
                    (ArgKind::Buffer, Role::InOut) => ContractRole::InOut,
                },
                name: a.name,
                dtype: a.dtype,
                dims: a.dims,
                stored: a.stored,
                strided: a.strided,
                early: a.ir.early,
                align: a.align as usize,
                values: a.values,
                tma: a.tma,
            })
            .collect(),
        params: k
            .params
            .iter()
            .map(|p| owned::Param {
                name: p.name.clone(),
                dtype: p.dtype,
            })
            .collect(),
        constraints: k.constraints.clone(),
        shared: k
            .shared
            .iter()
            .map(|s| owned::SharedArray {
                name: s.name.clone(),
                dtype: s.dtype,
                dims: s.dims.clone(),
                align: s.align as usize,
            })
            .collect(),
        launch: match &k.launch {
            ir::Launch::Threads { arg, .. } => owned::Launch::Threads { arg: index[*arg] },
            ir::Launch::Blocks { arg, indices } => owned::Launch::Blocks {
                arg: index[*arg],
                outer: indices.len(),
            },
            ir::Launch::Grid {
                grid,
                resident,
                cluster,
            } => owned::Launch::Grid {
                dims: grid.clone(),
                resident: *resident,
                cluster: *cluster,
            },
        },
        empty: k.empty,
        block: k.block,
        block_from_occupancy: k.block_from_occupancy,
        entry_i32: ima_contract::EntryPoint::I32.name(&k.name),
        entry_i64: ima_contract::EntryPoint::I64.name(&k.name),
    }
}

#[cfg(test)]
mod tests {
    use super::buffer_tma;
    use crate::{Source, compile};
    use ima_contract::{TmaBox, TmaLayout};

    /// A GPTQ argument's `tma(ROWS, COLS)` boxes: the words ROWS / 8 packed rows by COLS,
    /// one box swizzled where COLS is 32 (where `tma_frag`'s quarter warps read 8 rows at
    /// once), plain boxes an odd multiple of 16 words wide where it is wider; the scales and
    /// zeros one box of the tile's groups.
    #[test]
    fn a_gptq_tiles_words_are_swizzled_32_wide_or_plain_boxes_of_odd_16s() {
        let box_of = |rows, cols, part| {
            let t = TmaBox {
                rows,
                cols,
                layout: TmaLayout::Swizzled,
            };
            let b = buffer_tma(t, part);
            (b.rows, b.cols, b.layout)
        };
        assert_eq!(box_of(512, 32, "qweight"), (64, 32, TmaLayout::Swizzled));
        assert_eq!(box_of(256, 192, "qweight"), (32, 48, TmaLayout::Plain));
        assert_eq!(box_of(256, 64, "qweight"), (32, 16, TmaLayout::Plain));
        assert_eq!(box_of(256, 160, "qweight"), (32, 80, TmaLayout::Plain));
        assert_eq!(box_of(256, 224, "qweight"), (32, 112, TmaLayout::Plain));
        assert_eq!(box_of(256, 192, "scales"), (256, 192, TmaLayout::Groups));
        assert_eq!(box_of(256, 192, "qzeros"), (256, 24, TmaLayout::Groups));
    }

    /// The constraints of a kernel whose one input is `w`, declared as `decl`.
    fn constraints_of(decl: &str) -> Vec<String> {
        let text = format!(
            "kernel k where N % 8 == 0 {{\n    in  w: {decl}\n    out y: f16[N]\n    launch grid(1) \
             block(128)\n    body {{ }}\n}}\n"
        );
        let module = compile(&Source::new("t.ima", text)).unwrap();
        module.kernels[0]
            .constraints
            .iter()
            .map(|c| c.text.clone())
            .collect()
    }

    #[test]
    fn tma_on_a_gptq_argument_adds_what_its_tiles_need() {
        assert_eq!(
            constraints_of("q4[K, N] align(16) gptq(group = G) tma(512, 32)"),
            [
                "N % 8 == 0",
                "512 % G == 0 (tma(512, 32) on w)",
                "G >= 32 (tma on w)",
                "2048 % G == 0 (tma on w: G a power of two)",
                "N % 32 == 0 (tma on w's zeros)"
            ]
        );
        // A tile of 192 rows holds whole groups of 96 and 48; the power of two refuses them.
        assert_eq!(
            constraints_of("q4[K, N] align(16) gptq(group = G, sym) tma(192, 64)"),
            [
                "N % 8 == 0",
                "192 % G == 0 (tma(192, 64) on w)",
                "G >= 32 (tma on w)",
                "2048 % G == 0 (tma on w: G a power of two)"
            ]
        );
        // Symmetric: no zeros, so no demand on N.
        assert_eq!(
            constraints_of("q4[K, N] align(16) gptq(group = 128, sym) tma(256, 64)"),
            [
                "N % 8 == 0",
                "256 % 128 == 0 (tma(256, 64) on w)",
                "128 >= 32 (tma on w)",
                "2048 % 128 == 0 (tma on w: G a power of two)"
            ]
        );
        assert_eq!(
            constraints_of("q4[K, N] align(16) gptq(group = G)"),
            ["N % 8 == 0"]
        );
    }

    /// G's values that the `tma` constraints of a 192-row tile let through (K and N = G, so
    /// that one value binds every symbol): the powers of two from 32 that divide 192, and
    /// not 48 or 96, which divide it too.
    #[test]
    fn tma_on_a_gptq_argument_takes_only_powers_of_two() {
        struct G(i64);
        impl ima_contract::Env for G {
            type Error = ima_contract::EvalError;
            fn symbol(&self, _: usize) -> Result<i64, Self::Error> {
                Ok(self.0)
            }
            fn param(&self, _: usize) -> Result<i64, Self::Error> {
                Ok(0)
            }
        }
        let text = "kernel k where G % 8 == 0 {\n    in  w: q4[G, G] align(16) gptq(group = G, sym) tma(192, 64)\n    \
                    out y: f16[G]\n    launch grid(1) block(128)\n    body { }\n}\n";
        let module = compile(&Source::new("t.ima", text)).unwrap();
        let taken = |g: i64| {
            module.kernels[0]
                .constraints
                .iter()
                .all(|c| ima_contract::eval(&c.expr, &G(g)) == Ok(1))
        };
        let taken: Vec<i64> = (1..=256).filter(|&g| taken(g)).collect();
        assert_eq!(taken, [32, 64]);
    }
}
