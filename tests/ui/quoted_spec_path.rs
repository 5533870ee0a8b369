// A spec path with a `"`, which NVRTC would write into the PTX unescaped.
#[ima::ima_kernel("specs/we\"ird.ima")]
mod quoted {}

fn main() {}
