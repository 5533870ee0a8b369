//! Lines of `cuobjdump -sass` output (taken from listings of the example specs, sm_90a,
//! cuobjdump 13.2) read into what they read and write, checked against a hand reading of the
//! instruction.

use ima_sass::{Effect, Instruction, Reg, functions};
use proptest::prelude::*;

fn parse(text: &str) -> Instruction {
    let line = format!("        /*0240*/  {text} ;    /* 0x000fe20000000f00 */");
    Instruction::parse(&line)
        .expect("parses")
        .expect("an instruction")
}

fn r(range: std::ops::Range<u8>) -> Vec<Reg> {
    range.map(Reg::R).collect()
}

#[test]
fn a_vector_load_writes_four_registers_and_reads_its_address_pair() {
    let i = parse("@!P1 LDG.E.128.CONSTANT R20, desc[UR8][R36.64+0x10]");
    assert_eq!(i.addr, 0x240);
    assert_eq!(i.guard, Some(Reg::P(1)));
    assert_eq!(i.opcode, "LDG.E.128.CONSTANT");
    assert_eq!(i.effect, Effect::Load);
    assert_eq!(i.dsts, r(20..24));
    assert_eq!(i.srcs, vec![Reg::Ur(8), Reg::R(36), Reg::R(37)]);
}

#[test]
fn a_guarded_instruction_reads_what_it_would_overwrite() {
    // Not run, it leaves R48 as it was: its result is no sooner than R48's.
    let i = parse("@!P1 PRMT R48, R24.reuse, 0x7610, R48");
    assert_eq!(i.dsts, vec![Reg::R(48)]);
    assert_eq!(i.srcs, vec![Reg::R(24), Reg::R(48), Reg::R(48)]);
}

#[test]
fn modifiers_negations_and_absolute_values_name_their_registers() {
    let i = parse("HADD2.F32 R24, -RZ, R8.reuse.H0_H0");
    assert_eq!((i.dsts, i.srcs), (vec![Reg::R(24)], vec![Reg::R(8)]));
    let i = parse("FADD R3, |R4|, -R5");
    assert_eq!(
        (i.dsts, i.srcs),
        (vec![Reg::R(3)], vec![Reg::R(4), Reg::R(5)])
    );
}

#[test]
fn a_wide_multiply_writes_a_pair() {
    let i = parse("IMAD.WIDE R36, R51, 0x2, R36");
    assert_eq!(i.dsts, r(36..38));
    assert_eq!(i.srcs, vec![Reg::R(51), Reg::R(36)]);
}

#[test]
fn an_add_writes_its_carries_and_its_extended_form_reads_them() {
    let i = parse("IADD3 R4, P0, PT, R2, 0x10, RZ");
    assert_eq!(
        (i.dsts, i.srcs),
        (vec![Reg::R(4), Reg::P(0)], vec![Reg::R(2)])
    );
    let i = parse("IADD3.X R5, PT, PT, R3, RZ, RZ, P0, !PT");
    assert_eq!(
        (i.dsts, i.srcs),
        (vec![Reg::R(5)], vec![Reg::R(3), Reg::P(0)])
    );
    let i = parse("LEA R2, P0, R4, R6, 0x2");
    assert_eq!(
        (i.dsts, i.srcs),
        (vec![Reg::R(2), Reg::P(0)], vec![Reg::R(4), Reg::R(6)])
    );
}

#[test]
fn comparisons_write_predicates_and_read_the_rest() {
    let i = parse("ISETP.GE.AND P0, PT, R4, UR5, PT");
    assert_eq!(
        (i.dsts, i.srcs),
        (vec![Reg::P(0)], vec![Reg::R(4), Reg::Ur(5)])
    );
    let i = parse("ISETP.GE.U32.AND.EX P1, PT, R5, R7, PT, P0");
    assert_eq!(
        (i.dsts, i.srcs),
        (vec![Reg::P(1)], vec![Reg::R(5), Reg::R(7), Reg::P(0)])
    );
    let i = parse("PLOP3.LUT P0, PT, P1, PT, 0x8, 0x0");
    assert_eq!((i.dsts, i.srcs), (vec![Reg::P(0)], vec![Reg::P(1)]));
    let i = parse("LOP3.LUT P0, RZ, R4, 0x1, RZ, 0xc0, !PT");
    assert_eq!((i.dsts, i.srcs), (vec![Reg::P(0)], vec![Reg::R(4)]));
}

#[test]
fn writes_to_every_predicate_or_a_pair_are_read_whole() {
    let i = parse("R2P PR, R0, 0x7f");
    assert_eq!(
        (i.dsts, i.srcs),
        ((0..7).map(Reg::P).collect::<Vec<_>>(), vec![Reg::R(0)])
    );
    assert_eq!(parse("CS2R R10, SRZ").dsts, r(10..12));
    assert_eq!(parse("CS2R.32 R10, SR_CLOCKLO").dsts, r(10..11));
    let i = parse("ELECT P3, URZ, PT");
    assert_eq!((i.dsts, i.srcs), (vec![Reg::P(3)], vec![]));
}

#[test]
fn a_shuffle_writes_its_predicate_and_register() {
    let i = parse("SHFL.BFLY PT, R5, R4, 0x10, 0x1f");
    assert_eq!((i.dsts, i.srcs), (vec![Reg::R(5)], vec![Reg::R(4)]));
}

#[test]
fn a_store_reads_its_address_and_as_much_data_as_it_stores() {
    let i = parse("STG.E.128 desc[UR8][R28.64], R24");
    assert!(i.dsts.is_empty());
    assert_eq!(
        i.srcs,
        vec![
            Reg::Ur(8),
            Reg::R(28),
            Reg::R(29),
            Reg::R(24),
            Reg::R(25),
            Reg::R(26),
            Reg::R(27)
        ]
    );
    assert_eq!(i.effect, Effect::Compute);
}

#[test]
fn an_atomic_is_a_load_only_when_it_returns_the_old_value() {
    let i = parse("ATOMG.E.ADD.STRONG.GPU PT, R8, desc[UR4][R6.64], R4");
    assert_eq!((i.effect, i.dsts.clone()), (Effect::Load, vec![Reg::R(8)]));
    assert_eq!(i.srcs, vec![Reg::Ur(4), Reg::R(6), Reg::R(7), Reg::R(4)]);
    let i = parse("ATOMG.E.ADD.STRONG.GPU PT, RZ, desc[UR4][R6.64], R4");
    assert_eq!((i.effect, i.dsts), (Effect::Compute, vec![]));
}

#[test]
fn matrix_instructions_write_their_fragments() {
    assert_eq!(parse("HMMA.16816.F32 R4, R8, R12, R4").dsts, r(4..8));
    assert_eq!(parse("HMMA.16816.F16 R4, R8, R12, R4").dsts, r(4..6));
    assert_eq!(parse("LDSM.16.M88.4 R8, [R3+0x400]").dsts, r(8..12));
    assert_eq!(
        parse("HGMMA.64x16x16.F32 R24, R100, gdesc[UR16], R24, gsb0").dsts,
        r(24..32)
    );
}

#[test]
fn branches_and_waits_are_told_apart() {
    assert_eq!(
        parse("BRA 0x790").effect,
        Effect::Branch {
            target: 0x790,
            conditional: false
        }
    );
    assert_eq!(
        parse("BRA.DIV UR10, 0xa620").effect,
        Effect::Branch {
            target: 0xa620,
            conditional: true
        }
    );
    assert_eq!(
        parse("BRA.U.ANY UP0, 0x1f0").effect,
        Effect::Branch {
            target: 0x1f0,
            conditional: true
        }
    );
    assert_eq!(parse("@P0 BRA 0x790").guard, Some(Reg::P(0)));
    assert_eq!(parse("BRX R4 -0x9960").effect, Effect::IndirectBranch);
    assert_eq!(parse("DEPBAR.LE SB0, 0x1").effect, Effect::AsyncWait(1));
    // Warpgroup MMAs' scoreboard, not a copy's.
    assert_eq!(parse("DEPBAR.LE gsb0, 0x0").effect, Effect::Compute);
    assert_eq!(
        parse("LDGSTS.E.BYPASS.128 [R23+0x1000], desc[UR6][R18.64]").effect,
        Effect::AsyncCopy
    );
    assert_eq!(parse("LDGDEPBAR").effect, Effect::AsyncCommit);
    assert_eq!(
        parse("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R4+URZ+0x20], R5").effect,
        Effect::BulkWait
    );
    assert_eq!(
        parse("UTMALDG.2D [UR8], [UR4], desc[UR10]").effect,
        Effect::BulkCopy
    );
    assert_eq!(parse("RET.REL.NODEC R20 0x0").effect, Effect::Exit);
}

#[test]
fn shared_local_and_constant_loads_are_not_round_trips() {
    for text in [
        "LDS.128 R4, [R3]",
        "LDL R4, [R1+0x10]",
        "LDC.64 R36, c[0x0][0x230]",
        "ULDC UR10, c[0x0][0x254]",
    ] {
        assert_eq!(parse(text).effect, Effect::Compute, "{text}");
    }
}

#[test]
fn lines_without_an_instruction_are_skipped() {
    for line in [
        "",
        "\t\tFunction : add_rms_norm_i32",
        "\t.headerflags\t@\"EF_CUDA_ACCELERATORS EF_CUDA_SM90\"",
        "                                        /* 0x000fc800078e00ff */",
    ] {
        assert_eq!(Instruction::parse(line), Ok(None), "{line:?}");
    }
}

#[test]
fn a_listing_is_split_at_its_function_headers() {
    let listing = "\t\tFunction : a\n        /*0000*/  LDG.E R2, desc[UR4][R2.64] ;\n        /*0010*/  EXIT ;\n\
                   \t\tFunction : b\n        /*0000*/  EXIT ;\n";
    let f = functions(listing).unwrap();
    assert_eq!(
        f.iter()
            .map(|f| (f.name.as_str(), f.instructions.len()))
            .collect::<Vec<_>>(),
        vec![("a", 2), ("b", 1)]
    );
    let err = functions("        /*0000*/  EXIT ;\n").unwrap_err();
    assert_eq!(
        err.reason,
        "an instruction before any `Function :` or `.text.NAME:` header"
    );
}

#[test]
fn a_jump_tables_targets_come_from_nvdisasms_list() {
    let listing = ".text.k:\n\
                   \x20       /*0000*/                   BRX R2 -0x10      (*\"BRANCH_TARGETS .L_x_2,.L_x_1\"*);\n\
                   .L_x_1:\n\
                   \x20       /*0010*/                   EXIT ;\n\
                   .L_x_2:\n\
                   \x20       /*0020*/                   EXIT ;\n";
    let f = functions(listing).unwrap();
    let brx = &f[0].instructions[0];
    assert_eq!(brx.effect, Effect::IndirectBranch);
    assert_eq!(brx.jump_targets, vec![0x20, 0x10]);
    assert_eq!(brx.srcs, vec![Reg::R(2)]);
    // cuobjdump names none.
    assert_eq!(parse("BRX R4 -0x9960").jump_targets, Vec::<u32>::new());
}

#[test]
fn an_nvdisasm_listing_gives_branch_targets_by_label_and_source_lines_by_chain() {
    // nvdisasm -gi -c: sections, labels on lines of their own, branch targets in backquotes,
    // and each instruction's inline chain, innermost first, before it.
    let listing = "\t.section\t.text.k,\"ax\",@progbits\n\
                   k:\n\
                   .text.k:\n\
                   \t//## File \"index.cu\", line 3569 inlined at \"specs/index.ima\", line 87\n\
                   \t//## File \"specs/index.ima\", line 87 inlined at \"index.cu\", line 3741\n\
                   \t//## File \"index.cu\", line 3741\n\
                   \x20       /*0000*/                   LDG.E.CONSTANT R30, desc[UR6][R6.64] ;\n\
                   \x20       /*0010*/              @!P0 BRA `(.L_x_1) ;\n\
                   \x20       /*0020*/                   CALL.REL.NOINC `($k$_Z8ima_pendv) ;\n\
                   .L_x_1:\n\
                   \t//## File \"specs/index.ima\", line 88\n\
                   \x20       /*0030*/                   EXIT ;\n\
                   $k$_Z8ima_pendv:\n\
                   \x20       /*0040*/                   RET.REL.NODEC R20 `(k) ;\n";
    let f = functions(listing).unwrap();
    assert_eq!(f.len(), 1);
    let k = &f[0];
    assert_eq!(k.name, "k");
    assert_eq!(
        k.instructions
            .iter()
            .map(|i| (i.addr, i.effect))
            .collect::<Vec<_>>(),
        vec![
            (0x00, Effect::Load),
            (
                0x10,
                Effect::Branch {
                    target: 0x30,
                    conditional: false
                }
            ),
            (0x20, Effect::Compute),
            (0x30, Effect::Exit),
            (0x40, Effect::Exit),
        ]
    );
    let chain = |addr| k.location(addr).map(|l| l.frames.clone());
    let frames = |f: &[(&str, u32)]| {
        Some(
            f.iter()
                .map(|&(n, l)| (n.to_string(), l))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        chain(0x00),
        frames(&[
            ("index.cu", 3569),
            ("specs/index.ima", 87),
            ("index.cu", 3741)
        ])
    );
    assert_eq!(chain(0x20), chain(0x00), "a line holds until the next");
    assert_eq!(chain(0x30), frames(&[("specs/index.ima", 88)]));
}

proptest! {
    // Whatever follows an address, reading it returns an instruction or an error, never a
    // panic.
    #[test]
    fn any_text_after_an_address_reads_without_a_panic(text in "[ -~]{0,80}") {
        let _ = Instruction::parse(&format!("        /*0010*/ {text}"));
        let _ = Instruction::parse(&text);
    }
}
