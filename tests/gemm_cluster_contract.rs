//! specs/gemm_cluster.ima's contracts checked on the CPU with fake tensors: each kernel's
//! grid is whole clusters, one a tile while the tiles number at most the clusters of its
//! size an H200 holds at once (66 of 2, 32 of 4, 16 of 8), and that many otherwise (the
//! clusters loop over the tiles); shapes outside a kernel's constraints, an empty K among
//! them, are refused, naming the constraint.

#[allow(dead_code)]
mod gemm_cluster {
    include!("out/specs/gemm_cluster.rs");
}

#[allow(dead_code)]
#[path = "../runtime/tests/common/fake.rs"]
mod fake;

use fake::{Fake, refused, run, spread};
use ima::{DType, KernelContract};

/// The arguments for x `[M, K]`, a `K x N` GPTQ weight with groups of G (the logical
/// `[K, N, G]`, qweight, qzeros, scales) and y `[M, NY]`.
fn args((m, k, n, g): (usize, usize, usize, usize), ny: usize) -> Vec<Fake> {
    spread(vec![
        Fake::new(DType::F16, &[m, k], 0),
        Fake::new(DType::F16, &[k, n, g], 0),
        Fake::new(DType::I32, &[k / 8, n], 0),
        Fake::new(DType::I32, &[k / g, n / 8], 0),
        Fake::new(DType::F16, &[k / g, n], 0),
        Fake::new(DType::F16, &[m, ny], 0),
    ])
}

const CL4_N128: &KernelContract = gemm_cluster::GptqGemmCl4N128::CONTRACT;
const CL4_N192: &KernelContract = gemm_cluster::GptqGemmCl4N192::CONTRACT;
const CL8_N256: &KernelContract = gemm_cluster::GptqGemmCl8N256::CONTRACT;
const CL2_N128: &KernelContract = gemm_cluster::GptqGemmCl2N128::CONTRACT;

#[test]
fn each_kernel_launches_whole_clusters_one_a_tile_up_to_the_clusters_an_h200_holds() {
    // Worked out by hand: min(N / columns a tile, clusters at once) clusters of CK blocks.
    for (c, shape, ny, grid, block) in [
        // The decode layer's projections at B = 32: O, QKV, down, gate/up (fused).
        (CL4_N128, (32, 4096, 4096, 128), 4096, 32 * 4, 256),
        (CL4_N192, (32, 4096, 6144, 128), 6144, 32 * 4, 384),
        (CL8_N256, (32, 14336, 4096, 128), 4096, 16 * 8, 256),
        (CL2_N128, (32, 4096, 28672, 128), 14336, 66 * 2, 256),
        // One row; one tile; the largest K each takes.
        (CL4_N128, (1, 8192, 128, 128), 128, 4, 256),
        (CL4_N192, (1, 8192, 192, 128), 96, 4, 384),
        (CL8_N256, (7, 16384, 256, 128), 256, 8, 256),
        (CL2_N128, (1, 1024, 128, 128), 64, 2, 256),
        // More tiles than clusters: 40, 34 and 17 tiles on 32, 32 and 16 clusters.
        (CL4_N128, (5, 2048, 5120, 128), 5120, 32 * 4, 256),
        (CL4_N192, (5, 2048, 6528, 128), 3264, 32 * 4, 384),
        (CL8_N256, (5, 2048, 4352, 128), 4352, 16 * 8, 256),
    ] {
        let what = format!("{} {shape:?} NY = {ny}", c.name);
        let plan = run(c, &args(shape, ny), &[]).unwrap_or_else(|v| panic!("{what}: {v:?}"));
        assert_eq!(plan.grid, [grid, 1, 1], "{what}");
        assert_eq!(plan.block, [block, 1, 1], "{what}");
    }
}

#[test]
fn shapes_outside_a_kernel_s_constraints_are_refused_naming_the_constraint() {
    for (c, shape, ny, constraint) in [
        (CL4_N128, (33, 4096, 4096, 128), 4096, "M <= 32"),
        (CL4_N128, (32, 14336, 4096, 128), 4096, "K <= 8192"),
        (CL4_N128, (32, 0, 4096, 128), 4096, "K >= 2048"),
        (CL2_N128, (1, 0, 256, 128), 128, "K >= 1024"),
        (CL8_N256, (32, 3072, 4096, 128), 4096, "K % 2048 == 0"),
        (CL2_N128, (32, 4096, 4096, 64), 4096, "G == 128"),
        (CL4_N192, (32, 4096, 4096, 128), 4096, "N % 192 == 0"),
        (
            CL2_N128,
            (32, 4096, 4096, 128),
            1024,
            "NY == N || 2 * NY == N",
        ),
    ] {
        let message = refused(c, &args(shape, ny), &[]);
        assert!(
            message.contains(constraint),
            "{} {shape:?} NY = {ny}: {message}",
            c.name
        );
    }
}

/// `KernelContract::admits`, which the decode layer picks a kernel with, agrees with the
/// launch check on the shapes above.
#[test]
fn admits_agrees_with_the_launch_check() {
    for c in [CL4_N128, CL4_N192, CL8_N256, CL2_N128] {
        for (m, k, n, g, ny) in [
            (32, 4096, 4096, 128, 4096),
            (32, 4096, 28672, 128, 14336),
            (32, 14336, 4096, 128, 4096),
            (33, 4096, 6144, 128, 6144),
            (1, 2048, 768, 128, 384),
            (8, 8192, 256, 64, 256),
        ] {
            let value_of = |s: &str| match s {
                "M" => Some(m),
                "K" => Some(k),
                "N" => Some(n),
                "G" => Some(g),
                "NY" => Some(ny),
                _ => None,
            };
            let launches = run(c, &args((m, k, n, g), ny), &[]).is_ok();
            assert_eq!(
                c.admits(|s| value_of(s).map(|v| v as i64)),
                launches,
                "{} M={m} K={k} N={n} G={g} NY={ny}",
                c.name
            );
        }
    }
}

/// h, residual, residual_out (at `residual_out_at`, an argument's index in this list whose
/// address it takes, or its own) and gamma of a kernel with add_rms_norm fused, then the
/// weight and y of `args`.
fn normed_args(
    (m, k, n, g): (usize, usize, usize, usize),
    ny: usize,
    residual_out_at: usize,
) -> Vec<Fake> {
    let mut all = spread(vec![
        Fake::new(DType::F16, &[m, k], 0),
        Fake::new(DType::F16, &[m, k], 0),
        Fake::new(DType::F16, &[m, k], 0),
        Fake::new(DType::F16, &[k], 0),
        Fake::new(DType::F16, &[k, n, g], 0),
        Fake::new(DType::I32, &[k / 8, n], 0),
        Fake::new(DType::I32, &[k / g, n / 8], 0),
        Fake::new(DType::F16, &[k / g, n], 0),
        Fake::new(DType::F16, &[m, ny], 0),
    ]);
    all[2].base_ptr = all[residual_out_at].base_ptr;
    all
}

const RMS_CL4_N192: &KernelContract = gemm_cluster::RmsGptqGemmCl4N192::CONTRACT;
const RMS_CL8_N256: &KernelContract = gemm_cluster::RmsGptqGemmCl8N256::CONTRACT;

/// The decode layer's two norms fused into QKV and gate/up launch the grids of the kernels
/// they extend; a residual_out that is the residual it reads (the stream updated in place,
/// as add_rms_norm does, which every cluster reading the old one forbids) is refused.
#[test]
fn a_fused_norm_launches_its_projection_s_grid_and_refuses_its_residual_in_place() {
    let eps = [ima::Scalar::F32(1e-5)];
    for (c, shape, ny, grid, block) in [
        (RMS_CL4_N192, (32, 4096, 6144, 128), 6144, 32 * 4, 384),
        (RMS_CL8_N256, (32, 4096, 28672, 128), 14336, 16 * 8, 256),
    ] {
        let plan = run(c, &normed_args(shape, ny, 2), &eps)
            .unwrap_or_else(|v| panic!("{}: {v:?}", c.name));
        assert_eq!(plan.grid, [grid, 1, 1], "{}", c.name);
        assert_eq!(plan.block, [block, 1, 1], "{}", c.name);
        let message = refused(c, &normed_args(shape, ny, 1), &eps);
        assert!(
            message.contains("output residual_out overlaps argument residual"),
            "{}: {message}",
            c.name
        );
    }
}
