//! `imac fuzz`: every kernel of a spec launched in checked mode at edge-case and random
//! shapes, in every layout the spec allows, on synthetic data.
//!
//! - [`contract`]: the kernel's contract, built from the IR at run time;
//! - [`shapes`]: symbol assignments (edge values, then random), each valid;
//! - [`tensors`]: random tensors and views for one case;
//! - [`mutate`]: `--negative`'s one wrong thing per case;
//! - [`mod@run`]: compile, launch, collect findings.
//!
//! A run is fixed by its seed: `imac fuzz SPEC --seed S --cases N` replays it.

pub mod contract;
pub mod layout;
pub mod mutate;
pub mod rng;
pub mod run;
pub mod shapes;
pub mod tensors;
pub mod values;

pub use run::{Finding, Kind, Options, Report, fresh_seed, fuzz, run};
