//! One SASS instruction as `cuobjdump -sass` prints it, reduced to what the round-trip
//! count needs: its address, its guard, the registers it reads and writes, and what it does
//! to memory or to the flow of control.

use std::fmt;

/// A register an instruction reads or writes: a general register, a uniform one, a
/// predicate or a uniform predicate. The zero registers and the true predicates (RZ, URZ, PT,
/// UPT) are never one: nothing waits for them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Reg {
    R(u8),
    Ur(u8),
    P(u8),
    Up(u8),
}

impl Reg {
    /// Its index in a flat table of every register a thread can name.
    pub(crate) fn slot(self) -> usize {
        match self {
            Reg::R(i) => i as usize,
            Reg::Ur(i) => 256 + i as usize,
            Reg::P(i) => 320 + i as usize,
            Reg::Up(i) => 328 + i as usize,
        }
    }

    /// How many slots [`Reg::slot`] spans.
    pub(crate) const SLOTS: usize = 336;

    fn is_predicate(self) -> bool {
        matches!(self, Reg::P(_) | Reg::Up(_))
    }

    /// The next register of a pair or quad (R4.64 is R4 and R5), if there is one.
    fn offset(self, by: u8) -> Option<Reg> {
        match self {
            Reg::R(i) => i.checked_add(by).filter(|&j| j < 255).map(Reg::R),
            Reg::Ur(i) => i.checked_add(by).filter(|&j| j < 63).map(Reg::Ur),
            Reg::P(_) | Reg::Up(_) => None,
        }
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reg::R(i) => write!(f, "R{i}"),
            Reg::Ur(i) => write!(f, "UR{i}"),
            Reg::P(i) => write!(f, "P{i}"),
            Reg::Up(i) => write!(f, "UP{i}"),
        }
    }
}

/// What an instruction does that the count follows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Effect {
    /// A load from global memory (LDG), or from a generic address (LD, which may be global),
    /// or an atomic that returns the old value: its destinations arrive one round trip after
    /// it issues. Shared, local and constant loads are not round trips to memory.
    Load,
    /// A copy from global into shared memory (LDGSTS, cp.async), waited for as part of its
    /// group.
    AsyncCopy,
    /// The end of a group of async copies (LDGDEPBAR, cp.async.commit_group).
    AsyncCommit,
    /// A wait until at most this many of the newest groups are in flight (DEPBAR.LE SB0, N).
    AsyncWait(u32),
    /// A bulk copy by the TMA unit (UTMALDG, UBLKCP), waited for through an mbarrier.
    BulkCopy,
    /// A wait on an mbarrier's phase (SYNCS.PHASECHK), taken as a wait for every bulk copy
    /// this thread has issued.
    BulkWait,
    /// A direct branch (BRA and its forms); conditional if it has a condition operand
    /// (BRA.DIV, BRA.U.ANY). A guard (`@P0 BRA`) makes it conditional too; that is the
    /// instruction's `guard`.
    Branch { target: u32, conditional: bool },
    /// A branch through a jump table (BRX, JMX): its targets are the instruction's
    /// `jump_targets` where the listing names them (nvdisasm's does, cuobjdump's does not).
    IndirectBranch,
    /// The end of a thread's path (EXIT, or RET from a subroutine).
    Exit,
    /// Anything else: its destinations are ready once it issues.
    Compute,
}

/// One instruction: where it is, what guards it, what it reads and writes, and its effect.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Instruction {
    pub addr: u32,
    /// The predicate under `@P0` or `@!P0`; none for an unguarded instruction (or `@PT`).
    pub guard: Option<Reg>,
    /// The mnemonic with its modifiers, as printed (`LDG.E.128.CONSTANT`).
    pub opcode: String,
    pub dsts: Vec<Reg>,
    pub srcs: Vec<Reg>,
    pub effect: Effect,
    /// An indirect branch's targets, where the listing names them (nvdisasm's
    /// `BRANCH_TARGETS`); empty otherwise.
    pub jump_targets: Vec<u32>,
}

/// Why a line that looks like an instruction could not be read.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: String,
    pub reason: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`", self.reason, self.line.trim())
    }
}

impl std::error::Error for ParseError {}

impl Instruction {
    /// Reads one line of `cuobjdump -sass` output. `Ok(None)` for a line that holds no
    /// instruction (a header, an encoding word, a blank line).
    pub fn parse(line: &str) -> Result<Option<Instruction>, ParseError> {
        let err = |reason| ParseError {
            line: line.to_string(),
            reason,
        };
        let Some((addr, rest)) = address(line) else {
            return Ok(None);
        };
        // The instruction ends at its semicolon; its encoding's comment follows.
        let body = rest
            .split_once(';')
            .ok_or_else(|| err("no `;` after the instruction"))?
            .0
            .trim();
        // nvdisasm names a jump table's targets after it: `BRX R2 -0x4be0 (*"BRANCH_TARGETS
        // 0x4be0,0x4c20"*)`, once listing.rs has put the labels' addresses in.
        let (body, jump_targets) = match body.split_once("(*\"") {
            Some((code, note)) => {
                let targets = note
                    .trim_end_matches("\"*)")
                    .strip_prefix("BRANCH_TARGETS ")
                    .map(|list| {
                        list.split(',')
                            .filter_map(|t| {
                                u32::from_str_radix(t.trim().trim_start_matches("0x"), 16).ok()
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (code.trim(), targets)
            }
            None => (body, Vec::new()),
        };
        let (guard, body) = match body.strip_prefix('@') {
            Some(g) => {
                let (g, body) = g
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| err("a guard with no instruction"))?;
                (register(g.trim_start_matches('!')), body.trim_start())
            }
            None => (None, body),
        };
        let (opcode, operands) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
        if opcode.is_empty() {
            return Err(err("no mnemonic"));
        }
        let operands: Vec<&str> = operands
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect();
        let base = opcode.split('.').next().unwrap_or(opcode);
        let effect = effect(opcode, base, &operands).map_err(err)?;
        let written = destinations(opcode, base, &operands, effect);
        let mut dsts = Vec::new();
        let mut srcs = Vec::new();
        for (i, operand) in operands.iter().enumerate() {
            let regs = registers(operand);
            if i < written {
                let width = if Some(i) == first_register(&operands) {
                    dst_width(opcode, base)
                } else {
                    1
                };
                for r in regs {
                    dsts.push(r);
                    dsts.extend((1..width).filter_map(|k| r.offset(k)));
                }
            } else if STORES.contains(&base) && !operand.contains('[') {
                // A store's data: as wide as what it stores (STG.E.128 ..., R24 reads R24-R27).
                let width = dst_width(opcode, base);
                for r in regs {
                    srcs.push(r);
                    srcs.extend((1..width).filter_map(|k| r.offset(k)));
                }
            } else {
                srcs.extend(regs);
            }
        }
        // A guarded instruction that does not run leaves its destinations as they were: it
        // reads them, in effect, and its result is no sooner than theirs.
        if guard.is_some() && effect == Effect::Compute {
            srcs.extend(dsts.iter().copied());
        }
        Ok(Some(Instruction {
            addr,
            guard,
            opcode: opcode.to_string(),
            dsts,
            srcs,
            effect,
            jump_targets,
        }))
    }
}

/// Stores to global, shared, local or generic memory.
const STORES: &[&str] = &["ST", "STG", "STS", "STL"];

/// The address of the instruction on a line (`/*0240*/ ...`) and the text after it.
pub(crate) fn address(line: &str) -> Option<(u32, &str)> {
    let (addr, rest) = line.trim_start().strip_prefix("/*")?.split_once("*/")?;
    Some((u32::from_str_radix(addr, 16).ok()?, rest))
}

fn effect(opcode: &str, base: &str, operands: &[&str]) -> Result<Effect, &'static str> {
    let hex = |s: &str| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    Ok(match base {
        "LDG" | "LD" => Effect::Load,
        // An atomic whose old value is written to a register is a load; one whose result
        // goes to RZ (and RED) is not waited for.
        "ATOMG" | "ATOM" => {
            if first_register(operands).is_some_and(|i| !registers(operands[i]).is_empty()) {
                Effect::Load
            } else {
                Effect::Compute
            }
        }
        "LDGSTS" => Effect::AsyncCopy,
        "LDGDEPBAR" => Effect::AsyncCommit,
        // DEPBAR.LE SB0, N waits for async copies; DEPBAR.LE gsb0, N for warpgroup MMAs.
        "DEPBAR" => match operands {
            [sb, n] if sb.eq_ignore_ascii_case("SB0") => {
                Effect::AsyncWait(hex(n).ok_or("a DEPBAR count that is not a number")?)
            }
            _ => Effect::Compute,
        },
        "UTMALDG" | "UBLKCP" => Effect::BulkCopy,
        "SYNCS" if opcode.starts_with("SYNCS.PHASECHK") => Effect::BulkWait,
        "BRA" => {
            let target = operands
                .last()
                .and_then(|t| hex(t))
                .ok_or("a branch with no target address")?;
            Effect::Branch {
                target,
                conditional: operands.len() > 1 || opcode != "BRA" && opcode != "BRA.U",
            }
        }
        "BRX" | "JMX" => Effect::IndirectBranch,
        "EXIT" | "RET" => Effect::Exit,
        _ => Effect::Compute,
    })
}

/// How many leading operands an instruction writes (the rest it reads).
fn destinations(opcode: &str, base: &str, operands: &[&str], effect: Effect) -> usize {
    const NO_DESTINATION: &[&str] = &[
        "ST",
        "STG",
        "STS",
        "STL",
        "STAS",
        "RED",
        "REDG",
        "REDAS",
        "BRA",
        "BRX",
        "JMX",
        "EXIT",
        "RET",
        "CALL",
        "BAR",
        "BSSY",
        "BSYNC",
        "BREAK",
        "WARPSYNC",
        "MEMBAR",
        "ERRBAR",
        "CGAERRBAR",
        "CCTL",
        "NOP",
        "YIELD",
        "LDGSTS",
        "LDGDEPBAR",
        "DEPBAR",
        "UTMALDG",
        "UTMASTG",
        "UTMACCTL",
        "UTMACMDFLUSH",
        "UTMAPF",
        "UBLKCP",
        "UBLKPF",
        "FENCE",
        "ARRIVES",
        "ACQBULK",
        "WARPGROUP",
        "KILL",
    ];
    if NO_DESTINATION.contains(&base) || matches!(effect, Effect::Branch { .. } | Effect::Exit) {
        return 0;
    }
    // Comparisons write one or two predicates; PLOP3 writes two.
    if base.ends_with("SETP") || base.ends_with("SETP2") {
        return operands
            .iter()
            .take(2)
            .take_while(|o| names_predicate(o))
            .count();
    }
    if base == "PLOP3" || base == "UPLOP3" {
        return 2.min(operands.len());
    }
    // R2P PR, R0, 0x7f: every predicate, from a register.
    if operands.first().is_some_and(|o| o.trim() == "PR") {
        return 1;
    }
    // Otherwise: the predicates in front (SHFL's, LOP3's, an atomic's), one register, and,
    // for an add that carries, the predicates that take its carries out.
    let mut n = operands.iter().take_while(|o| names_predicate(o)).count();
    if n < operands.len() && !registers(operands[n]).is_empty()
        || operands
            .get(n)
            .is_some_and(|o| o.trim() == "RZ" || o.trim() == "URZ")
    {
        n += 1;
        let carries = matches!(
            base,
            "IADD3" | "UIADD3" | "LEA" | "ULEA" | "IMAD" | "UIMAD" | "IADD" | "IADD64"
        );
        if carries && !opcode.contains(".X") {
            n += operands[n..]
                .iter()
                .take_while(|o| names_predicate(o))
                .count();
        }
    }
    n
}

/// A predicate operand, true ones included (`P0`, `!P1`, `PT`).
fn names_predicate(operand: &str) -> bool {
    matches!(operand.trim(), "PT" | "UPT" | "!PT" | "!UPT")
        || registers(operand).first().is_some_and(|r| r.is_predicate())
}

/// The index of the first operand that is not a predicate: a register destination's.
fn first_register(operands: &[&str]) -> Option<usize> {
    operands.iter().position(|o| !names_predicate(o))
}

/// How many consecutive registers an instruction's register destination spans.
fn dst_width(opcode: &str, base: &str) -> u8 {
    let has = |m: &str| opcode.split('.').any(|p| p == m);
    match base {
        "HGMMA" | "IGMMA" => {
            // HGMMA.64xNx16.F32: a warpgroup's 64 x N accumulators, N / 2 registers a thread
            // in f32 and N / 4 in f16.
            let n = opcode
                .split('.')
                .nth(1)
                .and_then(|s| s.split('x').nth(1))
                .and_then(|n| n.parse::<u16>().ok())
                .unwrap_or(0);
            let per = if has("F32") || has("S32") {
                n / 2
            } else {
                n / 4
            };
            per.clamp(1, 255) as u8
        }
        // CS2R R10, SRZ zeroes a pair; CS2R.32 reads a 32-bit special register.
        "CS2R" => {
            if has("32") {
                1
            } else {
                2
            }
        }
        "HMMA" | "IMMA" => {
            if has("F32") || has("S32") {
                4
            } else {
                2
            }
        }
        "LDSM" => {
            if has("4") {
                4
            } else if has("2") {
                2
            } else {
                1
            }
        }
        _ if has("128") => 4,
        _ if has("64") || has("WIDE") || base.starts_with('D') && base != "DEPBAR" => 2,
        "F2F" | "I2F" | "F2I" if has("F64") || has("S64") || has("U64") => 2,
        _ => 1,
    }
}

/// The registers an operand names: `R4`, `R4.64` (R4 and R5), `-R8.reuse.H0_H0`, `!P0`,
/// `desc[UR8][R24.64+0x10]`, `|R3|`. `PR` names every predicate.
pub(crate) fn registers(operand: &str) -> Vec<Reg> {
    let mut out = Vec::new();
    for token in operand.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
        let mut parts = token.split('.');
        let Some(name) = parts.next() else { continue };
        if name == "PR" {
            out.extend((0..7).map(Reg::P));
            continue;
        }
        let Some(reg) = register(name) else { continue };
        let width = parts
            .find_map(|p| match p {
                "64" => Some(2),
                "128" => Some(4),
                _ => None,
            })
            .unwrap_or(1);
        out.push(reg);
        out.extend((1..width).filter_map(|k| reg.offset(k)));
    }
    out
}

/// `R12`, `UR4`, `P3`, `UP0`; none for RZ, URZ, PT, UPT, SR_* and anything else.
fn register(name: &str) -> Option<Reg> {
    let number = |s: &str, max: u8| {
        s.parse::<u8>()
            .ok()
            .filter(|&n| n < max && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
    };
    if let Some(n) = name.strip_prefix("UR") {
        number(n, 63).map(Reg::Ur)
    } else if let Some(n) = name.strip_prefix("UP") {
        number(n, 7).map(Reg::Up)
    } else if let Some(n) = name.strip_prefix('R') {
        number(n, 255).map(Reg::R)
    } else if let Some(n) = name.strip_prefix('P') {
        number(n, 7).map(Reg::P)
    } else {
        None
    }
}
