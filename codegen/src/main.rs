//! `imac`: the kernel-spec compiler's command line.

use clap::{Parser, Subcommand};
use ima_codegen::package::{self, RuntimeDep};
use ima_dsl::{Source, ir};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "imac", version, about = "Compiles .ima kernel specs to guarded CUDA C and checking Rust launch stubs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a spec into a Rust crate holding its CUDA C and launch stubs.
    Compile {
        spec: PathBuf,
        /// Directory of the generated crate.
        #[arg(short, long)]
        out: PathBuf,
        /// Path of the ima-runtime crate the generated crate depends on.
        #[arg(long, conflicts_with = "runtime_version")]
        runtime_path: Option<String>,
        /// crates.io version of ima-runtime, instead of a path.
        #[arg(long)]
        runtime_version: Option<String>,
    },
    /// Check specs and report every error; exit status 1 on any.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Compile {
            spec,
            out,
            runtime_path,
            runtime_version,
        } => {
            let runtime = match (runtime_path, runtime_version) {
                (Some(p), _) => RuntimeDep::Path(p),
                (_, Some(v)) => RuntimeDep::Version(v),
                _ => RuntimeDep::local(),
            };
            let Some(module) = load(&spec) else { return ExitCode::FAILURE };
            let files = package::crate_files(&module, &runtime);
            if let Err(e) = package::write_crate(&out, &files) {
                eprintln!("error: cannot write {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
            for f in &files {
                println!("wrote {}", out.join(&f.path).display());
            }
            ExitCode::SUCCESS
        }
        Command::Check { files } => {
            let mut ok = true;
            for f in &files {
                match load(f) {
                    Some(m) => println!("{}: {} kernel(s) ok", f.display(), m.kernels.len()),
                    None => ok = false,
                }
            }
            if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
    }
}

/// Reads, parses and checks a spec, printing its diagnostics on failure.
fn load(path: &Path) -> Option<ir::Module> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return None;
        }
    };
    let source = Source::new(path.display().to_string(), text);
    match ima_dsl::compile(&source) {
        Ok(m) => Some(m),
        Err(diags) => {
            let mut stderr = codespan_reporting::term::termcolor::StandardStream::stderr(
                codespan_reporting::term::termcolor::ColorChoice::Auto,
            );
            source.emit(&mut stderr, &diags);
            eprintln!("error: {} error(s) in {}", diags.len(), path.display());
            None
        }
    }
}
