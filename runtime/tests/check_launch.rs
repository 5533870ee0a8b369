//! The checker on the launch forms: a block per outer tuple (`Launch::Blocks`), raw grids
//! held to the device's limits (`Launch::Grid`), dynamic shared memory, and malformed
//! launch forms, against hand-written contracts.

#[path = "common/fake.rs"]
mod fake;

use fake::{Fake, LIMITS, refused, run, spread};
use ima_runtime::{
    BinOp, Binding, DType, EmptyPolicy, EvalError, Expr, Extent, GRID_THREADS, KernelContract,
    Launch, Param, Plan, Resident, Role, Scalar, SharedArray, SharedUse, Symbol, TensorArg,
    Violation,
};

const fn ext(text: &'static str, expr: Expr) -> Extent {
    Extent { text, expr }
}

/// `rows(x: f32[R, N], y: f32[R], extra: i32)`, a block per row, with shared
/// `idx: u8[N]` and `tile: f32[N + extra]`.
static ROWS: KernelContract = KernelContract {
    name: "rows",
    signature: "rows(x: f32[R, N], y: f32[R], extra: i32)",
    location: "specs/rows.ima:1",
    symbols: &[
        Symbol {
            name: "R",
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
            role: Role::In,
            dtype: DType::F32,
            dims: &[ext("R", Expr::Sym(0)), ext("N", Expr::Sym(1))],
            stored: &[0, 1],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
        TensorArg {
            name: "y",
            role: Role::Out,
            dtype: DType::F32,
            dims: &[ext("R", Expr::Sym(0))],
            stored: &[0],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
    ],
    params: &[Param {
        name: "extra",
        dtype: DType::I32,
    }],
    constraints: &[],
    shared: &[
        SharedArray {
            name: "idx",
            dtype: DType::U8,
            dims: &[ext("N", Expr::Sym(1))],
            align: 16,
        },
        SharedArray {
            name: "tile",
            dtype: DType::F32,
            dims: &[ext(
                "N + extra",
                Expr::Bin(BinOp::Add, &Expr::Sym(1), &Expr::Param(0)),
            )],
            align: 16,
        },
    ],
    launch: Launch::Blocks { arg: 0, outer: 1 },
    empty: EmptyPolicy::Skip,
    block: [128, 1, 1],
    block_from_occupancy: false,
    entry_i32: "rows_i32",
    entry_i64: "rows_i64",
};

/// ROWS with its tile aligned to 1024 bytes, as TMA's swizzled tiles are.
static ROWS_ALIGNED: KernelContract = KernelContract {
    shared: &[
        SharedArray {
            name: "idx",
            dtype: DType::U8,
            dims: &[ext("N", Expr::Sym(1))],
            align: 16,
        },
        SharedArray {
            name: "tile",
            dtype: DType::F32,
            dims: &[ext(
                "N + extra",
                Expr::Bin(BinOp::Add, &Expr::Sym(1), &Expr::Param(0)),
            )],
            align: 1024,
        },
    ],
    ..ROWS
};

fn rows_args(r: usize, n: usize) -> Vec<Fake> {
    spread(vec![
        Fake::new(DType::F32, &[r, n], 0),
        Fake::new(DType::F32, &[r], 0),
    ])
}

#[test]
fn blocks_launch_one_block_per_outer_tuple() {
    let plan = run(&ROWS, &rows_args(300, 5), &[Scalar::I32(0)]).unwrap();
    assert_eq!((plan.grid, plan.block), ([300, 1, 1], [128, 1, 1]));
    assert_eq!(plan.numel, 1500);
    // idx: 5 bytes at 0; tile: 20 bytes at the next multiple of 16.
    assert_eq!(plan.shared_bytes, 16 + 20);

    // With the tile aligned to 1024: it starts at 1024, and the launch reserves the 1008
    // bytes that round a 16-byte-aligned base up to 1024.
    let plan = run(&ROWS_ALIGNED, &rows_args(300, 5), &[Scalar::I32(0)]).unwrap();
    assert_eq!(plan.shared_bytes, 1024 + 20 + 1008);

    // Block-stride: the grid stops at GRID_THREADS threads.
    let plan = run(&ROWS, &rows_args(1 << 20, 1), &[Scalar::I32(0)]).unwrap();
    assert_eq!(plan.grid, [(GRID_THREADS / 128) as u32, 1, 1]);

    // An empty inner dimension empties the domain.
    let plan = run(&ROWS, &rows_args(4, 0), &[Scalar::I32(0)]).unwrap();
    assert!(plan.skip);
    assert_eq!(plan.grid, [0, 0, 0]);
}

#[test]
fn shared_memory_over_the_limit() {
    let n = 50_000;
    let v = run(&ROWS, &rows_args(2, n), &[Scalar::I32(0)]).unwrap_err();
    let tile_at = (n as u64).next_multiple_of(16);
    assert_eq!(
        v,
        [Violation::SharedMemory {
            bytes: tile_at + 4 * n as u64,
            limit: LIMITS.shared_bytes,
            arrays: vec![
                SharedUse {
                    name: "idx",
                    dtype: DType::U8,
                    dims: vec![n as i64],
                    offset: 0,
                    bytes: n as u64,
                },
                SharedUse {
                    name: "tile",
                    dtype: DType::F32,
                    dims: vec![n as i64],
                    offset: tile_at,
                    bytes: 4 * n as u64,
                },
            ],
        }]
    );
    let msg = refused(&ROWS, &rows_args(2, n), &[Scalar::I32(0)]);
    assert!(
        msg.ends_with(
            "dynamic shared memory of 250000 bytes exceeds the 232448 bytes a block may have \
             on this device (idx: u8[50000] = 50000 bytes at offset 0; tile: f32[50000] = \
             200000 bytes at offset 50000)"
        ),
        "{msg}"
    );
    // Just under the limit passes: 16 + 4 * (n + extra) bytes.
    let extra = (LIMITS.shared_bytes as i32 - 16) / 4 - 2;
    let plan = run(&ROWS, &rows_args(2, 2), &[Scalar::I32(extra)]).unwrap();
    assert_eq!(plan.shared_bytes, LIMITS.shared_bytes);
}

#[test]
fn negative_shared_extent() {
    let v = run(&ROWS, &rows_args(2, 4), &[Scalar::I32(-8)]).unwrap_err();
    assert!(
        matches!(v[..], [Violation::Negative { value: -4, .. }]),
        "{v:?}"
    );
    assert!(
        refused(&ROWS, &rows_args(2, 4), &[Scalar::I32(-8)])
            .ends_with("shared tile: dims[0]: N + extra = -4 is negative (N = 4, extra = -8)")
    );
}

/// `fill(y: f32[N], per: i32, gy: i32)` on a raw grid `(ceil(N / per), gy)` of 32 x 4
/// blocks, refusing empty launches.
static FILL: KernelContract = KernelContract {
    name: "fill",
    signature: "fill(y: f32[N], per: i32, gy: i32)",
    location: "specs/fill.ima:1",
    symbols: &[Symbol {
        name: "N",
        bound_by: Binding { arg: 0, dim: 0 },
    }],
    args: &[TensorArg {
        name: "y",
        role: Role::Out,
        dtype: DType::F32,
        dims: &[ext("N", Expr::Sym(0))],
        stored: &[0],
        strided: false,
        early: false,
        align: 4,
        values: None,
        tma: None,
    }],
    params: &[
        Param {
            name: "per",
            dtype: DType::I32,
        },
        Param {
            name: "gy",
            dtype: DType::I32,
        },
    ],
    constraints: &[],
    shared: &[],
    launch: Launch::Grid {
        dims: &[
            Expr::Bin(BinOp::CeilDiv, &Expr::Sym(0), &Expr::Param(0)),
            Expr::Param(1),
        ],
        resident: ima_runtime::Resident::No,
        cluster: None,
    },
    empty: EmptyPolicy::Refuse,
    block: [32, 4, 1],
    block_from_occupancy: false,
    entry_i32: "fill_i32",
    entry_i64: "fill_i64",
};

fn fill(n: usize, per: i32, gy: i32) -> Result<Plan, Vec<Violation>> {
    run(
        &FILL,
        &[Fake::new(DType::F32, &[n], 0x1000)],
        &[Scalar::I32(per), Scalar::I32(gy)],
    )
}

#[test]
fn raw_grid_is_evaluated_and_held_to_the_device() {
    let plan = fill(1000, 128, 3).unwrap();
    assert_eq!((plan.grid, plan.block), ([8, 3, 1], [32, 4, 1]));
    assert_eq!(plan.numel, 8 * 3 * 128);

    assert_eq!(
        fill(1000, 128, 70_000).unwrap_err(),
        [Violation::Grid {
            grid: vec![8, 70_000],
            limit: LIMITS.grid
        }]
    );
    let msg = refused(
        &FILL,
        &[Fake::new(DType::F32, &[1000], 0x1000)],
        &[Scalar::I32(128), Scalar::I32(70_000)],
    );
    assert!(
        msg.ends_with(
            "launch grid [8, 70000] is outside the device's limits (x 0..=2147483647, y 0..=65535)"
        ),
        "{msg}"
    );
    assert!(matches!(
        fill(1000, 128, -1).unwrap_err()[..],
        [Violation::Grid { .. }]
    ));
    assert_eq!(
        fill(1000, 128, 0).unwrap_err(),
        [Violation::Empty {
            arg: "grid",
            shape: vec![8, 0]
        }]
    );
    assert!(
        matches!(
            fill(1000, 0, 1).unwrap_err()[..],
            [Violation::Eval {
                text: "x",
                error: EvalError::DivByZero,
                ..
            }]
        ),
        "{:?}",
        fill(1000, 0, 1)
    );
}

/// `fill` launched in clusters of 4 blocks along x: a grid that is no whole number of
/// clusters is refused with both shapes (the driver would refuse it with no numbers).
#[test]
fn a_clustered_grid_must_be_a_whole_number_of_clusters() {
    let clustered = KernelContract {
        launch: Launch::Grid {
            dims: match FILL.launch {
                Launch::Grid { dims, .. } => dims,
                _ => unreachable!(),
            },
            resident: Resident::No,
            cluster: Some([4, 1, 1]),
        },
        ..FILL
    };
    let args = [Fake::new(DType::F32, &[1000], 0x1000)];
    let plan = run(&clustered, &args, &[Scalar::I32(125), Scalar::I32(3)]).unwrap();
    assert_eq!(plan.grid, [8, 3, 1]);
    assert_eq!(
        run(&clustered, &args, &[Scalar::I32(100), Scalar::I32(3)]).unwrap_err(),
        [Violation::ClusterGrid {
            grid: [10, 3, 1],
            cluster: [4, 1, 1]
        }]
    );
    let msg = refused(&clustered, &args, &[Scalar::I32(100), Scalar::I32(3)]);
    assert!(
        msg.ends_with(
            "launch grid [10, 3, 1] is no whole number of clusters of [4, 1, 1]: each extent \
             of the grid must be a multiple of the cluster's"
        ),
        "{msg}"
    );
}

#[test]
fn malformed_launch_forms_are_contract_faults() {
    let bad = |launch, block| KernelContract {
        launch,
        block,
        ..FILL
    };
    let cases = [
        bad(Launch::Threads { arg: 1 }, [32, 1, 1]),
        bad(Launch::Blocks { arg: 0, outer: 2 }, [32, 1, 1]),
        bad(
            Launch::Grid {
                dims: &[],
                resident: ima_runtime::Resident::No,
                cluster: None,
            },
            [32, 1, 1],
        ),
        bad(
            Launch::Grid {
                dims: &[Expr::Const(1); 4],
                resident: ima_runtime::Resident::No,
                cluster: None,
            },
            [32, 1, 1],
        ),
        bad(
            Launch::Grid {
                dims: &[Expr::Param(9)],
                resident: ima_runtime::Resident::No,
                cluster: None,
            },
            [32, 1, 1],
        ),
        bad(Launch::Threads { arg: 0 }, [64, 64, 1]),
        bad(Launch::Threads { arg: 0 }, [32, 0, 1]),
        // A cluster with an extent of 0 (which the grid's extents would be divided by), and
        // one of more than 8 blocks.
        bad(
            Launch::Grid {
                dims: &[Expr::Const(8)],
                resident: ima_runtime::Resident::No,
                cluster: Some([0, 1, 1]),
            },
            [32, 1, 1],
        ),
        bad(
            Launch::Grid {
                dims: &[Expr::Const(16)],
                resident: ima_runtime::Resident::No,
                cluster: Some([16, 1, 1]),
            },
            [32, 1, 1],
        ),
    ];
    for c in &cases {
        let v = run(
            c,
            &[Fake::new(DType::F32, &[8], 0x1000)],
            &[Scalar::I32(1), Scalar::I32(1)],
        )
        .unwrap_err();
        assert!(
            matches!(v[..], [Violation::Contract { .. }]),
            "{:?}: {v:?}",
            c.launch
        );
    }
}

/// The refusal of a `resident` grid the device cannot hold at once (found by
/// `Kernel::entry` with the occupancy API) says how many blocks it asked for and holds.
#[test]
fn a_resident_grid_that_does_not_fit_says_what_the_device_holds() {
    let v = Violation::NotResident {
        form: Resident::Whole,
        grid: [133, 1, 1],
        threads: 512,
        shared_bytes: 197_632,
        blocks_per_sm: 1,
        sms: 132,
    };
    assert_eq!(
        v.to_string(),
        "launch grid [133, 1, 1] (133 blocks) is `resident`, but the device holds 132 at \
         once: 1 block of 512 threads with 197632 bytes of dynamic shared memory on each of \
         132 SMs"
    );
    let v = Violation::NotResident {
        form: Resident::Whole,
        grid: [100, 50, 1],
        threads: 32,
        shared_bytes: 0,
        blocks_per_sm: 32,
        sms: 114,
    };
    assert!(
        v.to_string()
            .ends_with("(5000 blocks) is `resident`, but the device holds 3648 at once: 32 blocks of 32 threads with 0 bytes of dynamic shared memory on each of 114 SMs"),
        "{v}"
    );
    // A persistent grid shrinks to what the device holds: refused only where that is none.
    let v = Violation::NotResident {
        form: Resident::AtMost,
        grid: [132, 1, 1],
        threads: 1024,
        shared_bytes: 300_000,
        blocks_per_sm: 0,
        sms: 132,
    };
    assert_eq!(
        v.to_string(),
        "launch grid [132, 1, 1] (132 blocks) is `persistent`, but the device holds 0 at \
         once: 0 blocks of 1024 threads with 300000 bytes of dynamic shared memory on each \
         of 132 SMs"
    );
}
