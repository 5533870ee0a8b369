// The attribute fills an empty module: it refuses one with items of its own.
#[ima::ima_kernel("tests/ui/unknown_symbol.ima")]
mod scale {
    pub fn mine() {}
}

fn main() {}
