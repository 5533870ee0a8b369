//! A host buffer with the shape it claims to have.

/// Row-major values and the shape they claim, e.g. a checkpoint tensor's data and its
/// `[rows, cols]`. [`super::QuantHost::new`] checks the shape itself against the padded
/// shape of the buffer, not only the element count, so that a transposed buffer of the
/// right size (scales `[N, groups]` for `[groups, N]`) is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaped<T> {
    pub data: T,
    pub shape: Vec<usize>,
}

impl<T> Shaped<T> {
    pub fn new(data: T, shape: &[usize]) -> Self {
        Shaped {
            data,
            shape: shape.to_vec(),
        }
    }
}
