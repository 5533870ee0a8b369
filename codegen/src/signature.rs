use ima_dsl::ir;

/// `attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D], o: f32[B,H,S,T], scale: f32)`: how
/// messages and docs name a kernel.
pub fn signature(k: &ir::Kernel) -> String {
    let args = k.args.iter().map(|a| {
        let dims: Vec<&str> = a.dims.iter().map(|d| d.text.as_str()).collect();
        let dtype = match &a.quant {
            Some(q) if q.format == ir::QuantFormat::Int8 => "q8",
            Some(_) => "q4",
            None => a.dtype.name(),
        };
        format!("{}: {dtype}[{}]", a.name, dims.join(","))
    });
    let params = k
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.dtype.name()));
    format!(
        "{}({})",
        k.name,
        args.chain(params).collect::<Vec<_>>().join(", ")
    )
}
