//! Quantized weights on a GPU: `cargo test -p ima-runtime --test quant_gpu -- --ignored`.
//! Upload keeps every buffer's padded shape and contents; `from_parts` validates nothing.

use ima_runtime::cudarc::driver::CudaContext;
use ima_runtime::half::{bf16, f16};
use ima_runtime::quant::{
    QWeight, QuantFormat, QuantHost, QuantSpec, QuantTensor, ZeroStyle, quantize_awq,
    quantize_gptq, quantize_int8,
};
use ima_runtime::{DType, Tensor};

fn weights(k: usize, n: usize) -> Vec<f32> {
    (0..k * n)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn upload_keeps_padded_shapes_and_contents() {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    let stream = ctx.default_stream();
    let (k, n, g) = (21, 13, 8);
    let w = weights(k, n);
    let g_idx: Vec<i32> = (0..k).map(|r| (r % 3) as i32).collect();
    let hosts: Vec<QuantHost<f16>> = vec![
        quantize_gptq(&w, k, n, g, ZeroStyle::MinusOne, Some(&g_idx)).unwrap(),
        quantize_gptq(&w, k, n, g, ZeroStyle::Symmetric, None).unwrap(),
        quantize_awq(&w, k, n, g).unwrap(),
        quantize_int8(&w, k, n, g).unwrap(),
    ];
    for h in &hosts {
        let t = QuantTensor::upload(&stream, h).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.k(), t.n(), t.group(), t.format()), (k, n, g, h.format()));
        let shapes = h.shapes();
        assert_eq!(t.expected_shapes(), shapes);
        assert_eq!(t.qweight().shape(), &shapes[0].shape[..]);
        match t.qweight() {
            QWeight::Packed(q) => {
                assert_eq!(
                    q.to_host(&stream).unwrap(),
                    h.qweight().as_packed().unwrap()
                )
            }
            QWeight::Int8(q) => {
                assert_eq!(q.to_host(&stream).unwrap(), h.qweight().as_int8().unwrap())
            }
        }
        assert_eq!(t.qweight().meta().dtype, h.format().qweight_dtype());
        match (t.qzeros(), h.qzeros()) {
            (Some(d), Some(z)) => {
                assert_eq!(d.shape(), [3, 2]);
                assert_eq!(d.to_host(&stream).unwrap(), z);
            }
            (None, None) => {}
            other => panic!("qzeros differ: {other:?}"),
        }
        assert_eq!(t.scales().shape(), [3, 13]);
        assert_eq!(t.scales().to_host(&stream).unwrap(), h.scales());
        assert_eq!(
            t.g_idx().map(|g| g.to_host(&stream).unwrap()),
            h.g_idx().map(<[i32]>::to_vec)
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn from_parts_validates_nothing() {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    let stream = ctx.default_stream();
    let spec = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::Plain), 64, 32, 16).unwrap();
    // Wrong shapes on purpose: the launch checker, not from_parts, refuses them.
    let t = QuantTensor::<bf16>::from_parts(
        spec,
        QWeight::Packed(Tensor::zeros(&stream, &[7, 32]).unwrap()),
        None,
        Tensor::zeros(&stream, &[1, 1]).unwrap(),
        None,
    );
    assert_eq!(t.qweight().shape(), [7, 32]);
    assert_eq!(t.expected_shapes()[0].shape, [8, 32]);
    assert_eq!(t.scales().meta().dtype, DType::BF16);
}
