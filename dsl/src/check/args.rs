//! Tensor arguments and params: element types, scalar param types, quantization formats
//! and their options, `stored` orders, `align`, `tma` and `early`.

use super::scope::at_least;
use super::{CheckError, KernelChecker, Scope};
use crate::ast::{self, ExprKind, Role, Span};
use crate::ir;
use crate::ir::DType;
use ima_contract::MAX_RANK;

impl KernelChecker<'_> {
    pub(super) fn dtype(&mut self, ident: &ast::Ident) -> Option<DType> {
        let d = DType::parse(&ident.name);
        if d.is_none() {
            self.error(CheckError::UnknownDType {
                name: ident.name.clone(),
                span: ident.span,
            });
        }
        d
    }

    pub(super) fn params(&mut self, params: &[&ast::Param]) -> Vec<Option<ir::Param>> {
        params
            .iter()
            .map(|p| {
                let dtype = self.dtype(&p.dtype)?;
                if matches!(
                    dtype,
                    DType::F16
                        | DType::BF16
                        | DType::E4M3
                        | DType::E5M2
                        | DType::I8
                        | DType::U8
                        | DType::I16
                        | DType::U16
                ) {
                    self.error(CheckError::ParamType {
                        name: p.name.name.clone(),
                        dtype,
                        span: p.dtype.span,
                    });
                    return None;
                }
                Some(ir::Param {
                    name: p.name.name.clone(),
                    docs: p.docs.clone(),
                    dtype,
                })
            })
            .collect()
    }

    /// Refuses an argument or shared array (`what`) of more than [`MAX_RANK`] extents.
    pub(super) fn rank_fits(
        &mut self,
        what: &'static str,
        name: &ast::Ident,
        extents: &[ast::Expr],
    ) {
        if let (Some(first), Some(last)) = (extents.get(MAX_RANK), extents.last()) {
            self.error(CheckError::RankTooHigh {
                what,
                name: name.name.clone(),
                rank: extents.len(),
                span: Span::new(first.span.start, last.span.end),
            });
        }
    }

    /// Refuses an argument whose constant extents (`dims`, resolved from `extents`)
    /// multiply past i64.
    fn count_fits(
        &mut self,
        name: &ast::Ident,
        extents: &[ast::Expr],
        dims: &[Option<ir::Extent>],
    ) {
        let constant: Vec<(i64, &ast::Expr)> = (dims.iter().zip(extents))
            .filter_map(|(d, e)| Some((d.as_ref()?.expr.eval_const()?, e)))
            .collect();
        let product = (constant.iter()).try_fold(1i64, |p, &(v, _)| p.checked_mul(v));
        if let (None, Some((_, first)), Some((_, last))) =
            (product, constant.first(), constant.last())
        {
            let texts: Vec<String> = constant.iter().map(|(_, e)| e.to_string()).collect();
            self.error(CheckError::ElementCountOverflow {
                arg: name.name.clone(),
                extents: texts.join(" * "),
                span: Span::new(first.span.start, last.span.end),
            });
        }
    }

    pub(super) fn tensor(&mut self, t: &ast::TensorArg, scope: &Scope) -> Option<ir::TensorArg> {
        let bits = match t.dtype.name.as_str() {
            "q4" => Some(4),
            "q8" => Some(8),
            _ => None,
        };
        let (dtype, quant) = match (bits, &t.quant) {
            (None, None) => (self.dtype(&t.dtype), None),
            (Some(bits), Some(q)) => match self.quant(t, bits, q, scope) {
                Some((quant, scales)) => (Some(scales), Some(quant)),
                None => (None, None),
            },
            (Some(_), None) => {
                self.error(CheckError::QuantWithoutFormat {
                    dtype: t.dtype.name.clone(),
                    span: t.dtype.span,
                });
                (None, None)
            }
            (None, Some(q)) => {
                self.error(CheckError::FormatOnPlain {
                    format: q.kind.name.clone(),
                    dtype: t.dtype.name.clone(),
                    span: q.kind.span,
                });
                (None, None)
            }
        };
        // The grammar gives every argument at least one extent: no rank-0 tensors.
        let dims: Vec<Option<ir::Extent>> = scope.extents(&t.extents, self.errors);
        self.rank_fits("argument", &t.name, &t.extents);
        self.count_fits(&t.name, &t.extents, &dims);
        let stored = match &t.stored {
            None => Some((0..t.extents.len()).collect()),
            Some(order) => self.stored(t, order),
        };
        let align = match (t.align, dtype) {
            (None, Some(d)) => Some(d.size() as u64),
            (Some((n, span)), Some(d)) => {
                if !n.is_power_of_two() {
                    self.error(CheckError::AlignNotPowerOfTwo {
                        align: n,
                        element: d.size() as u64,
                        span,
                    });
                    None
                } else if n < d.size() as u64 {
                    self.error(CheckError::AlignBelowElement {
                        align: n,
                        dtype: d,
                        span,
                    });
                    None
                } else {
                    Some(n)
                }
            }
            (_, None) => None,
        };
        let values = self.values(t, dtype, scope);
        let tma = self.tma(t, dtype, quant.as_ref());
        if let (Some(span), Role::Out) = (t.early, t.role) {
            self.error(CheckError::EarlyOutput {
                arg: t.name.name.clone(),
                span,
            });
        }
        Some(ir::TensorArg {
            name: t.name.name.clone(),
            docs: t.docs.clone(),
            role: t.role,
            dtype: dtype?,
            dims: dims.into_iter().collect::<Option<_>>()?,
            stored: stored?,
            strided: t.strided.is_some(),
            early: t.early.is_some(),
            align: align?,
            quant,
            values: values?,
            tma: tma?,
        })
    }

    /// `tma(ROWS, COLS)`: an argument's TMA tensor map (an input's loads tiles, an
    /// output's stores them), over a row-major tensor whose rows
    /// start 16-byte aligned (align(16), which the constraints prove of the last extent),
    /// in 128-byte-swizzled boxes; or, on a GPTQ argument, tiles of ROWS rows of K by COLS
    /// columns of its packed words, scales and zeros (`quant_tma`). `None` when it is wrong
    /// (reported).
    fn tma(
        &mut self,
        t: &ast::TensorArg,
        dtype: Option<DType>,
        quant: Option<&ir::Quant>,
    ) -> Option<Option<ima_contract::TmaBox>> {
        let Some(tma) = &t.tma else {
            return Some(None);
        };
        if t.quant.is_some() {
            return self.quant_tma(t, tma, quant?);
        }
        let errors_before = self.errors.len();
        let arg = t.name.name.clone();
        let plain = t.stored.is_none() && t.strided.is_none();
        if !plain || t.align.is_none_or(|(n, _)| n < 16) || !(2..=5).contains(&t.extents.len()) {
            self.error(CheckError::TmaLayout {
                arg: arg.clone(),
                span: tma.span,
            });
        }
        let dtype = dtype?;
        let row_bytes = tma.cols.checked_mul(dtype.size() as u64);
        if row_bytes != Some(128) || !(8..=256).contains(&tma.rows) || tma.rows % 8 != 0 {
            self.error(CheckError::TmaBox {
                arg,
                rows: tma.rows,
                cols: tma.cols,
                dtype,
                span: tma.span,
            });
        }
        (self.errors.len() == errors_before).then_some(Some(ima_contract::TmaBox {
            rows: tma.rows as u32,
            cols: tma.cols as u32,
            layout: ima_contract::TmaLayout::Swizzled,
        }))
    }

    /// `tma(ROWS, COLS)` on a quantized argument: a GPTQ format without act-order (whose
    /// rows would not come in groups), tiles of ROWS rows of K, a multiple of 64 up to
    /// 2048 (qweight's box of ROWS / 8 packed rows is then whole 8-row swizzle periods,
    /// at most 256), by COLS columns, a multiple of 32 up to 256 (qweight's boxes are 32
    /// words, 128 bytes, wide; the scales' one box is at most 256). The box it stands for
    /// is the argument's own (rows of K by columns), which `contract_args` turns into each
    /// buffer's.
    fn quant_tma(
        &mut self,
        t: &ast::TensorArg,
        tma: &ast::Tma,
        quant: &ir::Quant,
    ) -> Option<Option<ima_contract::TmaBox>> {
        let arg = t.name.name.clone();
        if !matches!(quant.format, ir::QuantFormat::Gptq { g_idx: false, .. }) {
            self.error(CheckError::TmaQuantFormat {
                arg,
                span: tma.span,
            });
            return None;
        }
        let rows_ok = tma.rows.is_multiple_of(64) && (64..=2048).contains(&tma.rows);
        let cols_ok = tma.cols.is_multiple_of(32) && (32..=256).contains(&tma.cols);
        if !rows_ok || !cols_ok {
            self.error(CheckError::TmaQuantBox {
                arg,
                rows: tma.rows,
                cols: tma.cols,
                span: tma.span,
            });
            return None;
        }
        Some(Some(ima_contract::TmaBox {
            rows: tma.rows as u32,
            cols: tma.cols as u32,
            layout: ima_contract::TmaLayout::Swizzled,
        }))
    }

    /// Reads a quantization format's options; returns it with the scales' type.
    fn quant(
        &mut self,
        t: &ast::TensorArg,
        bits: u32,
        q: &ast::Quant,
        scope: &Scope,
    ) -> Option<(ir::Quant, DType)> {
        let errors_before = self.errors.len();
        let format_bits = if q.kind.name == "int8" { 8 } else { 4 };
        if bits != format_bits {
            self.error(CheckError::QuantWidth {
                format: q.kind.name.clone(),
                format_bits,
                arg: t.name.name.clone(),
                bits,
                span: q.kind.span,
            });
        }
        if t.extents.len() != 2 {
            self.error(CheckError::QuantRank {
                arg: t.name.name.clone(),
                rank: t.extents.len(),
                span: t.name.span,
            });
        }
        if t.role != Role::In {
            self.error(CheckError::QuantNotInput {
                arg: t.name.name.clone(),
                span: t.name.span,
            });
        }
        // align(16) is the one layout promise a 4-bit format can use: its tiles then read
        // qweight and scales in 16-byte vectors.
        let align_span = t
            .align
            .filter(|&(n, _)| !(n == 16 && format_bits == 4))
            .map(|a| a.1);
        if let Some(span) = align_span {
            self.error(CheckError::QuantAlign {
                arg: t.name.name.clone(),
                span,
            });
        }
        if let Some(span) = t.stored.as_ref().map(|s| s[0].span).or(t.strided) {
            self.error(CheckError::QuantLayout { span });
        }
        let mut group = None;
        let mut zeros = ir::Zeros::MinusOne;
        let mut g_idx = false;
        let mut scales = DType::F16;
        let allowed: &'static [&'static str] = match q.kind.name.as_str() {
            "gptq" => &["group", "zeros", "sym", "g_idx", "scales"],
            _ => &["group", "scales"],
        };
        for opt in &q.options {
            let name = opt.name.name.as_str();
            if !allowed.contains(&name) {
                self.error(CheckError::QuantUnknownOption {
                    format: q.kind.name.clone(),
                    option: name.to_string(),
                    allowed,
                    span: opt.name.span,
                });
                continue;
            }
            let word = match &opt.value {
                Some(ast::Expr {
                    kind: ExprKind::Name(w),
                    ..
                }) => Some(w.as_str()),
                _ => None,
            };
            match (name, &opt.value) {
                ("group", Some(e)) => {
                    group = scope
                        .int_expr(e, self.errors)
                        .filter(|expr| {
                            at_least(expr, 1, "a group size", e.span, self.errors).is_some()
                        })
                        .map(|expr| ir::Extent {
                            text: e.to_string(),
                            expr,
                        });
                }
                ("zeros", Some(_)) if word == Some("plain") => zeros = ir::Zeros::Plain,
                ("zeros", Some(_)) if word == Some("minus_one") => zeros = ir::Zeros::MinusOne,
                ("scales", Some(_)) if word == Some("f16") => scales = DType::F16,
                ("scales", Some(_)) if word == Some("bf16") => scales = DType::BF16,
                ("sym", None) => zeros = ir::Zeros::Symmetric,
                ("g_idx", None) => g_idx = true,
                _ => {
                    self.error(CheckError::QuantBadValue {
                        option: name.to_string(),
                        span: opt.name.span,
                    });
                }
            }
        }
        if group.is_none() && self.errors.len() == errors_before {
            self.error(CheckError::QuantNoGroup {
                format: q.kind.name.clone(),
                first_extent: t.extents.first().map(|e| e.to_string()),
                span: q.span,
            });
        }
        if self.errors.len() > errors_before {
            return None;
        }
        let format = match q.kind.name.as_str() {
            "gptq" => ir::QuantFormat::Gptq { zeros, g_idx },
            "awq" => ir::QuantFormat::Awq,
            _ => ir::QuantFormat::Int8,
        };
        Some((
            ir::Quant {
                format,
                group: group?,
            },
            scales,
        ))
    }

    /// `stored [B, S, H, D]` names the logical dimensions in memory order.
    fn stored(&mut self, t: &ast::TensorArg, order: &[ast::Ident]) -> Option<Vec<usize>> {
        let logical: Vec<String> = t.extents.iter().map(|e| e.to_string()).collect();
        let span = Span::new(order[0].span.start, order[order.len() - 1].span.end);
        let mut seen_dup = logical.clone();
        seen_dup.sort();
        seen_dup.dedup();
        // Checked first: a dimension named twice maps to its first position only, so the
        // checks below would call any order of such an argument a repeat or too short.
        if seen_dup.len() != logical.len() {
            self.error(CheckError::StoredAmbiguous {
                arg: t.name.name.clone(),
                span,
            });
            return None;
        }
        let mut perm = Vec::new();
        for ident in order {
            let Some(l) = logical.iter().position(|n| *n == ident.name) else {
                self.error(CheckError::StoredUnknownDim {
                    dim: ident.name.clone(),
                    arg: t.name.name.clone(),
                    logical: logical.clone(),
                    span: ident.span,
                });
                return None;
            };
            if perm.contains(&l) {
                self.error(CheckError::StoredRepeated {
                    dim: ident.name.clone(),
                    span: ident.span,
                });
                return None;
            }
            perm.push(l);
        }
        if perm.len() != logical.len() {
            self.error(CheckError::StoredNotPermutation {
                arg: t.name.name.clone(),
                given: perm.len(),
                logical,
                span,
            });
            return None;
        }
        Some(perm)
    }
}
