//! One quantized linear layer of a checkpoint, its buffers checked against the format the
//! config implies.

use safetensors::tensor::Dtype;

use super::config::Scheme;
use super::error::CheckpointError;
use super::le::{LeElement, elements};
use super::{Checkpoint, RawTensor};
use crate::contract::DType;
use crate::quant::{
    BufferShape, HostQWeight, PACK, QuantFormat, QuantHost, QuantScale, QuantSpec, SYMMETRIC_ZERO,
    Shaped, ZeroStyle, nibble, validate_g_idx,
};

/// A quantized layer of a [`Checkpoint`]: every buffer the format needs is present with
/// its dtype and padded shape, g_idx (when kept) holds valid groups, and a `sym` layer's
/// stored zero points all read 8. Borrows the checkpoint's mapped files.
#[derive(Debug)]
pub struct CheckpointLayer<'a> {
    prefix: String,
    spec: QuantSpec,
    scale_dtype: DType,
    pub(super) qweight: RawTensor<'a>,
    /// Present exactly when the format has zeros.
    pub(super) qzeros: Option<RawTensor<'a>>,
    pub(super) scales: RawTensor<'a>,
    /// Present when the layer is act-order.
    pub(super) g_idx: Option<RawTensor<'a>>,
    plain: Vec<String>,
}

const QUANT_PARTS: [&str; 4] = ["qweight", "qzeros", "scales", "g_idx"];

impl<'a> CheckpointLayer<'a> {
    pub(super) fn new(ckpt: &'a Checkpoint, prefix: &str) -> Result<Self, CheckpointError> {
        let name = |part: &str| format!("{prefix}.{part}");
        let need = |part: &str, why: &'static str| {
            ckpt.raw(&name(part))
                .ok_or_else(|| CheckpointError::MissingTensor {
                    tensor: name(part),
                    why,
                })
        };
        let qweight = need("qweight", "every quantized layer has one")?;
        expect_dtype(&qweight, &[Dtype::I32], "I32 (packed int4 words)")?;
        let scales = need("scales", "every quantized layer has one")?;
        let scale_dtype = match scales.dtype {
            Dtype::F16 => DType::F16,
            Dtype::BF16 => DType::BF16,
            _ => expect_dtype(&scales, &[], "F16 or BF16").map(|_| DType::F16)?,
        };
        let qzeros = ckpt.raw(&name("qzeros"));
        let g_idx = ckpt.raw(&name("g_idx"));
        if let Some(z) = &qzeros {
            expect_dtype(z, &[Dtype::I32], "I32 (packed int4 words)")?;
        }
        if let Some(g) = &g_idx {
            expect_dtype(g, &[Dtype::I32], "I32")?;
            expect_rank(g, 1, "[K]")?;
        }
        let config = ckpt.config();
        // The format and how the file stores zeros (for a `sym` layer's check).
        let (format, stored) = match config.scheme {
            Scheme::Gptq {
                zeros,
                sym,
                desc_act,
            } => {
                expect_rank(&qweight, 2, "[ceil(K/8), N]")?;
                if desc_act && g_idx.is_none() {
                    need("g_idx", "the config says desc_act = true")?;
                }
                let style = if sym { ZeroStyle::Symmetric } else { zeros };
                (QuantFormat::Gptq(style), zeros)
            }
            Scheme::AwqGemm => {
                if g_idx.is_some() {
                    return Err(CheckpointError::UnexpectedTensor {
                        tensor: name("g_idx"),
                        why: "AWQ has no act-order",
                    });
                }
                expect_rank(&qweight, 2, "[K, ceil(N/8)]")?;
                (QuantFormat::Awq, ZeroStyle::Plain)
            }
        };
        let quant_error = |source| CheckpointError::Quant {
            tensor: qweight.name.to_string(),
            source,
        };
        expect_rank(&scales, 2, "[ceil(K/G), N]")?;
        // K and N are read off these shapes: a layer with no elements (a hostile file's
        // qweight of [2^58, 0], no bytes) would pass every check below with any K.
        for t in [&qweight, &scales] {
            if t.shape.contains(&0) {
                return Err(CheckpointError::NoElements {
                    tensor: t.name.to_string(),
                    actual: t.shape.to_vec(),
                });
            }
        }
        // GPTQ's K is g_idx's length where there is one: it must fit qweight's packed rows,
        // or qweight's shape check below would blame qweight.
        if let (QuantFormat::Gptq(_), Some(g)) = (format, &g_idx) {
            let (len, rows) = (g.shape[0], qweight.shape[0]);
            if len.div_ceil(PACK) != rows {
                return Err(CheckpointError::GIdxLen {
                    tensor: g.name.to_string(),
                    len,
                    rows,
                    lo: PACK * (rows - 1) + 1,
                    hi: PACK * rows,
                });
            }
        }
        let (k, n) = format
            .logical_dims(qweight.shape, scales.shape, g_idx.map(|g| g.shape[0]))
            .map_err(quant_error)?;
        let spec =
            QuantSpec::with_config_group(format, k, n, config.group_size).map_err(quant_error)?;
        expect_shape(&qweight, &spec.qweight_shape())?;
        expect_shape(&scales, &spec.scales_shape(scale_dtype))?;
        let qzeros = match (qzeros, spec.qzeros_shape()) {
            (Some(z), Some(shape)) => {
                expect_shape(&z, &shape)?;
                Some(z)
            }
            (None, Some(_)) => {
                need("qzeros", "the format has zero points")?;
                None
            }
            // A `sym` layer: the writers store its zeros too (8, in their v1 or v2);
            // checked, then not needed.
            (Some(z), None) => {
                let shape = BufferShape {
                    name: "qzeros",
                    dtype: DType::I32,
                    shape: vec![spec.groups(), n.div_ceil(8)],
                    formula: "[ceil(K/G), ceil(N/8)]",
                };
                expect_shape(&z, &shape)?;
                check_symmetric(&z, stored, n)?;
                None
            }
            (None, None) => None,
        };
        let g_idx = match g_idx {
            Some(g) => {
                let groups = elements::<i32>(g.bytes);
                validate_g_idx(&groups, k, spec.group()).map_err(|source| {
                    CheckpointError::Quant {
                        tensor: g.name.to_string(),
                        source,
                    }
                })?;
                let trivial = groups
                    .iter()
                    .enumerate()
                    .all(|(row, &gi)| gi as usize == spec.default_group_of(row));
                let desc_act = matches!(config.scheme, Scheme::Gptq { desc_act: true, .. });
                (desc_act || !trivial).then_some(g)
            }
            None => None,
        };
        let mut plain: Vec<String> = ckpt
            .tensor_names()
            .into_iter()
            .filter(|t| {
                t.strip_prefix(prefix)
                    .and_then(|rest| rest.strip_prefix('.'))
                    .is_some_and(|part| !part.contains('.') && !QUANT_PARTS.contains(&part))
            })
            .map(str::to_string)
            .collect();
        plain.sort();
        Ok(CheckpointLayer {
            prefix: prefix.to_string(),
            spec,
            scale_dtype,
            qweight,
            qzeros,
            scales,
            g_idx,
            plain,
        })
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Format, K, N and group size, as inferred and checked.
    pub fn spec(&self) -> QuantSpec {
        self.spec
    }

    pub fn format(&self) -> QuantFormat {
        self.spec.format()
    }

    /// Whether the layer is act-order (its g_idx kept).
    pub fn has_g_idx(&self) -> bool {
        self.g_idx.is_some()
    }

    /// The scales' element type in the file (f16 or bf16).
    pub fn scale_dtype(&self) -> DType {
        self.scale_dtype
    }

    /// The other tensors directly under the prefix (`PREFIX.bias`), sorted; load them
    /// with [`Checkpoint::upload_tensor`].
    pub fn plain_tensors(&self) -> &[String] {
        &self.plain
    }

    /// The layer on the host, for the host reference ([`crate::quant::dequant_reference`]):
    /// one copy of each buffer. `S` must be the file's scale type.
    pub fn to_host<S: QuantScale + LeElement>(&self) -> Result<QuantHost<S>, CheckpointError> {
        self.expect_scale::<S>()?;
        let shaped =
            |t: &RawTensor<'_>| Shaped::new(elements::<i32>(t.bytes).into_owned(), t.shape);
        let qweight = Shaped::new(
            HostQWeight::Packed(elements::<i32>(self.qweight.bytes).into_owned()),
            self.qweight.shape,
        );
        QuantHost::new(
            self.spec,
            qweight,
            self.qzeros.as_ref().map(shaped),
            Shaped::new(
                elements::<S>(self.scales.bytes).into_owned(),
                self.scales.shape,
            ),
            self.g_idx.as_ref().map(shaped),
        )
        .map_err(|source| CheckpointError::Layer {
            layer: self.prefix.clone(),
            source,
        })
    }

    pub(super) fn expect_scale<S: QuantScale>(&self) -> Result<(), CheckpointError> {
        if S::DTYPE == self.scale_dtype {
            Ok(())
        } else {
            Err(CheckpointError::Dtype {
                tensor: self.scales.name.to_string(),
                expected: S::DTYPE.name(),
                actual: format!("{:?}", self.scales.dtype),
            })
        }
    }
}

fn expect_dtype(
    t: &RawTensor<'_>,
    allowed: &[Dtype],
    expected: &'static str,
) -> Result<(), CheckpointError> {
    if allowed.contains(&t.dtype) {
        Ok(())
    } else {
        Err(CheckpointError::Dtype {
            tensor: t.name.to_string(),
            expected,
            actual: format!("{:?}", t.dtype),
        })
    }
}

/// Before K and N are known, a tensor must at least have the rank its formula has.
fn expect_rank(
    t: &RawTensor<'_>,
    rank: usize,
    formula: &'static str,
) -> Result<(), CheckpointError> {
    if t.shape.len() == rank {
        Ok(())
    } else {
        Err(CheckpointError::Rank {
            tensor: t.name.to_string(),
            formula,
            actual: t.shape.to_vec(),
        })
    }
}

fn expect_shape(t: &RawTensor<'_>, shape: &BufferShape) -> Result<(), CheckpointError> {
    if t.shape == shape.shape.as_slice() {
        Ok(())
    } else {
        Err(CheckpointError::Shape {
            tensor: t.name.to_string(),
            formula: shape.formula,
            expected: shape.shape.clone(),
            actual: t.shape.to_vec(),
        })
    }
}

/// Every zero point of a `sym` layer's stored qzeros, read as the checkpoint format says,
/// must be 8.
fn check_symmetric(z: &RawTensor<'_>, style: ZeroStyle, n: usize) -> Result<(), CheckpointError> {
    let words = elements::<i32>(z.bytes);
    let per_row = z.shape[1];
    for (i, &w) in words.iter().enumerate() {
        let real = style.load_word(w as u32) as i32;
        let (group, word) = (i / per_row, i % per_row);
        for nib in 0..8 {
            let col = word * 8 + nib;
            let zero = nibble(real, nib);
            if col < n && zero != SYMMETRIC_ZERO {
                return Err(CheckpointError::SymmetricZero {
                    tensor: z.name.to_string(),
                    group,
                    col,
                    zero,
                });
            }
        }
    }
    Ok(())
}
