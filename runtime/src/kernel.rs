//! Checked launches of one kernel.
//!
//! [`Kernel::launch`] runs [`check`] on the arguments, then passes them in the ABI order of
//! [`crate::contract`]. Each buffer is borrowed through cudarc's `DevicePtr`/`DevicePtrMut`
//! for the launch: the stream first waits for the buffer's pending writes (and, for an
//! output, reads), and the guards, dropped only after the launch is enqueued, record the
//! kernel's read or write. A buffer dropped later waits for those events, so it cannot be
//! freed or overwritten while the kernel still uses it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use cudarc::driver::{
    CudaFunction, CudaModule, CudaStream, DevicePtr, DevicePtrMut, LaunchArgs, LaunchConfig,
    PushKernelArg, SyncOnDrop, sys::CUdeviceptr,
};

use crate::check::{DeviceId, IndexWidth, TensorMeta, check};
use crate::contract::{KernelContract, Scalar};
use crate::error::Error;
use crate::tensor::{Element, Tensor};
use crate::violation::{LaunchError, Violation};

/// A tensor whatever its element type: what a launch needs of it.
pub trait DeviceTensor {
    fn meta(&self) -> TensorMeta<'_>;
    /// The buffer's device address for reading on `stream`; keep the guard until the
    /// launch is enqueued.
    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>);
    /// The buffer's device address for writing on `stream`; keep the guard until the
    /// launch is enqueued.
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>);
}

impl<T: Element> DeviceTensor for Tensor<T> {
    fn meta(&self) -> TensorMeta<'_> {
        Tensor::meta(self)
    }

    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice().device_ptr(stream)
    }

    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice_mut().device_ptr_mut(stream)
    }
}

/// One tensor argument of a launch, borrowed as the kernel uses it.
pub enum KernelArg<'a> {
    Read(&'a dyn DeviceTensor),
    Write(&'a mut dyn DeviceTensor),
}

impl<'a> KernelArg<'a> {
    pub fn read<T: Element>(t: &'a Tensor<T>) -> Self {
        KernelArg::Read(t)
    }

    pub fn write<T: Element>(t: &'a mut Tensor<T>) -> Self {
        KernelArg::Write(t)
    }

    fn meta(&self) -> TensorMeta<'_> {
        match self {
            KernelArg::Read(t) => t.meta(),
            KernelArg::Write(t) => t.meta(),
        }
    }
}

/// What a launch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launched {
    Done {
        grid: u32,
        block: u32,
        index: IndexWidth,
    },
    /// The launch domain was empty and the contract says skip.
    Skipped,
}

/// `IMA_SYNC=1`, read once per process.
fn sync_from_env() -> bool {
    static SYNC: OnceLock<bool> = OnceLock::new();
    *SYNC.get_or_init(|| std::env::var_os("IMA_SYNC").is_some_and(|v| v == "1"))
}

/// A kernel of a loaded module, with its contract and both entry points.
#[derive(Debug)]
pub struct Kernel {
    contract: &'static KernelContract,
    entry_i32: CudaFunction,
    entry_i64: CudaFunction,
    sync: AtomicBool,
}

impl Kernel {
    pub(crate) fn load(
        module: &Arc<CudaModule>,
        file: &str,
        contract: &'static KernelContract,
    ) -> Result<Kernel, Error> {
        let entry = |name: &'static str| {
            let fail = |reason: String| Error::Entry {
                kernel: contract.name,
                entry: name,
                file: file.to_string(),
                reason,
            };
            if name.contains('\0') {
                return Err(fail("the name contains a NUL byte".into()));
            }
            let f = module
                .load_function(name)
                .map_err(|e| fail(format!("not loaded: {e}")))?;
            let max = f
                .max_threads_per_block()
                .map_err(|e| fail(format!("{e}")))?;
            if i64::from(max) < i64::from(contract.block) {
                return Err(fail(format!(
                    "runs at most {max} threads per block, but the contract launches {}",
                    contract.block
                )));
            }
            Ok(f)
        };
        Ok(Kernel {
            contract,
            entry_i32: entry(contract.entry_i32)?,
            entry_i64: entry(contract.entry_i64)?,
            sync: AtomicBool::new(sync_from_env()),
        })
    }

    pub fn contract(&self) -> &'static KernelContract {
        self.contract
    }

    /// Sync mode: synchronise after every launch and report any CUDA error as this
    /// kernel's [`Error::KernelFault`]. Also on when `IMA_SYNC=1`.
    pub fn set_sync(&self, on: bool) {
        self.sync.store(on, Ordering::Relaxed);
    }

    /// Checks the arguments against the contract and, if they pass, launches on `stream`.
    /// `args` are the tensor arguments in declaration order, `params` the scalar params.
    pub fn launch(
        &self,
        stream: &Arc<CudaStream>,
        args: &mut [KernelArg<'_>],
        params: &[Scalar],
    ) -> Result<Launched, Error> {
        let c = self.contract;
        let sync = self.sync.load(Ordering::Relaxed);
        let (plan, offsets, shapes) = {
            let metas: Vec<TensorMeta<'_>> = args.iter().map(KernelArg::meta).collect();
            let mut access: Vec<Violation> = c
                .args
                .iter()
                .zip(args.iter())
                .filter(|(a, k)| a.role.writes() && matches!(k, KernelArg::Read(_)))
                .map(|(a, _)| Violation::Access { arg: a.name })
                .collect();
            let plan = match check(c, DeviceId::of(stream.context()), &metas, params) {
                Ok(plan) if access.is_empty() => plan,
                Ok(_) => return Err(LaunchError::new(c, access).into()),
                Err(mut e) => {
                    access.append(&mut e.violations);
                    e.violations = access;
                    return Err(e.into());
                }
            };
            let offsets: Vec<u64> = metas
                .iter()
                .map(|m| (m.offset * m.dtype.size()) as u64)
                .collect();
            let shapes = if sync {
                describe(c, &metas, params)
            } else {
                String::new()
            };
            (plan, offsets, shapes)
        };
        if plan.skip {
            return Ok(Launched::Skipped);
        }

        // Every value the kernel receives lives in these vectors, made before the builder
        // borrows them and never touched while it does.
        let wide: Vec<i64> = plan
            .strides
            .iter()
            .flatten()
            .chain(&plan.symbols)
            .copied()
            .collect();
        let narrow: Vec<i32> = match plan.index {
            IndexWidth::I64 => Vec::new(),
            IndexWidth::I32 => wide
                .iter()
                .map(|&x| i32::try_from(x))
                .collect::<Result<_, _>>()
                .map_err(|_| Error::Internal(format!("{}: a 32-bit index overflowed", c.name)))?,
        };
        let mut guards = Vec::with_capacity(args.len());
        let mut pointers = Vec::with_capacity(args.len());
        for (arg, offset) in args.iter_mut().zip(&offsets) {
            let (ptr, guard) = match arg {
                KernelArg::Read(t) => t.read_ptr(stream),
                KernelArg::Write(t) => t.write_ptr(stream),
            };
            pointers.push(ptr + offset);
            guards.push(guard);
        }

        let func = match plan.index {
            IndexWidth::I32 => &self.entry_i32,
            IndexWidth::I64 => &self.entry_i64,
        };
        let mut builder = stream.launch_builder(func);
        let mut k = 0..wide.len();
        for (ptr, strides) in pointers.iter().zip(&plan.strides) {
            builder.arg(ptr);
            for i in k.by_ref().take(strides.len()) {
                push_index(&mut builder, plan.index, &narrow, &wide, i);
            }
        }
        for i in k {
            push_index(&mut builder, plan.index, &narrow, &wide, i);
        }
        for p in params {
            match p {
                Scalar::F32(v) => builder.arg(v),
                Scalar::F64(v) => builder.arg(v),
                Scalar::I32(v) => builder.arg(v),
                Scalar::U32(v) => builder.arg(v),
                Scalar::I64(v) => builder.arg(v),
                Scalar::U64(v) => builder.arg(v),
            };
        }
        let config = LaunchConfig {
            grid_dim: (plan.grid, 1, 1),
            block_dim: (plan.block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `check` verified every argument against the contract the entry points
        // were generated from, and the values are pushed in its ABI order.
        let launched = unsafe { builder.launch(config) };
        drop(guards);
        let fault = |error| Error::KernelFault {
            kernel: c.name,
            shapes: shapes.clone(),
            error,
        };
        match launched {
            Err(e) if sync => return Err(fault(e)),
            Err(e) => return Err(Error::driver(format!("launching {}", c.name))(e)),
            Ok(_) => {}
        }
        if sync {
            stream.synchronize().map_err(fault)?;
            stream.context().check_err().map_err(fault)?;
        }
        Ok(Launched::Done {
            grid: plan.grid,
            block: plan.block,
            index: plan.index,
        })
    }
}

/// Pushes index value `i` (a stride or a symbol) in the launch's index type.
fn push_index<'a>(
    builder: &mut LaunchArgs<'a>,
    width: IndexWidth,
    narrow: &'a [i32],
    wide: &'a [i64],
    i: usize,
) {
    match width {
        IndexWidth::I32 => builder.arg(&narrow[i]),
        IndexWidth::I64 => builder.arg(&wide[i]),
    };
}

/// `q: f16[2, 8, 128, 64], ..., scale = 0.125`, for fault reports.
fn describe(c: &KernelContract, metas: &[TensorMeta<'_>], params: &[Scalar]) -> String {
    let tensors = c
        .args
        .iter()
        .zip(metas)
        .map(|(a, m)| format!("{}: {}{:?}", a.name, m.dtype, m.shape));
    let scalars = c
        .params
        .iter()
        .zip(params)
        .map(|(p, v)| format!("{} = {v}", p.name));
    tensors.chain(scalars).collect::<Vec<_>>().join(", ")
}
