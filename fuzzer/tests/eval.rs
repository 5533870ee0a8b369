//! One evaluator: a random contract expression gives the same value (or the same error)
//! through the spec language's IR (`ir::Expr::eval`, `eval_const`, as the checker folds)
//! and through the static form the runtime checks launches with (`ima::Expr::eval`, the
//! IR converted as `imac fuzz` converts it).

use ima_dsl::ir::{BinOp, Expr};
use ima_fuzz::contract::expr as to_static;
use ima_runtime::Scalar;
use proptest::prelude::*;

const SYMBOLS: usize = 3;
const PARAMS: usize = 2;

fn leaf(symbolic: bool) -> BoxedStrategy<Expr> {
    let consts = prop_oneof![
        -3i64..=9,
        Just(i64::MAX),
        Just(i64::MIN),
        Just(1 << 31),
        any::<i64>(),
    ]
    .prop_map(Expr::Const);
    if symbolic {
        prop_oneof![
            3 => consts,
            2 => (0..SYMBOLS).prop_map(Expr::Sym),
            1 => (0..PARAMS).prop_map(Expr::Param),
        ]
        .boxed()
    } else {
        consts.boxed()
    }
}

fn expr(symbolic: bool) -> impl Strategy<Value = Expr> {
    leaf(symbolic).prop_recursive(5, 32, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|a| Expr::Neg(Box::new(a))),
            inner.clone().prop_map(|a| Expr::Not(Box::new(a))),
            (
                proptest::sample::select(BinOp::ALL.to_vec()),
                inner.clone(),
                inner
            )
                .prop_map(|(op, a, b)| Expr::Bin(op, Box::new(a), Box::new(b))),
        ]
    })
}

fn value() -> impl Strategy<Value = i64> {
    prop_oneof![4 => -4i64..=40, 1 => any::<i64>()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_ir_and_the_static_form_evaluate_alike(
        e in expr(true),
        symbols in proptest::collection::vec(value(), SYMBOLS),
        params in proptest::collection::vec(value(), PARAMS),
    ) {
        let scalars: Vec<Scalar> = params.iter().map(|&v| Scalar::I64(v)).collect();
        prop_assert_eq!(e.eval(&symbols, &params), to_static(&e).eval(&symbols, &scalars));
    }

    #[test]
    fn constant_folding_agrees_with_launch_time_evaluation(e in expr(false)) {
        prop_assert_eq!(e.eval_const(), to_static(&e).eval(&[], &[]).ok());
    }
}

#[test]
fn and_or_short_circuit_in_folding_as_at_launch() {
    let div0 = Expr::Bin(
        BinOp::Div,
        Box::new(Expr::Const(1)),
        Box::new(Expr::Const(0)),
    );
    let and = Expr::Bin(BinOp::And, Box::new(Expr::Const(0)), Box::new(div0.clone()));
    let or = Expr::Bin(BinOp::Or, Box::new(Expr::Const(2)), Box::new(div0.clone()));
    assert_eq!(and.eval_const(), Some(0));
    assert_eq!(or.eval_const(), Some(1));
    assert_eq!(div0.eval_const(), None);
    assert_eq!(to_static(&and).eval(&[], &[]), Ok(0));
    assert_eq!(to_static(&or).eval(&[], &[]), Ok(1));
}
