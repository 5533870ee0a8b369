//! The checker against a hand-written contract equal to what codegen emits for
//! `attn_scores` (with `k` stored `[B, T, H, D]`): one test per argument violation class,
//! the messages, index-width selection, and a property test over random shapes and single
//! mutations. The launch forms are in `check_launch.rs`.

#[path = "common/attn.rs"]
mod attn;
#[path = "common/fake.rs"]
mod fake;

use attn::ATTN;
use fake::{Fake, refused, run, spread};
use ima_runtime::{
    BinOp, Binding, DType, DeviceId, EmptyPolicy, EvalError, Expr, Extent, GRID_THREADS,
    IndexWidth, KernelContract, Launch, Param, Role, Scalar, StrideFault, Symbol, TensorArg,
    ValueContract, Violation,
};
use proptest::prelude::*;

const fn ext(text: &'static str, expr: Expr) -> Extent {
    Extent { text, expr }
}

const SCALE: [Scalar; 1] = [Scalar::F32(0.125)];

/// q, k (physical `[B, T, H, D]`) and o for the given sizes, far apart in memory.
fn attn_args(b: usize, h: usize, s: usize, t: usize, d: usize) -> Vec<Fake> {
    vec![
        Fake::new(DType::F16, &[b, h, s, d], 0x1_0000_0000),
        Fake::new(DType::F16, &[b, t, h, d], 0x2_0000_0000),
        Fake::new(DType::F32, &[b, h, s, t], 0x3_0000_0000),
    ]
}

#[test]
fn valid_launch_gives_the_abi_plan() {
    let plan = run(&ATTN, &attn_args(2, 4, 16, 24, 64), &SCALE).unwrap();
    assert!(!plan.skip);
    assert_eq!(plan.symbols, [2, 4, 16, 64, 24]);
    assert_eq!(plan.numel, 2 * 4 * 16 * 24);
    assert_eq!(plan.index, IndexWidth::I32);
    assert_eq!(plan.strides[0], [4 * 16 * 64, 16 * 64, 64, 1]);
    // k is held [B, T, H, D]: logical H has physical stride D, logical T has H * D.
    assert_eq!(plan.strides[1], [24 * 4 * 64, 64, 4 * 64, 1]);
    assert_eq!(plan.strides[2], [4 * 16 * 24, 16 * 24, 24, 1]);
    assert_eq!(plan.pointers, [0x1_0000_0000, 0x2_0000_0000, 0x3_0000_0000]);
    assert_eq!(
        (plan.grid, plan.block, plan.shared_bytes),
        ([(2 * 4 * 16 * 24u32).div_ceil(256), 1, 1], [256, 1, 1], 0)
    );
}

#[test]
fn arg_count() {
    let mut args = attn_args(1, 1, 8, 8, 8);
    args.pop();
    let v = run(&ATTN, &args, &[]).unwrap_err();
    assert_eq!(
        v,
        [
            Violation::ArgCount {
                what: "tensor arguments",
                expected: 3,
                actual: 2
            },
            Violation::ArgCount {
                what: "params",
                expected: 1,
                actual: 0
            },
        ]
    );
    assert!(refused(&ATTN, &args, &[]).contains(
        "2 argument errors\n  the launch stub passed 2 tensor arguments, the contract declares 3"
    ));
}

#[test]
fn dtype() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[0].dtype = DType::F32;
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    assert_eq!(
        v,
        [Violation::DType {
            arg: "q",
            expected: DType::F16,
            actual: DType::F32
        }]
    );
    assert!(refused(&ATTN, &args, &SCALE).ends_with("argument q: dtype is f32, expected f16"));
}

#[test]
fn rank() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[0] = Fake::new(DType::F16, &[2, 8, 16], 0x1_0000_0000);
    let msg = refused(&ATTN, &args, &SCALE);
    assert!(
        msg.contains("argument q: rank is 3, expected 4 (f16[B, H, S, D])"),
        "{msg}"
    );
}

#[test]
fn dim_names_where_the_symbol_was_bound() {
    let mut args = attn_args(2, 8, 128, 96, 64);
    args[1].shape[3] = 32;
    args[1] = Fake::new(DType::F16, &args[1].shape.clone(), 0x2_0000_0000);
    let msg = refused(&ATTN, &args, &SCALE);
    assert_eq!(
        msg,
        "attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D], o: f32[B,H,S,T], scale: f32) at \
         specs/attn.ima:3: 1 argument error\n  \
         argument k: shape[3] is 32, expected D = 64 (bound by q.shape[3])"
    );
}

#[test]
fn dim_of_a_stored_layout_names_the_logical_dimension() {
    // k passed in logical order [B, H, T, D] although the spec stores it [B, T, H, D].
    let mut args = attn_args(2, 8, 128, 96, 64);
    args[1] = Fake::new(DType::F16, &[2, 8, 96, 64], 0x2_0000_0000);
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    // T binds from k.shape[1] (= 8 here), so o's last dimension disagrees too.
    let msg = refused(&ATTN, &args, &SCALE);
    assert!(
        msg.contains(
            "argument k: shape[2] (logical dim 1, H) is 96, expected H = 8 (bound by q.shape[1])"
        ),
        "{msg}"
    );
    assert!(
        msg.contains("argument o: shape[3] is 96, expected T = 8 (bound by k.shape[1])"),
        "{msg}"
    );
    assert!(
        v.iter().all(|v| matches!(v, Violation::Dim { .. })),
        "{v:?}"
    );
}

#[test]
fn constraint_reports_the_values() {
    let args = attn_args(1, 2, 8, 8, 60);
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    assert_eq!(
        v,
        [Violation::Constraint {
            text: "D % 8 == 0",
            values: vec![("D", "60".to_string())]
        }]
    );
    assert!(
        refused(&ATTN, &args, &SCALE).ends_with("  constraint D % 8 == 0 does not hold: D = 60")
    );
}

/// `dequant(x: f16[K, N], w: i32[ceil(K / G), N], G: i32)`: an extent with a param.
static DEQUANT: KernelContract = KernelContract {
    name: "dequant",
    signature: "dequant(x: f16[K, N], w: i32[ceil(K / G), N], G: i32)",
    location: "specs/q.ima:1",
    symbols: &[
        Symbol {
            name: "K",
            bound_by: Binding { arg: 0, dim: 0 },
        },
        Symbol {
            name: "N",
            bound_by: Binding { arg: 0, dim: 1 },
        },
    ],
    args: &[
        TensorArg {
            name: "x",
            role: Role::Out,
            dtype: DType::F16,
            dims: &[ext("K", Expr::Sym(0)), ext("N", Expr::Sym(1))],
            stored: &[0, 1],
            strided: true,
            early: false,
            align: 2,
            values: None,
            tma: None,
        },
        TensorArg {
            name: "w",
            role: Role::In,
            dtype: DType::I32,
            dims: &[
                ext(
                    "ceil(K / G)",
                    Expr::Bin(BinOp::CeilDiv, &Expr::Sym(0), &Expr::Param(0)),
                ),
                ext("N", Expr::Sym(1)),
            ],
            stored: &[0, 1],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
    ],
    params: &[Param {
        name: "G",
        dtype: DType::I32,
    }],
    constraints: &[],
    shared: &[],
    launch: Launch::Threads { arg: 0 },
    empty: EmptyPolicy::Refuse,
    block: [128, 1, 1],
    block_from_occupancy: false,
    entry_i32: "dequant_i32",
    entry_i64: "dequant_i64",
};

fn dequant_args(k: usize, n: usize, words: usize) -> Vec<Fake> {
    vec![
        Fake::new(DType::F16, &[k, n], 0x1_0000_0000),
        Fake::new(DType::I32, &[words, n], 0x2_0000_0000),
    ]
}

#[test]
fn compound_extent_names_its_symbols() {
    assert!(run(&DEQUANT, &dequant_args(1000, 16, 8), &[Scalar::I32(128)]).is_ok());
    let msg = refused(&DEQUANT, &dequant_args(1000, 16, 7), &[Scalar::I32(128)]);
    assert!(
        msg.ends_with(
            "argument w: shape[0] is 7, expected ceil(K / G) = 8 (K = 1000 bound by x.shape[0])"
        ),
        "{msg}"
    );
}

#[test]
fn eval_errors_are_violations() {
    let v = run(&DEQUANT, &dequant_args(1000, 16, 8), &[Scalar::I32(0)]).unwrap_err();
    assert!(
        matches!(
            v[..],
            [Violation::Eval {
                error: EvalError::DivByZero,
                ..
            }]
        ),
        "{v:?}"
    );
    let msg = refused(&DEQUANT, &dequant_args(1000, 16, 8), &[Scalar::I32(0)]);
    assert!(
        msg.ends_with(
            "argument w: shape[0]: cannot evaluate ceil(K / G): division by zero (K = 1000, G = 0)"
        ),
        "{msg}"
    );
}

#[test]
fn param_type() {
    let v = run(&ATTN, &attn_args(1, 2, 8, 8, 16), &[Scalar::F64(0.5)]).unwrap_err();
    assert_eq!(
        v,
        [Violation::ParamType {
            param: "scale",
            expected: DType::F32,
            actual: DType::F64
        }]
    );
    // A float param where an integer is needed is both a type error and an eval error.
    let v = run(&DEQUANT, &dequant_args(1000, 16, 8), &[Scalar::F32(128.0)]).unwrap_err();
    assert!(
        matches!(v[0], Violation::ParamType { param: "G", .. }),
        "{v:?}"
    );
    assert!(
        matches!(
            v[1],
            Violation::Eval {
                error: EvalError::NotInteger(0),
                ..
            }
        ),
        "{v:?}"
    );
}

#[test]
fn device() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[1].device = DeviceId {
        ordinal: 1,
        context: 0xc1,
    };
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    assert!(
        matches!(v[..], [Violation::Device { arg: "k", .. }]),
        "{v:?}"
    );
    assert!(refused(&ATTN, &args, &SCALE).ends_with(
        "argument k: on device 1 (context 0xc1), but the launch stream is on device 0 (context 0xc0)"
    ));
}

#[test]
fn stride_of_a_non_contiguous_input() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    // q transposed in S and D: same buffer, strides swapped.
    args[0].shape = vec![1, 2, 8, 16];
    args[0].strides = vec![256, 128, 1, 8];
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    assert!(
        matches!(
            v[..],
            [Violation::Stride {
                arg: "q",
                fault: StrideFault::NotContiguous {
                    position: 2,
                    expected: 16,
                    actual: 1
                },
                ..
            }]
        ),
        "{v:?}"
    );
    let msg = refused(&ATTN, &args, &SCALE);
    assert!(
        msg.contains("argument q: not contiguous: stride[2] is 1, expected 16"),
        "{msg}"
    );
}

#[test]
fn extent_one_dimensions_take_any_stride() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[0].strides[0] = 1 << 40;
    let plan = run(&ATTN, &args, &SCALE).unwrap();
    // The stride is never multiplied by anything but 0, so it is passed as 0.
    assert_eq!(plan.strides[0][0], 0);
    assert_eq!(plan.index, IndexWidth::I32);
}

#[test]
fn strided_output_that_aliases_itself() {
    let mut args = dequant_args(4, 16, 1);
    args[0].strides = vec![0, 1];
    let v = run(&DEQUANT, &args, &[Scalar::I32(128)]).unwrap_err();
    assert!(
        matches!(
            v[..],
            [Violation::Stride {
                arg: "x",
                fault: StrideFault::SelfOverlap,
                ..
            }]
        ),
        "{v:?}"
    );
    // A strided output with gaps is fine.
    args[0].strides = vec![32, 1];
    args[0].buffer_len = 4 * 32;
    assert!(run(&DEQUANT, &args, &[Scalar::I32(128)]).is_ok());
}

#[test]
fn out_of_buffer() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[2].buffer_len -= 1;
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    assert!(matches!(
        v[..],
        [Violation::OutOfBuffer {
            arg: "o",
            first: 0,
            last: 127,
            buffer_len: 127,
            ..
        }]
    ));
    let msg = refused(&ATTN, &args, &SCALE);
    assert!(
        msg.contains("reaches elements 0..=127 of a buffer of 127 elements"),
        "{msg}"
    );

    // Negative strides may not reach before the buffer.
    let mut args = dequant_args(4, 16, 1);
    args[0].strides = vec![-16, 1];
    let v = run(&DEQUANT, &args, &[Scalar::I32(128)]).unwrap_err();
    assert!(
        matches!(
            v[..],
            [Violation::OutOfBuffer {
                arg: "x",
                first: -48,
                ..
            }]
        ),
        "{v:?}"
    );
    args[0].offset = 48;
    assert!(run(&DEQUANT, &args, &[Scalar::I32(128)]).is_ok());
}

#[test]
fn align() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[0].offset = 1;
    args[0].buffer_len += 1;
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    assert_eq!(
        v,
        [Violation::Align {
            arg: "q",
            align: 16,
            address: 0x1_0000_0002,
            offset: 1
        }]
    );
    assert!(refused(&ATTN, &args, &SCALE).ends_with(
        "argument q: data pointer 0x100000002 (offset 1 elements) is not aligned to 16 bytes"
    ));
    args[0].offset = 8;
    args[0].buffer_len += 7;
    assert_eq!(
        run(&ATTN, &args, &SCALE).unwrap().pointers[0],
        0x1_0000_0010
    );
}

#[test]
fn overlap_of_an_output_with_an_input() {
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[2].base_ptr = args[0].base_ptr + 64;
    let v = run(&ATTN, &args, &SCALE).unwrap_err();
    assert!(
        matches!(
            v[..],
            [Violation::Overlap {
                arg: "o",
                other: "q",
                ..
            }]
        ),
        "{v:?}"
    );
    let msg = refused(&ATTN, &args, &SCALE);
    assert!(
        msg.contains("output o overlaps argument q: bytes 0x100000040..0x100000240"),
        "{msg}"
    );
    // Adjacent is not overlapping: q is 256 f16 = 512 bytes.
    args[2].base_ptr = args[0].base_ptr + 512;
    assert!(run(&ATTN, &args, &SCALE).is_ok());
}

#[test]
fn empty_domain_skips_or_refuses() {
    let plan = run(&ATTN, &attn_args(2, 4, 0, 8, 16), &SCALE).unwrap();
    assert!(plan.skip);
    assert_eq!((plan.numel, plan.grid), (0, [0, 0, 0]));

    let v = run(&DEQUANT, &dequant_args(0, 16, 0), &[Scalar::I32(128)]).unwrap_err();
    assert_eq!(
        v,
        [Violation::Empty {
            arg: "x",
            shape: vec![0, 16]
        }]
    );
    assert!(
        refused(&DEQUANT, &dequant_args(0, 16, 0), &[Scalar::I32(128)]).ends_with(
            "launch domain x has no elements (shape [0, 16]) and the kernel refuses empty launches"
        )
    );
}

#[test]
fn malformed_contract_is_refused_not_a_panic() {
    static BAD_ARGS: [TensorArg; 1] = [TensorArg {
        name: "x",
        role: Role::In,
        dtype: DType::F32,
        dims: &[ext("N", Expr::Sym(7))],
        stored: &[1],
        strided: false,
        early: false,
        align: 4,
        values: None,
        tma: None,
    }];
    static BAD: KernelContract = KernelContract {
        name: "bad",
        signature: "bad(x: f32[N])",
        location: "specs/bad.ima:1",
        symbols: &[Symbol {
            name: "N",
            bound_by: Binding { arg: 3, dim: 0 },
        }],
        args: &BAD_ARGS,
        params: &[],
        constraints: &[],
        shared: &[],
        launch: Launch::Threads { arg: 5 },
        empty: EmptyPolicy::Skip,
        block: [0, 1, 1],
        block_from_occupancy: false,
        entry_i32: "bad_i32",
        entry_i64: "bad_i64",
    };
    let v = run(&BAD, &[Fake::new(DType::F32, &[4], 0x1000)], &[]).unwrap_err();
    assert_eq!(v.len(), 5, "{v:?}");
    assert!(
        v.iter().all(|v| matches!(v, Violation::Contract { .. })),
        "{v:?}"
    );
}

/// A value contract whose bound names a symbol the contract lacks is a malformed contract,
/// refused before any bound is evaluated.
#[test]
fn a_value_bound_of_a_missing_symbol_is_refused_not_a_panic() {
    static ARGS: [TensorArg; 1] = [TensorArg {
        name: "ids",
        role: Role::In,
        dtype: DType::I32,
        dims: &[ext("N", Expr::Sym(0))],
        stored: &[0],
        strided: false,
        early: false,
        align: 4,
        values: Some(ValueContract {
            text: "0 .. V",
            lo: ext("0", Expr::Const(0)),
            hi: ext("V", Expr::Sym(9)),
            sentinel: None,
            ascending: false,
        }),
        tma: None,
    }];
    static BAD: KernelContract = KernelContract {
        name: "bad",
        signature: "bad(ids: i32[N])",
        location: "specs/bad.ima:1",
        symbols: &[Symbol {
            name: "N",
            bound_by: Binding { arg: 0, dim: 0 },
        }],
        args: &ARGS,
        params: &[],
        constraints: &[],
        shared: &[],
        launch: Launch::Threads { arg: 0 },
        empty: EmptyPolicy::Skip,
        block: [128, 1, 1],
        block_from_occupancy: false,
        entry_i32: "bad_i32",
        entry_i64: "bad_i64",
    };
    let v = run(&BAD, &[Fake::new(DType::I32, &[4], 0x1000)], &[]).unwrap_err();
    assert!(
        matches!(&v[..], [Violation::Contract { what }] if what.contains("values(0 .. V) bound V")),
        "{v:?}"
    );
}

#[test]
fn every_violation_is_collected() {
    let mut args = attn_args(2, 8, 128, 96, 60);
    args[0].dtype = DType::BF16;
    args[2].device = DeviceId {
        ordinal: 1,
        context: 0xc1,
    };
    let v = run(&ATTN, &args, &[Scalar::I32(1)]).unwrap_err();
    assert!(matches!(v[0], Violation::ParamType { .. }), "{v:?}");
    assert!(matches!(v[1], Violation::DType { arg: "q", .. }), "{v:?}");
    assert!(matches!(v[2], Violation::Device { arg: "o", .. }), "{v:?}");
    assert!(
        matches!(
            v[3],
            Violation::Constraint {
                text: "D % 8 == 0",
                ..
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.len(), 4);
}

/// Big fake shapes: nothing is allocated, so 64-bit cases cost nothing.
#[test]
fn index_width() {
    let limit = i32::MAX as usize;
    let headroom = GRID_THREADS as usize;
    // The domain's elements plus one grid of threads must stay within i32.
    let s = limit - headroom; // with b = h = t = 1
    let at_limit = spread(attn_args(1, 1, s, 1, 8));
    let plan = run(&ATTN, &at_limit, &SCALE).unwrap();
    assert_eq!(plan.index, IndexWidth::I64, "q reaches s * 8 elements");

    // o alone near the limit: q and k small (D = 8, S * D past i32 would be I64 anyway).
    let mut args = attn_args(1, 1, 1, 1, 8);
    args[2] = Fake::new(DType::F32, &[1, 1, 1, s], 0);
    args[1] = Fake::new(DType::F16, &[1, s, 1, 8], 0);
    let args = spread(args);
    let plan = run(&ATTN, &args, &SCALE).unwrap();
    assert_eq!(plan.index, IndexWidth::I64, "k reaches s * 8 elements");

    // A domain at the headroom edge (S * T elements), with every other reach small.
    let s_max = (limit - headroom) / 1024;
    let ok = spread(attn_args(1, 1, s_max, 1024, 8));
    assert_eq!(run(&ATTN, &ok, &SCALE).unwrap().index, IndexWidth::I32);
    let over = spread(attn_args(1, 1, s_max + 1, 1024, 8));
    assert_eq!(run(&ATTN, &over, &SCALE).unwrap().index, IndexWidth::I64);

    // A big buffer with a small view: the view's reach decides, not the buffer.
    let mut args = attn_args(1, 2, 8, 8, 16);
    args[0].buffer_len = 1 << 40;
    args[0].offset = 1 << 39;
    let plan = run(&ATTN, &args, &SCALE).unwrap();
    assert_eq!(plan.index, IndexWidth::I32);
    assert_eq!(plan.pointers[0], 0x1_0000_0000 + (1 << 40));

    // The grid never exceeds GRID_THREADS threads.
    let plan = run(&ATTN, &spread(attn_args(64, 64, 1024, 1024, 8)), &SCALE).unwrap();
    assert_eq!(plan.index, IndexWidth::I64);
    assert_eq!(plan.grid[0] as u64 * plan.block[0] as u64, GRID_THREADS);
}

/// One mutation of an argument that satisfied the contract.
#[derive(Debug, Clone, Copy)]
enum Mutation {
    /// A dimension grows or shrinks.
    Dim,
    /// A stride of a dimension of extent > 1 changes.
    Stride,
    /// The view moves inside a buffer that does not grow: it reaches past the end.
    Offset,
    /// The view moves by a few elements inside a buffer that grows to hold it.
    Misalign,
    /// The tensor is on another device.
    Device,
}

proptest! {
    #[test]
    fn valid_shapes_pass_and_one_mutation_fails_with_its_variant(
        b in 1usize..4, h in 1usize..6, s in 1usize..40, t in 1usize..40, d8 in 1usize..32,
        which in 0usize..3, dim in 0usize..4, delta in 1usize..5, grow in any::<bool>(),
        mutation in prop_oneof![
            Just(Mutation::Dim), Just(Mutation::Stride), Just(Mutation::Offset),
            Just(Mutation::Misalign), Just(Mutation::Device),
        ],
    ) {
        let d = d8 * 8;
        let args = attn_args(b, h, s, t, d);
        let plan = run(&ATTN, &args, &SCALE).unwrap();
        prop_assert_eq!(plan.symbols, vec![b as i64, h as i64, s as i64, d as i64, t as i64]);
        prop_assert_eq!(plan.numel, (b * h * s * t) as u64);

        let mut bad = args.clone();
        let name = ATTN.args[which].name;
        let a = &mut bad[which];
        let v = match mutation {
            Mutation::Dim => {
                let mut shape = a.shape.clone();
                shape[dim] = if grow || shape[dim] <= delta {
                    shape[dim] + delta
                } else {
                    shape[dim] - delta
                };
                *a = Fake::new(a.dtype, &shape, a.base_ptr);
                let v = run(&ATTN, &bad, &SCALE).unwrap_err();
                prop_assert!(v.iter().any(|v| matches!(v, Violation::Dim { .. })), "{:?}", v);
                prop_assert!(
                    v.iter().all(|v| matches!(v, Violation::Dim { .. } | Violation::Constraint { .. })),
                    "{:?}", v
                );
                return Ok(());
            }
            Mutation::Stride => {
                // The last dimension (D or T) has extent > 1 whenever it is D; pick the
                // first dimension of extent > 1 from `dim` on, wrapping around.
                let Some(p) = (0..4).map(|i| (dim + i) % 4).find(|&p| a.shape[p] > 1) else {
                    return Ok(());
                };
                a.strides[p] += delta as isize;
                run(&ATTN, &bad, &SCALE).unwrap_err()
            }
            Mutation::Offset => {
                a.offset += delta;
                run(&ATTN, &bad, &SCALE).unwrap_err()
            }
            Mutation::Misalign => {
                a.offset += delta;
                a.buffer_len += delta;
                let misaligned = !(delta * a.dtype.size()).is_multiple_of(ATTN.args[which].align);
                let result = run(&ATTN, &bad, &SCALE);
                if !misaligned {
                    prop_assert!(result.is_ok(), "{:?}", result);
                    return Ok(());
                }
                result.unwrap_err()
            }
            Mutation::Device => {
                a.device = DeviceId { ordinal: 1, context: 0xc1 };
                run(&ATTN, &bad, &SCALE).unwrap_err()
            }
        };
        let fits = |v: &Violation| match (mutation, v) {
            (Mutation::Stride, Violation::Stride { arg, fault: StrideFault::NotContiguous { .. }, .. })
            | (Mutation::Stride | Mutation::Offset, Violation::OutOfBuffer { arg, .. })
            | (Mutation::Misalign, Violation::Align { arg, .. })
            | (Mutation::Device, Violation::Device { arg, .. }) => *arg == name,
            _ => false,
        };
        prop_assert!(!v.is_empty() && v.iter().all(fits), "{:?}: {:?}", mutation, v);
        if matches!(mutation, Mutation::Stride) {
            let is_stride = |v: &Violation| matches!(v, Violation::Stride { .. });
            prop_assert!(v.iter().any(is_stride), "{:?}", v);
        }
    }
}
