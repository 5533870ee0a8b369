//! [`KernelArgs`]: the arguments a generated stub gathers for one launch when it cannot
//! write them as one array (a quantized weight becomes several), kept in place like the
//! launch's own lists ([`crate::capacity`]), so that such a stub allocates nothing either.

use std::ops::{Deref, DerefMut};

use smallvec::SmallVec;

use crate::arg::KernelArg;
use crate::capacity::ARGS;

/// A launch's tensor arguments, in the contract's order; a `&mut [KernelArg]` for
/// [`crate::Kernel::launch`] through `&mut`.
#[derive(Default)]
pub struct KernelArgs<'a>(SmallVec<[KernelArg<'a>; ARGS]>);

impl<'a> KernelArgs<'a> {
    pub fn new() -> Self {
        KernelArgs(SmallVec::new())
    }

    pub fn push(&mut self, arg: KernelArg<'a>) {
        self.0.push(arg);
    }
}

impl<'a> Deref for KernelArgs<'a> {
    type Target = [KernelArg<'a>];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for KernelArgs<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<'a> Extend<KernelArg<'a>> for KernelArgs<'a> {
    fn extend<I: IntoIterator<Item = KernelArg<'a>>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl<'a> IntoIterator for KernelArgs<'a> {
    type Item = KernelArg<'a>;
    type IntoIter = smallvec::IntoIter<[KernelArg<'a>; ARGS]>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}
