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
//! The count follows every forward path at once, keeping for each register the latest arrival
//! over the paths that reach an instruction (the slowest path, predicated instructions taken
//! as executed). It passes a loop's body once: for the path from the entry, back edges are
//! not followed; for each loop, one pass is counted from its head, with every register
//! arrived, to its back edge. Shared, local and constant memory are not round trips; async
//! copies (cp.async) arrive when a DEPBAR waits for their group, and bulk copies when an
//! mbarrier's phase is checked in the thread that issued them (a consumer warp that did not
//! issue them does not wait by this count: a ring's steady state).

use std::collections::BTreeMap;

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
    /// Where the path from the entry waits.
    pub waits: Vec<Wait>,
    /// One pass of each loop the entry reaches, directly or in another loop, in the order of
    /// their heads.
    pub loops: Vec<Loop>,
    /// The addresses of the indirect branches (jump tables) reached, which the count does not
    /// follow.
    pub indirect: Vec<u32>,
}

/// A loop: the address of its head, the round trips of one pass from it to its back edge
/// (stepping over the loops inside it), and where the pass waits.
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
    let loops = loops(code);
    let walk = |pass| walk(code, &loops, pass, ignored);
    let from_entry = walk(None);
    // The loops the entry reaches, and those their passes reach (nested loops), in turn.
    let mut reached: Vec<u32> = from_entry.heads.keys().copied().collect();
    let mut passes = Vec::new();
    while let Some(head) = reached.pop() {
        let Some(&(_, last)) = loops.iter().find(|l| l.0 == head) else {
            continue;
        };
        if passes
            .iter()
            .any(|(p, _): &(Loop, Vec<u32>)| p.head == head)
        {
            continue;
        }
        let pass = walk(Some((head, last)));
        reached.extend(pass.heads.keys().copied());
        let per_pass = pass.back_edges.get(&head).copied().unwrap_or(0);
        passes.push((
            Loop {
                head,
                per_pass,
                waits: pass.waits,
            },
            pass.indirect,
        ));
    }
    passes.sort_by_key(|(p, _)| p.head);
    let mut indirect = from_entry.indirect;
    indirect.extend(passes.iter().flat_map(|(_, i)| i.iter().copied()));
    indirect.sort_unstable();
    indirect.dedup();
    RoundTrips {
        to_first_loop: from_entry.heads.values().next().copied(),
        to_exit: from_entry.exit,
        waits: from_entry.waits,
        loops: passes.into_iter().map(|p| p.0).collect(),
        indirect,
    }
}

/// Every loop of the code, as its head and its last back edge, in the order of their heads.
fn loops(code: &[Instruction]) -> Vec<(u32, u32)> {
    let mut last_edge: BTreeMap<u32, u32> = BTreeMap::new();
    for i in code {
        if let Effect::Branch { target, .. } = i.effect
            && target <= i.addr
        {
            let last = last_edge.entry(target).or_insert(i.addr);
            *last = (*last).max(i.addr);
        }
    }
    last_edge.into_iter().collect()
}

/// What a walk over a stretch of code found.
#[derive(Default)]
struct Walk {
    /// The time at each loop head the walk reached, by its address.
    heads: BTreeMap<u32, u32>,
    /// The latest time at a back edge, by its target.
    back_edges: BTreeMap<u32, u32>,
    /// The latest time at an exit.
    exit: u32,
    waits: Vec<Wait>,
    indirect: Vec<u32>,
}

/// Walks the code from the entry (`pass` none) or one pass of the loop `pass` (its head and
/// last back edge) from a state where every register has arrived, following the forward
/// branches that stay inside. Every other loop it meets is stepped over: the state at its
/// head goes on after its last back edge, since its passes are counted on their own.
fn walk(
    code: &[Instruction],
    loops: &[(u32, u32)],
    pass: Option<(u32, u32)>,
    ignored: &dyn Fn(u32) -> bool,
) -> Walk {
    let (first, last) = pass.unwrap_or((0, u32::MAX));
    let start = code
        .iter()
        .position(|i| i.addr >= first)
        .unwrap_or(code.len());
    let stepped_over: BTreeMap<u32, u32> =
        loops.iter().copied().filter(|&l| Some(l) != pass).collect();
    let mut found = Walk::default();
    let mut incoming: BTreeMap<u32, State> = BTreeMap::new();
    let mut current = Some(State::new());
    let flow_to = |incoming: &mut BTreeMap<u32, State>, target: u32, state: &State| match incoming
        .get_mut(&target)
    {
        Some(other) => other.join(state),
        None => {
            incoming.insert(target, state.clone());
        }
    };
    for (at, instruction) in code
        .iter()
        .enumerate()
        .skip(start)
        .take_while(|(_, i)| i.addr <= last)
    {
        if let Some(branched) = incoming.remove(&instruction.addr) {
            current = Some(match current {
                Some(mut fallen) => {
                    fallen.join(&branched);
                    fallen
                }
                None => branched,
            });
        }
        let Some(state) = current.as_mut() else {
            continue;
        };
        if let Some(&loop_end) = stepped_over.get(&instruction.addr) {
            found.heads.insert(instruction.addr, state.time);
            if let Some(after) = code[at..].iter().find(|i| i.addr > loop_end)
                && after.addr <= last
            {
                flow_to(&mut incoming, after.addr, state);
            }
            current = None;
            continue;
        }
        let before = state.time;
        let on = if ignored(instruction.addr) {
            None
        } else {
            state.issue(instruction)
        };
        if state.time > before {
            found.waits.push(Wait {
                addr: instruction.addr,
                time: state.time,
                on,
            });
        }
        let guarded = instruction.guard.is_some();
        match instruction.effect {
            Effect::Branch {
                target,
                conditional,
            } => {
                if target > instruction.addr {
                    if target <= last {
                        flow_to(&mut incoming, target, state);
                    }
                } else {
                    let at = found.back_edges.entry(target).or_insert(0);
                    *at = (*at).max(state.time);
                }
                if !conditional && !guarded {
                    current = None;
                }
            }
            Effect::Exit => {
                found.exit = found.exit.max(state.time);
                if !guarded {
                    current = None;
                }
            }
            Effect::IndirectBranch => {
                found.indirect.push(instruction.addr);
                current = None;
            }
            _ => {}
        }
    }
    found
}

/// A thread's time, in round trips, when each register's value arrives, and the load that
/// set that time.
#[derive(Clone)]
struct State {
    time: u32,
    arrives: [u32; Reg::SLOTS],
    loaded_by: [u32; Reg::SLOTS],
    /// When each committed group of async copies arrives, oldest first, and the open one.
    groups: Vec<u32>,
    open_group: u32,
    /// When the bulk copies this thread issued arrive.
    bulk: u32,
}

impl State {
    fn new() -> State {
        State {
            time: 0,
            arrives: [0; Reg::SLOTS],
            loaded_by: [0; Reg::SLOTS],
            groups: Vec::new(),
            open_group: 0,
            bulk: 0,
        }
    }

    /// The latest of two paths' states, where they meet.
    fn join(&mut self, other: &State) {
        self.time = self.time.max(other.time);
        for slot in 0..Reg::SLOTS {
            if other.arrives[slot] > self.arrives[slot] {
                self.arrives[slot] = other.arrives[slot];
                self.loaded_by[slot] = other.loaded_by[slot];
            }
        }
        // Groups line up from the newest, which a DEPBAR counts from.
        if other.groups.len() > self.groups.len() {
            let missing = other.groups.len() - self.groups.len();
            self.groups.splice(0..0, std::iter::repeat_n(0, missing));
        }
        let offset = self.groups.len() - other.groups.len();
        for (a, b) in self.groups[offset..].iter_mut().zip(other.groups.iter()) {
            *a = (*a).max(*b);
        }
        self.open_group = self.open_group.max(other.open_group);
        self.bulk = self.bulk.max(other.bulk);
    }

    /// Issues an instruction: waits for what it reads, and sets when what it writes arrives.
    /// Returns the register it waited for longest and the load that wrote it, if it waited
    /// for one.
    fn issue(&mut self, instruction: &Instruction) -> Option<(Reg, u32)> {
        // The first, in operand order, of those that arrive last.
        let latest = instruction
            .guard
            .iter()
            .chain(instruction.srcs.iter())
            .copied()
            .reduce(|a, b| {
                if self.arrives[b.slot()] > self.arrives[a.slot()] {
                    b
                } else {
                    a
                }
            });
        let on = latest
            .filter(|r| self.arrives[r.slot()] > self.time)
            .map(|r| (r, self.loaded_by[r.slot()]));
        self.time = self.time.max(latest.map_or(0, |r| self.arrives[r.slot()]));
        let mut ready = self.time;
        match instruction.effect {
            Effect::Load => ready = self.time + 1,
            Effect::AsyncCopy => self.open_group = self.open_group.max(self.time + 1),
            Effect::AsyncCommit => self.groups.push(std::mem::take(&mut self.open_group)),
            Effect::AsyncWait(newer) => {
                let older = self.groups.len().saturating_sub(newer as usize);
                let waited = self.groups[..older].iter().copied().max().unwrap_or(0);
                self.time = self.time.max(waited);
                ready = self.time;
            }
            Effect::BulkCopy => self.bulk = self.bulk.max(self.time + 1),
            Effect::BulkWait => {
                self.time = self.time.max(self.bulk);
                ready = self.time;
            }
            Effect::Branch { .. } | Effect::IndirectBranch | Effect::Exit | Effect::Compute => {}
        }
        // Only a load's destinations arrive later than now; the rest never make a wait.
        let loaded_by = if instruction.effect == Effect::Load {
            instruction.addr
        } else {
            0
        };
        for d in &instruction.dsts {
            self.arrives[d.slot()] = ready;
            self.loaded_by[d.slot()] = loaded_by;
        }
        on
    }
}
