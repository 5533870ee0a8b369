//! Checked mode: when launches are checked and reported ([`CheckedMode`]), the device-side
//! record a checked entry point fills when its threads made out-of-bounds accesses (and
//! every entry point of a kernel with value contracts on a bad index value), and the
//! [`OutOfBounds`] or [`IndexValue`] error made from it.
//!
//! The record's layout is `ImaRecord` in codegen/include/ima.cuh, embedded in every
//! generated CUDA file; the private `at` module reads it at its byte offsets, and a test
//! compiles the header for the host and holds the two together.

use std::sync::OnceLock;

use ima_contract::MAX_RANK;

use crate::contract::KernelContract;
use crate::error::Error;
use crate::index_value::{IndexValue, ValueFault};
pub use crate::out_of_bounds::{Access, OutOfBounds};

/// Whether launches run the bounds-checked entry points, and when a violation is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckedMode {
    /// The release entry points.
    Off,
    /// Checked; each launch waits for its kernel and returns a violation it made as
    /// [`crate::Error::OutOfBounds`]. The usual mode for finding a bug.
    Wait,
    /// Checked; launches return once enqueued, and a violation the kernel made is
    /// returned by its next launch after the faulty one finished (in whatever mode, and
    /// one with nothing to do included; it then does not launch), or by
    /// [`crate::Kernel::check_deferred`]. Costs no wait on the host, so it can stay
    /// on in a pipeline: the report is late but still names the kernel, argument and index.
    Deferred,
}

impl CheckedMode {
    /// `IMA_CHECKED=1` (or `wait`) and `IMA_CHECKED=deferred`, read once per process
    /// ([`crate::env_mode::checked_mode`] has every spelling).
    pub(crate) fn from_env() -> CheckedMode {
        static CHECKED: OnceLock<CheckedMode> = OnceLock::new();
        *CHECKED.get_or_init(|| {
            crate::env_mode::read(
                "IMA_CHECKED",
                std::env::var_os("IMA_CHECKED"),
                crate::env_mode::checked_mode,
                CheckedMode::Off,
                CheckedMode::Wait,
                "1 (or wait), deferred or 0",
            )
        })
    }

    pub(crate) fn from_u8(v: u8) -> CheckedMode {
        match v {
            1 => CheckedMode::Wait,
            2 => CheckedMode::Deferred,
            _ => CheckedMode::Off,
        }
    }

    pub(crate) fn as_u8(self) -> u8 {
        self as u8
    }
}

/// The record as the kernel leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ViolationRecord {
    count: u32,
    arg: i32,
    write: bool,
    kind: i32,
    dim: usize,
    index: Vec<i64>,
    extent: Vec<i64>,
    block: [u32; 3],
    thread: [u32; 3],
    /// For a value contract's kinds: the entry's value, and the bounds it broke.
    value: i64,
    lo: i64,
    hi: i64,
}

/// What a record says went wrong: ima.cuh's `IMA_` kinds (the layout test holds them equal).
const OUT_OF_BOUNDS: i32 = 0;
const MISALIGNED_VECTOR: i32 = 2;
const NOT_WHOLE_TILE: i32 = 3;
const BAD_VALUE: i32 = 4;
const VALUE_ORDER: i32 = 5;
const VALUE_FIRST: i32 = 6;
const VALUE_LAST: i32 = 7;
const TILE_SHAPE: i32 = 8;
const TILE_CHUNK: i32 = 9;
const CLUSTER_RANK: i32 = 10;
const BEFORE_WAIT: i32 = 11;

/// Where each field of `ImaRecord` lies, in bytes: ima.cuh's struct, read here.
/// `records_layout_matches_the_cuda_struct` compiles that struct for the host and holds
/// every offset to its `offsetof`.
mod at {
    use super::MAX_RANK;
    pub const COUNT: usize = 0;
    /// The device's claim on the record; the host never reads it.
    #[cfg(test)]
    pub const CLAIMED: usize = 4;
    pub const ARG: usize = 8;
    pub const WRITE: usize = 12;
    pub const KIND: usize = 16;
    pub const RANK: usize = 20;
    pub const DIM: usize = 24;
    pub const INDEX: usize = 32;
    pub const EXTENT: usize = INDEX + 8 * MAX_RANK;
    pub const BLOCK: usize = EXTENT + 8 * MAX_RANK;
    pub const THREAD: usize = BLOCK + 12;
    pub const VALUE: usize = THREAD + 12;
    pub const LO: usize = VALUE + 8;
    pub const HI: usize = LO + 8;
    /// The device address of the host flag the kernel raises once it has filled the
    /// record (runtime/src/record.rs).
    pub const FLAG: usize = HI + 8;
    pub const BYTES: usize = FLAG + 8;
}

impl ViolationRecord {
    pub(crate) const BYTES: usize = at::BYTES;
    pub(crate) const FLAG: usize = at::FLAG;

    /// The record, or `None` when the launch made no violation.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Self> {
        if bytes.len() < Self::BYTES {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let i32_at = |i: usize| u32_at(i) as i32;
        let i64_at = |i: usize| i64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let count = u32_at(at::COUNT);
        if count == 0 {
            return None;
        }
        let rank = (i32_at(at::RANK).clamp(0, MAX_RANK as i32)) as usize;
        Some(ViolationRecord {
            count,
            arg: i32_at(at::ARG),
            write: i32_at(at::WRITE) != 0,
            kind: i32_at(at::KIND),
            dim: i32_at(at::DIM).max(0) as usize,
            index: (0..rank).map(|d| i64_at(at::INDEX + 8 * d)).collect(),
            extent: (0..rank).map(|d| i64_at(at::EXTENT + 8 * d)).collect(),
            block: [0, 1, 2].map(|d| u32_at(at::BLOCK + 4 * d)),
            thread: [0, 1, 2].map(|d| u32_at(at::THREAD + 4 * d)),
            value: i64_at(at::VALUE),
            lo: i64_at(at::LO),
            hi: i64_at(at::HI),
        })
    }

    /// The error the record reports, its names taken from the contract: a bad entry of an
    /// index tensor, or an out-of-bounds access.
    pub(crate) fn into_error(self, c: &KernelContract, deferred: bool) -> Error {
        let fault = match self.kind {
            BAD_VALUE => ValueFault::Range {
                lo: self.lo,
                hi: self.hi,
            },
            VALUE_ORDER => ValueFault::Order { previous: self.lo },
            VALUE_FIRST => ValueFault::First { expected: self.lo },
            VALUE_LAST => ValueFault::Last {
                expected: self.hi.saturating_sub(1),
            },
            _ => {
                let mut oob = self.describe(c);
                oob.deferred = deferred;
                return Error::OutOfBounds(Box::new(oob));
            }
        };
        match usize::try_from(self.arg).ok().filter(|&a| a < c.args.len()) {
            Some(arg) => {
                let mut bad = IndexValue::new(c, arg, self.index, self.value, fault);
                bad.found_at = Some((self.block, self.thread));
                bad.count = self.count;
                bad.deferred = deferred;
                Error::IndexValue(Box::new(bad))
            }
            None => Error::Internal(format!(
                "{}: a value record names argument #{}",
                c.name, self.arg
            )),
        }
    }

    /// Names the argument and dimensions from the contract.
    fn describe(&self, c: &KernelContract) -> OutOfBounds {
        // Arguments by contract index; shared arrays as -1 - n.
        let (what, dims): (String, Vec<&'static str>) = if self.arg >= 0 {
            match c.args.get(self.arg as usize) {
                Some(a) => (a.name.to_string(), a.dims.iter().map(|d| d.text).collect()),
                None => (format!("argument #{}", self.arg), Vec::new()),
            }
        } else {
            match c.shared.get((-1 - self.arg) as usize) {
                Some(s) => (
                    format!("shared {}", s.name),
                    s.dims.iter().map(|d| d.text).collect(),
                ),
                None => (format!("shared array #{}", -1 - self.arg), Vec::new()),
            }
        };
        OutOfBounds {
            kernel: c.name,
            signature: c.signature,
            arg: what,
            access: match (self.kind, self.write) {
                (MISALIGNED_VECTOR, _) => Access::MisalignedVector,
                (NOT_WHOLE_TILE, _) => Access::NotWholeTile,
                (TILE_SHAPE, _) => Access::TileShape,
                (TILE_CHUNK, _) => Access::TileChunk,
                (CLUSTER_RANK, _) => Access::ClusterRank,
                (BEFORE_WAIT, write) => Access::BeforeWait { write },
                (OUT_OF_BOUNDS, true) => Access::Write,
                _ => Access::Read,
            },
            dims: (0..self.index.len())
                .map(|d| dims.get(d).copied().unwrap_or("?"))
                .collect(),
            index: self.index.clone(),
            extent: self.extent.clone(),
            failed_dim: self.dim,
            block: self.block,
            thread: self.thread,
            count: self.count,
            deferred: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        count: u32,
        arg: i32,
        write: i32,
        kind: i32,
        index: &[i64],
        extent: &[i64],
        dim: i32,
    ) -> Vec<u8> {
        let mut b = vec![0u8; ViolationRecord::BYTES];
        let put32 =
            |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put32(&mut b, 0, count);
        put32(&mut b, 4, 1);
        put32(&mut b, 8, arg as u32);
        put32(&mut b, 12, write as u32);
        put32(&mut b, 16, kind as u32);
        put32(&mut b, 20, index.len() as u32);
        put32(&mut b, 24, dim as u32);
        for (d, (&i, &e)) in index.iter().zip(extent).enumerate() {
            b[32 + 8 * d..40 + 8 * d].copy_from_slice(&i.to_le_bytes());
            b[96 + 8 * d..104 + 8 * d].copy_from_slice(&e.to_le_bytes());
        }
        put32(&mut b, 160, 3);
        put32(&mut b, 172, 17);
        b
    }

    /// `lookup(table: f16[V, D], ids: i32[T] values(0 .. V))`.
    static LOOKUP: KernelContract = {
        use crate::contract::*;
        const V: Expr = Expr::Sym(0);
        KernelContract {
            name: "lookup",
            signature: "lookup(table: f16[V,D], ids: i32[T])",
            location: "specs/index.ima:7",
            symbols: &[
                Symbol {
                    name: "V",
                    bound_by: Binding { arg: 0, dim: 0 },
                },
                Symbol {
                    name: "D",
                    bound_by: Binding { arg: 0, dim: 1 },
                },
                Symbol {
                    name: "T",
                    bound_by: Binding { arg: 1, dim: 0 },
                },
            ],
            args: &[
                TensorArg {
                    name: "table",
                    role: Role::In,
                    dtype: DType::F16,
                    dims: &[
                        Extent { text: "V", expr: V },
                        Extent {
                            text: "D",
                            expr: Expr::Sym(1),
                        },
                    ],
                    stored: &[0, 1],
                    strided: false,
                    early: false,
                    align: 2,
                    values: None,
                    tma: None,
                },
                TensorArg {
                    name: "ids",
                    role: Role::In,
                    dtype: DType::I32,
                    dims: &[Extent {
                        text: "T",
                        expr: Expr::Sym(2),
                    }],
                    stored: &[0],
                    strided: false,
                    early: false,
                    align: 4,
                    values: Some(ValueContract {
                        text: "0 .. V",
                        lo: Extent {
                            text: "0",
                            expr: Expr::Const(0),
                        },
                        hi: Extent { text: "V", expr: V },
                        sentinel: None,
                        ascending: false,
                    }),
                    tma: None,
                },
            ],
            params: &[],
            constraints: &[],
            shared: &[],
            launch: Launch::Grid {
                dims: &[Expr::Const(1)],
                resident: crate::contract::Resident::No,
                cluster: None,
            },
            empty: EmptyPolicy::Skip,
            block: [32, 1, 1],
            block_from_occupancy: false,
            entry_i32: "lookup_i32",
            entry_i64: "lookup_i64",
        }
    };

    #[test]
    fn a_value_record_is_an_index_value_error_with_the_bound_that_was_broken() {
        let mut bytes = record(3, 1, 0, BAD_VALUE, &[17], &[40], 0);
        for (field, v) in [(at::VALUE, 50_000i64), (at::LO, 0), (at::HI, 32_000)] {
            bytes[field..field + 8].copy_from_slice(&v.to_le_bytes());
        }
        let r = ViolationRecord::parse(&bytes).unwrap();
        let Error::IndexValue(v) = r.into_error(&LOOKUP, true) else {
            panic!("not an IndexValue")
        };
        assert_eq!(
            (v.position.as_slice(), v.value, v.fault, v.count, v.deferred),
            (
                &[17i64][..],
                50_000,
                ValueFault::Range { lo: 0, hi: 32_000 },
                3,
                true
            )
        );
        assert_eq!(
            v.to_string(),
            "lookup: ids[17] = 50000, expected < V = 32000 (bound by table.shape[0]); \
             values(0 .. V) (block (3,0,0), thread (17,0,0)); 1 of 3 bad entries in the \
             launches since the last report (deferred)\n  in lookup(table: f16[V,D], ids: i32[T]) \
             at specs/index.ima:7"
        );
    }

    /// `ImaRecord` as ima.cuh declares it (every generated module embeds the header),
    /// compiled for the host (x86-64 lays out these fields as sm_90 does): each field's
    /// `offsetof` is where `at` reads it, and each kind the value this file gives it.
    #[test]
    fn records_layout_matches_the_cuda_struct() {
        let include = concat!(env!("CARGO_MANIFEST_DIR"), "/../codegen/include");
        let fields = [
            ("count", at::COUNT),
            ("claimed", at::CLAIMED),
            ("arg", at::ARG),
            ("write", at::WRITE),
            ("kind", at::KIND),
            ("rank", at::RANK),
            ("dim", at::DIM),
            ("index", at::INDEX),
            ("extent", at::EXTENT),
            ("block", at::BLOCK),
            ("thread", at::THREAD),
            ("value", at::VALUE),
            ("lo", at::LO),
            ("hi", at::HI),
            ("flag", at::FLAG),
        ];
        let kinds = [
            ("IMA_OUT_OF_BOUNDS", OUT_OF_BOUNDS),
            ("IMA_MISALIGNED_VECTOR", MISALIGNED_VECTOR),
            ("IMA_NOT_WHOLE_TILE", NOT_WHOLE_TILE),
            ("IMA_BAD_VALUE", BAD_VALUE),
            ("IMA_VALUE_ORDER", VALUE_ORDER),
            ("IMA_VALUE_FIRST", VALUE_FIRST),
            ("IMA_VALUE_LAST", VALUE_LAST),
            ("IMA_TILE_SHAPE", TILE_SHAPE),
            ("IMA_TILE_CHUNK", TILE_CHUNK),
            ("IMA_CLUSTER_RANK", CLUSTER_RANK),
            ("IMA_BEFORE_WAIT", BEFORE_WAIT),
        ];
        let mut src = String::from(
            "#include \"host_shim.h\"\n#include \"ima.cuh\"\n#include <cstddef>\n\
             #include <cstdio>\nint main() {\n",
        );
        for (f, _) in fields {
            src.push_str(&format!(
                "    std::printf(\"%zu\\n\", offsetof(ImaRecord, {f}));\n"
            ));
        }
        src.push_str("    std::printf(\"%zu\\n\", sizeof(ImaRecord));\n");
        for (k, _) in kinds {
            src.push_str(&format!("    std::printf(\"%d\\n\", int({k}));\n"));
        }
        src.push_str("}\n");
        let dir = tempfile::tempdir().unwrap();
        let (cpp, exe) = (dir.path().join("record.cpp"), dir.path().join("record"));
        std::fs::write(&cpp, src).unwrap();
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let built = std::process::Command::new(&cxx)
            .args(["-std=c++17", "-Wno-unknown-pragmas", "-I", include, "-o"])
            .arg(&exe)
            .arg(&cpp)
            .output()
            .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let out = std::process::Command::new(&exe).output().unwrap().stdout;
        let got: Vec<i64> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        let want: Vec<i64> = fields
            .iter()
            .map(|&(_, o)| o as i64)
            .chain([at::BYTES as i64])
            .chain(kinds.iter().map(|&(_, k)| i64::from(k)))
            .collect();
        let names: Vec<String> = fields
            .iter()
            .map(|&(f, _)| format!("offsetof(ImaRecord, {f})"))
            .chain(["sizeof(ImaRecord)".to_string()])
            .chain(kinds.iter().map(|&(k, _)| k.to_string()))
            .collect();
        assert_eq!(got.len(), want.len());
        for ((name, g), w) in names.iter().zip(&got).zip(&want) {
            assert_eq!(g, w, "{name}: {g} in ima.cuh, {w} in checked.rs");
        }
    }

    #[test]
    fn an_empty_record_means_no_violation() {
        assert_eq!(ViolationRecord::parse(&[0; ViolationRecord::BYTES]), None);
    }

    #[test]
    fn a_cluster_rank_record_names_the_shared_array_the_rank_and_the_cluster() {
        use crate::contract::{DType, Expr, Extent, SharedArray};
        let c = KernelContract {
            shared: &[SharedArray {
                name: "part",
                dtype: DType::F32,
                dims: &[Extent {
                    text: "256",
                    expr: Expr::Const(256),
                }],
                align: 16,
            }],
            ..LOOKUP
        };
        // Block 0 of a cluster of 4 asked for block 5's `part`.
        let bytes = record(1, -1, 0, CLUSTER_RANK, &[5], &[4], 0);
        let oob = ViolationRecord::parse(&bytes).unwrap().describe(&c);
        assert_eq!(
            (oob.access, oob.arg.as_str()),
            (Access::ClusterRank, "shared part")
        );
        let msg = oob.to_string();
        assert!(
            msg.starts_with(
                "lookup: shared part of block 5 of the cluster: the cluster has 4 blocks (ranks 0 to 3)"
            ),
            "{msg}"
        );
    }

    #[test]
    fn a_record_names_the_kernel_argument_dimension_and_thread() {
        let bytes = record(212, 1, 0, OUT_OF_BOUNDS, &[1, 0, 45, 0], &[2, 3, 45, 64], 2);
        let r = ViolationRecord::parse(&bytes).unwrap();
        assert_eq!(
            (r.count, r.arg, r.dim, r.block, r.thread),
            (212, 1, 2, [3, 0, 0], [17, 0, 0])
        );
        assert_eq!(r.index, vec![1, 0, 45, 0]);
        assert_eq!(r.extent, vec![2, 3, 45, 64]);
    }
}
