//! Quantized weights on the host (no GPU): buffer shapes, pack/unpack round-trips for
//! every format, the documented bit layouts checked independently, zero-point storage,
//! quantization error bounds, g_idx validation, and refusals of bad input.

use ima_runtime::half::{bf16, f16};
use ima_runtime::quant::{
    AWQ_ORDER, AWQ_REVERSE, BufferShape, GPTQ_V1_ZERO_OFFSET, HostQWeight, QuantError, QuantFormat,
    QuantHost, QuantScale, QuantSpec, SYMMETRIC_ZERO, Shaped, ZeroStyle, dequant_reference,
    dequant_value, nibble, pack_awq, pack_awq_zeros, pack_gptq, pack_gptq_zeros, pack_int8,
    quantize_awq, quantize_gptq, quantize_int8, unpack_awq, unpack_awq_zeros, unpack_gptq,
    unpack_gptq_zeros, unpack_int8, validate_g_idx,
};
use ima_runtime::{DType, Error};
use proptest::collection::vec;
use proptest::prelude::*;

/// `QuantHost::new` with each buffer claiming the spec's padded shape (g_idx: its length),
/// so that the tests below exercise the other checks.
fn new_host<S: QuantScale>(
    spec: QuantSpec,
    qweight: HostQWeight,
    qzeros: Option<Vec<i32>>,
    scales: Vec<S>,
    g_idx: Option<Vec<i32>>,
) -> Result<QuantHost<S>, QuantError> {
    let zeros_shape = spec.qzeros_shape().map_or(vec![0, 0], |s| s.shape);
    QuantHost::new(
        spec,
        Shaped::new(qweight, &spec.qweight_shape().shape),
        qzeros.map(|z| Shaped::new(z, &zeros_shape)),
        Shaped::new(scales, &spec.scales_shape(S::DTYPE).shape),
        g_idx.map(|g| {
            let len = g.len();
            Shaped::new(g, &[len])
        }),
    )
}

fn ceil(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

fn shape_of<'a>(shapes: &'a [BufferShape], name: &str) -> Option<&'a BufferShape> {
    shapes.iter().find(|s| s.name == name)
}

// ---------------------------------------------------------------------------------------
// Shapes

#[test]
fn gptq_shapes_for_k5000_n4096_g128() {
    let spec = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::MinusOne), 5000, 4096, 128).unwrap();
    assert_eq!(spec.groups(), 40);
    let shapes = spec.shapes(DType::F16, true);
    let got: Vec<(&str, DType, Vec<usize>, &str)> = shapes
        .iter()
        .map(|s| (s.name, s.dtype, s.shape.clone(), s.formula))
        .collect();
    assert_eq!(
        got,
        vec![
            ("qweight", DType::I32, vec![625, 4096], "[ceil(K/8), N]"),
            (
                "qzeros",
                DType::I32,
                vec![40, 512],
                "[ceil(K/G), ceil(N/8)]"
            ),
            ("scales", DType::F16, vec![40, 4096], "[ceil(K/G), N]"),
            ("g_idx", DType::I32, vec![5000], "[K]"),
        ]
    );
}

#[test]
fn shapes_of_every_format() {
    let (k, n, g) = (5000, 4096, 128);
    let sym = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::Symmetric), k, n, g).unwrap();
    let s = sym.shapes(DType::BF16, false);
    assert_eq!(s.len(), 2, "symmetric GPTQ has no qzeros: {s:?}");
    assert_eq!(shape_of(&s, "qweight").unwrap().shape, [625, 4096]);
    assert_eq!(shape_of(&s, "scales").unwrap().dtype, DType::BF16);

    let awq = QuantSpec::new(QuantFormat::Awq, k, n, g).unwrap();
    let s = awq.shapes(DType::F16, false);
    assert_eq!(shape_of(&s, "qweight").unwrap().shape, [5000, 512]);
    assert_eq!(shape_of(&s, "qweight").unwrap().formula, "[K, ceil(N/8)]");
    assert_eq!(shape_of(&s, "qzeros").unwrap().shape, [40, 512]);
    assert_eq!(shape_of(&s, "scales").unwrap().shape, [40, 4096]);

    let int8 = QuantSpec::new(QuantFormat::Int8, k, n, g).unwrap();
    let s = int8.shapes(DType::F16, false);
    assert_eq!(s.len(), 2);
    assert_eq!(shape_of(&s, "qweight").unwrap().shape, [5000, 4096]);
    assert_eq!(shape_of(&s, "qweight").unwrap().dtype, DType::I8);
    assert_eq!(shape_of(&s, "scales").unwrap().shape, [40, 4096]);
}

#[test]
fn padded_shapes_for_odd_sizes() {
    // K = 13: two words along K, groups of 5 -> 3 groups (the last holds 3 rows); N = 3.
    let spec = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::Plain), 13, 3, 5).unwrap();
    let s = spec.shapes(DType::F16, false);
    assert_eq!(shape_of(&s, "qweight").unwrap().shape, [2, 3]);
    assert_eq!(shape_of(&s, "qzeros").unwrap().shape, [3, 1]);
    assert_eq!(shape_of(&s, "scales").unwrap().shape, [3, 3]);
    // G == K: one group.
    let one = QuantSpec::new(QuantFormat::Awq, 7, 9, 7).unwrap();
    assert_eq!(one.groups(), 1);
    assert_eq!(one.qweight_shape().shape, [7, 2]);
}

#[test]
fn spec_refuses_bad_groups_and_overflow() {
    let f = QuantFormat::Int8;
    assert_eq!(
        QuantSpec::new(f, 10, 4, 0),
        Err(QuantError::Group { group: 0, k: 10 })
    );
    assert_eq!(
        QuantSpec::new(f, 10, 4, 11),
        Err(QuantError::Group { group: 11, k: 10 })
    );
    assert_eq!(
        QuantSpec::new(f, 0, 4, 1),
        Err(QuantError::Group { group: 1, k: 0 })
    );
    assert!(matches!(
        QuantSpec::new(f, usize::MAX / 2, 4, 1),
        Err(QuantError::Overflow { .. })
    ));
}

// ---------------------------------------------------------------------------------------
// Hand-computed words

#[test]
fn gptq_word_by_hand() {
    // One column, rows 0..8 hold 1..=8: nibble k%8 of word (k/8, 0).
    let q: Vec<u8> = (1..=8).collect();
    assert_eq!(pack_gptq(&q, 8, 1).unwrap(), vec![0x8765_4321_u32 as i32]);
    // K = 3 (< 8): the word is padded with zero nibbles.
    assert_eq!(pack_gptq(&[1, 2, 3], 3, 1).unwrap(), vec![0x0000_0321]);
    // Two columns: column 1's rows live in the second word.
    let q = [1, 9, 2, 10, 3, 11]; // [3, 2] row-major
    assert_eq!(pack_gptq(&q, 3, 2).unwrap(), vec![0x321, 0xba9]);
}

#[test]
fn awq_word_by_hand() {
    assert_eq!(AWQ_ORDER, [0, 2, 4, 6, 1, 3, 5, 7]);
    assert_eq!(AWQ_REVERSE, [0, 4, 1, 5, 2, 6, 3, 7]);
    for i in 0..8 {
        assert_eq!(AWQ_REVERSE[AWQ_ORDER[i]], i);
    }
    // Row 0, columns 0..8 hold 1..=8. Nibble i holds column ORDER[i]:
    // nibbles 0..8 = col 0,2,4,6,1,3,5,7 = values 1,3,5,7,2,4,6,8.
    let q: Vec<u8> = (1..=8).collect();
    let word = 0x8642_7531_u32 as i32;
    assert_eq!(pack_awq(&q, 1, 8).unwrap(), vec![word]);
    assert_eq!(unpack_awq(&[word], 1, 8).unwrap(), q);
    // The same interleave for zeros.
    assert_eq!(pack_awq_zeros(&q, 1, 8).unwrap(), vec![word]);
    // N = 3 (< 8): col 0 at nibble 0, col 1 at nibble 4, col 2 at nibble 1; pads are 0.
    assert_eq!(pack_awq(&[1, 2, 3], 1, 3).unwrap(), vec![0x0002_0031]);
    // N = 10: the second word holds columns 8, 9 at nibbles 0, 4.
    let q: Vec<u8> = (1..=10).collect();
    assert_eq!(pack_awq(&q, 1, 10).unwrap(), vec![word, 0x000a_0009]);
}

#[test]
fn gptq_zero_word_by_hand() {
    // Zeros along N, nibble n%8; MinusOne stores the whole word minus 0x11111111, so the
    // real zero 0 at nibble 0 is stored as 15 and borrows from nibble 1 (GPTQModel's v1).
    let z = [0u8, 1, 2, 15];
    assert_eq!(
        pack_gptq_zeros(&z, 1, 4, ZeroStyle::Plain).unwrap(),
        vec![0xf210]
    );
    assert_eq!(
        pack_gptq_zeros(&z, 1, 4, ZeroStyle::MinusOne).unwrap(),
        vec![0xf210u32.wrapping_sub(0x1111_1111) as i32]
    );
    assert_eq!(
        pack_gptq_zeros(&z, 1, 4, ZeroStyle::MinusOne).unwrap(),
        vec![0xeeef_e0ffu32 as i32]
    );
    // With no zero of 0, the word-wise and per-nibble encodings agree: each nibble z - 1.
    assert_eq!(
        pack_gptq_zeros(&[1, 2, 3, 4, 5, 6, 7, 8], 1, 8, ZeroStyle::MinusOne).unwrap(),
        vec![0x7654_3210]
    );
}

// ---------------------------------------------------------------------------------------
// Zero storage

#[test]
fn minus_one_zero_storage_is_word_wise_and_inverts() {
    let s = ZeroStyle::MinusOne;
    assert_eq!(GPTQ_V1_ZERO_OFFSET, 0x1111_1111);
    assert_eq!(
        s.store_word(0x8888_8888),
        0x7777_7777,
        "symmetric zeros: 8 stored as 7"
    );
    assert_eq!(
        s.store_word(0),
        0xeeee_eeef,
        "real zeros 0 borrow from the nibble above"
    );
    assert_eq!(s.load_word(0xeeee_eeef), 0);
    // Any word of real zeros, with zeros of 0 anywhere, reads back exactly.
    for real in [
        0u32,
        0x1000_0000,
        0x0000_0001,
        0x8080_8080,
        0xffff_ffff,
        0x0f0f_0f0f,
    ] {
        assert_eq!(s.load_word(s.store_word(real)), real);
        assert_eq!(s.store_word(s.load_word(real)), real);
        assert_eq!(ZeroStyle::Plain.store_word(real), real);
        assert_eq!(ZeroStyle::Plain.load_word(real), real);
    }
    // Every real zero, including 0, through the packed buffer and back.
    let zeros: Vec<u8> = (0..16).collect();
    let words = pack_gptq_zeros(&zeros, 2, 8, s).unwrap();
    assert_eq!(words.len(), 2);
    assert_eq!(nibble(words[0], 0), 15);
    assert_eq!(unpack_gptq_zeros(&words, 2, 8, s).unwrap(), zeros);
}

#[test]
fn minus_one_zero_zero_through_quantize_and_dequant() {
    // All weights >= 0: the range starts at 0, so every zero point is 0.
    let (k, n, g) = (16, 8, 8);
    let w: Vec<f32> = (0..k * n).map(|i| (i % 13) as f32 * 0.25).collect();
    let h: QuantHost<f16> = quantize_gptq(&w, k, n, g, ZeroStyle::MinusOne, None).unwrap();
    let qz = h.qzeros().unwrap();
    for &word in qz {
        assert_eq!(
            word as u32, 0xeeee_eeef,
            "every real zero is 0, stored word-wise as 0 - 0x11111111: {word:#x}"
        );
    }
    let zeros = unpack_gptq_zeros(qz, h.groups(), n, ZeroStyle::MinusOne).unwrap();
    assert!(zeros.iter().all(|&z| z == 0));
    assert_bounded(&h, &w);
}

// ---------------------------------------------------------------------------------------
// Round-trips (proptest)

/// (K, N, values in 0..16 of K*N): K and N from 1 to 40, so K < 8, N < 8 and sizes that
/// are no multiple of 8 all occur.
fn nibbles_kn() -> impl Strategy<Value = (usize, usize, Vec<u8>)> {
    (1usize..=40, 1usize..=40).prop_flat_map(|(k, n)| (Just(k), Just(n), vec(0u8..16, k * n)))
}

/// (K, N, G, zeros in 0..16 of ceil(K/G)*N).
fn zeros_kng() -> impl Strategy<Value = (usize, usize, usize, Vec<u8>)> {
    (1usize..=40, 1usize..=40)
        .prop_flat_map(|(k, n)| (Just(k), Just(n), 1usize..=k))
        .prop_flat_map(|(k, n, g)| (Just(k), Just(n), Just(g), vec(0u8..16, ceil(k, g) * n)))
}

proptest! {
    #[test]
    fn gptq_qweight_round_trip((k, n, q) in nibbles_kn()) {
        let words = pack_gptq(&q, k, n).unwrap();
        prop_assert_eq!(words.len(), ceil(k, 8) * n);
        // The documented layout, read independently of the crate's unpacker.
        for kk in 0..ceil(k, 8) * 8 {
            for nn in 0..n {
                let word = words[(kk / 8) * n + nn] as u32;
                let v = ((word >> (4 * (kk % 8))) & 0xF) as u8;
                let want = if kk < k { q[kk * n + nn] } else { 0 };
                prop_assert_eq!(v, want, "row {} col {}", kk, nn);
            }
        }
        prop_assert_eq!(unpack_gptq(&words, k, n).unwrap(), q);
    }

    #[test]
    fn awq_qweight_round_trip((k, n, q) in nibbles_kn()) {
        let words = pack_awq(&q, k, n).unwrap();
        let wpr = ceil(n, 8);
        prop_assert_eq!(words.len(), k * wpr);
        for kk in 0..k {
            for w in 0..wpr {
                let word = words[kk * wpr + w] as u32;
                for (i, &order) in AWQ_ORDER.iter().enumerate() {
                    let col = 8 * w + order;
                    let v = ((word >> (4 * i)) & 0xF) as u8;
                    let want = if col < n { q[kk * n + col] } else { 0 };
                    prop_assert_eq!(v, want, "row {} nibble {} of word {}", kk, i, w);
                }
            }
        }
        prop_assert_eq!(unpack_awq(&words, k, n).unwrap(), q);
    }

    #[test]
    fn gptq_zeros_round_trip((k, n, g, zeros) in zeros_kng(), minus_one in any::<bool>()) {
        let style = if minus_one { ZeroStyle::MinusOne } else { ZeroStyle::Plain };
        let groups = ceil(k, g);
        let words = pack_gptq_zeros(&zeros, groups, n, style).unwrap();
        prop_assert_eq!(words.len(), groups * ceil(n, 8));
        for gg in 0..groups {
            for w in 0..ceil(n, 8) {
                // The real zeros of the word, plainly packed (pads 0); MinusOne stores
                // the whole word minus 1 in every nibble.
                let plain = (0..8)
                    .filter(|i| w * 8 + i < n)
                    .fold(0u32, |acc, i| acc | u32::from(zeros[gg * n + w * 8 + i]) << (4 * i));
                let want = if minus_one { plain.wrapping_sub(0x1111_1111) } else { plain };
                prop_assert_eq!(words[gg * ceil(n, 8) + w] as u32, want, "group {} word {}", gg, w);
            }
        }
        prop_assert_eq!(unpack_gptq_zeros(&words, groups, n, style).unwrap(), zeros);
    }

    #[test]
    fn awq_zeros_round_trip((k, n, g, zeros) in zeros_kng()) {
        let groups = ceil(k, g);
        let words = pack_awq_zeros(&zeros, groups, n).unwrap();
        prop_assert_eq!(words.len(), groups * ceil(n, 8));
        for gg in 0..groups {
            for nn in 0..n {
                let word = words[gg * ceil(n, 8) + nn / 8];
                prop_assert_eq!(nibble(word, AWQ_REVERSE[nn % 8]), zeros[gg * n + nn]);
            }
        }
        prop_assert_eq!(unpack_awq_zeros(&words, groups, n).unwrap(), zeros);
    }

    #[test]
    fn int8_round_trip(
        (k, n, q) in (1usize..=40, 1usize..=40)
            .prop_flat_map(|(k, n)| (Just(k), Just(n), vec(any::<i8>(), k * n)))
    ) {
        let packed = pack_int8(&q, k, n).unwrap();
        prop_assert_eq!(&packed, &q);
        prop_assert_eq!(unpack_int8(&packed, k, n).unwrap(), q);
    }

    /// Host containers built from packed buffers dequantize by the documented formula,
    /// computed here from the unpacked values (random zeros, including 0 and 15).
    #[test]
    fn dequant_reference_matches_the_definition(
        (k, n, g, zeros) in zeros_kng(),
        fmt in 0usize..4,
        seed in any::<u64>(),
    ) {
        let groups = ceil(k, g);
        let mut rng = seed;
        let mut next = move || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) as u32
        };
        let q: Vec<u8> = (0..k * n).map(|_| (next() % 16) as u8).collect();
        let scales: Vec<f16> = (0..groups * n)
            .map(|_| f16::from_f32((next() % 1000) as f32 / 997.0 + 0.001))
            .collect();
        let spec_fmt = [
            QuantFormat::Gptq(ZeroStyle::MinusOne),
            QuantFormat::Gptq(ZeroStyle::Plain),
            QuantFormat::Gptq(ZeroStyle::Symmetric),
            QuantFormat::Awq,
        ][fmt];
        let spec = QuantSpec::new(spec_fmt, k, n, g).unwrap();
        let (qweight, qzeros) = match spec_fmt {
            QuantFormat::Gptq(ZeroStyle::Symmetric) => (pack_gptq(&q, k, n).unwrap(), None),
            QuantFormat::Gptq(style) => (
                pack_gptq(&q, k, n).unwrap(),
                Some(pack_gptq_zeros(&zeros, groups, n, style).unwrap()),
            ),
            _ => (pack_awq(&q, k, n).unwrap(), Some(pack_awq_zeros(&zeros, groups, n).unwrap())),
        };
        // Act-order for GPTQ: a valid, non-monotonic group per row.
        let g_idx: Option<Vec<i32>> = matches!(spec_fmt, QuantFormat::Gptq(_))
            .then(|| (0..k).map(|r| ((r * 7 + 3) % groups) as i32).collect());
        let h = new_host(spec, HostQWeight::Packed(qweight), qzeros, scales.clone(), g_idx.clone())
            .unwrap();
        let got = dequant_reference(&h);
        prop_assert_eq!(got.len(), k * n);
        for r in 0..k {
            let gr = match &g_idx { Some(gi) => gi[r] as usize, None => r / g };
            prop_assert_eq!(h.group_of(r), Some(gr));
            for c in 0..n {
                let z = if spec_fmt == QuantFormat::Gptq(ZeroStyle::Symmetric) {
                    8
                } else {
                    i32::from(zeros[gr * n + c])
                };
                let want = f16::from_f32(
                    (i32::from(q[r * n + c]) - z) as f32 * f32::from(scales[gr * n + c]),
                );
                prop_assert_eq!(got[r * n + c].to_bits(), want.to_bits(), "({}, {})", r, c);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Quantize -> dequant error

/// `|w - dequant| <= scale/2` up to f32 and f16 rounding, for every element.
fn assert_bounded<S: QuantScale>(h: &QuantHost<S>, w: &[f32]) {
    let d = dequant_reference(h);
    let n = h.n();
    assert_eq!(d.len(), w.len());
    for (i, (&x, &v)) in w.iter().zip(&d).enumerate() {
        let (r, c) = (i / n, i % n);
        let g = h.group_of(r).unwrap();
        let s = h.scales()[g * n + c].to_f32();
        let v = v.to_f32();
        let tol = s / 2.0 * (1.0 + 1e-5) + v.abs() * 2f32.powi(-11) + 2f32.powi(-24);
        assert!(
            (x - v).abs() <= tol,
            "{} K={} N={} G={}: w[{r},{c}] = {x}, dequant {v}, scale {s}, error {} > {tol}",
            h.format(),
            h.k(),
            n,
            h.group(),
            (x - v).abs()
        );
    }
}

/// (K, N, G, weights): magnitudes from 1e-3 to 1e3 so f16 neither overflows nor flushes.
fn weights_kng() -> impl Strategy<Value = (usize, usize, usize, Vec<f32>)> {
    (1usize..=40, 1usize..=24)
        .prop_flat_map(|(k, n)| (Just(k), Just(n), 1usize..=k, -3i32..=3))
        .prop_flat_map(|(k, n, g, e)| {
            let m = 10f32.powi(e);
            (
                Just(k),
                Just(n),
                Just(g),
                vec(
                    prop_oneof![(-1f32..1f32).prop_map(move |x| x * m), Just(0f32)],
                    k * n,
                ),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn gptq_quantize_error_is_half_a_step(
        (k, n, g, w) in weights_kng(),
        style in prop_oneof![
            Just(ZeroStyle::MinusOne), Just(ZeroStyle::Plain), Just(ZeroStyle::Symmetric)
        ],
        act_order in any::<bool>(),
    ) {
        let groups = ceil(k, g);
        let g_idx: Option<Vec<i32>> =
            act_order.then(|| (0..k).map(|r| ((r * 5 + 1) % groups) as i32).collect());
        let h: QuantHost<f16> = quantize_gptq(&w, k, n, g, style, g_idx.as_deref()).unwrap();
        prop_assert_eq!(h.format(), QuantFormat::Gptq(style));
        prop_assert_eq!(h.qzeros().is_some(), style != ZeroStyle::Symmetric);
        prop_assert_eq!(h.g_idx(), g_idx.as_deref());
        assert_bounded(&h, &w);
        let hb: QuantHost<bf16> = quantize_gptq(&w, k, n, g, style, g_idx.as_deref()).unwrap();
        assert_bounded(&hb, &w);
    }

    #[test]
    fn awq_quantize_error_is_half_a_step((k, n, g, w) in weights_kng()) {
        let h: QuantHost<f16> = quantize_awq(&w, k, n, g).unwrap();
        assert_bounded(&h, &w);
        let hb: QuantHost<bf16> = quantize_awq(&w, k, n, g).unwrap();
        assert_bounded(&hb, &w);
    }

    #[test]
    fn int8_quantize_error_is_half_a_step((k, n, g, w) in weights_kng()) {
        let h: QuantHost<f16> = quantize_int8(&w, k, n, g).unwrap();
        assert_bounded(&h, &w);
        let hb: QuantHost<bf16> = quantize_int8(&w, k, n, g).unwrap();
        assert_bounded(&hb, &w);
    }
}

#[test]
fn all_zero_groups_get_scale_one() {
    let w = vec![0f32; 12 * 5];
    let h: QuantHost<f16> = quantize_gptq(&w, 12, 5, 4, ZeroStyle::MinusOne, None).unwrap();
    assert!(h.scales().iter().all(|&s| s == f16::ONE));
    assert!(dequant_reference(&h).iter().all(|v| v.to_f32() == 0.0));
    let h: QuantHost<bf16> = quantize_int8(&w, 12, 5, 12).unwrap();
    assert!(h.scales().iter().all(|&s| s == bf16::ONE));
}

#[test]
fn tiny_values_do_not_flush_the_scale_to_zero() {
    // max|w| / 7.5 is below f16's smallest subnormal; the scale is rounded up, never 0.
    let w = vec![1e-9f32, -2e-9, 3e-9, 0.0];
    let h: QuantHost<f16> = quantize_gptq(&w, 4, 1, 4, ZeroStyle::Symmetric, None).unwrap();
    assert!(h.scales()[0].to_f32() > 0.0);
    assert_bounded(&h, &w);
}

#[test]
fn dequant_value_is_the_definition() {
    assert_eq!(dequant_value(3, 8, 0.5), f16::from_f32(-2.5));
    assert_eq!(dequant_value(-128, 0, 1.0), f16::from_f32(-128.0));
    // One f32 multiply, then round to nearest even in f16.
    let s = f32::from(f16::from_f32(0.1));
    assert_eq!(dequant_value(15, 0, s), f16::from_f32(15.0 * s));
    // Past f16's range: infinity, as __float2half_rn.
    assert!(dequant_value(127, 0, 1000.0).is_infinite());
    assert_eq!(SYMMETRIC_ZERO, 8);
}

#[test]
fn gptq_dequant_by_hand_with_partial_group_and_g_idx() {
    // K = 10, N = 2, G = 4: groups {0..4}, {4..8}, {8..10}.
    let (k, n, g) = (10, 2, 4);
    let q: Vec<u8> = (0..k * n).map(|i| (i % 16) as u8).collect();
    let zeros = [1u8, 2, 3, 4, 0, 15];
    let scales: Vec<f16> = [0.5f32, 1.0, 2.0, 0.25, 1.5, 0.125]
        .iter()
        .map(|&s| f16::from_f32(s))
        .collect();
    let spec = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::MinusOne), k, n, g).unwrap();
    let host = |g_idx: Option<Vec<i32>>| {
        new_host(
            spec,
            HostQWeight::Packed(pack_gptq(&q, k, n).unwrap()),
            Some(pack_gptq_zeros(&zeros, 3, n, ZeroStyle::MinusOne).unwrap()),
            scales.clone(),
            g_idx,
        )
        .unwrap()
    };
    let d = dequant_reference(&host(None));
    // Row 9 (group 2), column 1: q = 19 % 16 = 3, zero 15, scale 0.125 -> -1.5.
    assert_eq!(d[9 * n + 1].to_f32(), -1.5);
    // Row 0, column 0: q 0, zero 1, scale 0.5 -> -0.5.
    assert_eq!(d[0].to_f32(), -0.5);
    // With act-order, row 0 in group 2: q 0, zero 0, scale 1.5 -> 0; col 1: q 1, zero 15,
    // scale 0.125 -> -1.75.
    let g_idx = vec![2, 0, 0, 1, 1, 1, 0, 2, 2, 0];
    let d = dequant_reference(&host(Some(g_idx.clone())));
    assert_eq!(d[0].to_f32(), 0.0);
    assert_eq!(d[1].to_f32(), -1.75);
    // A g_idx whose shape says 10 entries and whose data has 5 is a length error, and one
    // of two dimensions a shape error.
    let claimed = |g: Vec<i32>, shape: &[usize]| {
        QuantHost::new(
            spec,
            Shaped::new(
                HostQWeight::Packed(pack_gptq(&q, k, n).unwrap()),
                &spec.qweight_shape().shape,
            ),
            Some(Shaped::new(
                pack_gptq_zeros(&zeros, 3, n, ZeroStyle::MinusOne).unwrap(),
                &spec.qzeros_shape().unwrap().shape,
            )),
            Shaped::new(scales.clone(), &spec.scales_shape(DType::F16).shape),
            Some(Shaped::new(g, shape)),
        )
        .unwrap_err()
        .to_string()
    };
    assert_eq!(
        claimed(g_idx[..5].to_vec(), &[10]),
        "g_idx has 5 elements, but its shape [len] = [10] needs 10"
    );
    assert_eq!(
        claimed(g_idx, &[2, 5]),
        "g_idx has shape [2, 5], but its shape [K] is [10]"
    );
}

// ---------------------------------------------------------------------------------------
// g_idx

#[test]
fn validate_g_idx_accepts_good_and_rejects_bad() {
    // K = 10, G = 4: groups 0..3.
    assert_eq!(
        validate_g_idx(&[0, 0, 0, 0, 1, 1, 1, 1, 2, 2], 10, 4),
        Ok(())
    );
    assert_eq!(
        validate_g_idx(&[2, 1, 0, 2, 1, 0, 0, 1, 2, 2], 10, 4),
        Ok(())
    );
    let e = validate_g_idx(&[0, 0, 0, 3, 1, 1, 1, 1, 2, 5], 10, 4).unwrap_err();
    assert_eq!(
        e,
        QuantError::GIdxValue {
            row: 3,
            value: 3,
            groups: 3,
            k: 10,
            group: 4
        }
    );
    let msg = e.to_string();
    assert!(
        msg.contains("g_idx[3] = 3") && msg.contains("0..3"),
        "{msg}"
    );
    let e = validate_g_idx(&[0, 0, -1, 0, 1, 1, 1, 1, 2, 2], 10, 4).unwrap_err();
    assert!(
        matches!(
            e,
            QuantError::GIdxValue {
                row: 2,
                value: -1,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        validate_g_idx(&[0; 9], 10, 4),
        Err(QuantError::GIdxLen { k: 10, actual: 9 })
    );
    assert_eq!(
        validate_g_idx(&[0; 11], 10, 4),
        Err(QuantError::GIdxLen { k: 10, actual: 11 })
    );
    assert_eq!(
        validate_g_idx(&[], 0, 1),
        Err(QuantError::Group { group: 1, k: 0 })
    );
    assert_eq!(
        validate_g_idx(&[0; 10], 10, 0),
        Err(QuantError::Group { group: 0, k: 10 })
    );
}

// ---------------------------------------------------------------------------------------
// Refusals

#[test]
fn quantize_refuses_bad_input() {
    let w = vec![0.5f32; 12];
    let err = quantize_gptq::<f16>(&w, 5, 2, 1, ZeroStyle::Plain, None).unwrap_err();
    assert_eq!(
        err,
        QuantError::WeightLen {
            k: 5,
            n: 2,
            expected: 10,
            actual: 12
        }
    );
    assert_eq!(
        quantize_awq::<f16>(&w, 6, 2, 0).unwrap_err(),
        QuantError::Group { group: 0, k: 6 }
    );
    assert_eq!(
        quantize_int8::<bf16>(&w, 6, 2, 7).unwrap_err(),
        QuantError::Group { group: 7, k: 6 }
    );
    assert!(matches!(
        quantize_gptq::<f16>(&w, 6, 2, 2, ZeroStyle::MinusOne, Some(&[0, 1, 2])),
        Err(QuantError::GIdxLen { k: 6, actual: 3 })
    ));
    assert!(matches!(
        quantize_gptq::<f16>(&w, 6, 2, 2, ZeroStyle::MinusOne, Some(&[0, 1, 2, 3, 0, 0])),
        Err(QuantError::GIdxValue {
            row: 3,
            value: 3,
            groups: 3,
            ..
        })
    ));
    let mut bad = w.clone();
    bad[5] = f32::NAN;
    assert!(matches!(
        quantize_int8::<f16>(&bad, 6, 2, 2),
        Err(QuantError::NonFinite { row: 2, col: 1, .. })
    ));
    // A range too wide for f16 scales.
    let huge = vec![-1e30f32, 1e30];
    assert!(matches!(
        quantize_awq::<f16>(&huge, 2, 1, 2),
        Err(QuantError::ScaleOverflow {
            group: 0,
            col: 0,
            dtype: DType::F16,
            ..
        })
    ));
    // ... but not for bf16.
    assert!(quantize_awq::<bf16>(&huge, 2, 1, 2).is_ok());
    // Converts into the runtime's error.
    let e: Error = QuantError::Group { group: 0, k: 1 }.into();
    assert!(matches!(e, Error::Quant(QuantError::Group { .. })));
}

#[test]
fn pack_refuses_bad_input() {
    assert_eq!(
        pack_gptq(&[1, 2, 16], 3, 1),
        Err(QuantError::Nibble {
            what: "q",
            index: 2,
            value: 16
        })
    );
    assert!(matches!(
        pack_awq(&[1, 2], 3, 1),
        Err(QuantError::BufferLen {
            expected: 3,
            actual: 2,
            ..
        })
    ));
    assert!(matches!(
        unpack_gptq(&[0; 3], 9, 1),
        Err(QuantError::BufferLen {
            buffer: "qweight",
            expected: 2,
            actual: 3,
            ..
        })
    ));
    assert!(matches!(
        unpack_awq(&[0; 3], 2, 9),
        Err(QuantError::BufferLen {
            expected: 4,
            actual: 3,
            ..
        })
    ));
    assert!(matches!(
        pack_awq_zeros(&[20], 1, 1),
        Err(QuantError::Nibble {
            what: "zeros",
            value: 20,
            ..
        })
    ));
    assert!(matches!(
        unpack_awq_zeros(&[0; 3], 1, 9),
        Err(QuantError::BufferLen {
            buffer: "qzeros",
            ..
        })
    ));
    assert_eq!(
        pack_gptq_zeros(&[1], 1, 1, ZeroStyle::Symmetric),
        Err(QuantError::SymmetricZeros)
    );
    assert_eq!(
        unpack_gptq_zeros(&[1], 1, 1, ZeroStyle::Symmetric),
        Err(QuantError::SymmetricZeros)
    );
    assert!(matches!(
        pack_int8(&[1, 2, 3], 2, 2),
        Err(QuantError::BufferLen { .. })
    ));
    assert!(matches!(
        unpack_int8(&[1, 2, 3], 2, 2),
        Err(QuantError::BufferLen { .. })
    ));
    assert!(matches!(
        pack_gptq(&[], usize::MAX, 2),
        Err(QuantError::Overflow { .. })
    ));
}

#[test]
fn host_container_refuses_wrong_buffers() {
    let (k, n, g) = (12, 10, 4); // 3 groups; qweight [2, 10]; qzeros [3, 2]; scales [3, 10]
    let gptq = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::MinusOne), k, n, g).unwrap();
    let good = || {
        (
            HostQWeight::Packed(vec![0; 20]),
            Some(vec![0; 6]),
            vec![f16::ONE; 30],
        )
    };
    let (qw, qz, sc) = good();
    let h = new_host(gptq, qw, qz, sc, None).unwrap();
    assert_eq!(h.shapes().len(), 3);
    assert_eq!(h.group_of(11), Some(2));
    assert_eq!(h.group_of(12), None);

    let (_, qz, sc) = good();
    let e = new_host(gptq, HostQWeight::Packed(vec![0; 21]), qz, sc, None).unwrap_err();
    assert_eq!(
        e,
        QuantError::BufferLen {
            buffer: "qweight",
            formula: "[ceil(K/8), N]",
            shape: vec![2, 10],
            expected: 20,
            actual: 21
        }
    );
    assert!(e.to_string().contains("[ceil(K/8), N] = [2, 10]"), "{e}");

    let (_, qz, sc) = good();
    assert!(matches!(
        new_host(gptq, HostQWeight::Int8(vec![0; 120]), qz, sc, None),
        Err(QuantError::WeightType {
            expected: DType::I32,
            actual: DType::I8,
            ..
        })
    ));

    let (qw, _, sc) = good();
    assert!(matches!(
        new_host(gptq, qw, Some(vec![0; 5]), sc, None),
        Err(QuantError::BufferLen {
            buffer: "qzeros",
            expected: 6,
            actual: 5,
            ..
        })
    ));

    let (qw, _, sc) = good();
    assert!(matches!(
        new_host(gptq, qw, None, sc, None),
        Err(QuantError::Zeros { expected: true, .. })
    ));

    let (qw, qz, _) = good();
    assert!(matches!(
        new_host(gptq, qw, qz, vec![f16::ONE; 29], None),
        Err(QuantError::BufferLen {
            buffer: "scales",
            expected: 30,
            ..
        })
    ));

    let (qw, qz, sc) = good();
    assert!(matches!(
        new_host(
            gptq,
            qw,
            qz,
            sc,
            Some(vec![0; 12].into_iter().chain([3]).collect())
        ),
        Err(QuantError::GIdxLen { k: 12, actual: 13 })
    ));

    let (qw, qz, sc) = good();
    let mut g_idx = vec![0; 12];
    g_idx[7] = 3;
    assert!(matches!(
        new_host(gptq, qw, qz, sc, Some(g_idx)),
        Err(QuantError::GIdxValue {
            row: 7,
            value: 3,
            groups: 3,
            ..
        })
    ));

    let sym = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::Symmetric), k, n, g).unwrap();
    let (qw, qz, sc) = good();
    assert!(matches!(
        new_host(sym, qw, qz, sc, None),
        Err(QuantError::Zeros {
            expected: false,
            ..
        })
    ));

    let awq = QuantSpec::new(QuantFormat::Awq, k, n, g).unwrap();
    let awq_parts = || (HostQWeight::Packed(vec![0; 24]), Some(vec![0; 6]));
    let (qw, qz) = awq_parts();
    assert!(new_host(awq, qw, qz, vec![f16::ONE; 30], None).is_ok());
    let (qw, qz) = awq_parts();
    assert!(matches!(
        new_host(awq, qw, qz, vec![f16::ONE; 30], Some(vec![0; 12])),
        Err(QuantError::GIdxUnsupported {
            format: QuantFormat::Awq
        })
    ));

    let int8 = QuantSpec::new(QuantFormat::Int8, k, n, g).unwrap();
    assert!(
        new_host(
            int8,
            HostQWeight::Int8(vec![0; 120]),
            None,
            vec![bf16::ONE; 30],
            None
        )
        .is_ok()
    );
    assert!(matches!(
        new_host(
            int8,
            HostQWeight::Packed(vec![0; 120]),
            None,
            vec![bf16::ONE; 30],
            None
        ),
        Err(QuantError::WeightType {
            expected: DType::I8,
            ..
        })
    ));
}

#[test]
fn host_container_refuses_a_transposed_buffer_of_the_right_size() {
    // K = 12, N = 10, G = 4: scales [3, 10]; given as [10, 3] with 30 values.
    let (k, n, g) = (12, 10, 4);
    let spec = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::MinusOne), k, n, g).unwrap();
    let e = QuantHost::new(
        spec,
        Shaped::new(HostQWeight::Packed(vec![0; 20]), &[2, 10]),
        Some(Shaped::new(vec![0; 6], &[3, 2])),
        Shaped::new(vec![f16::ONE; 30], &[10, 3]),
        None,
    )
    .unwrap_err();
    assert_eq!(
        e,
        QuantError::BufferShape {
            buffer: "scales",
            formula: "[ceil(K/G), N]",
            expected: vec![3, 10],
            actual: vec![10, 3],
        }
    );
    assert!(e.to_string().contains("[10, 3]"), "{e}");
    // qzeros [2, 3] for [3, 2], qweight [10, 2] for [2, 10]: refused alike.
    let e = QuantHost::new(
        spec,
        Shaped::new(HostQWeight::Packed(vec![0; 20]), &[10, 2]),
        Some(Shaped::new(vec![0; 6], &[3, 2])),
        Shaped::new(vec![f16::ONE; 30], &[3, 10]),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            QuantError::BufferShape {
                buffer: "qweight",
                ..
            }
        ),
        "{e}"
    );
    let e = QuantHost::new(
        spec,
        Shaped::new(HostQWeight::Packed(vec![0; 20]), &[2, 10]),
        Some(Shaped::new(vec![0; 6], &[2, 3])),
        Shaped::new(vec![f16::ONE; 30], &[3, 10]),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            QuantError::BufferShape {
                buffer: "qzeros",
                ..
            }
        ),
        "{e}"
    );
    // A shape that is right with a length that is not: BufferLen.
    let e = QuantHost::new(
        spec,
        Shaped::new(HostQWeight::Packed(vec![0; 20]), &[2, 10]),
        Some(Shaped::new(vec![0; 6], &[3, 2])),
        Shaped::new(vec![f16::ONE; 29], &[3, 10]),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            QuantError::BufferLen {
                buffer: "scales",
                expected: 30,
                actual: 29,
                ..
            }
        ),
        "{e}"
    );
}

/// Parts whose shapes' element counts overflow (a Python object may claim any shape) are
/// refused by shape, not by a panic while counting.
#[test]
fn parts_of_overflowing_shapes_are_refused_by_shape() {
    let spec = QuantSpec::new(QuantFormat::Gptq(ZeroStyle::MinusOne), 256, 64, 128).unwrap();
    let huge = [1usize << 33, 1 << 33];
    let e = spec
        .check_parts(DType::I32, &[32, 64], Some(&[2, 8]), &huge, None)
        .unwrap_err();
    assert!(
        matches!(e, QuantError::BufferShape { buffer: "scales", ref actual, .. } if actual == &huge),
        "{e}"
    );
}
