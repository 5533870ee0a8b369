//! `imac explain`: each kernel's contract, as the launch stub checks it and the generated
//! CUDA C relies on it: arguments with their logical and physical shapes, element sizes,
//! alignment and layout; where each symbol is read from; the constraints; shared memory;
//! the launch domain, the empty-domain policy and the guards.

mod table;

use ima_contract::{ENTRY_POINTS, TmaLayout};
use ima_dsl::ir::{self, BinOp, EmptyPolicy, Expr, Extent, Kernel, Launch, Resident};
use table::table;

/// The contract of every kernel of `m`, or of the one named `kernel`.
pub fn explain(m: &ir::Module, kernel: Option<&str>) -> Result<String, String> {
    // A file of constants alone is explained: its constants.
    let kernels: Vec<&Kernel> = match (kernel, m.kernels.is_empty() && !m.consts.is_empty()) {
        (None, true) => Vec::new(),
        _ => m.kernels_named(kernel)?,
    };
    let mut out = String::new();
    if !m.consts.is_empty() {
        let consts: Vec<String> = m.consts.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        out.push_str(&format!("constants: {}\n\n", consts.join(", ")));
    }
    let contracts: Vec<String> = kernels.iter().map(|k| contract(&m.file, k)).collect();
    out.push_str(&contracts.join("\n"));
    Ok(out)
}

fn contract(file: &str, k: &Kernel) -> String {
    let mut out = format!("kernel {}  ({file}:{})\n", k.signature(), k.line);
    for d in &k.docs {
        out.push_str(&format!("  /// {d}\n"));
    }
    out.push_str("\n  arguments\n");
    out.push_str(&table(
        "    ",
        &[
            "name", "role", "logical", "physical", "dtype", "bytes", "align", "layout",
        ],
        &k.args.iter().flat_map(argument_rows).collect::<Vec<_>>(),
    ));
    if !k.params.is_empty() {
        out.push_str("\n  params\n");
        let rows: Vec<Vec<String>> = k
            .params
            .iter()
            .map(|p| vec![p.name.clone(), p.dtype.name().to_string()])
            .collect();
        out.push_str(&table("    ", &["name", "dtype"], &rows));
    }
    if !k.symbols.is_empty() {
        out.push_str(
            "\n  symbols (read from the arguments at launch, checked in every other use)\n",
        );
        let rows: Vec<Vec<String>> = k
            .symbols
            .iter()
            .map(|s| vec![s.name.clone(), bound_from(k, s)])
            .collect();
        out.push_str(&table("    ", &["name", "bound from"], &rows));
    }
    out.push_str("\n  constraints (checked before every launch)\n");
    if k.constraints.is_empty() {
        out.push_str("    none\n");
    }
    for c in &k.constraints {
        out.push_str(&format!("    {}\n", c.text));
    }
    let values: Vec<Vec<String>> = ima_dsl::abi::contract_args(k)
        .iter()
        .filter_map(|a| {
            Some(vec![
                a.name.clone(),
                format!("values({})", a.values.as_ref()?.text),
            ])
        })
        .collect();
    if !values.is_empty() {
        out.push_str(
            "\n  value contracts (each entry checked where the kernel reads it, in every mode)\n",
        );
        out.push_str(&table("    ", &["argument", "entries"], &values));
    }
    if !k.shared.is_empty() {
        out.push_str(
            "\n  shared memory (dynamic; each array starts at a multiple of its alignment)\n",
        );
        let rows: Vec<Vec<String>> = k.shared.iter().map(shared_row).collect();
        out.push_str(&table(
            "    ",
            &["name", "dtype", "shape", "bytes", "align"],
            &rows,
        ));
    }
    out.push_str("\n  launch\n");
    out.push_str(&table("    ", &[], &launch_rows(k)));
    out
}

fn dims(extents: &[&Extent]) -> String {
    let texts: Vec<&str> = extents.iter().map(|e| e.text.as_str()).collect();
    format!("[{}]", texts.join(", "))
}

/// One row per argument; a quantized one adds a row per buffer it expands into.
fn argument_rows(a: &ir::TensorArg) -> Vec<Vec<String>> {
    let logical: Vec<&Extent> = a.dims.iter().collect();
    let row = |name: String, physical: String, dtype: ir::DType, layout: &str| {
        vec![
            name,
            a.role.keyword().to_string(),
            dims(&logical),
            physical,
            dtype.name().to_string(),
            dtype.size().to_string(),
            a.align.to_string(),
            layout.to_string(),
        ]
    };
    let layout = match (a.strided, a.is_permuted()) {
        (true, _) => "strided (any strides)",
        (false, true) => "contiguous, permuted",
        (false, false) => "contiguous",
    };
    match (&a.quant, logical.as_slice()) {
        (Some(q), [k, n]) => {
            let (dtype, bytes) = if q.format == ir::QuantFormat::Int8 {
                ("q8", "1")
            } else {
                ("q4", "1/2")
            };
            let mut rows = vec![vec![
                a.name.clone(),
                a.role.keyword().to_string(),
                dims(&logical),
                quant_name(q),
                dtype.to_string(),
                bytes.to_string(),
                String::new(),
                "packed buffers:".to_string(),
            ]];
            for b in q.buffers(k, n, a.dtype) {
                // `tma(ROWS, COLS)`: each buffer's boxes, the groups' in rows of K over G.
                let layout = match a.tma.map(|t| ima_dsl::abi::buffer_tma(t, b.part)) {
                    Some(t) if t.layout == TmaLayout::Groups => format!(
                        "contiguous; TMA boxes {} / {} x {}",
                        t.rows, q.group.text, t.cols
                    ),
                    Some(t) => format!("contiguous; TMA boxes {} x {}", t.rows, t.cols),
                    None => "contiguous".to_string(),
                };
                let mut r = row(
                    format!("  {}", b.part),
                    dims(&b.dims.iter().collect::<Vec<_>>()),
                    b.dtype,
                    &layout,
                );
                r[1].clear();
                r[2].clear();
                r[6] = ima_dsl::abi::buffer_align(a, b.part, b.dtype).to_string();
                rows.push(r);
            }
            rows
        }
        _ => {
            let layout = match a.tma {
                Some(b) => format!("{layout}; TMA boxes {} x {}", b.rows, b.cols),
                None => layout.to_string(),
            };
            vec![row(
                a.name.clone(),
                dims(&a.physical_dims().collect::<Vec<_>>()),
                a.dtype,
                &layout,
            )]
        }
    }
}

fn quant_name(q: &ir::Quant) -> String {
    let format = match q.format {
        ir::QuantFormat::Gptq { zeros, g_idx } => {
            let zeros = match zeros {
                ir::Zeros::MinusOne => "zeros - 1",
                ir::Zeros::Plain => "plain zeros",
                ir::Zeros::Symmetric => "symmetric",
            };
            format!("gptq ({zeros}{})", if g_idx { ", g_idx" } else { "" })
        }
        ir::QuantFormat::Awq => "awq".to_string(),
        ir::QuantFormat::Int8 => "int8".to_string(),
    };
    format!("{format}, group {}", q.group.text)
}

/// `q.shape[3]`, in the caller's (physical) order, naming the logical dimension when the
/// two differ.
fn bound_from(k: &Kernel, s: &ir::Symbol) -> String {
    let Some(a) = k.args.get(s.arg) else {
        return String::new();
    };
    let from = match a.stored.iter().position(|&l| l == s.dim) {
        Some(p) if p == s.dim => format!("{}.shape[{p}]", a.name),
        Some(p) => format!("{}.shape[{p}] (logical dimension {})", a.name, s.dim),
        None if a.quant.is_some() => format!("{}'s group size", a.name),
        None => format!("{}, dimension {}", a.name, s.dim),
    };
    if a.role == ir::Role::Out {
        format!("{from}, an output: no input carries it")
    } else {
        from
    }
}

fn shared_row(s: &ir::SharedArray) -> Vec<String> {
    let mut factors: Vec<String> = s.dims.iter().map(|d| paren(&d.text)).collect();
    factors.push(s.dtype.size().to_string());
    let mut bytes = factors.join(" * ");
    let value = s.dims.iter().try_fold(s.dtype.size() as i64, |acc, d| {
        acc.checked_mul(d.expr.eval_const()?)
    });
    if let Some(v) = value {
        bytes.push_str(&format!(" = {v}"));
    }
    vec![
        s.name.clone(),
        s.dtype.name().to_string(),
        dims(&s.dims.iter().collect::<Vec<_>>()),
        bytes,
        s.align.to_string(),
    ]
}

fn launch_rows(k: &Kernel) -> Vec<Vec<String>> {
    let threads = k.threads_per_block();
    let row = |what: &str, text: String| vec![what.to_string(), text];
    let mut rows = Vec::new();
    // The domain argument and its first `n` extents, as factors.
    let domain = |n: usize| -> (String, Vec<String>) {
        let a = k.launch.domain_arg().and_then(|i| k.args.get(i));
        let extents = a
            .iter()
            .flat_map(|a| a.dims.iter().take(n))
            .map(|d| paren(&d.text))
            .collect();
        (a.map_or_else(String::new, |a| a.name.clone()), extents)
    };
    match &k.launch {
        Launch::Threads { indices, .. } => {
            let (name, extents) = domain(indices.len());
            let n = extents.join(" * ");
            rows.push(row(
                "domain",
                format!(
                    "threads over {name}[{}] = {n} threads, {}{threads} per block",
                    extents.join(", "),
                    if k.block_from_occupancy { "up to " } else { "" }
                ),
            ));
            rows.push(row(
                "indices",
                format!("{} from idx, the last fastest", indices.join(", ")),
            ));
            rows.push(row(
                "guard",
                format!("grid-stride loop: idx < {n}, idx += gridDim.x * blockDim.x"),
            ));
        }
        Launch::Blocks { indices, .. } => {
            let (name, extents) = domain(indices.len());
            let (_, all) = domain(usize::MAX);
            let inner = all.get(indices.len()..).unwrap_or_default();
            let n = if extents.is_empty() {
                "1".to_string()
            } else {
                extents.join(" * ")
            };
            rows.push(row(
                "domain",
                format!(
                    "blocks over {name}[{}] = {n} blocks of {threads} threads",
                    extents.join(", ")
                ),
            ));
            if !inner.is_empty() {
                rows.push(row(
                    "threads",
                    format!("stride over [{}] in the body", inner.join(", ")),
                ));
            }
            rows.push(row(
                "indices",
                format!(
                    "{} from the block's idx, the last fastest",
                    indices.join(", ")
                ),
            ));
            let sync = if k.shared.is_empty() {
                ""
            } else {
                ", __syncthreads() between rows"
            };
            rows.push(row(
                "guard",
                format!("block-stride loop: idx < {n}, idx += gridDim.x{sync}"),
            ));
        }
        Launch::Grid {
            grid,
            resident,
            cluster,
        } => {
            let grid: Vec<String> = grid.iter().map(|e| expr(k, e)).collect();
            let block: Vec<String> = k
                .block
                .iter()
                .take(block_rank(k))
                .map(|b| b.to_string())
                .collect();
            let (grid, block) = (grid.join(", "), block.join(", "));
            rows.push(row(
                "domain",
                match resident {
                    Resident::AtMost => format!(
                        "persistent: {grid} blocks, or as many as the device holds at once \
                         where that is fewer, of block({block}) = {threads} threads"
                    ),
                    Resident::No | Resident::Whole => {
                        format!("raw grid({grid}) block({block}) = {threads} threads per block")
                    }
                },
            ));
            rows.push(row(
                "guard",
                "none: the body guards its own indices; checked mode's accessors check every index"
                    .into(),
            ));
            let resident = match resident {
                Resident::No => None,
                Resident::Whole => Some(
                    "every block at once: a cooperative launch, refused before it is enqueued \
                     where the device cannot hold the whole grid (the blocks may wait for each \
                     other)",
                ),
                Resident::AtMost => Some(
                    "every block at once: a cooperative launch of no more blocks than the \
                     device holds at once, with the launching entry point's registers and \
                     shared memory (the blocks may wait for each other)",
                ),
            };
            if let Some(text) = resident {
                rows.push(row("resident", text.into()));
            }
            if let Some(c) = cluster {
                let blocks: u32 = c.iter().product();
                rows.push(row(
                    "cluster",
                    format!(
                        "thread-block clusters of {} = {blocks} blocks (__cluster_dims__), which \
                         share their shared arrays through `s.in_block(rank)`; each grid extent \
                         must be a multiple of the cluster's, checked before the launch; sm_90a \
                         only",
                        c.iter().map(u32::to_string).collect::<Vec<_>>().join(" x ")
                    ),
                ));
            }
        }
    }
    if k.block_from_occupancy {
        rows.push(row(
            "block",
            format!(
                "from the occupancy API when the kernel loads: the size, at most {threads} \
                 (__launch_bounds__), that keeps the most threads on an SM; `threads N` \
                 fixes it"
            ),
        ));
    }
    if k.min_blocks > 1 {
        rows.push(row(
            "occupancy",
            format!(
                "min_blocks {}: __launch_bounds__({threads}, {}) caps registers so that {} blocks share an SM",
                k.min_blocks, k.min_blocks, k.min_blocks
            ),
        ));
    }
    rows.push(row(
        "empty",
        match k.empty {
            EmptyPolicy::Skip => "skip: a launch over no elements returns without launching".into(),
            EmptyPolicy::Refuse => "refuse: a launch over no elements is an error".into(),
        },
    ));
    let [i32, i64, i32_checked, i64_checked] = ENTRY_POINTS.map(|e| e.name(&k.name));
    rows.push(row(
        "entries",
        format!("{i32} while every index fits in 32 bits, else {i64}"),
    ));
    rows.push(row(
        "checked",
        format!("{i32_checked}, {i64_checked}: accessors check every index"),
    ));
    rows
}

/// How many of `block`'s sizes were given: trailing 1s are defaults.
fn block_rank(k: &Kernel) -> usize {
    k.block.iter().rposition(|&b| b != 1).map_or(1, |p| p + 1)
}

/// Wraps a compound extent in parentheses for use as a factor.
fn paren(text: &str) -> String {
    if text.chars().all(|c| c.is_alphanumeric() || c == '_') {
        text.to_string()
    } else {
        format!("({text})")
    }
}

/// An IR expression in spec syntax, over the kernel's symbol and param names.
fn expr(k: &Kernel, e: &Expr) -> String {
    fn prec(op: BinOp) -> u8 {
        match op {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne => 3,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
            BinOp::CeilDiv | BinOp::Min | BinOp::Max => 8,
        }
    }
    fn go(k: &Kernel, e: &Expr, min: u8) -> String {
        let (text, p) = match e {
            Expr::Const(v) => (v.to_string(), 8),
            Expr::Sym(s) => (k.symbols.get(*s).map_or("?".into(), |s| s.name.clone()), 8),
            Expr::Param(p) => (k.params.get(*p).map_or("?".into(), |p| p.name.clone()), 8),
            Expr::Neg(a) => (format!("-{}", go(k, a, 7)), 7),
            Expr::Not(a) => (format!("!{}", go(k, a, 7)), 7),
            // ceil(a / b) reads as a division inside: its operands bind as `/`'s do, so
            // that ceil(M / (16 + X)) keeps its parentheses.
            Expr::Bin(BinOp::CeilDiv, a, b) => {
                (format!("ceil({} / {})", go(k, a, 6), go(k, b, 7)), 8)
            }
            Expr::Bin(op @ (BinOp::Min | BinOp::Max), a, b) => (
                format!("{}({}, {})", op.symbol(), go(k, a, 0), go(k, b, 0)),
                8,
            ),
            Expr::Bin(op, a, b) => {
                let p = prec(*op);
                (
                    format!("{} {} {}", go(k, a, p), op.symbol(), go(k, b, p + 1)),
                    p,
                )
            }
        };
        if p < min { format!("({text})") } else { text }
    }
    go(k, e, 0)
}

#[cfg(test)]
mod tests {
    use super::explain;
    use ima_dsl::{Source, compile, ir};

    fn module(text: &str) -> ir::Module {
        let source = Source::new("t.ima", text);
        compile(&source).unwrap_or_else(|d| panic!("{}", source.render(&d)))
    }

    const SPEC: &str = "const T = 32
/// Rotates.
kernel rope where D % 8 == 0, N % 8 == 0 {
    in  x: f16[B, H, S, D] stored [B, S, H, D] align(16)
    in  w: q4[K, N] gptq(group = 128, sym) align(16)
    out y: f16[B, H, S, D] strided
    shared tile: f32[T, T + 1]
    launch blocks over y[b, h, s, _] threads 128
    body { }
}
kernel raw {
    in  x: f32[N, M]
    launch grid(ceil(N / T), ceil((M + 1) / (16 + 16 * min(1, N / 33))), ceil(M * 2 / 4)) block(32, 8) min_blocks 3
    empty refuse
    body { }
}
";

    #[test]
    fn tells_the_whole_contract() {
        // Lines compare word by word: column widths depend on the other rows.
        let text = explain(&module(SPEC), Some("rope")).unwrap();
        for line in [
            "kernel rope(",
            "  /// Rotates.",
            "    x        in    [B, H, S, D]  [B, S, H, D]                f16    2      16     contiguous, permuted",
            "    w        in    [K, N]        gptq (symmetric), group 128  q4     1/2           packed buffers:",
            "      qweight                    [ceil(K / 8), N]            i32    4      16     contiguous",
            "      scales                     [ceil(K / 128), N]          f16    2      16     contiguous",
            "    y        out   [B, H, S, D]  [B, H, S, D]                f16    2      2      strided (any strides)",
            "    H     x.shape[2] (logical dimension 1)",
            "    D % 8 == 0",
            "    tile  f32    [T, T + 1]  T * (T + 1) * 4 = 4224",
            "    domain   blocks over y[B, H, S] = B * H * S blocks of 128 threads",
            "    threads  stride over [D] in the body",
            "    empty    skip: a launch over no elements returns without launching",
        ] {
            let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                text.lines().any(|l| words(l).starts_with(&words(line))),
                "no line `{line}` in:\n{text}"
            );
        }
        assert!(!text.contains("kernel raw"));
    }

    #[test]
    fn tells_a_raw_grid() {
        // Words compare, not spaces: column widths depend on the longest row name.
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = words(&explain(&module(SPEC), Some("raw")).unwrap());
        for line in [
            "domain raw grid(ceil(N / 32), ceil((M + 1) / (16 + 16 * min(1, N / 33))), ceil(M * 2 / 4)) block(32, 8) = 256 threads per block",
            "guard none: the body guards its own indices",
            "occupancy min_blocks 3: __launch_bounds__(256, 3)",
            "empty refuse",
        ] {
            assert!(text.contains(line), "no `{line}` in:\n{text}");
        }
        let rope = explain(&module(SPEC), Some("rope")).unwrap();
        assert!(!rope.contains("min_blocks"), "{rope}");
        assert!(!text.contains("resident"), "{text}");
    }

    #[test]
    fn tells_a_resident_grid() {
        let spec = "
kernel persistent {
    inout flags: i32[N]
    launch grid(132) block(512) resident
    body { }
}
";
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = words(&explain(&module(spec), None).unwrap());
        let line = "resident every block at once: a cooperative launch, refused before it is \
                    enqueued where the device cannot hold the whole grid";
        assert!(text.contains(line), "no `{line}` in:\n{text}");
        let spec = spec.replace(
            "grid(132) block(512) resident",
            "persistent(132) block(512)",
        );
        let text = words(&explain(&module(&spec), None).unwrap());
        for line in [
            "domain persistent: 132 blocks, or as many as the device holds at once where that \
             is fewer, of block(512) = 512 threads",
            "resident every block at once: a cooperative launch of no more blocks than the \
             device holds at once",
        ] {
            assert!(text.contains(line), "no `{line}` in:\n{text}");
        }
    }

    #[test]
    fn says_which_blocks_the_occupancy_api_picks() {
        // Only a launch over threads that names no size and has no shared arrays.
        let spec = "
kernel open {
    in  x: f32[N]
    out y: f32[N]
    launch over y[i]
    body { y(i) = x(i); }
}
kernel sized {
    in  x: f32[N]
    out y: f32[N]
    launch over y[i] threads 128
    body { y(i) = x(i); }
}
kernel rows where D <= 64 {
    in  x: f32[N, D]
    out y: f32[N, D]
    shared row: f32[D]
    launch blocks over y[n, _]
    body { }
}
kernel staged where N <= 64 {
    in  x: f32[N]
    out y: f32[N]
    shared s: f32[N]
    launch over y[i]
    body { }
}
";
        let m = module(spec);
        let open: Vec<(&str, bool)> = m
            .kernels
            .iter()
            .map(|k| (k.name.as_str(), k.block_from_occupancy))
            .collect();
        assert_eq!(
            open,
            [
                ("open", true),
                ("sized", false),
                ("rows", false),
                ("staged", false)
            ]
        );
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = words(&explain(&m, Some("open")).unwrap());
        for line in [
            "domain threads over y[N] = N threads, up to 256 per block",
            "block from the occupancy API when the kernel loads",
        ] {
            assert!(text.contains(line), "no `{line}` in:\n{text}");
        }
        let sized = words(&explain(&m, Some("sized")).unwrap());
        assert!(sized.contains("N threads, 128 per block"), "{sized}");
        assert!(!sized.contains("occupancy API"), "{sized}");
    }

    #[test]
    fn names_the_kernels_when_one_is_missing() {
        let err = explain(&module(SPEC), Some("nope")).unwrap_err();
        assert_eq!(err, "t.ima has no kernel `nope`; its kernels: rope, raw");
    }

    #[test]
    fn explains_every_committed_spec() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let m = module(&std::fs::read_to_string(&path).unwrap());
            let text = explain(&m, None).unwrap();
            assert_eq!(
                text.matches("\nkernel ").count() + usize::from(text.starts_with("kernel ")),
                m.kernels.len()
            );
        }
    }
}
