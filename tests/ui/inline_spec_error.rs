// An inline spec with an error (a symbol nothing binds): the message points at the
// attribute's literal.
#[ima::ima_kernel(
    r#"
kernel scale {
    in  x: f32[N]
    out y: f32[M * 2]
    launch over y[i]
    body { y(i) = x(i); }
}
"#
)]
mod scale {}

fn main() {}
