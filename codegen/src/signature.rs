use ima_dsl::ir;

/// `attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D], o: f32[B,H,S,T], scale: f32)`: how
/// messages and docs name a kernel.
pub fn signature(k: &ir::Kernel) -> String {
    let args = k.args.iter().map(|a| {
        let dims: Vec<&str> = a.dims.iter().map(|d| d.text.as_str()).collect();
        format!("{}: {}[{}]", a.name, a.dtype.name(), dims.join(","))
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
