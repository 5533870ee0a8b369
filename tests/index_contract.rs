//! The value contracts of specs/index.ima on the host, no GPU: `ima::validate_values`
//! accepts the entries each kernel is meant for and names the first bad one (argument,
//! position, value, the rule it broke and the bound with the symbol that set it), exactly
//! as `validate` and the kernels report it (tests/index_gpu.rs).

#[allow(dead_code)]
mod index_spec {
    include!("out/specs/index.rs");
}

mod common;

use common::values::validate;
use ima::{IndexValue, Scalar, ValueFault};
use index_spec::{EMBEDDING, MEAN_POOL_VARLEN, MOE_ROUTE, RESHAPE_AND_CACHE};

fn fault(r: &IndexValue) -> (&[i64], i64, ValueFault) {
    (r.position.as_slice(), r.value, r.fault)
}

#[test]
fn token_ids_lie_in_the_table() {
    // T = 4, V = 10, D = 8.
    let syms = [4, 10, 8];
    assert!(validate(&EMBEDDING, "ids", &[4], &[0, 9, 3, 3], &syms, &[]).is_ok());
    let range = ValueFault::Range { lo: 0, hi: 10 };
    for bad in [10, -1, i64::from(i32::MAX), i64::from(i32::MIN)] {
        let r = validate(&EMBEDDING, "ids", &[4], &[0, 9, bad, 3], &syms, &[]).unwrap_err();
        assert_eq!(fault(&r), (&[2i64][..], bad, range), "{r}");
    }
    // The first of several.
    let r = validate(&EMBEDDING, "ids", &[4], &[0, -5, 10, 3], &syms, &[]).unwrap_err();
    assert_eq!(fault(&r), (&[1i64][..], -5, range));
    let text = r.to_string();
    assert!(
        text.starts_with(
            "embedding: ids[1] = -5, expected 0 <= value < V = 10 (bound by table.shape[0])"
        ),
        "{text}"
    );
}

#[test]
fn slots_lie_in_the_cache_or_are_minus_one() {
    // T = 3, HKV = 2, D = 8, NB = 4, BS = 16: slots 0 .. 64.
    let syms = [3, 2, 8, 4, 16];
    let ok = validate(
        &RESHAPE_AND_CACHE,
        "slot_mapping",
        &[3],
        &[63, -1, 0],
        &syms,
        &[],
    );
    assert!(ok.is_ok());
    let range = ValueFault::Range { lo: 0, hi: 64 };
    for bad in [64, -2, i64::MAX, i64::MIN] {
        let r = validate(
            &RESHAPE_AND_CACHE,
            "slot_mapping",
            &[3],
            &[-1, bad, 0],
            &syms,
            &[],
        )
        .unwrap_err();
        assert_eq!(fault(&r), (&[1i64][..], bad, range), "{r}");
        assert_eq!(r.sentinel, Some(-1));
    }
    let r = validate(
        &RESHAPE_AND_CACHE,
        "slot_mapping",
        &[3],
        &[64, 0, 0],
        &syms,
        &[],
    )
    .unwrap_err();
    let text = r.to_string();
    assert!(
        text.contains(
            "expected < NB * BS = 64 (NB bound by k_cache.shape[0], BS bound by \
             k_cache.shape[1]) or -1; values(0 .. NB * BS, or -1)"
        ),
        "{text}"
    );
}

#[test]
fn expert_ids_lie_below_the_expert_count_or_are_minus_one() {
    // T = 2, K = 3, num_experts = 8; positions are [t, k].
    let (syms, params) = ([2, 3], [Scalar::I32(8)]);
    let good = [0, 7, -1, 5, -1, 1];
    assert!(validate(&MOE_ROUTE, "topk_ids", &[2, 3], &good, &syms, &params).is_ok());
    for bad in [8, -2, i64::from(i32::MAX)] {
        let mut ids = good;
        ids[4] = bad;
        let r = validate(&MOE_ROUTE, "topk_ids", &[2, 3], &ids, &syms, &params).unwrap_err();
        assert_eq!(
            fault(&r),
            (&[1i64, 1][..], bad, ValueFault::Range { lo: 0, hi: 8 })
        );
        let expected = match bad < 0 {
            true => "expected 0 <= value < num_experts = 8 or -1",
            false => "expected < num_experts = 8 or -1",
        };
        assert!(r.to_string().contains(expected), "{r}");
    }
}

#[test]
fn offsets_ascend_from_zero_to_the_token_count() {
    // T = 10, D = 4, B1 = 4: three sequences.
    let syms = [10, 4, 4];
    let ok = |cu: &[i64]| validate(&MEAN_POOL_VARLEN, "cu_seqlens", &[4], cu, &syms, &[]);
    assert!(ok(&[0, 3, 3, 10]).is_ok());
    assert!(ok(&[0, 0, 0, 10]).is_ok());
    let range = ValueFault::Range { lo: 0, hi: 11 };
    let cases: [(&[i64], usize, i64, ValueFault); 7] = [
        (&[0, 3, 11, 10], 2, 11, range),
        (&[0, 3, -1, 10], 2, -1, range),
        (
            &[0, 3, i64::from(i32::MAX), 10],
            2,
            i64::from(i32::MAX),
            range,
        ),
        (&[0, 5, 4, 10], 2, 4, ValueFault::Order { previous: 5 }),
        (&[1, 3, 5, 10], 0, 1, ValueFault::First { expected: 0 }),
        (&[0, 3, 5, 9], 3, 9, ValueFault::Last { expected: 10 }),
        // Range first, over every entry, then the order.
        (&[0, 5, 4, 12], 3, 12, range),
    ];
    for (cu, at, value, want) in cases {
        let r = ok(cu).unwrap_err();
        assert_eq!(fault(&r), (&[at as i64][..], value, want), "{cu:?}: {r}");
    }
    let r = ok(&[0, 3, 5, 9]).unwrap_err();
    assert!(
        r.to_string().contains(
            "cu_seqlens[3] = 9, expected T = 10 (bound by x.shape[0]), as the last entry of \
             an ascending tensor"
        ),
        "{r}"
    );
}
