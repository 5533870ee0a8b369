//! The shape generator on the CPU, for every kernel of every example spec and of the
//! planted bugs: every case is valid, and the edge set holds the listed edge values.

use ima_fuzz::contract;
use ima_fuzz::layout::{Layout, physical_shape, plan_layout};
use ima_fuzz::rng::Rng;
use ima_fuzz::shapes::{self, Config};
use ima_fuzz::tensors::{ArgPlan, plan};
use ima_fuzz::values::valid_entries;
use ima_runtime::{Expr, KernelContract, Launch, Role};

fn all_contracts() -> Vec<&'static KernelContract> {
    let mut files: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs"))
            .expect("specs/")
            .map(|e| format!("specs/{}", e.unwrap().file_name().to_string_lossy()))
            .filter(|n| n.ends_with(".ima"))
            .collect();
    files.sort();
    files.push("tests/in/planted_bugs.ima".into());
    files
        .iter()
        .flat_map(|f| {
            let text =
                std::fs::read_to_string(format!("{}/../{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            contract::build_all(&contract::load(f, &text).unwrap())
        })
        .collect()
}

fn cfg() -> Config {
    Config::new(shapes::DEFAULT_MAX_BYTES, Config::typical_limits())
}

/// Checked here by hand rather than with `shapes::check_case` alone.
fn assert_valid(c: &KernelContract, cfg: &Config, case: &shapes::Case) {
    // Only the case past 2^31 elements may exceed the symbol cap.
    let cfg = &if case.label.contains("past 2^31") {
        Config {
            symbol_cap: i64::MAX,
            ..*cfg
        }
    } else {
        *cfg
    };
    let what = format!("{}: {} [{}]", c.name, case.describe(c), case.label);
    for k in c.constraints {
        assert_ne!(
            k.expr.eval(&case.symbols, &case.params),
            Ok(0),
            "{what}: {} fails",
            k.text
        );
        assert!(k.expr.eval(&case.symbols, &case.params).is_ok(), "{what}");
    }
    for a in c.args {
        for d in a.dims {
            let n = d.expr.eval(&case.symbols, &case.params).unwrap();
            assert!(n >= 1, "{what}: {}: {} = {n}", a.name, d.text);
        }
    }
    let bytes = shapes::bytes(c, &case.symbols, &case.params).unwrap();
    assert!(bytes <= u128::from(cfg.max_bytes), "{what}: {bytes} bytes");
    assert_eq!(
        shapes::check_case(c, cfg, &case.symbols, &case.params, cfg.max_bytes),
        Ok(()),
        "{what}"
    );
}

#[test]
fn every_generated_case_satisfies_the_constraints() {
    let cfg = cfg();
    for c in all_contracts() {
        for seed in [0, 1, 0xdead_beef] {
            let cases = shapes::cases(c, &cfg, seed, 200);
            assert_eq!(cases.cases.len(), 200, "{}: {:?}", c.name, cases.notes);
            for case in &cases.cases {
                assert_valid(c, &cfg, case);
            }
        }
    }
}

#[test]
fn a_seed_replays_the_same_cases() {
    let cfg = cfg();
    for c in all_contracts() {
        let a = shapes::cases(c, &cfg, 42, 120);
        let b = shapes::cases(c, &cfg, 42, 120);
        assert_eq!(a.cases, b.cases, "{}", c.name);
    }
}

fn mentions(e: &Expr, s: usize) -> bool {
    match *e {
        Expr::Sym(x) => x == s,
        Expr::Neg(a) | Expr::Not(a) => mentions(a, s),
        Expr::Bin(_, a, b) => mentions(a, s) || mentions(b, s),
        _ => false,
    }
}

#[test]
fn the_edge_set_holds_every_listed_value() {
    let cfg = cfg();
    for c in all_contracts() {
        let edges = shapes::edges(c, &cfg, 7);
        let base = shapes::base(c, &cfg).unwrap();
        for (s, sym) in c.symbols.iter().enumerate() {
            let values: Vec<i64> = edges.cases.iter().map(|k| k.symbols[s]).collect();
            let ub = shapes::upper_bound(c, s).unwrap_or(i64::MAX);
            let allowed = |v: i64| v >= 1 && v <= ub && shapes::unary_ok(c, s, v);
            let mut wanted = vec![1];
            let block: i64 = c.block.iter().map(|&b| i64::from(b)).product();
            wanted.extend([block - 1, block + 1]);
            for a in c.args {
                if !a.dims.iter().any(|d| mentions(&d.expr, s)) {
                    continue;
                }
                if a.role != Role::Logical && a.align > a.dtype.size() {
                    let w = (a.align / a.dtype.size()) as i64;
                    wanted.extend([w - 1, w + 1]);
                }
                if a.role == Role::Logical {
                    let g = match a.dims[2].expr {
                        Expr::Const(g) => g,
                        _ => 128,
                    };
                    wanted.extend([g - 1, g + 1]);
                }
            }
            for v in wanted.into_iter().filter(|&v| allowed(v)) {
                assert!(
                    values.contains(&v),
                    "{}: {} = {v} is missing from the edges {values:?}; notes {:?}",
                    c.name,
                    sym.name,
                    edges.notes
                );
            }
            // A value that leaves a remainder against the pack factor, where one is allowed.
            if (1..=64).any(|v| v % shapes::PACK != 0 && allowed(v)) {
                assert!(
                    values.iter().any(|v| v % shapes::PACK != 0),
                    "{}: {}: no value off the pack factor in {values:?}",
                    c.name,
                    sym.name
                );
            }
            // The largest value allowed: in the edges, and nothing above it is valid.
            let params = shapes::params(c, &mut Rng::new(0));
            let top = *values.iter().max().unwrap();
            let mut above = base.clone();
            for v in top + 1..=top + 16 {
                above[s] = v;
                assert!(
                    shapes::check_case(c, &cfg, &above, &params, cfg.max_bytes).is_err(),
                    "{}: {} = {v} is valid, above the largest edge {top}",
                    c.name,
                    sym.name
                );
            }
            if ub < i64::MAX {
                let max = (1..=ub).rev().find(|&v| allowed(v)).unwrap();
                assert!(values.contains(&max), "{}: {} = {max}", c.name, sym.name);
            }
        }
    }
}

#[test]
fn the_largest_values_are_the_constraints_bounds() {
    let cfg = cfg();
    let contracts = all_contracts();
    let find = |name: &str| *contracts.iter().find(|c| c.name == name).unwrap();
    let has = |c: &KernelContract, sym: &str, v: i64| {
        let s = c.symbols.iter().position(|x| x.name == sym).unwrap();
        shapes::edges(c, &cfg, 1)
            .cases
            .iter()
            .any(|k| k.symbols[s] == v)
    };
    assert!(has(find("attn_scores"), "D", 256));
    // `where M <= 8` (or whatever bound the spec holds now): the bound itself.
    for name in ["gptq_gemv", "awq_gemv"] {
        let c = find(name);
        let m = c.symbols.iter().position(|x| x.name == "M").unwrap();
        let ub = shapes::upper_bound(c, m).expect("a bound on M");
        assert!(has(c, "M", ub), "{name}: M = {ub}");
    }
}

/// Symbols that a constraint relates (gptq_gemm_tma's `NY == N || 2 * NY == N`, N and NY
/// each held to other multiples) start from a base where the relation holds, and follow
/// each other to their largest values.
#[test]
fn related_symbols_are_tied_in_the_base() {
    let cfg = cfg();
    let contracts = all_contracts();
    let c = contracts
        .iter()
        .find(|c| c.name == "gptq_gemm_tma")
        .unwrap();
    let base = shapes::base(c, &cfg).unwrap();
    let params = shapes::params(c, &mut Rng::new(0));
    let valid = shapes::check_case(c, &cfg, &base, &params, cfg.max_bytes);
    assert!(valid.is_ok(), "{base:?}: {valid:?}");
    // G's largest, 512, comes from `tma(512, 32)`'s `512 % G == 0`, a bound of its own.
    let edges = shapes::edges(c, &cfg, 1);
    for sym in ["N", "NY", "G"] {
        let missing = format!("no largest value of {sym}");
        assert!(
            !edges.notes.iter().any(|n| n.ends_with(&missing)),
            "{:?}",
            edges.notes
        );
    }
    let labels: Vec<&str> = edges.cases.iter().map(|k| k.label.as_str()).collect();
    assert!(labels.contains(&"G = 512 (largest allowed)"), "{labels:?}");
}

/// Every symbol of every example kernel reaches a largest value: the search follows the
/// byte budget with the symbols a constraint ties to it grown alongside (gptq_gemv's NY
/// with N, paged_attn_rope's HKV with HQ).
#[test]
fn every_symbol_has_a_largest_value() {
    let cfg = cfg();
    for c in all_contracts() {
        let notes = shapes::edges(c, &cfg, 1).notes;
        let missing: Vec<&String> = notes
            .iter()
            .filter(|n| n.contains("no largest value"))
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
    }
}

#[test]
fn the_case_past_2_pow_31_elements_needs_the_budget() {
    let small = cfg();
    let big = Config::new(64 << 30, Config::typical_limits());
    for c in all_contracts() {
        let edges = shapes::edges(c, &small, 3);
        assert!(
            edges.notes.iter().any(|n| n.contains("past 2^31")),
            "{}: {:?}",
            c.name,
            edges.notes
        );
        let edges = shapes::edges(c, &big, 3);
        let past = edges
            .cases
            .iter()
            .find(|k| k.label.contains("past 2^31"))
            .unwrap_or_else(|| panic!("{}: {:?}", c.name, edges.notes));
        let most = (0..c.args.len())
            .filter(|&i| c.args[i].role != Role::Logical)
            .filter_map(|i| shapes::numel(c, i, &past.symbols, &past.params))
            .max()
            .unwrap();
        assert!(most > shapes::PAST_I32, "{}", c.name);
        assert_valid(c, &big, past);
    }
}

/// Every strided view lies inside its buffer, keeps the alignment and the byte bound.
#[test]
fn strided_layouts_stay_inside_their_buffers() {
    let cfg = cfg();
    for c in all_contracts() {
        for (i, case) in shapes::cases(c, &cfg, 11, 150).cases.iter().enumerate() {
            let mut rng = Rng::for_case(11, c.name, i, "tensors");
            for a in c.args.iter().filter(|a| a.role != Role::Logical) {
                let shape = physical_shape(a, case);
                let l: Layout = plan_layout(a, &shape, &mut rng);
                let numel: usize = shape.iter().product();
                assert!(
                    l.alloc as u128 <= 2 * numel as u128 + shapes::STRIDED_SLACK,
                    "{}: {l:?}",
                    a.name
                );
                let (mut lo, mut hi) = (l.offset as i128, l.offset as i128);
                for (&n, &s) in l.shape.iter().zip(&l.strides) {
                    let t = (n as i128 - 1) * s as i128;
                    if t < 0 { lo += t } else { hi += t }
                }
                assert!(lo >= 0 && hi < l.alloc as i128, "{}: {l:?}", a.name);
                assert_eq!(l.offset % (a.align / a.dtype.size()).max(1), 0, "{l:?}");
                if !a.strided {
                    assert_eq!(l, Layout::contiguous(&shape));
                }
                if a.role.writes() {
                    assert!(
                        !l.strides.contains(&0) || shape.iter().all(|&n| n <= 1),
                        "{l:?}"
                    );
                }
            }
        }
    }
}

/// The runtime's checker, on the CPU, over the planned tensors: every case passes, and
/// every mutated one is refused for its mutation. (The GPU tests launch the same plans.)
#[test]
fn the_checker_passes_every_case_and_refuses_every_mutation() {
    use ima_fuzz::mutate::Mutation;
    use ima_fuzz::tensors::{ArgPlan, plan};
    use ima_runtime::{DeviceId, TensorMeta, check};

    let cfg = cfg();
    let device = DeviceId {
        ordinal: 0,
        context: 1,
    };
    for c in all_contracts() {
        for (i, case) in shapes::cases(c, &cfg, 5, 150).cases.iter().enumerate() {
            for negative in [false, true] {
                let mut rng = Rng::for_case(5, c.name, i, "tensors");
                let mutation = if negative {
                    Mutation::choose(c, case, &mut rng)
                } else {
                    None
                };
                if negative && mutation.is_none() {
                    continue;
                }
                let plans = plan(c, case, &mut rng, mutation.as_ref());
                // Each buffer at its own 256-byte-aligned address, far apart.
                let metas: Vec<TensorMeta<'_>> = plans
                    .iter()
                    .enumerate()
                    .map(|(k, p)| match p {
                        ArgPlan::Logical { shape, dtype } => TensorMeta {
                            dtype: *dtype,
                            shape,
                            strides: &[0; 3],
                            offset: 0,
                            buffer_len: 0,
                            base_ptr: 0,
                            device,
                        },
                        ArgPlan::Tensor { layout, dtype, .. } => TensorMeta {
                            dtype: *dtype,
                            shape: &layout.shape,
                            strides: &layout.strides,
                            offset: layout.offset,
                            buffer_len: layout.alloc,
                            base_ptr: (k as u64 + 1) << 40,
                            device,
                        },
                    })
                    .collect();
                let result = check(c, device, &cfg.limits, &metas, &case.params);
                let what = format!("{}: {} [{}]", c.name, case.describe(c), case.label);
                match (&mutation, result) {
                    (None, Ok(plan)) => assert!(!plan.skip, "{what}: skipped"),
                    (None, Err(e)) => panic!("{what}: refused:\n{e}\n{plans:?}"),
                    // A bad entry is in the data, which the checker never sees: the shapes
                    // pass, and host validation or the kernel must catch it.
                    (Some(Mutation::Value { .. }), Ok(_)) => {}
                    (Some(m), Ok(_)) => panic!("{what}: accepted {m:?}"),
                    (Some(m), Err(e)) => assert!(
                        e.violations.iter().any(|v| m.expects(c, v)),
                        "{what}: {m:?} refused for another reason:\n{e}"
                    ),
                }
            }
        }
    }
}

/// The entries the fuzzer writes into an argument with a value contract keep it, as the
/// host's `validate_values` sees them: random ones in range (and the sentinel), ascending
/// runs from the first value to the last.
#[test]
fn generated_index_tensors_keep_their_value_contracts() {
    let cfg = cfg();
    let mut checked = 0;
    for c in all_contracts() {
        let cases = shapes::cases(c, &cfg, 3, 60);
        for case in &cases.cases {
            let mut rng = Rng::new(11);
            for (i, p) in plan(c, case, &mut rng, None).iter().enumerate() {
                let ArgPlan::Tensor {
                    layout,
                    values: Some(v),
                    ..
                } = p
                else {
                    continue;
                };
                if layout.alloc > 1 << 20 {
                    continue;
                }
                let a = &c.args[i];
                let last = a
                    .stored
                    .iter()
                    .position(|&l| l + 1 == a.dims.len())
                    .unwrap_or(0);
                // No valid entries (an empty range): the case is skipped, as the run does.
                let Some(entries) = valid_entries(v, &layout.shape, last, &mut rng) else {
                    continue;
                };
                let valid = ima_runtime::validate_values(
                    c,
                    i,
                    &layout.shape,
                    &entries,
                    &case.symbols,
                    &case.params,
                );
                assert!(
                    valid.is_ok(),
                    "{}: {}: {:?}",
                    c.name,
                    case.describe(c),
                    valid
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no argument with a value contract");
}

/// A `resident` grid gets no case of more blocks than the device has SMs (the most it
/// surely holds at once, whatever the kernel's occupancy): past it the runtime refuses
/// the launch, which would read as a finding. `handoff` launches a block per element.
#[test]
fn a_resident_grid_stays_within_the_sms() {
    let f = "tests/in/launch_forms.ima";
    let text = std::fs::read_to_string(format!("{}/../{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let contracts = contract::build_all(&contract::load(f, &text).unwrap());
    let c = contracts.iter().find(|c| c.name == "handoff").unwrap();
    let cfg = cfg();
    let cases = shapes::cases(c, &cfg, 5, 200).cases;
    assert!(!cases.is_empty());
    for case in &cases {
        let n = case.symbols[0];
        assert!(
            (1..=i64::from(cfg.limits.sms)).contains(&n),
            "N = {n} [{}]",
            case.label
        );
    }
    assert!(
        cases
            .iter()
            .any(|k| k.symbols[0] == i64::from(cfg.limits.sms))
    );
}

/// An empty tensor is an empty launch or a named refusal, never an arithmetic fault in the
/// launch's own expressions: for every kernel with a grid of its own, each symbol set to 0
/// in a valid case, where every constraint still holds with it, leaves every extent of the
/// grid computable (paged_attn's cap once divided by its pairs, so that a batch of 0
/// sequences was refused for a division by zero).
#[test]
fn a_symbol_of_zero_leaves_the_launch_grid_computable() {
    let cfg = cfg();
    for c in all_contracts() {
        let Launch::Grid { dims, .. } = c.launch else {
            continue;
        };
        let base = shapes::base(c, &cfg).unwrap();
        let params = shapes::params(c, &mut Rng::new(0));
        for (s, sym) in c.symbols.iter().enumerate() {
            let mut symbols = base.clone();
            symbols[s] = 0;
            let holds = c
                .constraints
                .iter()
                .all(|k| matches!(k.expr.eval(&symbols, &params), Ok(v) if v != 0));
            if !holds {
                continue;
            }
            for (axis, d) in ["x", "y", "z"].into_iter().zip(dims) {
                let extent = d.eval(&symbols, &params);
                assert!(
                    extent.is_ok(),
                    "{}: {} = 0 in the case {:?}: grid {axis}: {extent:?}",
                    c.name,
                    sym.name,
                    base
                );
            }
        }
    }
}

/// A quantized weight's K against its group: a partial group at each edge, at the nearest
/// K the kernel admits where K steps by 8 (gptq_gemm_wg32: 120, 136 and 264 for G = 128).
#[test]
fn partial_groups_are_edge_cases() {
    let cfg = cfg();
    for c in all_contracts() {
        let edges = shapes::edges(c, &cfg, 1);
        for (k, g) in c.args.iter().filter_map(shapes::symbolic_group) {
            for case in edges
                .cases
                .iter()
                .filter(|k| k.label.contains("G + 1") || k.label.contains("G - 1"))
            {
                let (kv, gv) = (case.symbols[k], case.symbols[g]);
                assert!(kv % gv != 0, "{}: {} ({kv}, {gv})", c.name, case.label);
            }
        }
    }
    let c = all_contracts()
        .into_iter()
        .find(|c| c.name == "gptq_gemm_wg32")
        .unwrap();
    let labels: Vec<String> = shapes::edges(c, &cfg, 1)
        .cases
        .into_iter()
        .map(|k| k.label)
        .collect();
    for kv in [120, 136, 264] {
        assert!(
            labels
                .iter()
                .any(|l| l.starts_with(&format!("G = 128, K = {kv} "))),
            "{labels:?}"
        );
    }
}
