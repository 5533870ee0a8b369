//! Round trips counted on small hand-written listings, each worked out by hand from the
//! in-order rule: a load's value arrives one round trip after the load issues, and an
//! instruction that reads it, a predicate made from it or a branch on that predicate, stalls
//! everything after it until then.

use ima_sass::{
    Function, Loop, Reg, RoundTrips, Wait, functions, round_trips, round_trips_ignoring,
};
use proptest::prelude::*;

/// A function written as (address, instruction) pairs, as cuobjdump lists it.
fn function(body: &[(u32, &str)]) -> Function {
    let mut listing = String::from("\t\tFunction : k\n");
    for (addr, text) in body {
        listing += &format!("        /*{addr:04x}*/                   {text} ;\n");
    }
    functions(&listing).expect("the listing parses").remove(0)
}

/// Counts a function written as (address, instruction) pairs.
fn count(body: &[(u32, &str)]) -> RoundTrips {
    round_trips(&function(body))
}

/// The same, with addresses 0x10 apart from 0.
fn count_straight(body: &[&str]) -> RoundTrips {
    let numbered: Vec<(u32, &str)> = body
        .iter()
        .enumerate()
        .map(|(i, t)| (i as u32 * 0x10, *t))
        .collect();
    count(&numbered)
}

#[test]
fn loads_issued_together_cost_one_round_trip() {
    let c = count_straight(&[
        "LDG.E.128 R4, desc[UR4][R2.64]",
        "LDG.E.128 R8, desc[UR4][R12.64]",
        "FADD R16, R4, R8",
        "STG.E desc[UR4][R2.64], R16",
        "EXIT",
    ]);
    assert_eq!(c.to_exit, 1);
    assert_eq!(c.to_first_loop, None);
    assert_eq!(
        c.waits,
        vec![Wait {
            addr: 0x20,
            time: 1,
            on: Some((Reg::R(4), 0x00))
        }]
    );
}

#[test]
fn a_use_before_a_later_independent_load_costs_that_load_a_round_trip() {
    // add_rms_norm's two kept vectors before d12e840: the first one's sum came before the
    // second one's loads.
    let c = count_straight(&[
        "LDG.E.128 R4, desc[UR4][R2.64]",
        "FADD R16, R4, R5",
        "LDG.E.128 R8, desc[UR4][R12.64]",
        "FADD R17, R8, R9",
        "EXIT",
    ]);
    assert_eq!(c.to_exit, 2);
}

#[test]
fn an_address_made_from_a_loaded_value_is_a_chain() {
    // A page id, then the page.
    let c = count_straight(&[
        "LDG.E R4, desc[UR4][R2.64]",
        "IMAD.WIDE R6, R4, 0x4, R8",
        "LDG.E R10, desc[UR4][R6.64]",
        "FADD R12, R10, R10",
        "EXIT",
    ]);
    assert_eq!(c.to_exit, 2);
}

#[test]
fn a_branch_on_a_loaded_value_holds_back_the_loads_after_it() {
    // A length's check before the page ids' load: two round trips; the load issued before
    // the check: one.
    let checked_first = count(&[
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "ISETP.GE.AND P0, PT, R4, UR5, PT"),
        (0x20, "@P0 BRA 0x60"),
        (0x30, "LDG.E R6, desc[UR4][R8.64]"),
        (0x40, "FADD R10, R6, R6"),
        (0x50, "EXIT"),
        (0x60, "EXIT"),
    ]);
    assert_eq!(checked_first.to_exit, 2);
    let loaded_first = count(&[
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "LDG.E R6, desc[UR4][R8.64]"),
        (0x20, "ISETP.GE.AND P0, PT, R4, UR5, PT"),
        (0x30, "@P0 BRA 0x60"),
        (0x40, "FADD R10, R6, R6"),
        (0x50, "EXIT"),
        (0x60, "EXIT"),
    ]);
    assert_eq!(loaded_first.to_exit, 1);
}

#[test]
fn where_paths_meet_each_register_arrives_at_its_latest() {
    // R4 is loaded only on the fall-through path; after the paths meet, its use waits for
    // that load. The branch's own path reaches the use at time 0, the other at 0 too (R4 is
    // not used on it), so the wait is the register's, not a path's time.
    let c = count(&[
        (0x00, "@P0 BRA 0x20"),
        (0x10, "LDG.E R4, desc[UR4][R2.64]"),
        (0x20, "FADD R6, R4, R4"),
        (0x30, "EXIT"),
    ]);
    assert_eq!(c.to_exit, 1);
    assert_eq!(
        c.waits,
        vec![Wait {
            addr: 0x20,
            time: 1,
            on: Some((Reg::R(4), 0x10))
        }]
    );
}

#[test]
fn a_guarded_exit_does_not_end_the_path() {
    let c = count_straight(&[
        "LDG.E R4, desc[UR4][R2.64]",
        "ISETP.GE.AND P0, PT, R4, UR5, PT",
        "@P0 EXIT",
        "LDG.E R6, desc[UR4][R8.64]",
        "FADD R10, R6, R6",
        "EXIT",
    ]);
    assert_eq!(c.to_exit, 2);
}

#[test]
fn a_loop_is_counted_once_a_pass_and_stepped_over_on_the_way_out() {
    let c = count(&[
        // Before the loop: one round trip.
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "FADD R5, R4, R4"),
        // A pass: x, then a weight at an address x gives: two.
        (0x20, "LDG.E R6, desc[UR4][R8.64]"),
        (0x30, "IMAD.WIDE R10, R6, 0x2, R12"),
        (0x40, "LDG.E R14, desc[UR4][R10.64]"),
        (0x50, "FFMA R5, R14, R14, R5"),
        (0x60, "ISETP.GE.AND P0, PT, R5, UR5, PT"),
        (0x70, "@!P0 BRA 0x20"),
        // After it: R5 is the loop's, arrived, and nothing new is loaded.
        (0x80, "STG.E desc[UR4][R2.64], R5"),
        (0x90, "EXIT"),
    ]);
    assert_eq!(c.to_first_loop, Some(1));
    assert_eq!(
        c.loops
            .iter()
            .map(|l| (l.head, l.per_pass))
            .collect::<Vec<_>>(),
        vec![(0x20, 2)]
    );
    assert_eq!(c.to_exit, 1);
}

#[test]
fn an_inner_loop_is_stepped_over_in_its_outer_loops_pass() {
    let c = count(&[
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "FADD R5, R4, R4"),
        // Inner: a dependent pair, two a pass.
        (0x20, "LDG.E R6, desc[UR4][R8.64]"),
        (0x30, "IMAD.WIDE R10, R6, 0x2, R12"),
        (0x40, "LDG.E R14, desc[UR4][R10.64]"),
        (0x50, "FADD R5, R14, R5"),
        (0x60, "@P1 BRA 0x20"),
        (0x70, "STG.E desc[UR4][R2.64], R5"),
        (0x80, "@P2 BRA 0x0"),
        (0x90, "EXIT"),
    ]);
    assert_eq!(
        c.loops
            .iter()
            .map(|l| (l.head, l.per_pass))
            .collect::<Vec<_>>(),
        vec![(0x00, 1), (0x20, 2)],
        "the outer pass waits once before the inner loop, which it steps over"
    );
    assert_eq!(c.to_first_loop, Some(0));
    assert_eq!(c.to_exit, 0);
}

#[test]
fn async_copies_arrive_when_their_group_is_waited_for() {
    // Two groups; waiting until one is in flight waits for the first (issued at 0), then a
    // load issued after the wait arrives at 2. Waiting for none in flight after it: both
    // groups, the second issued at 0 as well.
    let c = count_straight(&[
        "LDGSTS.E.BYPASS.128 [R20], desc[UR4][R2.64]",
        "LDGDEPBAR",
        "LDGSTS.E.BYPASS.128 [R20+0x1000], desc[UR4][R4.64]",
        "LDGDEPBAR",
        "DEPBAR.LE SB0, 0x1",
        "LDG.E R6, desc[UR4][R8.64]",
        "FADD R10, R6, R6",
        "DEPBAR.LE SB0, 0x0",
        "EXIT",
    ]);
    assert_eq!(c.to_exit, 2);
    assert_eq!(
        c.waits
            .iter()
            .map(|w| (w.addr, w.time, w.on))
            .collect::<Vec<_>>(),
        vec![(0x40, 1, None), (0x60, 2, Some((Reg::R(6), 0x50)))]
    );
}

#[test]
fn a_phase_wait_waits_for_the_bulk_copies_its_thread_issued() {
    let producer = count_straight(&[
        "UTMALDG.2D [UR8], [UR4], desc[UR10]",
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R4+URZ+0x20], R5",
        "EXIT",
    ]);
    assert_eq!(producer.to_exit, 1);
    // A consumer that issued no copy does not wait by this count.
    let consumer = count_straight(&[
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R4+URZ+0x20], R5",
        "EXIT",
    ]);
    assert_eq!(consumer.to_exit, 0);
}

#[test]
fn an_inner_loop_that_leaves_to_the_outer_head_ends_the_outer_pass() {
    // The inner loop (0x20 to 0x50) leaves by 0x40's branch straight back to the outer
    // head: the outer pass is its wait before the inner loop, which it steps over.
    let c = count(&[
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "FADD R5, R4, R4"),
        (0x20, "LDG.E R6, desc[UR4][R8.64]"),
        (0x30, "FADD R7, R6, R6"),
        (0x40, "@!P0 BRA 0x0"),
        (0x50, "@P1 BRA 0x20"),
        (0x60, "EXIT"),
    ]);
    assert_eq!(
        c.loops
            .iter()
            .map(|l| (l.head, l.per_pass))
            .collect::<Vec<_>>(),
        vec![(0x00, 1), (0x20, 1)]
    );
}

#[test]
fn what_a_loop_loads_is_waited_for_after_it_and_an_exit_in_it_ends_the_path() {
    // R6, loaded in the loop and read there, was waited for in its pass. R10, loaded in it
    // and read only after it (a prefetch), arrives a round trip after the loop began at the
    // earliest. R7, computed in it, has arrived.
    let c = count(&[
        (0x00, "LDG.E R6, desc[UR4][R8.64]"),
        (0x10, "LDG.E R10, desc[UR4][R12.64]"),
        (0x20, "FADD R7, R6, R6"),
        (0x30, "@P0 BRA 0x0"),
        (0x40, "FADD R9, R6, R7"),
        (0x50, "FADD R11, R10, R10"),
        (0x60, "EXIT"),
    ]);
    assert_eq!(
        c.loops.iter().map(|l| l.per_pass).collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(c.to_exit, 1);
    assert_eq!(
        c.waits.iter().map(|w| (w.addr, w.on)).collect::<Vec<_>>(),
        vec![(0x50, Some((Reg::R(10), 0x10)))]
    );
    // A loop left only by an exit in its body: the entry's path ends there, after one
    // round trip before the loop.
    let c = count(&[
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "FADD R5, R4, R4"),
        (0x20, "@P0 EXIT"),
        (0x30, "BRA 0x20"),
    ]);
    assert_eq!((c.to_first_loop, c.to_exit), (Some(1), 1));
}

#[test]
fn a_branch_back_from_after_the_exit_is_a_join_not_a_loop() {
    // ptxas's fallback for a shuffle in a divergent warp: BRA.DIV to a block after the
    // exit, which branches back to the code after the shuffle. 0x30 does not dominate
    // 0x70 (the shuffle's path reaches 0x30 without it), so 0x70 -> 0x30 closes no loop.
    let c = count(&[
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "BRA.DIV UR4, 0x60"),
        (0x20, "SHFL.IDX PT, R6, R4, RZ, 0x1f"),
        (0x30, "LDG.E R8, desc[UR4][R6.64]"),
        (0x40, "FADD R10, R8, R8"),
        (0x50, "EXIT"),
        (0x60, "MOV R6, R4"),
        (0x70, "BRA 0x30"),
    ]);
    assert_eq!(c.loops, Vec::<Loop>::new());
    assert_eq!(c.to_first_loop, None);
    assert_eq!(c.to_exit, 2, "R4 on either path, then R8");
}

#[test]
fn a_jump_table_is_reported_not_followed() {
    let c = count(&[
        (0x00, "LDC R4, c[0x2][R0]"),
        (0x10, "BRX R4 -0x20"),
        (0x20, "LDG.E R6, desc[UR4][R8.64]"),
        (0x30, "FADD R10, R6, R6"),
        (0x40, "EXIT"),
    ]);
    assert_eq!(c.indirect, vec![0x10]);
    assert_eq!(c.to_exit, 0);
}

#[test]
fn a_jump_table_whose_targets_are_listed_is_followed() {
    // As nvdisasm lists one (labels already addresses): the target at 0x20 waits for R6.
    let c = count(&[
        (0x00, "LDG.E R6, desc[UR4][R8.64]"),
        (0x10, "BRX R4 -0x20 (*\"BRANCH_TARGETS 0x20,0x30\"*)"),
        (0x20, "FADD R10, R6, R6"),
        (0x30, "EXIT"),
    ]);
    assert_eq!(c.indirect, Vec::<u32>::new());
    assert_eq!(c.to_exit, 1);
}

#[test]
fn a_subroutine_after_the_exit_is_not_the_entrys_path() {
    // ptxas places a noinline function's body after the entry's exits; a CALL goes on.
    let c = count(&[
        (0x00, "CALL.REL.NOINC 0x30"),
        (0x10, "EXIT"),
        (0x20, "BRA 0x20"),
        (0x30, "LDG.E R6, desc[UR4][R8.64]"),
        (0x40, "FADD R10, R6, R6"),
        (0x50, "RET.REL.NODEC R20 0x0"),
    ]);
    assert_eq!(c.to_exit, 0);
    assert_eq!(
        c.loops,
        Vec::<Loop>::new(),
        "ptxas's trailing self-branch is reached by no path"
    );
}

#[test]
fn ignored_instructions_wait_for_nothing_and_load_nothing_but_keep_their_branches() {
    // An error path's claim (an atomic that returns, of the loaded value) and its use,
    // ignored; its branch back to the hot path is still followed.
    let body = [
        (0x00, "LDG.E R4, desc[UR4][R2.64]"),
        (0x10, "@P0 BRA 0x40"),
        (0x20, "ATOMG.E.CAS.STRONG.GPU PT, R8, [R6+0x4], R4, R11"),
        (0x30, "ISETP.NE.AND P1, PT, R8, RZ, PT"),
        (0x40, "FADD R5, R4, R4"),
        (0x50, "EXIT"),
    ];
    let f = &function(&body);
    assert_eq!(
        round_trips(f).to_exit,
        2,
        "R4, then the claim, one after the other"
    );
    let apart = round_trips_ignoring(f, &|addr| (0x20..0x40).contains(&addr));
    assert_eq!(apart.to_exit, 1);
    assert_eq!(
        apart.waits.iter().map(|w| w.addr).collect::<Vec<_>>(),
        vec![0x40]
    );
}

/// A straight-line body of loads and arithmetic on registers R0-R15, each load's address
/// from a register pair.
fn straight_line() -> impl Strategy<Value = Vec<String>> {
    let instruction = prop_oneof![
        (0u8..16, 0u8..8).prop_map(|(d, a)| format!("LDG.E R{d}, desc[UR4][R{}.64]", 2 * a)),
        (0u8..16, 0u8..16, 0u8..16).prop_map(|(d, a, b)| format!("FADD R{d}, R{a}, R{b}")),
    ];
    proptest::collection::vec(instruction, 0..24)
}

fn straight(body: &[String]) -> u32 {
    let mut lines: Vec<&str> = body.iter().map(String::as_str).collect();
    lines.push("EXIT");
    count_straight(&lines).to_exit
}

proptest! {
    // Each round trip waits for a load issued at the time before it: never more round trips
    // than loads.
    #[test]
    fn never_more_round_trips_than_loads(body in straight_line()) {
        let loads = body.iter().filter(|l| l.starts_with("LDG")).count() as u32;
        prop_assert!(straight(&body) <= loads);
    }

    // Arithmetic on registers no load writes (R100 and up) changes nothing.
    #[test]
    fn arithmetic_on_other_registers_waits_for_nothing(body in straight_line(), at in 0usize..24, d in 100u8..110) {
        let mut padded = body.clone();
        padded.insert(at.min(body.len()), format!("FADD R{d}, R{}, R{}", d + 1, d + 2));
        prop_assert_eq!(straight(&padded), straight(&body));
    }

    // The same loads, all issued before any use, with addresses no load writes: at most one
    // round trip, however the original interleaved them.
    #[test]
    fn independent_loads_issued_first_cost_at_most_one(body in straight_line()) {
        let (mut loads, uses): (Vec<String>, Vec<String>) = body.iter().cloned().partition(|l| l.starts_with("LDG"));
        for (i, l) in loads.iter_mut().enumerate() {
            // The address becomes the pair at R100 + 2i, which no load writes.
            let start = l.find("][R").unwrap() + 3;
            let end = l[start..].find(".64").unwrap() + start;
            l.replace_range(start..end, &(100 + 2 * i).to_string());
        }
        let reordered: Vec<String> = loads.into_iter().chain(uses).collect();
        prop_assert!(straight(&reordered) <= 1);
    }
}

/// One instruction of a straight-line body, for the cycle-level oracle below: a load of
/// `dst` from the pair at `a`, or `dst = a + b`.
#[derive(Clone, Debug)]
enum Op {
    Load { dst: u8, a: u8 },
    Add { dst: u8, a: u8, b: u8 },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        (0u8..12, 0u8..6).prop_map(|(dst, a)| Op::Load { dst, a: 2 * a }),
        (0u8..12, 0u8..12, 0u8..12).prop_map(|(dst, a, b)| Op::Add { dst, a, b }),
    ];
    proptest::collection::vec(op, 0..40)
}

/// The round trips of a body by a different model: cycles. One instruction issues a cycle,
/// in order, once its sources are ready; an add's result is ready the next cycle, a load's
/// `LATENCY` cycles later. Round trips are the last instruction's issue cycle over
/// `LATENCY`, rounded down (40 instructions can add no more than 40 cycles).
fn cycles(body: &[Op]) -> u32 {
    const LATENCY: u64 = 1_000_000;
    let mut ready = [0u64; 16];
    let mut cycle = 0u64;
    let mut last = 0u64;
    for op in body {
        let (sources, dst, latency) = match *op {
            Op::Load { dst, a } => (vec![a, a + 1], dst, LATENCY),
            Op::Add { dst, a, b } => (vec![a, b], dst, 1),
        };
        let issue = sources
            .iter()
            .map(|&r| ready[r as usize])
            .fold(cycle, u64::max);
        ready[dst as usize] = issue + latency;
        last = issue;
        cycle = issue + 1;
    }
    (last / LATENCY) as u32
}

proptest! {
    #[test]
    fn the_count_agrees_with_a_cycle_by_cycle_issue(body in ops()) {
        let lines: Vec<String> = body
            .iter()
            .map(|op| match *op {
                Op::Load { dst, a } => format!("LDG.E R{dst}, desc[UR4][R{a}.64]"),
                Op::Add { dst, a, b } => format!("FADD R{dst}, R{a}, R{b}"),
            })
            .collect();
        prop_assert_eq!(straight(&lines), cycles(&body));
    }
}
