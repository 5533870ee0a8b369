//! Checked launches of one kernel.
//!
//! [`Kernel::launch`] runs [`check()`](crate::check()) on the arguments, then passes them in
//! the ABI order of [`crate::contract`], with the grid, block and dynamic shared memory of
//! the [`Plan`](crate::Plan).
//!
//! # Lifetimes: why no buffer is freed while a kernel uses it
//!
//! A launch is asynchronous: `launch` returns once the kernel is *enqueued*, and the
//! kernel runs later. Two mechanisms together keep every argument alive and ordered:
//!
//! 1. **The borrow, for the call.** The stub takes `&Tensor` for inputs and `&mut Tensor`
//!    for outputs ([`KernelArg`]), so while `launch` runs, no argument can be dropped,
//!    moved, or passed as an output elsewhere, and an output cannot also be an input
//!    (the borrow checker refuses `&t` and `&mut t` together).
//! 2. **cudarc's events, after it.** Each buffer is read through
//!    `DevicePtr::device_ptr` (inputs) or `DevicePtrMut::device_ptr_mut` (outputs) on the
//!    launch stream: the stream first waits on the buffer's last write event (and, for an
//!    output, its last read), and the returned guards, dropped only after the launch is
//!    enqueued, record the kernel as the buffer's latest read or write. When the buffer
//!    is dropped, its free is ordered after those events (`cuMemFreeAsync` on its own
//!    stream, which first waits on them), so the memory is released only after the
//!    kernel finishes, and a launch on another stream that reads the result waits for it.
//!
//! cudarc records and waits on these events only while the context manages stream
//! synchronisation: event tracking on (the default) and more than one stream created
//! (`CudaContext::new_stream`). With only the default stream there is nothing to order:
//! the stream runs its work in order, and frees are enqueued on it. Code that turns
//! event tracking off (`disable_event_tracking`) takes over this duty.
//!
//! Two limits are cudarc's, and the caller's to order around:
//! - cudarc keeps **one read event a buffer**, which each read records again. A buffer
//!   read by kernels on two streams, one after the other, and then freed or written on a
//!   third waits for the later read only. Make the second reader's stream wait on the
//!   first (`CudaStream::join`), or synchronise, before a buffer read on two streams is
//!   freed or written.
//! - cudarc counts the streams it made: once the last one besides the default is
//!   dropped, it stops recording and waiting on events, so a buffer dropped after that
//!   is freed without waiting for a kernel still running on the dropped stream. Keep a
//!   stream alive, or synchronise it, until the buffers its kernels use are dropped.
//!
//! A tensor made over a buffer reads its address without recording a read
//! (runtime/src/address.rs), so making one never hides a kernel's read.
//!
//! # Sync mode
//!
//! With [`Kernel::set_sync`] (or `IMA_SYNC=1`), every launch synchronises its stream and
//! turns any CUDA error into [`Error::KernelFault`] naming this kernel and its argument
//! shapes. A fault poisons the CUDA context for the rest of the process; sync mode makes
//! it point at the right kernel. (An error left by earlier work that was not launched in
//! sync mode is reported by the next synchronising launch.)

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUfunction_attribute as FuncAttr;
use cudarc::driver::{
    CudaFunction, CudaModule, CudaStream, DriverError, LaunchConfig, PushKernelArg, SyncOnDrop,
};

use crate::abi::abi_values;
use crate::arg::KernelArg;
use crate::capacity::ARGS;
use crate::check::{Checked, IndexWidth, Memo, TensorMeta, check_launch, is_sound};
use crate::checked::{CheckedMode, ViolationRecord};
use crate::contract::{KernelContract, Launch, Resident, Scalar};
use crate::device::{DeviceId, DeviceLimits};
use crate::error::Error;
use crate::record::Record;
use crate::violation::{LaunchError, Violation};
use ima_contract::EntryPoint;
use smallvec::SmallVec;

/// Dynamic shared memory every function may use without opting in.
const SHARED_DEFAULT: u32 = 48 * 1024;

/// What a launch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launched {
    Done {
        grid: [u32; 3],
        block: [u32; 3],
        index: IndexWidth,
    },
    /// The launch domain was empty and the contract says skip.
    Skipped,
}

/// `IMA_SYNC=1`, read once per process ([`crate::env_mode::switch`] has every spelling).
fn sync_from_env() -> bool {
    static SYNC: OnceLock<bool> = OnceLock::new();
    *SYNC.get_or_init(|| {
        let value = std::env::var_os("IMA_SYNC");
        crate::env_mode::read(
            "IMA_SYNC",
            value,
            crate::env_mode::switch,
            false,
            true,
            "1 or 0",
        )
    })
}

/// One entry point, with the dynamic shared memory it is currently allowed.
#[derive(Debug)]
struct Entry {
    func: CudaFunction,
    /// The limit last set, read without the lock by launches that need no more.
    shared: AtomicU32,
    /// Held while the limit is raised: two launches setting the attribute at once could
    /// leave the smaller value set with the larger recorded, and later launches between
    /// the two refused by the driver.
    raising: Mutex<()>,
    /// The occupancy API's last answer for a cooperative launch: the dynamic shared memory
    /// asked about in the high 32 bits, the blocks an SM holds plus one in the low (0:
    /// none yet). A pure function of the two, so racing launches may both store it.
    occupancy: AtomicU64,
}

impl Entry {
    /// Raises the function's dynamic shared memory limit to at least `bytes` (once per
    /// new maximum; the limit only grows).
    fn allow_shared(&self, bytes: u32, kernel: &'static str) -> Result<(), Error> {
        if bytes <= self.shared.load(Ordering::Acquire) {
            return Ok(());
        }
        let _raising = self.raising.lock().unwrap_or_else(|p| p.into_inner());
        if bytes <= self.shared.load(Ordering::Acquire) {
            return Ok(());
        }
        let value = i32::try_from(bytes)
            .map_err(|_| Error::Internal(format!("{kernel}: {bytes} bytes of shared memory")))?;
        self.func
            .set_attribute(
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                value,
            )
            .map_err(Error::driver(format!(
                "allowing {kernel} {bytes} bytes of dynamic shared memory"
            )))?;
        self.shared.store(bytes, Ordering::Release);
        Ok(())
    }

    /// Blocks of `threads` threads with `shared` bytes of dynamic shared memory that one
    /// SM holds at once, with this entry point's registers and static shared memory.
    fn blocks_per_sm(&self, threads: u32, shared: u32) -> Result<u32, DriverError> {
        let known = self.occupancy.load(Ordering::Relaxed);
        if known as u32 != 0 && (known >> 32) as u32 == shared {
            return Ok(known as u32 - 1);
        }
        let blocks = self.func.occupancy_max_active_blocks_per_multiprocessor(
            threads,
            shared as usize,
            None,
        )?;
        let packed = (u64::from(shared) << 32) | u64::from(blocks.saturating_add(1));
        self.occupancy.store(packed, Ordering::Relaxed);
        Ok(blocks)
    }
}

/// A kernel of a loaded module, with its contract and both entry points.
#[derive(Debug)]
pub struct Kernel {
    /// The generated contract, with the block the occupancy API picked where the contract
    /// leaves the block to the runtime (`block_from_occupancy`). A copy of the static
    /// one's few fields, so that a load allocates nothing that outlives the kernel.
    contract: KernelContract,
    /// Where the module was loaded: launches must be on a stream of this context.
    device: DeviceId,
    /// The device's limits for release launches: `shared_bytes` less the release entry
    /// points' static shared memory.
    limits: DeviceLimits,
    /// The same for checked launches, less the checked entry points' static shared memory
    /// (their shared-memory sink), which release launches do not pay for.
    checked_limits: DeviceLimits,
    entry_i32: Entry,
    entry_i64: Entry,
    /// `NAME_i32_checked` and `NAME_i64_checked`, where the module has them.
    checked_entries: Option<(Entry, Entry)>,
    /// The contract is consistent in itself ([`is_sound`]): launches need not check it
    /// again. (One that is not is refused at every launch, with what is wrong with it.)
    sound: bool,
    /// Clean violation records for launches in [`CheckedMode::Wait`], reused.
    records: Mutex<Vec<Record>>,
    /// The last release launch and the last checked launch that passed their checks, whose
    /// plans a launch of the same kind with the same arguments reuses (the two are
    /// checked against different limits).
    memos: [Mutex<Memo>; 2],
    /// The one record every launch in [`CheckedMode::Deferred`] shares until it reports;
    /// in [`CheckedMode::Off`], that of a kernel with value contracts.
    deferred: Mutex<Option<Record>>,
    /// Set once `deferred` holds a record: a launch that does not take it looks at it only
    /// then, so the release path of a kernel never launched deferred takes no lock.
    deferred_made: AtomicBool,
    /// An argument has a value contract: every entry point, release ones too, checks the
    /// entries it reads and reports a bad one through a record.
    checks_values: bool,
    /// A graph may start it before the kernel node ahead of it has finished: its contract
    /// has `early` arguments, and its module waits (crate::programmatic).
    starts_early: bool,
    sync: AtomicBool,
    /// A [`CheckedMode`].
    checked: AtomicU8,
}

impl Kernel {
    pub(crate) fn load(
        module: &Arc<CudaModule>,
        file: &str,
        contract: &'static KernelContract,
        device: DeviceId,
        limits: DeviceLimits,
        has_checked: bool,
        starts_early: bool,
    ) -> Result<Kernel, Error> {
        let threads: u64 = contract.block.iter().map(|&b| u64::from(b)).product();
        let fail = |entry: &str, reason: String| Error::Entry {
            kernel: contract.name,
            entry: entry.to_string(),
            file: file.to_string(),
            reason,
        };
        // An entry point and its static shared memory.
        let entry = |name: &str| -> Result<(Entry, u32), Error> {
            let fail = |reason: String| fail(name, reason);
            if name.contains('\0') {
                return Err(fail("the name contains a NUL byte".into()));
            }
            let func = module
                .load_function(name)
                .map_err(|e| fail(format!("not loaded: {e}")))?;
            let max = func
                .max_threads_per_block()
                .map_err(|e| fail(format!("{e}")))?;
            if i64::from(max) < threads as i64 {
                return Err(fail(format!(
                    "runs at most {max} threads per block, but the contract launches {:?}",
                    contract.block
                )));
            }
            if contract.block.iter().zip(limits.block).any(|(&b, l)| b > l) {
                return Err(fail(format!(
                    "the block {:?} exceeds the device's {:?}",
                    contract.block, limits.block
                )));
            }
            let used = func.shared_size_bytes().map_err(|e| fail(format!("{e}")))?;
            let entry = Entry {
                func,
                shared: AtomicU32::new(SHARED_DEFAULT),
                raising: Mutex::new(()),
                occupancy: AtomicU64::new(0),
            };
            Ok((entry, u32::try_from(used).unwrap_or(0)))
        };
        let (entry_i32, static_i32) = entry(contract.entry_i32)?;
        let (entry_i64, static_i64) = entry(contract.entry_i64)?;
        // Generated modules have checked twins of both entry points; hand-written ones may not.
        let (checked_entries, checked_static) = if has_checked {
            let (i32_checked, static_i32) = entry(&EntryPoint::checked_twin(contract.entry_i32))?;
            let (i64_checked, static_i64) = entry(&EntryPoint::checked_twin(contract.entry_i64))?;
            (Some((i32_checked, i64_checked)), static_i32.max(static_i64))
        } else {
            (None, 0)
        };
        let block = if contract.block_from_occupancy {
            occupancy_block(contract, &entry_i32.func).map_err(|e| {
                fail(
                    contract.entry_i32,
                    format!("asking the occupancy API for a block size: {e}"),
                )
            })?
        } else {
            contract.block
        };
        let contract = KernelContract { block, ..*contract };
        let less_static = |bytes: u32| DeviceLimits {
            shared_bytes: limits.shared_bytes.saturating_sub(bytes),
            ..limits
        };
        Ok(Kernel {
            device,
            limits: less_static(static_i32.max(static_i64)),
            checked_limits: less_static(checked_static),
            entry_i32,
            entry_i64,
            checked_entries,
            sound: is_sound(&contract),
            records: Mutex::new(Vec::new()),
            memos: Default::default(),
            deferred: Mutex::new(None),
            deferred_made: AtomicBool::new(false),
            checks_values: contract.checks_values(),
            starts_early,
            sync: AtomicBool::new(sync_from_env()),
            checked: AtomicU8::new(CheckedMode::from_env().as_u8()),
            contract,
        })
    }

    pub fn contract(&self) -> &KernelContract {
        &self.contract
    }

    /// A graph may start it before the kernel node ahead of it has finished (its node then
    /// has a programmatic edge, crate::graph): its contract has `early` arguments, the
    /// device is of compute capability 9.0 or later, its module was built with the wait
    /// (crate::programmatic), and `IMA_PROGRAMMATIC_LAUNCH` is not 0.
    pub fn starts_early(&self) -> bool {
        self.starts_early
    }

    /// The limits release launches are checked against: the device's, with the dynamic
    /// shared memory left beside the release entry points' static shared memory.
    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }

    /// The limits checked launches are checked against: as [`Kernel::limits`], beside the
    /// checked entry points' static shared memory.
    pub fn checked_limits(&self) -> &DeviceLimits {
        &self.checked_limits
    }

    /// The limits and the memo of a release or a checked launch.
    fn limits_and_memo(&self, checked: bool) -> (&DeviceLimits, &Mutex<Memo>) {
        if checked {
            (&self.checked_limits, &self.memos[1])
        } else {
            (&self.limits, &self.memos[0])
        }
    }

    /// Checked mode: launch the bounds-checked variant, which records an out-of-bounds
    /// access (and counts all of them) instead of performing it; the launch
    /// then waits for the kernel and returns [`Error::OutOfBounds`]. Also on when
    /// `IMA_CHECKED=1`. [`CheckedMode::Wait`] or `Off`.
    pub fn set_checked(&self, on: bool) {
        self.set_checked_mode(if on {
            CheckedMode::Wait
        } else {
            CheckedMode::Off
        });
    }

    /// Checked mode, with its way of reporting (see [`CheckedMode`]); `IMA_CHECKED=deferred`
    /// sets [`CheckedMode::Deferred`].
    pub fn set_checked_mode(&self, mode: CheckedMode) {
        self.checked.store(mode.as_u8(), Ordering::Relaxed);
    }

    pub fn checked_mode(&self) -> CheckedMode {
        CheckedMode::from_u8(self.checked.load(Ordering::Relaxed))
    }

    /// Waits for this kernel's launches in [`CheckedMode::Deferred`] (synchronising their
    /// context) and returns the first violation they made since the last report.
    pub fn check_deferred(&self) -> Result<(), Error> {
        let mut deferred = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
        match deferred.as_mut() {
            Some(record) => self.report_deferred(record),
            None => Ok(()),
        }
    }

    /// What a deferred launch left in the shared record, for a launch that does not take
    /// that record (an empty one, or one in another mode since): its to return, as the
    /// next launch's, not left until [`Kernel::check_deferred`].
    fn report_left(&self) -> Result<(), Error> {
        if !self.deferred_made.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut deferred = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
        match deferred.as_mut() {
            Some(record) if record.raised() => self.report_deferred(record),
            _ => Ok(()),
        }
    }

    /// Waits for every launch that shares the deferred `record` (synchronising their
    /// context), then reports what they found.
    fn report_deferred(&self, record: &mut Record) -> Result<(), Error> {
        record
            .stream()
            .context()
            .synchronize()
            .map_err(Error::driver(format!(
                "waiting for {}'s checked launches",
                self.contract.name
            )))?;
        self.report(record.take(), true)
    }

    /// A record read back: `Ok` when clean, else the violation it holds.
    pub(crate) fn report(
        &self,
        taken: Result<Option<ViolationRecord>, DriverError>,
        deferred: bool,
    ) -> Result<(), Error> {
        let c = &self.contract;
        let found = taken.map_err(Error::driver(format!(
            "reading {}'s violation record",
            c.name
        )))?;
        match found {
            None => Ok(()),
            Some(found) => Err(found.into_error(c, deferred)),
        }
    }

    /// Sync mode: synchronise after every launch and report any CUDA error as this
    /// kernel's [`Error::KernelFault`]. Also on when `IMA_SYNC=1`.
    pub fn set_sync(&self, on: bool) {
        self.sync.store(on, Ordering::Relaxed);
    }

    /// Checks the arguments against the contract and, if they pass, launches on `stream`.
    /// `args` are the tensor arguments in declaration order, `params` the scalar params.
    /// See the module documentation for how the arguments stay alive.
    ///
    /// Outside checked and sync modes, a launch that passes its checks makes no heap
    /// allocation of its own for a contract of up to 8 tensor arguments with 32 strides and
    /// symbols in all and 8 params (cudarc's launch builder makes its usual ones).
    pub fn launch(
        &self,
        stream: &Arc<CudaStream>,
        args: &mut [KernelArg<'_>],
        params: &[Scalar],
    ) -> Result<Launched, Error> {
        let c = &self.contract;
        let sync = self.sync.load(Ordering::Relaxed);
        // Read once: the mode picks both the limits a launch is checked against and the
        // entry point it takes.
        let mode = self.checked_mode();
        let checked = mode != CheckedMode::Off;
        // Every value the kernel receives but the record lives in `values` and `params`,
        // made before the builder borrows them and never touched while it does.
        let (plan, values, shapes) = {
            let metas: SmallVec<[TensorMeta<'_>; ARGS]> =
                args.iter().map(KernelArg::meta).collect();
            let writable = |i: usize| args.get(i).is_some_and(|a| !a.is_read_only());
            let plan = self.check(stream, writable, &metas, params, checked)?;
            // The metas borrow the arguments, which must be free to borrow mutably below.
            let values = abi_values(c, &plan, &metas, params)?;
            let shapes = if sync {
                describe(c, &metas, params)
            } else {
                String::new()
            };
            (plan, values, shapes)
        };
        if plan.skip {
            self.report_left()?;
            return Ok(Launched::Skipped);
        }
        let (func, grid) = self.entry(&plan, checked)?;

        // Each buffer's events: the stream waits for its pending work, and the guards,
        // dropped once the launch is enqueued, record the kernel's read or write.
        let guards: SmallVec<[SyncOnDrop<'_>; ARGS]> = args
            .iter_mut()
            .filter_map(|arg| match arg {
                KernelArg::Read(t) => Some(t.read_ptr(stream).1),
                KernelArg::Write(t) => Some(t.write_ptr(stream).1),
                KernelArg::Logical(_) => None,
            })
            .collect();
        // Waiting, a clean record of this launch's own: concurrent launches never share
        // one. Deferred, the kernel's shared record, held until the launch is enqueued so
        // that no report cleans it meanwhile; if an earlier launch filled it, that is
        // reported instead of launching. Release launches of a kernel with value
        // contracts report bad entries as deferred ones do.
        let mut own = None;
        let mut shared = None;
        match mode {
            CheckedMode::Off if !self.checks_values => self.report_left()?,
            CheckedMode::Wait => {
                self.report_left()?;
                own = Some(self.take_record(stream)?);
            }
            CheckedMode::Deferred | CheckedMode::Off => {
                let mut deferred = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
                match deferred.as_mut() {
                    Some(record) if record.raised() => self.report_deferred(record)?,
                    Some(_) => {}
                    None => {
                        *deferred = Some(self.new_record(stream)?);
                        self.deferred_made.store(true, Ordering::Release);
                    }
                }
                shared = Some(deferred);
            }
        }
        let record = own.as_ref().or(shared.as_ref().and_then(|d| d.as_ref()));

        let mut builder = stream.launch_builder(func);
        for v in &values {
            v.push(&mut builder);
        }
        if let Some(record) = record {
            builder.arg(record.device());
        }
        let cfg = LaunchConfig {
            grid_dim: grid.into(),
            block_dim: plan.block.into(),
            shared_mem_bytes: plan.shared_bytes,
        };
        // SAFETY: `check` verified every argument against the contract the entry points
        // were generated from, and `abi_values` lists them in its ABI order; `entry`
        // gave a cooperative launch a grid that the device holds at once.
        let launched = unsafe {
            if self.cooperative() {
                builder.launch_cooperative(cfg)
            } else {
                builder.launch(cfg)
            }
        };
        // Records the kernel's reads and writes on each buffer (see the module docs).
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
            // Sync mode attributes a bad entry to this launch, as it does a fault.
            if let Some(record) = shared.as_mut().and_then(|d| d.as_mut())
                && record.raised()
            {
                self.report(record.take(), false)?;
            }
        }
        drop(shared);
        if let Some(mut record) = own {
            // Sync mode has already waited for the kernel.
            let waited = if sync { Ok(()) } else { stream.synchronize() };
            let taken = waited.and_then(|()| record.take());
            // After a failed wait the kernel may still fill the record: not reused.
            if taken.is_ok() {
                self.give_back(record);
            }
            self.report(taken, false)?;
        }
        Ok(Launched::Done {
            grid,
            block: plan.block,
            index: plan.index,
        })
    }

    /// The entry point a launch with `plan` takes (release or checked, 32- or 64-bit
    /// indices), allowed the plan's dynamic shared memory, and the grid it launches: the
    /// plan's, or a persistent launch's blocks that the device holds at once.
    pub(crate) fn entry(
        &self,
        plan: &Checked,
        checked: bool,
    ) -> Result<(&CudaFunction, [u32; 3]), Error> {
        let entry = match (plan.index, checked) {
            (IndexWidth::I32, false) => &self.entry_i32,
            (IndexWidth::I64, false) => &self.entry_i64,
            (width, true) => {
                let entries = self
                    .checked_entries
                    .as_ref()
                    .ok_or(Error::NoCheckedVariant {
                        kernel: self.contract.name,
                    })?;
                match width {
                    IndexWidth::I32 => &entries.0,
                    IndexWidth::I64 => &entries.1,
                }
            }
        };
        entry.allow_shared(plan.shared_bytes, self.contract.name)?;
        let grid = match self.resident() {
            Resident::No => plan.grid,
            _ if plan.skip => plan.grid,
            resident => self.resident_grid(entry, plan, resident)?,
        };
        Ok((&entry.func, grid))
    }

    /// Whether the spec's blocks all run at once (`resident`, `persistent`).
    fn resident(&self) -> Resident {
        match self.contract.launch {
            Launch::Grid { resident, .. } => resident,
            Launch::Threads { .. } | Launch::Blocks { .. } => Resident::No,
        }
    }

    /// The launch is cooperative: every block at once.
    pub(crate) fn cooperative(&self) -> bool {
        self.resident() != Resident::No
    }

    /// A resident launch's grid: the plan's where the device holds it at once with `entry`'s
    /// registers and the plan's shared memory; fewer blocks for a persistent launch that
    /// asks for more; else refused. The driver would refuse the cooperative launch too,
    /// with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE and no numbers; this says which
    /// kernel, how many blocks, and why.
    fn resident_grid(
        &self,
        entry: &Entry,
        plan: &Checked,
        resident: Resident,
    ) -> Result<[u32; 3], Error> {
        let c = &self.contract;
        let threads = plan.block.iter().product::<u32>();
        // The error's text made only on an error: this runs at every launch.
        let blocks_per_sm = entry
            .blocks_per_sm(threads, plan.shared_bytes)
            .map_err(|e| {
                let what = format!(
                    "asking the occupancy API how many of {}'s blocks an SM holds",
                    c.name
                );
                Error::driver(what)(e)
            })?;
        let holds = u64::from(blocks_per_sm) * u64::from(self.limits.sms);
        let blocks: u64 = plan.grid.iter().map(|&g| u64::from(g)).product();
        if blocks <= holds {
            return Ok(plan.grid);
        }
        if resident == Resident::AtMost && holds > 0 {
            // A persistent grid has one extent (the grammar's), and holds < blocks, which
            // fits in u32.
            return Ok([holds as u32, 1, 1]);
        }
        Err(LaunchError::new(
            c,
            vec![Violation::NotResident {
                form: resident,
                grid: plan.grid,
                threads,
                shared_bytes: plan.shared_bytes,
                blocks_per_sm,
                sms: self.limits.sms,
            }],
        )
        .into())
    }

    /// Whether entry points launched in `mode` take a violation record: checked ones, and
    /// every one of a kernel with value contracts.
    pub(crate) fn takes_record(&self, mode: CheckedMode) -> bool {
        mode != CheckedMode::Off || self.checks_values
    }

    /// Sync mode is on ([`Kernel::set_sync`]).
    pub(crate) fn is_sync(&self) -> bool {
        self.sync.load(Ordering::Relaxed)
    }

    /// Checks the arguments of a launch against the contract, as [`Kernel::launch`] does,
    /// then copies every argument with a value contract to the host and checks each of
    /// its entries (and an ascending one's order): the [`Error::IndexValue`] a launch
    /// would report later, found before any kernel reads the data. Launches nothing;
    /// waits for the copies.
    pub fn validate(
        &self,
        stream: &Arc<CudaStream>,
        args: &mut [KernelArg<'_>],
        params: &[Scalar],
    ) -> Result<(), Error> {
        let c = &self.contract;
        let metas: Vec<TensorMeta<'_>> = args.iter().map(KernelArg::meta).collect();
        let (limits, _) = self.limits_and_memo(self.checked_mode() != CheckedMode::Off);
        let plan = crate::check(c, self.device, limits, &metas, params)?;
        for (i, (a, arg)) in c.args.iter().zip(args.iter()).enumerate() {
            // An input may be passed writable (`KernelArg::write`): its entries are read
            // all the same.
            let (Some(_), Some(t)) = (a.values, arg.tensor()) else {
                continue;
            };
            let meta = t.meta();
            let bytes = t.to_host_bytes(stream)?;
            let entries = crate::validate::integers(meta.dtype, &bytes).ok_or_else(|| {
                Error::Internal(format!("{}: {} holds no integers", c.name, a.name))
            })?;
            crate::validate_values(c, i, meta.shape, &entries, &plan.symbols, params)?;
        }
        Ok(())
    }

    /// A clean violation record from the pool, or a new one.
    fn take_record(&self, stream: &Arc<CudaStream>) -> Result<Record, Error> {
        let pooled = self.records.lock().map(|mut pool| pool.pop());
        if let Ok(Some(record)) = pooled {
            return Ok(record);
        }
        self.new_record(stream)
    }

    pub(crate) fn new_record(&self, stream: &Arc<CudaStream>) -> Result<Record, Error> {
        Record::new(stream).map_err(Error::driver(format!(
            "allocating {}'s violation record",
            self.contract.name
        )))
    }

    /// Returns a record to the pool if it is clean: one whose wait or cleaning failed still
    /// holds its launch's violation, which the next launch to take it would report as its
    /// own, so it is dropped.
    fn give_back(&self, record: Record) {
        if record.raised() {
            return;
        }
        if let Ok(mut pool) = self.records.lock() {
            pool.push(record);
        }
    }

    /// The checks of one launch: the stream's context, outputs passed writable (argument
    /// `i` is when `writable(i)`), and [`check()`](crate::check()); every violation
    /// together.
    pub(crate) fn check(
        &self,
        stream: &CudaStream,
        writable: impl Fn(usize) -> bool,
        metas: &[TensorMeta<'_>],
        params: &[Scalar],
        checked: bool,
    ) -> Result<Checked, LaunchError> {
        let c = &self.contract;
        let (limits, memo) = self.limits_and_memo(checked);
        // Two fields of the context: no driver call.
        let device = DeviceId::of(stream.context());
        // Empty, and so not allocated, unless a check fails.
        let mut early = Vec::new();
        if device != self.device {
            early.push(Violation::Stream {
                kernel: self.device,
                stream: device,
            });
        }
        early.extend(
            c.args
                .iter()
                .enumerate()
                .filter(|&(i, a)| a.role.writes() && !writable(i))
                .map(|(_, a)| Violation::Access { arg: a.name }),
        );
        if early.is_empty() {
            let memo = memo.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(checked) = memo.recall(device, metas, params) {
                return Ok(checked.clone());
            }
        }
        match check_launch(c, self.sound, device, limits, metas, params) {
            Ok(plan) if early.is_empty() => {
                let mut memo = memo.lock().unwrap_or_else(|p| p.into_inner());
                memo.remember(device, metas, params, &plan);
                Ok(plan)
            }
            Ok(_) => Err(LaunchError::new(c, early)),
            Err(mut e) => {
                early.append(&mut e.violations);
                e.violations = early;
                Err(e)
            }
        }
    }
}

/// The block the occupancy API picks for `func` (the 32-bit release entry point, which
/// nearly every launch takes): the size, at most `c.block[0]` (every entry point's
/// `__launch_bounds__`), that keeps the most threads resident on an SM given the
/// function's registers and static shared memory; `c.block` when it picks none.
fn occupancy_block(c: &KernelContract, func: &CudaFunction) -> Result<[u32; 3], DriverError> {
    extern "C" fn no_dynamic_shared(_block: std::ffi::c_int) -> usize {
        0
    }
    let (_, size) =
        func.occupancy_max_potential_block_size(no_dynamic_shared, 0, c.block[0], None)?;
    if size == 0 {
        return Ok(c.block);
    }
    Ok([size.min(c.block[0]), 1, 1])
}

/// `q: f16[2, 8, 128, 64], ..., scale = 0.125`, for fault reports.
pub(crate) fn describe(c: &KernelContract, metas: &[TensorMeta<'_>], params: &[Scalar]) -> String {
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
