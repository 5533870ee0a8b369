//! A GPTQ or AWQ checkpoint's layer through the GEMV, with no format chosen by hand: the
//! checkpoint's config says which, and the kernel for it is picked here. Needs a CUDA GPU:
//!
//!     cargo run --example checkpoint_gemv -- CHECKPOINT_DIR [LAYER_PREFIX] [M]
//!
//! Without a prefix it lists the quantized layers and runs the first. It prints the
//! output's checksum and its largest difference from the host reference (the layer
//! dequantized on the host, multiplied in f64).

use std::error::Error;

use ima::half::f16;
use ima::{Checkpoint, QuantFormat, Tensor, ZeroStyle, dequant_reference, ima_kernel};

/// quant.ima's kernels: the fast `gptq_gemv` (GPTQ v1, no act-order) and the simple `awq_gemv`.
#[ima_kernel("specs/quant.ima")]
pub mod quant {}

/// A GEMV for each other format a checkpoint can load as.
#[ima_kernel("specs/checkpoint.ima")]
pub mod ckpt {}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        return Err("usage: checkpoint_gemv CHECKPOINT_DIR [LAYER_PREFIX] [M]".into());
    };
    let ckpt = Checkpoint::open(dir)?;
    let prefixes = ckpt.layer_prefixes();
    let prefix = match args.get(1) {
        Some(p) => p.as_str(),
        None => {
            println!("{} quantized layers, e.g.:", prefixes.len());
            for p in prefixes.iter().take(8) {
                println!("  {p}");
            }
            prefixes.first().ok_or("the checkpoint has no *.qweight")?
        }
    };
    let m: usize = args.get(2).map_or(Ok(1), |s| s.parse())?;
    let layer = ckpt.layer(prefix)?;
    let (k, n) = (layer.spec().k(), layer.spec().n());
    println!(
        "{prefix}: {} K={k} N={n} G={}{} (config {})",
        layer.format(),
        layer.spec().group(),
        if layer.has_g_idx() { " with g_idx" } else { "" },
        ckpt.config().path.display()
    );

    let ctx = ima::context(0)?;
    let stream = ctx.new_stream()?;
    let quant = quant::Kernels::load(&ctx)?;
    let other = ckpt::Kernels::load(&ctx)?;
    let w = layer.upload::<f16>(&stream)?;

    // Activations in [-1, 1), deterministic.
    let mut s = 1u64;
    let xh: Vec<f16> = (0..m * k)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            f16::from_f32((s >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        })
        .collect();
    let x = Tensor::from_host(&stream, &xh, &[m, k])?;
    let mut y = Tensor::<f16>::zeros(&stream, &[m, n])?;
    let fast = k % 8 == 0 && n % 8 == 0 && m <= 8;
    match (w.format(), w.g_idx().is_some()) {
        (QuantFormat::Gptq(ZeroStyle::MinusOne), false) if fast => quant.gptq_gemv.launch(
            &stream,
            quant::GptqGemvArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )?,
        (QuantFormat::Gptq(ZeroStyle::MinusOne), false) => {
            return Err("gptq_gemv needs K and N multiples of 8 and M <= 8".into());
        }
        (QuantFormat::Gptq(ZeroStyle::MinusOne), true) => other.gptq_v1_act_order_gemv.launch(
            &stream,
            ckpt::GptqV1ActOrderGemvArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )?,
        (QuantFormat::Gptq(ZeroStyle::Plain), false) => other.gptq_v2_gemv.launch(
            &stream,
            ckpt::GptqV2GemvArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )?,
        (QuantFormat::Gptq(ZeroStyle::Plain), true) => other.gptq_v2_act_order_gemv.launch(
            &stream,
            ckpt::GptqV2ActOrderGemvArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )?,
        (QuantFormat::Gptq(ZeroStyle::Symmetric), false) => other.gptq_sym_gemv.launch(
            &stream,
            ckpt::GptqSymGemvArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )?,
        (QuantFormat::Gptq(ZeroStyle::Symmetric), true) => other.gptq_sym_act_order_gemv.launch(
            &stream,
            ckpt::GptqSymActOrderGemvArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )?,
        (QuantFormat::Awq, _) => quant.awq_gemv.launch(
            &stream,
            quant::AwqGemvArgs {
                x: &x,
                w: &w,
                y: &mut y,
            },
        )?,
        (QuantFormat::Int8, _) => return Err("checkpoints load 4-bit formats only".into()),
    };
    let got = y.to_host(&stream)?;

    // The host reference: the layer dequantized on the host, multiplied in f64.
    let wh = dequant_reference(&layer.to_host::<f16>()?);
    let (mut worst, mut checksum) = (0f64, 0f64);
    for r in 0..m {
        for c in 0..n {
            let want: f64 = (0..k)
                .map(|kk| f64::from(xh[r * k + kk]) * f64::from(wh[kk * n + c]))
                .sum();
            let g = f64::from(got[r * n + c]);
            worst = worst.max((g - want).abs() / (1.0 + want.abs()));
            checksum += g;
        }
    }
    println!(
        "y = x · W, M={m}: checksum {checksum:.6}, largest relative difference from the host reference {worst:.2e}"
    );
    Ok(())
}
