//! Views of memory imac does not own, made from raw device pointers: the same metadata as
//! an owned tensor reaches the same checker, so several views into one buffer pass where
//! they are disjoint and are refused where an output overlaps an input, is misaligned or
//! reaches outside its buffer. No GPU: a raw view is only metadata until it is launched.

#[path = "common/attn.rs"]
mod attn;

use attn::ATTN;
use ima_runtime::{
    Binding, DType, DeviceId, DeviceLimits, DeviceTensor, EmptyPolicy, Expr, Extent,
    KernelContract, Launch, RawTensor, Role, Scalar, Symbol, TensorArg, TensorMeta, Violation,
    check,
};

const DEV: DeviceId = DeviceId {
    ordinal: 0,
    context: 0xc0,
};

const LIMITS: DeviceLimits = DeviceLimits::SM_90;

const BASE: u64 = 0x7f00_0000_0000;

/// A contiguous raw view of `shape` at element `offset` of a buffer of `len` elements.
fn raw(dtype: DType, len: usize, shape: &[usize], offset: usize) -> RawTensor<'static> {
    let mut strides = vec![1isize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as isize;
    }
    // SAFETY: the view is never launched: only its metadata is checked.
    unsafe { RawTensor::from_raw(BASE, len, dtype, shape, &strides, offset, DEV) }.unwrap()
}

fn checked(c: &KernelContract, args: &[&dyn DeviceTensor]) -> Result<Vec<u64>, Vec<Violation>> {
    let metas: Vec<TensorMeta<'_>> = args.iter().map(|a| a.meta()).collect();
    check(c, DEV, &LIMITS, &metas, &[Scalar::F32(0.125)])
        .map(|p| p.pointers)
        .map_err(|e| e.violations)
}

#[test]
fn several_views_into_one_buffer() {
    // q, k and o carved from one allocation, as a framework's allocator hands them out.
    let (q_len, o_len) = (2 * 16 * 64, 2 * 16 * 16);
    let len = 2 * q_len + 2 * o_len;
    let q = raw(DType::F16, len, &[1, 2, 16, 64], 0);
    // k is stored [B, T, H, D].
    let k = raw(DType::F16, len, &[1, 16, 2, 64], q_len);
    let o = raw(DType::F32, len / 2, &[1, 2, 16, 16], q_len);
    let pointers = checked(&ATTN, &[&q, &k, &o]).unwrap();
    assert_eq!(
        pointers,
        [BASE, BASE + 2 * q_len as u64, BASE + 4 * q_len as u64]
    );
}

#[test]
fn an_output_over_an_input_is_refused() {
    let len = 4 * 2 * 16 * 64;
    let q = raw(DType::F16, len, &[1, 2, 16, 64], 0);
    let k = raw(DType::F16, len, &[1, 16, 2, 64], 2 * 16 * 64);
    // o starts inside k.
    let o = raw(DType::F32, len / 2, &[1, 2, 16, 16], 2 * 16 * 64 / 2 + 8);
    let v = checked(&ATTN, &[&q, &k, &o]).unwrap_err();
    assert!(
        v.iter().any(|v| matches!(v, Violation::Overlap { .. })),
        "{v:?}"
    );
}

#[test]
fn a_misaligned_view_is_refused() {
    // An f16 buffer at an odd address: every element is misaligned.
    let len = 4 * 2 * 16 * 64;
    // SAFETY: never launched.
    let q = unsafe {
        RawTensor::from_raw(
            BASE + 1,
            len,
            DType::F16,
            &[1, 2, 16, 64],
            &[2048, 1024, 64, 1],
            0,
            DEV,
        )
    }
    .unwrap();
    let k = raw(DType::F16, len, &[1, 16, 2, 64], 2 * 16 * 64);
    let o = raw(DType::F32, len, &[1, 2, 16, 16], 2 * 2 * 16 * 64);
    let v = checked(&ATTN, &[&q, &k, &o]).unwrap_err();
    assert!(!v.is_empty());
    let text = format!("{v:?}");
    assert!(text.contains("align") || text.contains("Align"), "{text}");
}

#[test]
fn a_view_outside_its_buffer_is_refused_when_made() {
    // SAFETY: never launched (and refused).
    let made = unsafe { RawTensor::from_raw(BASE, 100, DType::F32, &[10, 11], &[11, 1], 0, DEV) };
    assert!(made.is_err());
    let made = unsafe { RawTensor::from_raw(BASE, 100, DType::F32, &[10], &[-1], 5, DEV) };
    assert!(made.is_err());
    // Transposed inside the buffer is fine; the checker judges its strides.
    let t = raw(DType::F32, 100, &[10, 10], 0)
        .with_layout(&[10, 10], &[1, 10], 0)
        .unwrap();
    assert_eq!(t.strides(), [1, 10]);
}

const fn ext(text: &'static str, expr: Expr) -> Extent {
    Extent { text, expr }
}

/// `fill(x: f32[N], o: f32[N, M])`: `M` is carried by the output only.
static OUT_BOUND: KernelContract = KernelContract {
    name: "fill",
    signature: "fill(x: f32[N], o: f32[N, M])",
    location: "test:1",
    symbols: &[
        Symbol {
            name: "N",
            bound_by: Binding { arg: 0, dim: 0 },
        },
        Symbol {
            name: "M",
            bound_by: Binding { arg: 1, dim: 1 },
        },
    ],
    args: &[
        TensorArg {
            name: "x",
            role: Role::In,
            dtype: DType::F32,
            dims: &[ext("N", Expr::Sym(0))],
            stored: &[0],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
        TensorArg {
            name: "o",
            role: Role::Out,
            dtype: DType::F32,
            dims: &[ext("N", Expr::Sym(0)), ext("M", Expr::Sym(1))],
            stored: &[0, 1],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
    ],
    params: &[],
    constraints: &[],
    shared: &[],
    launch: Launch::Threads { arg: 1 },
    empty: EmptyPolicy::Skip,
    block: [256, 1, 1],
    block_from_occupancy: false,
    entry_i32: "fill_i32",
    entry_i64: "fill_i64",
};

#[test]
fn a_symbol_binds_from_an_output() {
    let x = raw(DType::F32, 1000, &[4], 0);
    let o = raw(DType::F32, 1000, &[4, 7], 8);
    let metas = [x.meta(), o.meta()];
    let plan = check(&OUT_BOUND, DEV, &LIMITS, &metas, &[]).unwrap();
    assert_eq!(plan.symbols, [4, 7]);
    // N is still checked against the output.
    let o = raw(DType::F32, 1000, &[5, 7], 8);
    let metas = [x.meta(), o.meta()];
    let v = check(&OUT_BOUND, DEV, &LIMITS, &metas, &[]).unwrap_err();
    assert!(
        matches!(
            v.violations[..],
            [Violation::Dim {
                arg: "o",
                position: 0,
                extent: "N",
                expected: 4,
                actual: 5,
                ..
            }]
        ),
        "{v}"
    );
}
