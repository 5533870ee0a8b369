//! `imac`: the kernel-spec compiler's command line.

mod color;
mod images;
mod nvrtc_log;
mod waits;

use clap::{Parser, Subcommand};
use color::ColorWhen;
use ima_codegen::package::{self, CrateOptions, RuntimeDep};
use ima_codegen::vendored;
use ima_dsl::{Source, ir};
use images::ImageError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "imac",
    version,
    about = "Compiles .ima kernel specs to guarded CUDA C and checking Rust launch stubs"
)]
struct Cli {
    /// Colour the diagnostics: `auto` only on a terminal, and not with `NO_COLOR` set.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t)]
    color: ColorWhen,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a spec into a Rust crate holding its CUDA C, launch stubs and PTX.
    Compile {
        spec: PathBuf,
        /// Directory of the generated crate.
        #[arg(short, long)]
        out: PathBuf,
        /// Architectures to ship PTX and SASS for (`sm_90,sm_80`), when NVRTC is there; a
        /// device none of them fits compiles the CUDA C when it loads the kernels.
        #[arg(long, value_delimiter = ',')]
        arch: Vec<String>,
        /// Depend on a checkout of ima-runtime at this path (written as given: a relative
        /// path is relative to the generated crate) instead of on crates.io.
        #[arg(long, conflicts_with = "runtime_version")]
        runtime_path: Option<String>,
        /// The ima-runtime version requirement; by default, this imac's version.
        #[arg(long)]
        runtime_version: Option<String>,
        /// Also write a Python package: a PyO3 module and a pyproject.toml for maturin
        /// (`pip install DIR`), one function per kernel taking torch tensors (docs/python.md).
        #[arg(long)]
        python: bool,
    },
    /// Check specs and report every error; exit status 1 on any.
    Check {
        /// Check the crate generated into DIR against the one spec given instead: exit
        /// status 1 when it has drifted from it.
        #[arg(long, value_name = "DIR")]
        vendored: Option<PathBuf>,
        /// Also compile each spec's kernels with NVRTC for ARCH (`sm_90a`, or a list as
        /// `compile --arch` takes; no GPU needed) and report the errors and warnings it
        /// finds in their bodies, at the spec's lines.
        #[arg(
            long,
            value_name = "ARCH",
            value_delimiter = ',',
            conflicts_with = "vendored"
        )]
        arch: Vec<String>,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print each kernel's contract: arguments, shapes, symbols, constraints, shared
    /// memory, launch domain, empty policy and guards.
    Explain {
        file: PathBuf,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
    },
    /// Rewrite specs in canonical layout, keeping comments and bodies as they are.
    Fmt {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write nothing; list the files that are not formatted and exit 1 if any.
        #[arg(long)]
        check: bool,
    },
    /// Launch every kernel of a spec in checked mode at edge-case and random shapes and
    /// layouts (GPU); exit status 1 on any finding. `--seed S --cases N` replays a run.
    Fuzz {
        spec: PathBuf,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// Cases per kernel: the edge cases first, then random ones.
        #[arg(long, default_value_t = 256)]
        cases: usize,
        /// The seed (printed at the start and with every finding); from the clock if absent.
        #[arg(long)]
        seed: Option<u64>,
        /// Bytes of all tensors of one case together.
        #[arg(long, default_value_t = 256 << 20)]
        max_bytes: u64,
        /// One mutation per case: a shape, stride, dtype, alignment or aliasing one the checker
        /// must refuse, or an index tensor's entry out of its range, which `validate` must name
        /// and the kernel must report or never read.
        #[arg(long)]
        negative: bool,
    },
    /// Report the driver, CUDA and NVRTC versions, the headers, the GPUs, compute-sanitizer
    /// and nvdisasm, and say plainly what does not fit.
    Doctor,
    /// Show where each kernel waits for memory, one round trip after another: before its
    /// first loop, in a pass of each loop and on its way out, by spec line, read off the
    /// SASS NVRTC makes for `--arch` (needs NVRTC and nvdisasm, no GPU).
    Waits {
        spec: PathBuf,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// The architecture whose SASS is read.
        #[arg(long, default_value = "sm_90a")]
        arch: String,
        /// Which entry point of each kernel.
        #[arg(long, value_enum, default_value_t = waits::Entry::I32)]
        entry: waits::Entry,
    },
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe panics; with the default action
    // the process ends quietly when its reader does, as other Unix tools do.
    #[cfg(unix)]
    // SAFETY: at the start of main, before any thread or I/O: setting a signal's action
    // to the default races with nothing.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let color = cli.color;
    let ok = match cli.command {
        Command::Compile {
            spec,
            out,
            arch,
            runtime_path,
            runtime_version,
            python,
        } => {
            let runtime = match (runtime_path, runtime_version) {
                (Some(p), _) => RuntimeDep::Path(p),
                (_, Some(v)) => RuntimeDep::Version(v),
                _ => RuntimeDep::released(),
            };
            compile(&spec, &out, runtime, &once_each(arch), python, color)
        }
        Command::Check {
            vendored: Some(dir),
            files,
            ..
        } => match files.as_slice() {
            [spec] => check_vendored(&dir, spec, color),
            _ => {
                eprintln!("error: check --vendored takes one spec, the crate's");
                false
            }
        },
        Command::Check {
            vendored: None,
            arch,
            files,
        } => {
            let archs = once_each(arch);
            files.iter().fold(true, |ok, f| match load(f, color) {
                Some((m, _)) if archs.is_empty() => {
                    println!("{}: {} kernel(s) ok", f.display(), m.kernels.len());
                    ok
                }
                Some((m, text)) => {
                    (archs.iter()).fold(ok, |ok, arch| check_bodies(&m, &text, arch, color) && ok)
                }
                None => false,
            })
        }
        Command::Explain { file, kernel } => match load(&file, color) {
            None => false,
            Some((m, _)) => match ima_codegen::explain::explain(&m, kernel.as_deref()) {
                Ok(text) => {
                    print!("{text}");
                    true
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    false
                }
            },
        },
        // Every file is formatted, not only those before the first failure.
        Command::Fmt { files, check } => {
            let results: Vec<bool> = files.iter().map(|f| fmt_file(f, check, color)).collect();
            results.iter().all(|&ok| ok)
        }
        Command::Fuzz {
            spec,
            kernel,
            cases,
            seed,
            max_bytes,
            negative,
        } => load(&spec, color).is_some_and(|(m, _)| {
            let (_, cuda) = match generated_cuda(&m) {
                Ok(generated) => generated,
                Err(e) => {
                    eprintln!("error: {e}");
                    return false;
                }
            };
            let opts = ima_fuzz::Options {
                kernel,
                cases,
                seed,
                max_bytes,
                negative,
                progress: true,
                device: 0,
            };
            ima_fuzz::run(&m, &cuda, &opts)
        }),
        Command::Waits {
            spec,
            kernel,
            arch,
            entry,
        } => load(&spec, color).is_some_and(|(m, text)| {
            let report = generated_cuda(&m).and_then(|(cu_file, cuda)| {
                waits::waits(&m, &text, &cuda, &cu_file, &arch, kernel.as_deref(), entry)
                    .map_err(|e| e.to_string())
            });
            match report {
                Ok(report) => {
                    print!("{report}");
                    true
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    false
                }
            }
        }),
        Command::Doctor => {
            let report = ima_runtime::doctor::report();
            print!("{report}");
            report.fits()
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn compile(
    spec: &Path,
    out: &Path,
    runtime: RuntimeDep,
    archs: &[String],
    python: bool,
    color: ColorWhen,
) -> bool {
    let Some((module, text)) = load(spec, color) else {
        return false;
    };
    let generated =
        ima_codegen::check_spec_path(&module.file).and_then(|()| generated_cuda(&module));
    let (cu_file, cuda) = match generated {
        Ok(generated) => generated,
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    let compiled = match images::compile(&cuda, &cu_file, archs) {
        Ok(compiled) => compiled,
        Err(ImageError::Unavailable(e)) => {
            eprintln!(
                "note: no PTX or SASS shipped; the crate compiles its CUDA C when it loads: {e}"
            );
            Vec::new()
        }
        Err(ImageError::Failed {
            arch,
            error: ima_runtime::Error::Nvrtc { log, .. },
        }) => {
            report_nvrtc(&module, &text, &arch, &log, true, color);
            return false;
        }
        Err(ImageError::Failed { error, .. }) => {
            eprintln!("error: {error}");
            return false;
        }
        Err(ImageError::NotReal(arch)) => {
            eprintln!(
                "error: --arch {arch}: not a real GPU architecture; name one such as sm_90 or \
                 sm_90a, whose SASS and PTX the crate carries"
            );
            return false;
        }
    };
    for c in &compiled {
        report_nvrtc(&module, &text, &c.image.arch, &c.log, false, color);
    }
    let images: Vec<package::ArchImage> = compiled.into_iter().map(|c| c.image).collect();
    let options = CrateOptions {
        runtime,
        archs: images.iter().map(|i| i.arch.clone()).collect(),
        python,
    };
    let mut files = package::source_files(&module, &text, &options);
    files.extend(package::image_files(&images));
    if let Err(e) = package::write_crate(out, &files) {
        eprintln!("error: cannot write {}: {e}", out.display());
        return false;
    }
    for f in &files {
        println!("wrote {}", out.join(&f.path).display());
    }
    true
}

/// `archs` with each named once, in the order first named (`--arch sm_80,sm_80` ships one
/// image).
fn once_each(archs: Vec<String>) -> Vec<String> {
    let mut once = Vec::new();
    for arch in archs {
        if !once.contains(&arch) {
            once.push(arch);
        }
    }
    once
}

/// `imac check --arch`: compiles the CUDA generated from `m` (checked from `text`) with
/// NVRTC for `arch` and reports what NVRTC says (`report_nvrtc`).
fn check_bodies(m: &ir::Module, text: &str, arch: &str, color: ColorWhen) -> bool {
    let (cu_file, cuda) = match generated_cuda(m) {
        Ok(generated) => generated,
        Err(e) => {
            eprintln!("error: --arch {arch}: {e}");
            return false;
        }
    };
    let (log, failed) = match ima_runtime::compile_cuda(&cuda, &cu_file, arch) {
        Ok(compiled) => (compiled.log, false),
        Err(ima_runtime::Error::Nvrtc { log, .. }) => (log, true),
        Err(e) => {
            eprintln!("error: --arch {arch}: {e}");
            return false;
        }
    };
    let ok = report_nvrtc(m, text, arch, &log, failed, color) == 0;
    if ok {
        println!(
            "{}: {} kernel(s) ok, their bodies compile for {arch}",
            m.file,
            m.kernels.len()
        );
    }
    ok
}

/// The CUDA C generated from `m`, and its file's name (`attn.cu`), for the commands that
/// compile it; refused where NVRTC cannot name the spec's path.
fn generated_cuda(m: &ir::Module) -> Result<(String, String), String> {
    ima_codegen::cuda::check_line_path(&m.file)?;
    let cu_file = ima_codegen::cu_file(&m.file);
    let cuda = ima_codegen::cuda::generate(m, &cu_file);
    Ok((cu_file, cuda))
}

/// Prints what NVRTC said compiling the CUDA generated from `m` for `arch` (`log`; `failed`
/// when it refused the source): its messages about the bodies as diagnostics on the spec
/// (`text`), any about the generated code as imac's bug in NVRTC's words, and the log as
/// written where NVRTC failed and nothing in it reads as a message. Returns how many
/// errors it printed.
fn report_nvrtc(
    m: &ir::Module,
    text: &str,
    arch: &str,
    log: &str,
    failed: bool,
    color: ColorWhen,
) -> usize {
    let source = Source::new(m.file.clone(), text);
    let messages = nvrtc_log::read(log, &source, m);
    source.emit(&mut color.stderr(), &messages.about_spec);
    for message in &messages.about_generated {
        eprintln!(
            "error: NVRTC, compiling the CUDA generated from {} for {arch}, reports this in \
             the generated code, not in a body (a bug of imac's):\n{message}",
            m.file
        );
    }
    for message in &messages.generated_warnings {
        eprintln!(
            "warning: NVRTC, compiling the CUDA generated from {} for {arch}, warns of this in \
             the generated code, not in a body (imac's to fix):\n{message}",
            m.file
        );
    }
    let in_bodies = messages.about_spec.iter().filter(|d| !d.warning).count();
    let errors = in_bodies + messages.about_generated.len();
    if failed && errors == 0 {
        eprintln!(
            "error: NVRTC failed to compile the CUDA generated from {} for {arch}:\n{log}",
            m.file
        );
        return 1;
    }
    if in_bodies > 0 {
        eprintln!(
            "error: {in_bodies} error(s) in the bodies of {} (NVRTC, {arch})",
            m.file
        );
    }
    if messages.stopped {
        eprintln!(
            "note: NVRTC stopped there (at its error limit, or at an error it cannot go past); \
             more may follow once these are fixed"
        );
    }
    errors
}

fn check_vendored(dir: &Path, spec: &Path, color: ColorWhen) -> bool {
    let Some((module, text)) = load(spec, color) else {
        return false;
    };
    let report = match vendored::check(dir, &module, &text) {
        Ok(report) => report,
        Err(e) => {
            eprintln!(
                "error: {} is not a crate imac generated: {e}",
                dir.display()
            );
            return false;
        }
    };
    if report.drifts.is_empty() {
        println!("{}: up to date with {}", dir.display(), spec.display());
        return true;
    }
    eprintln!(
        "error: {} has drifted from {}:",
        dir.display(),
        spec.display()
    );
    for d in &report.drifts {
        eprintln!("  - {d}");
    }
    eprintln!("regenerate it with: {}", report.regenerate(dir));
    false
}

/// Reads, parses and checks a spec, printing its diagnostics on failure; the module and
/// the spec's text.
fn load(path: &Path, color: ColorWhen) -> Option<(ir::Module, String)> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return None;
        }
    };
    let source = Source::new(path.display().to_string(), text);
    match ima_dsl::compile(&source) {
        Ok(m) => Some((m, source.text)),
        Err(diags) => {
            source.emit(&mut color.stderr(), &diags);
            eprintln!("error: {} error(s) in {}", diags.len(), path.display());
            None
        }
    }
}

/// Formats one spec in place, or with `check` only reports whether it is formatted.
fn fmt_file(path: &Path, check: bool, color: ColorWhen) -> bool {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return false;
        }
    };
    match ima_dsl::fmt::format(&text) {
        Ok(formatted) if formatted == text => true,
        Ok(_) if check => {
            println!("{}: not formatted", path.display());
            false
        }
        Ok(formatted) => match std::fs::write(path, formatted) {
            Ok(()) => {
                println!("formatted {}", path.display());
                true
            }
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                false
            }
        },
        Err(diags) => {
            let source = Source::new(path.display().to_string(), text);
            source.emit(&mut color.stderr(), &diags);
            false
        }
    }
}
