//! Value contracts on the host: `validate_values` against hand-computed entries of a
//! hand-written contract (a block table, a slot mapping with its -1 sentinel, offsets
//! ascending from 0 to T), the `IndexValue` messages word for word, and the launch
//! checker's refusal of a range that is empty while the tensor has entries (or, with a
//! sentinel, reversed) and of bounds it cannot evaluate.

// Shared by the checker tests; this one needs only part of it.
#[allow(dead_code)]
#[path = "common/fake.rs"]
mod fake;

use fake::{Fake, run};
use ima_runtime::{
    BinOp, Binding, DType, EmptyPolicy, Error, EvalError, Expr, Extent, IndexValue, IndexWidth,
    KernelContract, Launch, Param, Role, Scalar, Symbol, TensorArg, ValueContract, ValueFault,
    Violation, validate_values,
};

const NB: Expr = Expr::Sym(0);
const BS: Expr = Expr::Sym(1);
const T: Expr = Expr::Sym(4);

const fn ext(text: &'static str, expr: Expr) -> Extent {
    Extent { text, expr }
}

const fn input(name: &'static str, dtype: DType, dims: &'static [Extent]) -> TensorArg {
    TensorArg {
        name,
        role: Role::In,
        dtype,
        dims,
        stored: &[0, 1],
        strided: false,
        early: false,
        align: dtype.size(),
        values: None,
        tma: None,
    }
}

/// k_cache [NB, BS]; block_tables [B, P] in 0 .. NB; slots [T] in 0 .. NB * BS or -1;
/// cu [B1] ascending from 0 to T.
static PAGED: KernelContract = KernelContract {
    name: "paged",
    signature: "paged(k_cache: f16[NB,BS], block_tables: i32[B,P], slots: i64[T], cu: i32[B1])",
    location: "specs/paged.ima:3",
    symbols: &[
        Symbol {
            name: "NB",
            bound_by: Binding { arg: 0, dim: 0 },
        },
        Symbol {
            name: "BS",
            bound_by: Binding { arg: 0, dim: 1 },
        },
        Symbol {
            name: "B",
            bound_by: Binding { arg: 1, dim: 0 },
        },
        Symbol {
            name: "P",
            bound_by: Binding { arg: 1, dim: 1 },
        },
        Symbol {
            name: "T",
            bound_by: Binding { arg: 2, dim: 0 },
        },
        Symbol {
            name: "B1",
            bound_by: Binding { arg: 3, dim: 0 },
        },
    ],
    args: &[
        input("k_cache", DType::F16, &[ext("NB", NB), ext("BS", BS)]),
        TensorArg {
            values: Some(ValueContract {
                text: "0 .. NB",
                lo: ext("0", Expr::Const(0)),
                hi: ext("NB", NB),
                sentinel: None,
                ascending: false,
            }),
            ..input(
                "block_tables",
                DType::I32,
                &[ext("B", Expr::Sym(2)), ext("P", Expr::Sym(3))],
            )
        },
        TensorArg {
            stored: &[0],
            values: Some(ValueContract {
                text: "0 .. NB * BS, or -1",
                lo: ext("0", Expr::Const(0)),
                hi: ext("NB * BS", Expr::Bin(BinOp::Mul, &NB, &BS)),
                sentinel: Some(-1),
                ascending: false,
            }),
            ..input("slots", DType::I64, &[ext("T", T)])
        },
        TensorArg {
            stored: &[0],
            values: Some(ValueContract {
                text: "ascending from 0 to T",
                lo: ext("0", Expr::Const(0)),
                hi: ext("T + 1", Expr::Bin(BinOp::Add, &T, &Expr::Const(1))),
                sentinel: None,
                ascending: true,
            }),
            ..input("cu", DType::I32, &[ext("B1", Expr::Sym(5))])
        },
    ],
    entry_i32: "paged_i32",
    entry_i64: "paged_i64",
    // The rest as every contract here: no params, one block.
    ..table_and_ids("", "", &[], &[])
};

/// `x: f32[N]`, the table an index vector's contract bounds (N is symbol 0, as NB is).
const TABLE: TensorArg = TensorArg {
    stored: &[0],
    ..input("x", DType::F32, &[ext("N", NB)])
};

/// A contract of `args`, [`TABLE`] and an index vector of T entries (symbol 1), and
/// `params`, launched as one block.
const fn table_and_ids(
    name: &'static str,
    signature: &'static str,
    args: &'static [TensorArg],
    params: &'static [Param],
) -> KernelContract {
    KernelContract {
        name,
        signature,
        location: "tests/values.rs",
        symbols: &[
            Symbol {
                name: "N",
                bound_by: Binding { arg: 0, dim: 0 },
            },
            Symbol {
                name: "T",
                bound_by: Binding { arg: 1, dim: 0 },
            },
        ],
        args,
        params,
        constraints: &[],
        shared: &[],
        launch: Launch::Grid {
            dims: &[Expr::Const(1)],
            resident: ima_runtime::Resident::No,
            cluster: None,
        },
        empty: EmptyPolicy::Skip,
        block: [32, 1, 1],
        block_from_occupancy: false,
        entry_i32: "table_and_ids_i32",
        entry_i64: "table_and_ids_i64",
    }
}

/// NB = 4, BS = 16, B = 2, P = 3, T = 7, B1 = 3.
const SYMBOLS: [i64; 6] = [4, 16, 2, 3, 7, 3];

fn bad(arg: usize, shape: &[usize], entries: &[i64]) -> IndexValue {
    match validate_values(&PAGED, arg, shape, entries, &SYMBOLS, &[]) {
        Err(Error::IndexValue(v)) => *v,
        other => panic!("expected an IndexValue, got {other:?}"),
    }
}

#[test]
fn entries_inside_their_contracts_pass() {
    let ok = |arg, shape: &[usize], entries: &[i64]| {
        validate_values(&PAGED, arg, shape, entries, &SYMBOLS, &[]).unwrap()
    };
    ok(1, &[2, 3], &[0, 3, 1, 2, 2, 0]);
    ok(2, &[7], &[0, 63, -1, 5, -1, 17, 40]);
    ok(3, &[3], &[0, 0, 7]);
    ok(3, &[3], &[0, 4, 7]);
    // An argument without a contract passes whatever it holds.
    ok(0, &[4, 16], &[]);
}

#[test]
fn a_block_id_past_the_cache_names_its_position_value_and_bound() {
    let v = bad(1, &[2, 3], &[0, 3, 1, 2, 4, 0]);
    assert_eq!(
        (v.arg.as_str(), v.position.as_slice(), v.value, v.fault),
        (
            "block_tables",
            &[1i64, 1][..],
            4,
            ValueFault::Range { lo: 0, hi: 4 }
        )
    );
    assert_eq!(
        v.to_string(),
        "paged: block_tables[1, 1] = 4, expected < NB = 4 (bound by k_cache.shape[0]); \
         values(0 .. NB)\n  in paged(k_cache: f16[NB,BS], block_tables: i32[B,P], slots: i64[T], \
         cu: i32[B1]) at specs/paged.ima:3"
    );
}

#[test]
fn the_sentinel_passes_and_any_other_negative_value_does_not() {
    let v = bad(2, &[7], &[0, 1, -1, -2, 0, 0, 0]);
    assert_eq!((v.position.as_slice(), v.value), (&[3i64][..], -2));
    assert!(
        v.to_string().starts_with(
            "paged: slots[3] = -2, expected 0 <= value < NB * BS = 64 (NB bound by k_cache.shape[0], \
             BS bound by k_cache.shape[1]) or -1; values(0 .. NB * BS, or -1)"
        ),
        "{v}"
    );
    let v = bad(2, &[7], &[0, 1, 64, 0, 0, 0, i64::MAX]);
    assert_eq!((v.position, v.value), (vec![2], 64));
}

#[test]
fn offsets_must_start_at_lo_end_at_the_bound_and_never_decrease() {
    let v = bad(3, &[3], &[1, 4, 7]);
    assert_eq!(
        (v.position, v.fault),
        (vec![0], ValueFault::First { expected: 0 })
    );
    let v = bad(3, &[3], &[0, 5, 4]);
    assert_eq!(
        (v.position, v.fault),
        (vec![2], ValueFault::Order { previous: 5 })
    );
    let v = bad(3, &[3], &[0, 4, 6]);
    assert_eq!(
        (v.position.as_slice(), v.fault),
        (&[2i64][..], ValueFault::Last { expected: 7 })
    );
    assert!(
        v.to_string()
            .starts_with("paged: cu[2] = 6, expected T = 7 (bound by slots.shape[0]), as the last entry of an ascending tensor; values(ascending from 0 to T)"),
        "{v}"
    );
    // Outside 0 ..= T is a range fault before any order is looked at.
    let v = bad(3, &[3], &[0, 9, 7]);
    assert_eq!(
        (v.position, v.fault),
        (vec![1], ValueFault::Range { lo: 0, hi: 8 })
    );
}

#[test]
fn a_range_empty_for_the_launch_is_refused_while_the_tensor_has_entries() {
    // NB = 0: no block id is valid, and a block table with entries has only bad ones.
    let args = [
        Fake::new(DType::F16, &[0, 16], 0x1_0000_0000),
        Fake::new(DType::I32, &[2, 3], 0x2_0000_0000),
        Fake::new(DType::I64, &[7], 0x3_0000_0000),
        Fake::new(DType::I32, &[3], 0x4_0000_0000),
    ];
    let v = run(&PAGED, &args, &[]).unwrap_err();
    assert!(
        v.contains(&Violation::EmptyValueRange {
            arg: "block_tables",
            contract: "0 .. NB",
            lo: 0,
            hi: 0
        }),
        "{v:?}"
    );
    assert_eq!(
        Violation::EmptyValueRange {
            arg: "block_tables",
            contract: "0 .. NB",
            lo: 0,
            hi: 0
        }
        .to_string(),
        "argument block_tables: its entries must lie in values(0 .. NB), which is empty here (0 .. 0)"
    );
}

#[test]
fn a_sentinel_makes_an_empty_range_sound_and_a_reversed_one_is_still_refused() {
    // NB = 0 and every slot the sentinel: the kernel skips each (it gives no value), so
    // the launch passes; block_tables is empty here, so its own empty range is not refused.
    let args = |slots: usize| {
        [
            Fake::new(DType::F16, &[0, 16], 0x1_0000_0000),
            Fake::new(DType::I32, &[2, 0], 0x2_0000_0000),
            Fake::new(DType::I64, &[slots], 0x3_0000_0000),
            Fake::new(DType::I32, &[3], 0x4_0000_0000),
        ]
    };
    run(&PAGED, &args(7), &[]).unwrap_or_else(|v| panic!("{v:?}"));
    // The kernel's unsigned test needs lo <= hi: 0 .. N - 1 with N = 0 is refused.
    static REVERSED: KernelContract = table_and_ids(
        "reversed",
        "reversed(x: f32[N], slots: i64[T])",
        &[
            TABLE,
            TensorArg {
                stored: &[0],
                values: Some(ValueContract {
                    text: "0 .. N - 1, or -1",
                    lo: ext("0", Expr::Const(0)),
                    hi: ext("N - 1", Expr::Bin(BinOp::Sub, &NB, &Expr::Const(1))),
                    sentinel: Some(-1),
                    ascending: false,
                }),
                ..input("slots", DType::I64, &[ext("T", BS)])
            },
        ],
        &[],
    );
    let reversed = |n: usize| {
        let args = [
            Fake::new(DType::F32, &[n], 0x1_0000_0000),
            Fake::new(DType::I64, &[3], 0x2_0000_0000),
        ];
        run(&REVERSED, &args, &[])
    };
    assert_eq!(
        reversed(0).unwrap_err(),
        vec![Violation::EmptyValueRange {
            arg: "slots",
            contract: "0 .. N - 1, or -1",
            lo: 0,
            hi: -1
        }]
    );
    reversed(1).unwrap_or_else(|v| panic!("{v:?}"));
}

#[test]
fn a_bound_that_cannot_be_evaluated_is_refused() {
    // values(0 .. N / p) with p = 0: the kernel would compute N / 0 and test entries
    // against whatever it gave.
    static DIVIDED: KernelContract = table_and_ids(
        "divided",
        "divided(x: f32[N], ids: i32[T], p: i32)",
        &[
            TABLE,
            TensorArg {
                stored: &[0],
                values: Some(ValueContract {
                    text: "0 .. N / p",
                    lo: ext("0", Expr::Const(0)),
                    hi: ext("N / p", Expr::Bin(BinOp::Div, &NB, &Expr::Param(0))),
                    sentinel: None,
                    ascending: false,
                }),
                ..input("ids", DType::I32, &[ext("T", BS)])
            },
        ],
        &[Param {
            name: "p",
            dtype: DType::I32,
        }],
    );
    let args = [
        Fake::new(DType::F32, &[16], 0x1_0000_0000),
        Fake::new(DType::I32, &[8], 0x2_0000_0000),
    ];
    let v = run(&DIVIDED, &args, &[Scalar::I32(0)]).unwrap_err();
    assert_eq!(
        v,
        vec![Violation::Eval {
            site: "argument ids: values(0 .. N / p)".into(),
            text: "N / p",
            error: EvalError::DivByZero,
            values: vec![("N", "16".into()), ("p", "0".into())],
        }]
    );
    assert_eq!(
        v[0].to_string(),
        "argument ids: values(0 .. N / p): cannot evaluate N / p: division by zero (N = 16, p = 0)"
    );
    run(&DIVIDED, &args, &[Scalar::I32(2)]).unwrap_or_else(|v| panic!("{v:?}"));
}

#[test]
fn a_bound_past_32_bits_takes_the_64_bit_entry_point() {
    // The kernel computes NB * BS in its index type: 2^27 * 16 = 2^31 does not fit an
    // int, although every extent and reach does (k_cache's last element is 2^31 - 1).
    let width = |nb: usize| {
        let args = [
            Fake::new(DType::F16, &[nb, 16], 0x1_0000_0000),
            Fake::new(DType::I32, &[2, 3], 0x2_0000_0000),
            Fake::new(DType::I64, &[7], 0x3_0000_0000),
            Fake::new(DType::I32, &[3], 0x4_0000_0000),
        ];
        run(&PAGED, &args, &[]).unwrap().index
    };
    assert_eq!(width((1 << 27) - 1), IndexWidth::I32);
    assert_eq!(width(1 << 27), IndexWidth::I64);
}

/// Arguments that do not fit the contract are an error naming what is off, not a panic:
/// a shape of the wrong rank, entries that do not fill the shape (a zero extent before
/// others included), bindings of the wrong count.
#[test]
fn arguments_that_do_not_fit_the_contract_are_an_error() {
    let error = |arg, shape: &[usize], entries: &[i64], symbols: &[i64]| match validate_values(
        &PAGED,
        arg,
        shape,
        entries,
        symbols,
        &[],
    ) {
        Err(Error::Internal(text)) => text,
        other => panic!("expected an error, got {other:?}"),
    };
    let text = error(1, &[6], &[0; 6], &SYMBOLS);
    assert!(
        text.contains("a shape of rank 1, the argument has 2"),
        "{text}"
    );
    let text = error(1, &[2, 3], &[0; 5], &SYMBOLS);
    assert!(text.contains("5 entries for shape [2, 3]"), "{text}");
    let text = error(3, &[2, 0], &[0; 1], &SYMBOLS);
    assert!(
        text.contains("a shape of rank 2, the argument has 1"),
        "{text}"
    );
    let text = error(3, &[3], &[0, 4, 7], &SYMBOLS[..2]);
    assert!(
        text.contains("2 symbols and 0 params, the contract has 6 and 0"),
        "{text}"
    );
    // No entries at all along a zero extent, whatever the others: nothing to check.
    validate_values(&PAGED, 1, &[0, usize::MAX], &[], &SYMBOLS, &[]).unwrap();
}
