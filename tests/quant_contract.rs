//! The committed quant stubs' contracts, checked on the CPU with fake tensors: `align(16)`
//! on a 4-bit argument reaches its qweight and scales (which the tiles read in 16-byte
//! vectors), the tiled kernels refuse an N that is no multiple of 8, and a K whose tiles'
//! rows pass 32 bits takes the 64-bit entry point.

#[allow(dead_code)]
mod quant {
    include!("out/specs/quant.rs");
}

#[allow(dead_code)]
#[path = "../runtime/tests/common/fake.rs"]
mod fake;

use fake::{Fake, run, spread};
use ima::{DType, IndexWidth, Violation};

/// gptq_dequant's arguments for a `K x N` weight with group `g`: the logical `[K, N, G]`,
/// qweight, qzeros, scales, then y.
fn gptq_args(k: usize, n: usize, g: usize) -> Vec<Fake> {
    spread(vec![
        Fake::new(DType::F16, &[k, n, g], 0),
        Fake::new(DType::I32, &[k.div_ceil(8), n], 0),
        Fake::new(DType::I32, &[k.div_ceil(g), n.div_ceil(8)], 0),
        Fake::new(DType::F16, &[k.div_ceil(g), n], 0),
        Fake::new(DType::F16, &[k, n], 0),
    ])
}

#[test]
fn aligned_buffers_pass() {
    let c = quant::GptqDequant::CONTRACT;
    assert!(run(c, &gptq_args(5000, 4096, 128), &[]).is_ok());
}

#[test]
fn a_qweight_view_off_16_bytes_is_refused() {
    let c = quant::GptqDequant::CONTRACT;
    let mut args = gptq_args(64, 64, 32);
    // One word in: 4-byte aligned, as a plain i32 buffer may be, but not 16.
    args[1].offset = 1;
    args[1].buffer_len += 1;
    let v = run(c, &args, &[]).unwrap_err();
    assert!(
        v.iter().any(|v| matches!(
            v,
            Violation::Align {
                arg: "w.qweight",
                align: 16,
                offset: 1,
                ..
            }
        )),
        "{v:?}"
    );
    // The any-N kernel, without align(16), takes the same view.
    assert!(run(quant::GptqDequantAnyN::CONTRACT, &args, &[]).is_ok());
}

#[test]
fn a_scales_view_off_16_bytes_is_refused() {
    let c = quant::AwqDequant::CONTRACT;
    let mut args = gptq_args(64, 64, 32);
    // AWQ packs along N: qweight is [K, N / 8].
    args[1] = Fake::new(DType::I32, &[64, 8], 2 << 44);
    args[3].offset = 4;
    args[3].buffer_len += 4;
    let v = run(c, &args, &[]).unwrap_err();
    assert!(
        v.iter().any(|v| matches!(
            v,
            Violation::Align {
                arg: "w.scales",
                align: 16,
                ..
            }
        )),
        "{v:?}"
    );
}

#[test]
fn tiled_kernels_refuse_n_off_8_and_the_any_n_ones_take_it() {
    let args = gptq_args(64, 45, 32);
    let v = run(quant::GptqDequant::CONTRACT, &args, &[]).unwrap_err();
    assert!(
        v.iter().any(|v| matches!(
            v,
            Violation::Constraint {
                text: "N % 8 == 0",
                ..
            }
        )),
        "{v:?}"
    );
    assert!(run(quant::GptqDequantAnyN::CONTRACT, &args, &[]).is_ok());
}

#[test]
fn a_k_whose_last_tiles_pass_32_bits_takes_the_64_bit_entry_point() {
    // gptq_gemv at M = 1: x [1, K], w [K, 8] (G = 128), y [1, 8]. Every extent and reach
    // fits 32 bits at K = 2^31 - 8, but a tile's rows run up to 128 past its first, which
    // lies below K, so the kernel's row arithmetic needs K + 128 to fit too.
    let width = |k: usize| {
        let (n, g) = (8, 128);
        // The logical shape as the runtime passes it: no buffer, strides 0.
        let logical = Fake {
            strides: vec![0; 3],
            buffer_len: 0,
            ..Fake::new(DType::F16, &[k, n, g], 0)
        };
        let args = spread(vec![
            Fake::new(DType::F16, &[1, k], 0),
            logical,
            Fake::new(DType::I32, &[k.div_ceil(8), n], 0),
            Fake::new(DType::I32, &[k.div_ceil(g), n.div_ceil(8)], 0),
            Fake::new(DType::F16, &[k.div_ceil(g), n], 0),
            Fake::new(DType::F16, &[1, n], 0),
        ]);
        run(quant::GptqGemv::CONTRACT, &args, &[])
            .unwrap_or_else(|v| panic!("{v:?}"))
            .index
    };
    assert_eq!(width((1 << 31) - 8), IndexWidth::I64);
    assert_eq!(width((1 << 31) - 128), IndexWidth::I64);
    assert_eq!(width((1 << 31) - 136), IndexWidth::I32);
}
