//! tests/in/derived_names.ima's stubs build: arguments named `x_s0`, `x_t`, `x_tma`, `body`,
//! `run` and `s_N` beside an `x` with a tensor map and a symbol `N`, which the generated
//! code's own names once met, a kernel `Image`, whose name takes `Ima` but not ima.cuh's
//! `Ima` and a capital, and fields named as `Kernels`' locals. (tests/nvrtc.rs compiles the
//! CUDA.)

// The spec's own names, `Image` and `s_N`, are not snake case.
#[allow(dead_code, non_snake_case)]
mod derived_names {
    include!("out/derived_names.rs");
}

#[test]
fn the_stubs_take_every_argument_by_its_spec_name() {
    let names: Vec<&str> = derived_names::Derived::CONTRACT
        .args
        .iter()
        .map(|a| a.name)
        .collect();
    assert_eq!(names, ["x", "x_s0", "x_t", "x_tma", "s_N", "body", "run"]);
    assert_eq!(derived_names::Image::CONTRACT.name, "Image");
    // Fields named as `Kernels`' locals; the param `on` among them.
    let fields: Vec<&str> = derived_names::Fields::CONTRACT
        .args
        .iter()
        .map(|a| a.name)
        .chain(
            derived_names::Fields::CONTRACT
                .params
                .iter()
                .map(|p| p.name),
        )
        .collect();
    assert_eq!(fields, ["mode", "module", "ctx", "on"]);
}
