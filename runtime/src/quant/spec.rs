//! A quantized weight's dimensions and the padded shape of each of its buffers.

use crate::contract::DType;

use super::error::QuantError;
use super::format::QuantFormat;

/// Values per packed `i32` word (4-bit formats).
pub const PACK: usize = 8;

/// `ceil(a / b)` for `b > 0`.
pub(crate) const fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// The dimensions of a logical `K x N` quantized weight: its format, `K`, `N` and the
/// group size `G`. Valid by construction: `1 <= G <= K`, and every buffer's element count
/// fits in `usize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuantSpec {
    format: QuantFormat,
    k: usize,
    n: usize,
    group: usize,
}

/// One buffer of a quantized weight: its name, element type, padded shape, and the shape's
/// formula as documented, e.g. `("qzeros", I32, [40, 512], "[ceil(K/G), ceil(N/8)]")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferShape {
    pub name: &'static str,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub formula: &'static str,
}

impl BufferShape {
    /// Elements the buffer holds (cannot overflow: [`QuantSpec::new`] checked it).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Checks a buffer that claims shape `shape` and holds `len` elements: the shape must
    /// be this one exactly (a transposed buffer of the same size is refused), and `len`
    /// its element count.
    pub fn check(&self, shape: &[usize], len: usize) -> Result<(), QuantError> {
        if shape != self.shape.as_slice() {
            return Err(QuantError::BufferShape {
                buffer: self.name,
                formula: self.formula,
                expected: self.shape.clone(),
                actual: shape.to_vec(),
            });
        }
        if len != self.numel() {
            return Err(QuantError::BufferLen {
                buffer: self.name,
                formula: self.formula,
                shape: self.shape.clone(),
                expected: self.numel(),
                actual: len,
            });
        }
        Ok(())
    }
}

impl QuantSpec {
    /// Checks `1 <= group <= k` and that `k * n` fits in `usize`. `n` may be 0.
    pub fn new(format: QuantFormat, k: usize, n: usize, group: usize) -> Result<Self, QuantError> {
        if group == 0 || group > k {
            return Err(QuantError::Group { group, k });
        }
        // Every padded buffer holds at most K*N elements (ceil(x/8) <= x, ceil(K/G) <= K),
        // so checking K*N covers them all.
        if k.checked_mul(n).is_none() {
            return Err(QuantError::Overflow {
                what: "K*N",
                rows: k,
                cols: n,
            });
        }
        Ok(QuantSpec {
            format,
            k,
            n,
            group,
        })
    }

    pub fn format(&self) -> QuantFormat {
        self.format
    }

    /// Rows of the logical weight (the reduction dimension).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Columns of the logical weight (output features).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Group size `G`.
    pub fn group(&self) -> usize {
        self.group
    }

    /// Number of groups, `ceil(K/G)`.
    pub fn groups(&self) -> usize {
        ceil_div(self.k, self.group)
    }

    /// The group of row `row` without act-order: `row / G`.
    pub fn default_group_of(&self, row: usize) -> usize {
        row / self.group
    }

    /// `qweight`'s padded shape and formula.
    pub fn qweight_shape(&self) -> BufferShape {
        let (k, n) = (self.k, self.n);
        let (shape, formula) = match self.format {
            QuantFormat::Gptq(_) => (vec![ceil_div(k, PACK), n], "[ceil(K/8), N]"),
            QuantFormat::Awq => (vec![k, ceil_div(n, PACK)], "[K, ceil(N/8)]"),
            QuantFormat::Int8 => (vec![k, n], "[K, N]"),
        };
        BufferShape {
            name: "qweight",
            dtype: self.format.qweight_dtype(),
            shape,
            formula,
        }
    }

    /// `qzeros`' padded shape and formula, for formats that have one.
    pub fn qzeros_shape(&self) -> Option<BufferShape> {
        self.format.has_zeros().then(|| BufferShape {
            name: "qzeros",
            dtype: DType::I32,
            shape: vec![self.groups(), ceil_div(self.n, PACK)],
            formula: "[ceil(K/G), ceil(N/8)]",
        })
    }

    /// `scales`' shape and formula, with the scale type's dtype.
    pub fn scales_shape(&self, dtype: DType) -> BufferShape {
        BufferShape {
            name: "scales",
            dtype,
            shape: vec![self.groups(), self.n],
            formula: "[ceil(K/G), N]",
        }
    }

    /// `g_idx`' shape and formula (GPTQ act-order).
    pub fn g_idx_shape(&self) -> BufferShape {
        BufferShape {
            name: "g_idx",
            dtype: DType::I32,
            shape: vec![self.k],
            formula: "[K]",
        }
    }

    /// Every buffer, in the order qweight, qzeros (if any), scales, g_idx (if `g_idx`).
    pub fn shapes(&self, scale_dtype: DType, g_idx: bool) -> Vec<BufferShape> {
        let mut v = vec![self.qweight_shape()];
        v.extend(self.qzeros_shape());
        v.push(self.scales_shape(scale_dtype));
        if g_idx {
            v.push(self.g_idx_shape());
        }
        v
    }
}
