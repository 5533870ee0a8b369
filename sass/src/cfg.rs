//! A function's control flow: its basic blocks and their successors, the order a walk takes
//! them in (reverse postorder from the entry), and its loops: the natural loops of its back
//! edges, a back edge being a branch to a block that dominates it. A branch to an earlier
//! address is not always one: ptxas places blocks after the exit (a divergent shuffle's
//! fallback, an mbarrier wait's retry) that branch back into the code they left.

use std::collections::{BTreeSet, HashMap};

use crate::instruction::{Effect, Instruction};

/// Instructions `first..end` of the function, and the blocks control goes to after them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub first: usize,
    pub end: usize,
    pub succs: Vec<usize>,
}

/// A loop: its head block, the blocks of its body (the head among them), and the blocks
/// whose branch back to the head closes a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NaturalLoop {
    pub head: usize,
    pub body: BTreeSet<usize>,
    pub latches: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// The blocks reachable from the entry (block 0), in reverse postorder: every edge but a
    /// back edge goes forward in it.
    pub order: Vec<usize>,
    /// The loops, in the order of their heads' addresses.
    pub loops: Vec<NaturalLoop>,
    idom: Vec<Option<usize>>,
    rank: Vec<usize>,
}

impl Cfg {
    pub fn new(code: &[Instruction]) -> Cfg {
        let blocks = blocks(code);
        let order = reverse_postorder(&blocks);
        let mut rank = vec![usize::MAX; blocks.len()];
        for (i, &b) in order.iter().enumerate() {
            rank[b] = i;
        }
        // Each reachable block's predecessors among the reachable blocks.
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
        for &b in &order {
            for &s in &blocks[b].succs {
                preds[s].push(b);
            }
        }
        let mut cfg = Cfg {
            idom: dominators(&order, &rank, &preds),
            blocks,
            order,
            loops: Vec::new(),
            rank,
        };
        cfg.loops = cfg.natural_loops(&preds);
        cfg
    }

    /// Whether `to` dominates `from`: the edge `from -> to` closes a loop.
    pub fn is_back_edge(&self, from: usize, to: usize) -> bool {
        let mut b = from;
        loop {
            if b == to {
                return true;
            }
            match self.idom[b] {
                Some(up) if up != b => b = up,
                _ => return false,
            }
        }
    }

    /// The loop whose head is block `b`.
    pub fn loop_at(&self, b: usize) -> Option<usize> {
        self.loops.iter().position(|l| l.head == b)
    }

    /// The blocks a loop leaves to.
    pub fn exits(&self, l: usize) -> BTreeSet<usize> {
        let body = &self.loops[l].body;
        body.iter()
            .flat_map(|&b| self.blocks[b].succs.iter().copied())
            .filter(|s| !body.contains(s))
            .collect()
    }

    fn natural_loops(&self, preds: &[Vec<usize>]) -> Vec<NaturalLoop> {
        let mut latches: HashMap<usize, Vec<usize>> = HashMap::new();
        for &b in &self.order {
            for &s in &self.blocks[b].succs {
                if self.is_back_edge(b, s) {
                    latches.entry(s).or_default().push(b);
                }
            }
        }
        let mut loops: Vec<NaturalLoop> = latches
            .into_iter()
            .map(|(head, latches)| {
                // The blocks that reach a latch without passing the head.
                let mut body = BTreeSet::from([head]);
                let mut stack: Vec<usize> = latches.clone();
                while let Some(b) = stack.pop() {
                    if self.rank[b] != usize::MAX && body.insert(b) {
                        stack.extend(preds[b].iter().copied());
                    }
                }
                NaturalLoop {
                    head,
                    body,
                    latches,
                }
            })
            .collect();
        loops.sort_by_key(|l| self.blocks[l.head].first);
        loops
    }
}

/// Splits the code at branch targets and after branches and exits.
fn blocks(code: &[Instruction]) -> Vec<Block> {
    let at: HashMap<u32, usize> = code
        .iter()
        .enumerate()
        .map(|(i, ins)| (ins.addr, i))
        .collect();
    let target = |ins: &Instruction| match ins.effect {
        Effect::Branch { target, .. } => at.get(&target).copied(),
        _ => None,
    };
    let ends_block = |ins: &Instruction| {
        matches!(
            ins.effect,
            Effect::Branch { .. } | Effect::Exit | Effect::IndirectBranch
        )
    };
    let table = |ins: &Instruction| -> Vec<usize> {
        ins.jump_targets
            .iter()
            .filter_map(|t| at.get(t).copied())
            .collect()
    };
    let mut leaders = BTreeSet::from([0]);
    for (i, ins) in code.iter().enumerate() {
        leaders.extend(target(ins));
        leaders.extend(table(ins));
        if ends_block(ins) {
            leaders.insert(i + 1);
        }
    }
    let starts: Vec<usize> = leaders.into_iter().filter(|&i| i < code.len()).collect();
    let block_of: HashMap<usize, usize> = starts.iter().enumerate().map(|(b, &i)| (i, b)).collect();
    starts
        .iter()
        .enumerate()
        .map(|(b, &first)| {
            let end = starts.get(b + 1).copied().unwrap_or(code.len());
            let last = &code[end - 1];
            let next = (end < code.len()).then_some(b + 1);
            let guarded = last.guard.is_some();
            let succs = match last.effect {
                Effect::Branch { conditional, .. } => {
                    let taken = target(last).map(|i| block_of[&i]);
                    let falls = if conditional || guarded { next } else { None };
                    taken.into_iter().chain(falls).collect()
                }
                Effect::Exit => if guarded { next } else { None }.into_iter().collect(),
                Effect::IndirectBranch => table(last).into_iter().map(|i| block_of[&i]).collect(),
                _ => next.into_iter().collect(),
            };
            Block { first, end, succs }
        })
        .collect()
}

fn reverse_postorder(blocks: &[Block]) -> Vec<usize> {
    if blocks.is_empty() {
        return Vec::new();
    }
    let mut seen = vec![false; blocks.len()];
    let mut post = Vec::new();
    // (block, next successor to visit)
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((b, i)) = stack.pop() {
        if let Some(&s) = blocks[b].succs.get(i) {
            stack.push((b, i + 1));
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}

/// Each reachable block's immediate dominator (the entry's is itself), by Cooper, Harvey
/// and Kennedy's iteration over the reverse postorder.
fn dominators(order: &[usize], rank: &[usize], preds: &[Vec<usize>]) -> Vec<Option<usize>> {
    let mut idom: Vec<Option<usize>> = vec![None; preds.len()];
    let Some(&entry) = order.first() else {
        return idom;
    };
    idom[entry] = Some(entry);
    let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| {
        while a != b {
            while rank[a] > rank[b] {
                a = idom[a].expect("a processed block has a dominator");
            }
            while rank[b] > rank[a] {
                b = idom[b].expect("a processed block has a dominator");
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &order[1..] {
            let mut new: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_some() {
                    new = Some(match new {
                        None => p,
                        Some(n) => intersect(&idom, p, n),
                    });
                }
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}
