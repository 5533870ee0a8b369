// The argument is a string literal: a path ending in .ima, or the spec itself.
#[ima::ima_kernel(specs::attn)]
mod attn {}

fn main() {}
