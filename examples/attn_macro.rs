//! Attention through `#[ima_kernel]`: the spec file expanded into this crate, plus a small
//! kernel written inline. Needs a CUDA GPU: `cargo run --example attn_macro`.

mod common;

use common::{Inputs, SHAPE};
use ima::{Tensor, ima_kernel};

/// The kernels of `specs/attn.ima` (a path from the crate root).
#[ima_kernel("specs/attn.ima")]
pub mod attn {}

/// A kernel whose spec lives right here.
#[ima_kernel(
    r#"
/// y = a · x, one thread per element.
kernel scale {
    in  x: f32[N]
    out y: f32[N]
    param a: f32
    launch over y[i]
    body { y(i) = a * x(i); }
}
"#
)]
pub mod scale {}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let [b, h, s, t, d] = SHAPE;
    let ctx = ima::context(0)?;
    let stream = ctx.new_stream()?;
    let kernels = attn::Kernels::load(&ctx)?;

    let inputs = Inputs::upload(&stream)?;
    let mut scores = Tensor::<f32>::zeros(&stream, &[b, h, s, t])?;
    let mut probs = Tensor::zeros(&stream, &[b, h, s, t])?;
    let mut out = Tensor::<f32>::zeros(&stream, &[b, h, s, d])?;
    kernels.attn_scores.launch(
        &stream,
        attn::AttnScoresArgs {
            q: &inputs.q,
            k: &inputs.k,
            o: &mut scores,
            scale: inputs.scale,
        },
    )?;
    kernels.softmax_rows.launch(
        &stream,
        attn::SoftmaxRowsArgs {
            s: &scores,
            p: &mut probs,
        },
    )?;
    kernels.attn_pv.launch(
        &stream,
        attn::AttnPvArgs {
            p: &probs,
            v: &inputs.v,
            o: &mut out,
        },
    )?;
    let worst = common::compare(&out.to_host(&stream)?, &inputs.reference(), 2e-3)?;
    println!("attention {SHAPE:?} through #[ima_kernel]: worst absolute error {worst:.2e}");

    // The arguments are checked against the contract before anything launches.
    let short_v = Tensor::from_host(
        &stream,
        &common::data(b * h * (t - 1) * d, 4),
        &[b, h, t - 1, d],
    )?;
    match kernels.attn_pv.launch(
        &stream,
        attn::AttnPvArgs {
            p: &probs,
            v: &short_v,
            o: &mut out,
        },
    ) {
        Err(e) => println!("a v with T - 1 keys is refused before launch:\n{e}"),
        Ok(launched) => return Err(format!("a v with T - 1 keys launched: {launched:?}").into()),
    }

    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let x = Tensor::from_host(&stream, &x, &[1000])?;
    let mut y = Tensor::<f32>::zeros(&stream, &[1000])?;
    scale::Kernels::load(&ctx)?.scale.launch(
        &stream,
        scale::ScaleArgs {
            x: &x,
            y: &mut y,
            a: 0.5,
        },
    )?;
    let y = y.to_host(&stream)?;
    let wrong = y
        .iter()
        .enumerate()
        .filter(|&(i, &v)| v != i as f32 * 0.5)
        .count();
    if wrong > 0 {
        return Err(format!("inline scale kernel: {wrong} wrong outputs").into());
    }
    println!("inline spec `scale`: 1000 outputs exact");
    Ok(())
}
