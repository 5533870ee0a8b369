// A spec path that names no file, from the crate root.
#[ima::ima_kernel("specs/no_such_spec.ima")]
mod gone {}

fn main() {}
