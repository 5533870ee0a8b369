//! The contract's argument list, shared by both back ends: a plain tensor is one contract
//! argument; a quantized one is a logical `[K, N, G]` argument (shape only, never passed
//! to the kernel) followed by its real buffers. The runtime's checker and the kernel's
//! parameter list both follow this order, and checked-mode reports name arguments by
//! their index in it.

use crate::ir::{self, DType, Extent, Role};

pub struct ContractArg<'a> {
    /// `q`, or `w.qzeros` for a quantized argument's buffer.
    pub name: String,
    /// C identifier: `q`, `w_qzeros`.
    pub ident: String,
    pub ir: &'a ir::TensorArg,
    pub kind: ArgKind,
    pub dtype: DType,
    pub dims: Vec<Extent>,
    /// `stored[p]` is the logical dimension at physical position `p`.
    pub stored: Vec<usize>,
    /// Any strides accepted (a logical argument has no memory, so it takes any).
    pub strided: bool,
    /// Alignment of the data pointer in bytes.
    pub align: u64,
    /// What its entries may hold: a plain argument's `values(...)`, a `g_idx`'s groups.
    pub values: Option<ir::Values>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A buffer the kernel reads or writes.
    Buffer,
    /// The logical shape of a quantized argument: checked and bound, never passed.
    Logical,
}

impl ContractArg<'_> {
    pub fn role(&self) -> Role {
        self.ir.role
    }
}

/// Every contract argument of a kernel, in order.
pub fn contract_args(k: &ir::Kernel) -> Vec<ContractArg<'_>> {
    let mut out = Vec::new();
    for a in &k.args {
        match &a.quant {
            None => out.push(ContractArg {
                name: a.name.clone(),
                ident: a.name.clone(),
                ir: a,
                kind: ArgKind::Buffer,
                dtype: a.dtype,
                dims: a.dims.clone(),
                stored: a.stored.clone(),
                strided: a.strided,
                align: a.align,
                values: a.values.clone(),
            }),
            Some(q) => {
                let mut logical = a.dims.clone();
                logical.push(q.group.clone());
                out.push(ContractArg {
                    name: a.name.clone(),
                    ident: a.name.clone(),
                    ir: a,
                    kind: ArgKind::Logical,
                    dtype: a.dtype,
                    stored: (0..logical.len()).collect(),
                    dims: logical,
                    strided: true,
                    align: a.dtype.size() as u64,
                    values: None,
                });
                for b in q.buffers(&a.dims[0], &a.dims[1], a.dtype) {
                    out.push(ContractArg {
                        name: format!("{}.{}", a.name, b.part),
                        ident: format!("{}_{}", a.name, b.part),
                        ir: a,
                        kind: ArgKind::Buffer,
                        dtype: b.dtype,
                        stored: (0..b.dims.len()).collect(),
                        dims: b.dims,
                        strided: false,
                        align: buffer_align(a, b.part, b.dtype),
                        values: b.values,
                    });
                }
            }
        }
    }
    out
}

/// `align(16)` on a quantized argument holds for the buffers its tiles read in vectors:
/// 4-bit qweight and scales. (The checker makes `N` a multiple of 8, so every row of them
/// starts aligned too.)
fn buffer_align(a: &ir::TensorArg, part: &str, dtype: DType) -> u64 {
    let four_bit = a
        .quant
        .as_ref()
        .is_some_and(|q| q.format != ir::QuantFormat::Int8);
    if part == "scales" || (part == "qweight" && four_bit) {
        a.align.max(dtype.size() as u64)
    } else {
        dtype.size() as u64
    }
}

/// Whether any of the kernel's arguments has a value contract: then every entry point,
/// release ones too, takes the violation record that reports an entry outside it.
pub fn has_value_contracts(k: &ir::Kernel) -> bool {
    contract_args(k).iter().any(|a| a.values.is_some())
}

/// The contract index of each IR argument (its logical argument, for a quantized one).
pub fn contract_index(k: &ir::Kernel) -> Vec<usize> {
    let mut next = 0;
    k.args
        .iter()
        .map(|a| {
            let index = next;
            next += 1 + a
                .quant
                .as_ref()
                .map_or(0, |q| q.buffers(&a.dims[0], &a.dims[1], a.dtype).len());
            index
        })
        .collect()
}
