//! Kernels, tensors and errors cross threads: a [`crate::Kernel`] is loaded once and
//! launched from any thread (its modes and records sit behind atomics and locks), a
//! tensor moves to the thread that launches on it, and an error is sent back. These are
//! compile-time facts, asserted here, so that a field that is not `Send + Sync` fails
//! this crate's build rather than a user's; generated modules assert it of `Kernels`.

use crate::{Error, Kernel, Tensor};

/// Compiles only when `T` is `Send + Sync`; called in a `const` item, it costs nothing.
pub const fn assert_send_sync<T: Send + Sync>() {}

const _: () = {
    assert_send_sync::<Kernel>();
    assert_send_sync::<Tensor<f32>>();
    assert_send_sync::<Tensor<half::f16>>();
    assert_send_sync::<Error>();
};
