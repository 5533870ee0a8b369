//! How many round trips to memory a thread waits for, one after another, on its way through a
//! function: a count of dependent loads as an in-order warp sees them.
//!
//! A warp issues in order. A load's destinations arrive one round trip after it issues, and
//! the first instruction that reads one of them (or a predicate computed from it, or a branch
//! on that predicate) stalls the warp until they do. Every instruction after the stall issues
//! later, loads included. So a value used before a later, independent load is issued costs
//! that load a round trip of its own, which is what a reading of the SASS looks for and what
//! this count makes mechanical: the time of each instruction, in round trips, is the latest
//! arrival it waits for, and each load's destinations arrive one round trip after its time.
//!
//! The count follows every path at once over the function's blocks (cfg.rs), keeping for
//! each register the latest arrival over the paths that reach an instruction (the slowest
//! path, predicated instructions taken as executed). It steps over loops on the way from the
//! entry, and counts one pass of each loop on its own, from its head with every register
//! arrived to its back edges. Shared, local and constant memory are not round trips; async
//! copies (cp.async) arrive when a DEPBAR waits for their group, and bulk copies when an
//! mbarrier's phase is checked in the thread that issued them (a consumer warp that did not
//! issue them does not wait by this count: a ring's steady state).
//!
//! Limits: a loop entered at two blocks (irreducible; ptxas makes none in the example
//! specs) is walked from the first way in only; a branch to an address that is no
//! instruction ends its path; a jump table (BRX, in checked entry points) is followed where
//! the listing names its targets (nvdisasm's), and reported where it does not (cuobjdump's).

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::cfg::Cfg;
use crate::instruction::{Effect, Instruction, Reg};
use crate::listing::Function;

/// A function's round trips.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundTrips {
    /// From the entry to the head of the first loop the entry reaches; none without a loop.
    pub to_first_loop: Option<u32>,
    /// From the entry to an exit, on the slowest path, stepping over every loop (whose
    /// passes are counted in `loops`).
    pub to_exit: u32,
    /// The waits of the slowest path from the entry to an exit, in order: `to_exit` of
    /// them, each one round trip after the one before.
    pub waits: Vec<Wait>,
    /// One pass of each loop the entry reaches, directly or in another loop, in the order of
    /// their heads.
    pub loops: Vec<Loop>,
    /// The addresses of the indirect branches (jump tables) reached whose targets the listing
    /// does not name, which the count cannot follow.
    pub indirect: Vec<u32>,
}

/// A loop: the address of its head, the round trips of one pass from it to its back edge
/// (stepping over the loops inside it), and the waits of the slowest such pass, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub head: u32,
    pub per_pass: u32,
    pub waits: Vec<Wait>,
}

/// An instruction at which the time grows: the address, the time after its wait, the
/// register it waited for and the load that wrote it (none for a wait on async or bulk
/// copies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    pub addr: u32,
    pub time: u32,
    pub on: Option<(Reg, u32)>,
}

/// Counts a function's round trips.
pub fn round_trips(function: &Function) -> RoundTrips {
    round_trips_ignoring(function, &|_| false)
}

/// Counts a function's round trips with the instructions `ignored` says (by address) left
/// out: they wait for nothing and set nothing, though their branches are followed (code
/// that runs only on an error path, which the caller knows by its source lines).
pub fn round_trips_ignoring(function: &Function, ignored: &dyn Fn(u32) -> bool) -> RoundTrips {
    let code = &function.instructions;
    let cfg = Cfg::new(code);
    let walk = |pass| walk(code, &cfg, pass, ignored);
    let from_entry = walk(None);
    // The loops the entry reaches, and those their passes reach (nested loops), in turn.
    let mut reached: Vec<usize> = from_entry.heads.iter().map(|&(l, _)| l).collect();
    let mut passes: BTreeMap<usize, Walk> = BTreeMap::new();
    while let Some(l) = reached.pop() {
        if passes.contains_key(&l) {
            continue;
        }
        let pass = walk(Some(l));
        reached.extend(pass.heads.iter().map(|&(inner, _)| inner));
        passes.insert(l, pass);
    }
    let mut indirect: Vec<u32> = from_entry.indirect.clone();
    indirect.extend(passes.values().flat_map(|p| p.indirect.iter().copied()));
    indirect.sort_unstable();
    indirect.dedup();
    RoundTrips {
        to_first_loop: from_entry.heads.first().map(|&(_, time)| time),
        to_exit: from_entry.end,
        waits: waits_of(&from_entry.why),
        // cfg.loops is in the order of the heads' addresses.
        loops: passes
            .into_iter()
            .map(|(l, pass)| Loop {
                head: code[cfg.blocks[cfg.loops[l].head].first].addr,
                per_pass: pass.end,
                waits: waits_of(&pass.why),
            })
            .collect(),
        indirect,
    }
}

/// What a walk over the code found.
#[derive(Default)]
struct Walk {
    /// The loops it stepped over, in the order it met them, and the time at each head.
    heads: Vec<(usize, u32)>,
    /// The latest time at an exit (from the entry) or at a branch back to the loop's head
    /// (a pass), and why.
    end: u32,
    why: Why,
    indirect: Vec<u32>,
}

impl Walk {
    fn end_at(&mut self, state: &State) {
        if state.time > self.end {
            self.end = state.time;
            self.why = state.why.clone();
        }
    }
}

/// Walks the code from the entry (`pass` none), or one pass of loop `pass` from its head
/// with every register arrived, block by block in reverse postorder, each block's state the
/// latest of the paths into it. Every other loop it meets is stepped over: the state at its
/// head goes on to the blocks the loop leaves to, since its passes are counted on their
/// own. A pass follows no edge out of its loop.
fn walk(
    code: &[Instruction],
    cfg: &Cfg,
    pass: Option<usize>,
    ignored: &dyn Fn(u32) -> bool,
) -> Walk {
    let body = pass.map(|l| &cfg.loops[l].body);
    let inside = |b: usize| body.is_none_or(|body| body.contains(&b));
    let mut found = Walk::default();
    let mut incoming: HashMap<usize, State> = HashMap::new();
    let flow_to = |incoming: &mut HashMap<usize, State>, b: usize, state: &State| match incoming
        .get_mut(&b)
    {
        Some(other) => other.join(state),
        None => {
            incoming.insert(b, state.clone());
        }
    };
    let Some(&entry) = cfg.order.first() else {
        return found;
    };
    incoming.insert(pass.map_or(entry, |l| cfg.loops[l].head), State::new());
    for &b in &cfg.order {
        if !inside(b) {
            continue;
        }
        let Some(mut state) = incoming.remove(&b) else {
            continue;
        };
        if let Some(l) = cfg.loop_at(b).filter(|&l| Some(l) != pass) {
            found.heads.push((l, state.time));
            state.step_over(cfg.loops[l].body.iter().flat_map(|&bb| {
                let block = &cfg.blocks[bb];
                &code[block.first..block.end]
            }));
            // A loop left by an exit in its body (`@P0 EXIT`) ends the entry's path there.
            if pass.is_none()
                && cfg.loops[l].body.iter().any(|&bb| {
                    let block = &cfg.blocks[bb];
                    code[block.first..block.end]
                        .iter()
                        .any(|i| i.effect == Effect::Exit)
                })
            {
                found.end_at(&state);
            }
            for exit in cfg.exits(l) {
                // An inner loop that leaves straight to the head of the loop passed (a
                // `continue` out of it) ends a pass there.
                if pass.is_some_and(|p| cfg.loops[p].head == exit) {
                    found.end_at(&state);
                } else if inside(exit) {
                    flow_to(&mut incoming, exit, &state);
                }
            }
            continue;
        }
        let block = &cfg.blocks[b];
        for instruction in &code[block.first..block.end] {
            if !ignored(instruction.addr) {
                state.issue(instruction);
            }
            match instruction.effect {
                Effect::Exit if pass.is_none() => found.end_at(&state),
                Effect::IndirectBranch if instruction.jump_targets.is_empty() => {
                    found.indirect.push(instruction.addr)
                }
                _ => {}
            }
        }
        for &s in &block.succs {
            if cfg.is_back_edge(b, s) {
                if pass.is_some_and(|l| cfg.loops[l].head == s) {
                    found.end_at(&state);
                }
            } else if inside(s) {
                flow_to(&mut incoming, s, &state);
            }
        }
    }
    found
}

/// The waits, in order, that made a time what it is: the last one here, the rest before.
struct Chain {
    wait: Wait,
    before: Why,
}
type Why = Option<Rc<Chain>>;

fn after(before: &Why, wait: Wait) -> Why {
    Some(Rc::new(Chain {
        wait,
        before: before.clone(),
    }))
}

/// The waits of a chain, first first.
fn waits_of(why: &Why) -> Vec<Wait> {
    let mut out = Vec::new();
    let mut at = why.as_deref();
    while let Some(link) = at {
        out.push(link.wait);
        at = link.before.as_deref();
    }
    out.reverse();
    out
}

/// When a value (a register's, a group of copies') arrives, why the load that fetched it
/// issued when it did, and that load's address.
#[derive(Clone, Default)]
struct Arrival {
    time: u32,
    why: Why,
    load: u32,
}

impl Arrival {
    fn later(&mut self, other: &Arrival) {
        if other.time > self.time {
            *self = other.clone();
        }
    }
}

/// A thread's time, in round trips, and why; when each register's value arrives; and the
/// async and bulk copies in flight.
#[derive(Clone)]
struct State {
    time: u32,
    why: Why,
    regs: Vec<Arrival>,
    /// Each committed group of async copies, oldest first, and the open one.
    groups: Vec<Arrival>,
    open_group: Arrival,
    /// The bulk copies this thread issued.
    bulk: Arrival,
}

impl State {
    fn new() -> State {
        State {
            time: 0,
            why: None,
            regs: vec![Arrival::default(); Reg::SLOTS],
            groups: Vec::new(),
            open_group: Arrival::default(),
            bulk: Arrival::default(),
        }
    }

    /// The latest of two paths' states, where they meet.
    fn join(&mut self, other: &State) {
        if other.time > self.time {
            self.time = other.time;
            self.why = other.why.clone();
        }
        for (a, b) in self.regs.iter_mut().zip(other.regs.iter()) {
            a.later(b);
        }
        // Groups line up from the newest, which a DEPBAR counts from.
        if other.groups.len() > self.groups.len() {
            let missing = other.groups.len() - self.groups.len();
            self.groups
                .splice(0..0, std::iter::repeat_n(Arrival::default(), missing));
        }
        let offset = self.groups.len() - other.groups.len();
        for (a, b) in self.groups[offset..].iter_mut().zip(other.groups.iter()) {
            a.later(b);
        }
        self.open_group.later(&other.open_group);
        self.bulk.later(&other.bulk);
    }

    /// What a loop stepped over leaves behind. What it computes, and what it loads and reads
    /// itself, has arrived: the loop waited for it, in the passes counted on their own.
    /// What it loads and does not read arrives a round trip after the loop began, at the
    /// earliest.
    fn step_over<'a>(&mut self, body: impl Iterator<Item = &'a Instruction> + Clone) {
        let now = Arrival {
            time: self.time,
            why: None,
            load: 0,
        };
        let mut read = vec![false; Reg::SLOTS];
        for i in body.clone() {
            for r in i.srcs.iter().chain(&i.guard) {
                read[r.slot()] = true;
            }
            for d in &i.dsts {
                self.regs[d.slot()] = now.clone();
            }
        }
        for i in body.filter(|i| i.effect == Effect::Load) {
            let loaded = Arrival {
                time: self.time + 1,
                why: self.why.clone(),
                load: i.addr,
            };
            for d in i.dsts.iter().filter(|d| !read[d.slot()]) {
                self.regs[d.slot()].later(&loaded);
            }
        }
    }

    /// Waits until `arrival`, at the instruction at `addr`, for `on`.
    fn wait(&mut self, arrival: &Arrival, addr: u32, on: Option<(Reg, u32)>) {
        if arrival.time > self.time {
            self.time = arrival.time;
            self.why = after(
                &arrival.why,
                Wait {
                    addr,
                    time: arrival.time,
                    on,
                },
            );
        }
    }

    /// Issues an instruction: waits for what it reads, and sets when what it writes arrives.
    fn issue(&mut self, instruction: &Instruction) {
        let addr = instruction.addr;
        // The first, in operand order, of those that arrive last.
        let latest = instruction
            .guard
            .iter()
            .chain(instruction.srcs.iter())
            .copied()
            .reduce(|a, b| {
                if self.regs[b.slot()].time > self.regs[a.slot()].time {
                    b
                } else {
                    a
                }
            });
        if let Some(r) = latest {
            let arrival = self.regs[r.slot()].clone();
            self.wait(&arrival, addr, Some((r, arrival.load)));
        }
        let issued = Arrival {
            time: self.time + 1,
            why: self.why.clone(),
            load: addr,
        };
        // A result that is not a load's arrives now, and so never makes a wait.
        let mut ready = Arrival {
            time: self.time,
            why: None,
            load: 0,
        };
        match instruction.effect {
            Effect::Load => ready = issued,
            Effect::AsyncCopy => self.open_group.later(&issued),
            Effect::AsyncCommit => self.groups.push(std::mem::take(&mut self.open_group)),
            Effect::AsyncWait(newer) => {
                let older = self.groups.len().saturating_sub(newer as usize);
                let waited = self.groups[..older]
                    .iter()
                    .fold(Arrival::default(), |mut a, b| {
                        a.later(b);
                        a
                    });
                self.wait(&waited, addr, None);
                ready.time = self.time;
            }
            Effect::BulkCopy => self.bulk.later(&issued),
            Effect::BulkWait => {
                let waited = self.bulk.clone();
                self.wait(&waited, addr, None);
                ready.time = self.time;
            }
            Effect::Branch { .. } | Effect::IndirectBranch | Effect::Exit | Effect::Compute => {}
        }
        for d in &instruction.dsts {
            self.regs[d.slot()] = ready.clone();
        }
    }
}
