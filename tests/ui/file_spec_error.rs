// A spec file with an error: the message carries the spec's file:line:col.
#[ima::ima_kernel("tests/ui/unknown_symbol.ima")]
mod scale {}

fn main() {}
