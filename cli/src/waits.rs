//! `imac waits`: where a spec's kernels wait for memory, one round trip after another, read
//! off the SASS that NVRTC makes of them (with its line information) through nvdisasm, and
//! told by spec line. A loop that waits twice a pass where it could wait once, or a value
//! checked before the next load is issued, shows here without a GPU (ima-sass counts).

use std::fmt::Write;
use std::path::Path;
use std::process::Command;

use ima_codegen::cuda::EntryPoint;
use ima_dsl::ir;
use ima_sass::{Function, Location};

/// Which of a kernel's four entry points to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Entry {
    /// Release, 32-bit indices (what most launches take).
    I32,
    /// Release, 64-bit indices.
    I64,
    /// Checked mode, 32-bit indices.
    I32Checked,
    /// Checked mode, 64-bit indices.
    I64Checked,
}

impl Entry {
    fn point(self) -> EntryPoint {
        match self {
            Entry::I32 => EntryPoint::I32,
            Entry::I64 => EntryPoint::I64,
            Entry::I32Checked => EntryPoint::I32_CHECKED,
            Entry::I64Checked => EntryPoint::I64_CHECKED,
        }
    }

    /// Its name, from the kernel's two release entry points as its contract names them (a
    /// checked one is its release twin's, `EntryPoint::checked_twin`).
    fn name(self, entry_i32: &str, entry_i64: &str) -> String {
        let point = self.point();
        let release = if point.wide { entry_i64 } else { entry_i32 };
        match point.checked {
            true => EntryPoint::checked_twin(release),
            false => release.to_string(),
        }
    }
}

/// What `imac waits` needs and may not find.
#[derive(Debug)]
pub enum WaitsError {
    Nvrtc(ima_runtime::Error),
    /// No nvdisasm on PATH nor in a CUDA root NVRTC is looked for in.
    NoNvdisasm,
    Nvdisasm(String),
    Listing(ima_sass::ParseError),
    /// No kernel of the name asked for, or none at all (`ir::Module::kernels_named`'s
    /// words).
    NoKernel(String),
    /// The generated source is not as this command reads it (a bug of imac's).
    Header(&'static str),
    /// A virtual architecture (`compute_90`), which has no SASS.
    NotReal(String),
}

impl std::fmt::Display for WaitsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaitsError::Nvrtc(e) => write!(f, "{e}"),
            WaitsError::NoNvdisasm => write!(
                f,
                "no nvdisasm (CUDA's disassembler) on PATH or under a CUDA root (`imac doctor` \
                 lists where NVRTC is): install the toolkit, or `pip install nvidia-cuda-nvdisasm` \
                 beside NVRTC's wheels"
            ),
            WaitsError::NotReal(arch) => write!(
                f,
                "--arch {arch}: not a real GPU architecture, which has no SASS to read; name one \
                 such as sm_90a"
            ),
            WaitsError::Nvdisasm(e) => write!(f, "nvdisasm: {e}"),
            WaitsError::Listing(e) => write!(f, "reading nvdisasm's listing: {e}"),
            WaitsError::Header(what) => write!(f, "{what} (a bug of imac's: please report it)"),
            WaitsError::NoKernel(why) => f.write_str(why),
        }
    }
}

/// The report of `imac waits`: for each kernel (or the one named), its entry point's round
/// trips before its first loop, to an exit and in one pass of each loop, and the waits of
/// those slowest paths, each with the spec line (and the generated or ima.cuh line) of the
/// instruction that waits and of the load it waits for. `cuda` is the CUDA C generated
/// from `module`, as the file `cu_file`.
pub fn waits(
    module: &ir::Module,
    spec_text: &str,
    cuda: &str,
    cu_file: &str,
    arch: &str,
    kernel: Option<&str>,
    entry: Entry,
) -> Result<String, WaitsError> {
    let kernels: Vec<&ir::Kernel> = module.kernels_named(kernel).map_err(WaitsError::NoKernel)?;
    if !ima_runtime::is_real_architecture(arch) {
        return Err(WaitsError::NotReal(arch.to_string()));
    }
    let compiled = ima_runtime::compile_cuda(cuda, cu_file, arch).map_err(WaitsError::Nvrtc)?;
    let listing = disassemble(&compiled.cubin)?;
    let functions = ima_sass::functions(&listing).map_err(WaitsError::Listing)?;
    let sources = Sources::new(module, spec_text, cuda, cu_file)?;
    let mut out = String::new();
    for k in kernels {
        let contract = ima_dsl::abi::kernel_contract(module, k);
        let name = entry.name(&contract.entry_i32, &contract.entry_i64);
        let Some(function) = functions.iter().find(|f| f.name == name) else {
            let _ = writeln!(out, "{name}: not in NVRTC's SASS for {arch}");
            continue;
        };
        out += &report(&sources, function, arch);
    }
    Ok(out)
}

/// One entry point's waits, in ima-sass's words, each instruction by its lines.
fn report(sources: &Sources, function: &Function, arch: &str) -> String {
    let counts =
        ima_sass::round_trips_ignoring(function, &|addr| sources.on_violation_path(function, addr));
    ima_sass::explain(
        &format!("{} ({arch})", function.name),
        &counts,
        &|addr| sources.place(function, addr),
        &|addr| sources.head(function, addr),
    )
}

/// nvdisasm's listing of a cubin, with its source lines and their inline chains.
fn disassemble(cubin: &[u8]) -> Result<String, WaitsError> {
    let nvdisasm = ima_runtime::doctor::find_tool("nvdisasm").ok_or(WaitsError::NoNvdisasm)?;
    let file = std::env::temp_dir().join(format!("imac-waits-{}.cubin", std::process::id()));
    std::fs::write(&file, cubin)
        .map_err(|e| WaitsError::Nvdisasm(format!("writing {}: {e}", file.display())))?;
    let output = Command::new(&nvdisasm)
        .args(["-gi", "-c"])
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let output =
        output.map_err(|e| WaitsError::Nvdisasm(format!("running {}: {e}", nvdisasm.display())))?;
    if !output.status.success() {
        return Err(WaitsError::Nvdisasm(
            String::from_utf8_lossy(&output.stderr).trim().to_string(),
        ));
    }
    String::from_utf8(output.stdout)
        .map_err(|e| WaitsError::Nvdisasm(format!("its output is not UTF-8: {e}")))
}

/// The texts an instruction's line can be in: the spec, the generated CUDA C, and ima.cuh
/// (which the generated file embeds at its top, with no `#line`).
struct Sources<'a> {
    spec_file: &'a str,
    spec: Vec<&'a str>,
    cu_file: &'a str,
    cuda: Vec<&'a str>,
    /// The generated file's lines that are ima.cuh's: first, and how many.
    header: (u32, u32),
    /// ima.cuh's violation path (its `<violation path>` comments), as the generated file's
    /// lines: what runs only once a violation has happened.
    violation_path: std::ops::Range<u32>,
}

impl<'a> Sources<'a> {
    fn new(
        module: &'a ir::Module,
        spec_text: &'a str,
        cuda: &'a str,
        cu_file: &'a str,
    ) -> Result<Sources<'a>, WaitsError> {
        // codegen embeds the header trimmed, on lines of its own.
        let header_text = ima_codegen::cuda::IMA_CUH.trim_end();
        let at = cuda.find(header_text).ok_or(WaitsError::Header(
            "the generated CUDA C does not embed ima.cuh",
        ))?;
        let header = (
            cuda[..at].lines().count() as u32 + 1,
            header_text.lines().count() as u32,
        );
        let line_of = |marker: &str| {
            header_text
                .lines()
                .position(|l| l.starts_with(marker))
                .map(|i| header.0 + i as u32)
                .ok_or(WaitsError::Header(
                    "ima.cuh has no `<violation path>` comments",
                ))
        };
        let violation_path = line_of("// <violation path>")?..line_of("// </violation path>")?;
        Ok(Sources {
            spec_file: &module.file,
            spec: spec_text.lines().collect(),
            cu_file,
            cuda: cuda.lines().collect(),
            header,
            violation_path,
        })
    }

    /// Whether the instruction's innermost line is on ima.cuh's violation path.
    fn on_violation_path(&self, function: &Function, addr: u32) -> bool {
        function
            .location(addr)
            .and_then(|l| l.frames.first())
            .is_some_and(|(file, line)| {
                self.origin(file, *line) == Origin::ImaCuh && self.violation_path.contains(line)
            })
    }

    /// An instruction as the report names it: the innermost line of its chain where that is
    /// not the spec's (generated code or ima.cuh), then its spec line, with their text.
    fn place(&self, function: &Function, addr: u32) -> String {
        match function.location(addr) {
            Some(location) => self.lines(location).join("\n           in "),
            None => format!("{addr:#06x} (no line)"),
        }
    }

    /// A loop's head: its spec line and address (loops a spec line unrolls into share the
    /// line), or its place where it has no spec line.
    fn head(&self, function: &Function, addr: u32) -> String {
        let spec = function.location(addr).and_then(|l| {
            l.frames
                .iter()
                .find(|(f, n)| self.origin(f, *n) == Origin::Spec)
                .map(|(_, n)| *n)
        });
        match spec {
            Some(n) => format!("{}:{n} ({addr:#06x})", self.spec_file),
            None => self.place(function, addr),
        }
    }

    fn lines(&self, location: &Location) -> Vec<String> {
        let named: Vec<(Origin, &str, u32)> = location
            .frames
            .iter()
            .map(|(f, n)| (self.origin(f, *n), f.as_str(), *n))
            .collect();
        let spec = named.iter().find(|(o, _, _)| *o == Origin::Spec);
        let inner = named.first().filter(|(o, _, _)| *o != Origin::Spec);
        inner
            .into_iter()
            .chain(spec)
            .map(|&(o, f, n)| self.render(o, f, n))
            .collect()
    }

    fn origin(&self, file: &str, line: u32) -> Origin {
        if same_file(file, self.spec_file) {
            Origin::Spec
        } else if same_file(file, self.cu_file) {
            let (first, count) = self.header;
            if line >= first && line < first + count {
                Origin::ImaCuh
            } else {
                Origin::Generated
            }
        } else {
            Origin::Other
        }
    }

    fn render(&self, origin: Origin, file: &str, line: u32) -> String {
        let text = |lines: &[&str], n: u32| {
            lines
                .get((n as usize).wrapping_sub(1))
                .map_or(String::new(), |t| format!(" `{}`", clip(t.trim())))
        };
        match origin {
            Origin::Spec => format!("{}:{line}{}", self.spec_file, text(&self.spec, line)),
            Origin::ImaCuh => {
                let n = line - self.header.0 + 1;
                format!("ima.cuh:{n}{}", text(&self.cuda, line))
            }
            Origin::Generated => format!("{}:{line}{}", self.cu_file, text(&self.cuda, line)),
            Origin::Other => format!("{file}:{line}"),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Spec,
    Generated,
    ImaCuh,
    Other,
}

/// NVRTC names files as given; nvcc makes them absolute.
fn same_file(named: &str, ours: &str) -> bool {
    named == ours || Path::new(named).ends_with(ours)
}

/// A source line cut to fit a report's line.
fn clip(text: &str) -> String {
    const MAX: usize = 72;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{} ...", &text[..at]),
        None => text.to_string(),
    }
}
