//! Fuzzing a module on a GPU: compile once, load each kernel with its built contract,
//! launch the checked variant on every case, and collect findings.

use std::fmt;
use std::sync::Arc;

use ima_dsl::ir;
use ima_runtime::cudarc::driver::CudaStream;
use ima_runtime::{Error, KernelContract, Launched, Module};
use indicatif::{ProgressBar, ProgressStyle};

use crate::contract;
use crate::mutate::Mutation;
use crate::rng::Rng;
use crate::shapes::{self, Case, Config};
use crate::tensors;

/// What `imac fuzz` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this kernel.
    pub kernel: Option<String>,
    /// Cases per kernel.
    pub cases: usize,
    /// `None`: one from the clock, printed so the run replays.
    pub seed: Option<u64>,
    /// Bytes of all tensors of one case together.
    pub max_bytes: u64,
    /// Mutate each case and expect the checker to refuse it.
    pub negative: bool,
    /// Draw a progress bar on stderr (where it is a terminal).
    pub progress: bool,
    /// The GPU's ordinal.
    pub device: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            kernel: None,
            cases: 256,
            seed: None,
            max_bytes: shapes::DEFAULT_MAX_BYTES,
            negative: false,
            progress: false,
            device: 0,
        }
    }
}

/// What went wrong in one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Checked mode caught an out-of-bounds access: a bug in the kernel.
    OutOfBounds,
    /// A kernel reported an index value outside its contract in a valid case (a bug in
    /// the kernel or the fuzzer), or host validation missed a planted one.
    IndexValue,
    /// The checker refused a case that should pass: a bug in the fuzzer or the checker.
    Refused,
    /// `--negative`: a mutated case launched, or was refused for another reason.
    Accepted,
    /// A CUDA error (launch, synchronisation, allocation).
    Cuda,
    /// The fuzzer could not build the case's tensors: a bug in the fuzzer.
    Setup,
}

/// One failing case, with all it takes to replay it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kernel: String,
    pub kind: Kind,
    pub seed: u64,
    /// Index among the kernel's cases.
    pub case: usize,
    /// The symbol values, params and why the case was chosen.
    pub values: String,
    /// The tensors' shapes and views (and the mutation, in negative mode).
    pub tensors: String,
    pub message: String,
    /// `imac fuzz SPEC --kernel K --seed S --cases N [--max-bytes B] [--negative]`.
    pub replay: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "finding ({:?}) in {}, case {}, seed {}:",
            self.kind, self.kernel, self.case, self.seed
        )?;
        writeln!(f, "  values: {}", self.values)?;
        writeln!(f, "  tensors: {}", self.tensors)?;
        for line in self.message.lines() {
            writeln!(f, "  {line}")?;
        }
        write!(f, "  replay: {}", self.replay)
    }
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub seed: u64,
    /// Cases launched (or offered to the checker), over all kernels.
    pub cases: usize,
    /// Of `cases`, those that had nothing to assert: under `negative`, a kernel with no
    /// argument to mutate; or a case whose value ranges are empty, so nothing launched.
    pub unasserted: usize,
    pub findings: Vec<Finding>,
    /// What could not be generated or run (a skipped case past 2^31 elements, ...).
    pub notes: Vec<String>,
}

/// A seed from the clock.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    Rng::new(nanos ^ u64::from(std::process::id())).next_u64()
}

/// Fuzzes every kernel of `m` (or `opts.kernel`) on `opts.device`, its CUDA C being
/// `cuda` (what `ima_codegen::cuda::generate` made of `m`). `on_finding` sees each
/// finding as it happens. `Err` only when nothing could start: no GPU, the module does
/// not compile, no such kernel.
pub fn fuzz(
    m: &ir::Module,
    cuda: &str,
    opts: &Options,
    seed: u64,
    on_finding: &mut dyn FnMut(&Finding),
) -> Result<Report, String> {
    let named = m.kernels_named(opts.kernel.as_deref())?;
    let contracts: Vec<&'static KernelContract> = contract::build_all(m)
        .into_iter()
        .filter(|c| named.iter().any(|k| k.name == c.name))
        .collect();
    let ctx = ima_runtime::context(opts.device).map_err(|e| format!("no CUDA device: {e}"))?;
    let stream = ctx
        .new_stream()
        .map_err(|e| format!("cannot create a stream: {e}"))?;
    let module = Module::compile(&ctx, &m.file, cuda).map_err(|e| e.to_string())?;
    let cfg = Config::new(opts.max_bytes, *module.limits());

    let mut report = Report {
        seed,
        ..Report::default()
    };
    // Each kernel as it launches: its contract then has the block size the occupancy API
    // picked, whose edges (block ± 1 elements) the cases probe.
    let kernels = contracts
        .iter()
        .map(|c| module.kernel(c).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let plans: Vec<_> = kernels
        .iter()
        .map(|k| shapes::cases(k.contract(), &cfg, seed, opts.cases))
        .collect();
    let total: usize = plans.iter().map(|p| p.cases.len()).sum();
    let bar = if opts.progress {
        ProgressBar::new(total as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix:>24} [{bar:40}] {pos}/{len} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    'kernels: for (kernel, plan) in kernels.iter().zip(plans) {
        let c = kernel.contract();
        report.notes.extend(plan.notes);
        kernel.set_checked(true);
        bar.set_prefix(c.name);
        for (i, case) in plan.cases.iter().enumerate() {
            let replay = replay(m, c.name, seed, opts);
            let finding = |kind, tensors: String, message: String| Finding {
                kernel: c.name.to_string(),
                kind,
                seed,
                case: i,
                values: format!("{} [{}]", case.describe(c), case.label),
                tensors,
                message,
                replay: replay.clone(),
            };
            let outcome = one_case(&stream, c, kernel, case, seed, i, opts.negative);
            report.cases += 1;
            bar.inc(1);
            let (kind, tensors, message) = match outcome {
                Ok(true) => continue,
                Ok(false) => {
                    report.unasserted += 1;
                    continue;
                }
                Err(failure) => failure,
            };
            let sticky = kind == Kind::Cuda;
            let f = finding(kind, tensors, message);
            bar.suspend(|| on_finding(&f));
            report.findings.push(f);
            bar.set_message(format!("{} finding(s)", report.findings.len()));
            // A CUDA error may leave the context unusable: stop if it did.
            if sticky && (stream.synchronize().is_err() || ctx.check_err().is_err()) {
                report.notes.push(format!(
                    "stopped after {}'s case {i}: the CUDA context is unusable",
                    c.name
                ));
                break 'kernels;
            }
        }
    }
    bar.finish_and_clear();
    Ok(report)
}

/// The command that replays a kernel's cases.
fn replay(m: &ir::Module, kernel: &str, seed: u64, opts: &Options) -> String {
    let mut s = format!(
        "imac fuzz {} --kernel {kernel} --seed {seed} --cases {}",
        m.file, opts.cases
    );
    if opts.max_bytes != shapes::DEFAULT_MAX_BYTES {
        s.push_str(&format!(" --max-bytes {}", opts.max_bytes));
    }
    if opts.negative {
        s.push_str(" --negative");
    }
    s
}

type Failure = (Kind, String, String);

/// Runs case `i`: `Ok(true)` when it passed, `Ok(false)` when it had nothing to assert
/// (see `Report::unasserted`), else the finding's kind, the tensors and what happened.
fn one_case(
    stream: &Arc<CudaStream>,
    c: &KernelContract,
    kernel: &ima_runtime::Kernel,
    case: &Case,
    seed: u64,
    i: usize,
    negative: bool,
) -> Result<bool, Failure> {
    let mut rng = Rng::for_case(seed, c.name, i, "tensors");
    let mutation = if negative {
        match Mutation::choose(c, case, &mut rng) {
            Some(m) => Some(m),
            // Nothing to mutate in this kernel: nothing to assert.
            None => return Ok(false),
        }
    } else {
        None
    };
    let built = tensors::build(stream, c, case, &mut rng, mutation.as_ref()).map_err(|e| {
        let kind = if matches!(e, Error::Driver { .. }) {
            Kind::Cuda
        } else {
            Kind::Setup
        };
        (kind, String::new(), format!("building the tensors: {e}"))
    })?;
    // No entries keep a value contract in this case (an empty range): nothing to launch.
    let Some(mut tensors) = built else {
        return Ok(false);
    };
    let mut described = tensors.describe(c);
    if let Some(m) = &mutation {
        described = format!("mutated {}; {described}", m.describe(c));
    }
    if let Some(planted) = tensors.planted.clone() {
        // Host validation must name the planted entry before any kernel reads it.
        let validated = {
            let mut args = tensors.kernel_args(c);
            kernel.validate(stream, &mut args, &case.params)
        };
        let name = c.args[planted.arg].name;
        match validated {
            Err(Error::IndexValue(v)) if v.arg == name && v.position == planted.position => {}
            other => {
                return Err((
                    Kind::IndexValue,
                    described,
                    format!(
                        "validate did not name {name}{:?} = {}: {other:?}",
                        planted.position, planted.value
                    ),
                ));
            }
        }
    }
    let result = {
        let mut args = tensors.kernel_args(c);
        kernel.launch(stream, &mut args, &case.params)
    };
    let synced = stream.synchronize();
    let fail = |kind, message: String| Err((kind, described.clone(), message));
    match (&mutation, result) {
        (_, Err(e @ Error::Driver { .. } | e @ Error::KernelFault { .. })) => {
            fail(Kind::Cuda, e.to_string())
        }
        (_, Err(Error::OutOfBounds(o))) => fail(Kind::OutOfBounds, o.to_string()),
        // The kernel read the planted entry and reported it instead of using it.
        (Some(Mutation::Value { arg, .. }), Err(Error::IndexValue(v)))
            if v.arg == c.args[*arg].name =>
        {
            Ok(true)
        }
        (_, Err(Error::IndexValue(v))) => fail(Kind::IndexValue, v.to_string()),
        // The kernel never read the planted entry: nothing to report, nothing touched.
        (Some(Mutation::Value { .. }), Ok(_)) => match synced {
            Ok(()) => Ok(true),
            Err(e) => fail(Kind::Cuda, format!("synchronising: {e}")),
        },
        (None, Err(Error::Launch(e))) => fail(
            Kind::Refused,
            format!("the checker refused a valid case (a bug in the fuzzer or the checker):\n{e}"),
        ),
        (None, Err(e)) => fail(Kind::Cuda, e.to_string()),
        (None, Ok(Launched::Skipped)) => fail(
            Kind::Refused,
            "the launch was skipped, but no extent is 0".into(),
        ),
        (None, Ok(Launched::Done { .. })) => match synced {
            Ok(()) => Ok(true),
            Err(e) => fail(Kind::Cuda, format!("synchronising: {e}")),
        },
        (Some(m), Err(Error::Launch(e))) if e.violations.iter().any(|v| m.expects(c, v)) => {
            Ok(true)
        }
        (Some(m), Err(Error::Launch(e))) => fail(
            Kind::Accepted,
            format!(
                "refused, but not for the mutation ({}):\n{e}",
                m.describe(c)
            ),
        ),
        (Some(m), Err(e)) => fail(Kind::Cuda, format!("{}: {e}", m.describe(c))),
        (Some(m), Ok(launched)) => fail(
            Kind::Accepted,
            format!(
                "the checker accepted a mutated case ({}): {launched:?}",
                m.describe(c)
            ),
        ),
    }
}

/// `imac fuzz`: prints the seed, each finding with its seed, the notes and a summary;
/// `true` when there was no finding.
pub fn run(m: &ir::Module, cuda: &str, opts: &Options) -> bool {
    let seed = opts.seed.unwrap_or_else(fresh_seed);
    println!(
        "imac fuzz {}: seed {seed}, {} case(s) per kernel{}",
        m.file,
        opts.cases,
        if opts.negative { ", negative" } else { "" }
    );
    let mut print = |f: &Finding| eprintln!("{f}");
    let report = match fuzz(m, cuda, opts, seed, &mut print) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    for note in &report.notes {
        println!("note: {note}");
    }
    println!(
        "{} case(s) ({} with nothing to assert), {} finding(s), seed {seed}",
        report.cases,
        report.unasserted,
        report.findings.len()
    );
    report.findings.is_empty()
}
