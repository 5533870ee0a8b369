"""Throwaway, session 33 (issue 21): is the repacked format what makes s8 fast, or its
decode's shape (the scale applied after the MMA, in f32, once a group)? From rp10.ima's s8:
  s8   as it is: repacked words, a shift, a LOP3 and an HSUB2 a register, scale after the MMA;
  y8   GPTQ's own words, the accessor's decode (a PRMT, a LOP3 and an HFMA2 a register, two
       8-byte reads a step) without its HMUL2: the scale after the MMA, as s8's;
  w8   GPTQ's own words, decoded by the accessor's tma_wg_frag (the scale in f16, before).
    python3 gen11.py"""

with open("rp10.ima") as f:
    src = f.read()
head = src[: src.index("kernel s8 where")]
s8 = src[src.index("kernel s8 where"): src.index("kernel i8 where")]


def edit(text, pairs):
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


NATURAL_AFTER = [
    ("kernel s8 where", "kernel y8 where"),
    ("""                            memcpy(&zb2[gi][e], &zh, 4);
""", """                            // -(1024 + z) and -(64 + z), as the accessor's tma_wg_group.
                            __half2 zz;
                            memcpy(&zz, &zh, 4);
                            zb2[gi][e] = __hfma2(zz, __float2half2_rn(-1.f), __floats2half2_rn(0.f, 960.f));
"""),
    ("""                            unsigned wv[1];
                            ima_ld_shared(w.tma_word(wt, 2 * j + (t4 >> 1), col_byte), wv);
                            #pragma unroll
                            for (int s = 0; s < 4; ++s)
                                {
                                unsigned v;
                                asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(v) : "r"(wv[0] >> (4 * s)), "n"(0x000F000Fu), "r"(0x64006400u));
                                const __half2 d = __hsub2(w.ima_as_half2(v), zb2[h / 2][s % 2]);
                                memcpy(&a[h % 2][j % 4][s], &d, 4);
                            }
""", """                            const unsigned pick = 0x4040u | unsigned(t4) | unsigned(t4) << 8;
                            #pragma unroll
                            for (int hh = 0; hh < 2; ++hh) {
                                unsigned wv[2];
                                ima_ld_shared(w.tma_word(wt, 2 * j + hh, unsigned(c0 % 192 / 2 * 2 * 4)), wv);
                                #pragma unroll
                                for (int e = 0; e < 2; ++e) {
                                    const __half2 v = w.template ima_nibbles<0x00F0000Fu>(__byte_perm(wv[e], 0u, pick));
                                    const __half2 d = __hfma2(v, __floats2half2_rn(1.f, 0.0625f), zb2[h / 2][e]);
                                    memcpy(&a[h % 2][j % 4][2 * hh + e], &d, 4);
                                }
                            }
"""),
    ("""                    const unsigned col_byte = unsigned((c0 % 192 + (t4 & 1)) * 4);
""", ""),
]
y8 = edit(s8, NATURAL_AFTER)
w8 = edit(s8, [("kernel s8 where", "kernel w8 where"), ("if constexpr (NX == 16) {", "if constexpr (NX == 0) {")])
with open("rp11.ima", "w") as f:
    f.write("/// Throwaway: s8's decode on GPTQ's own words (bench/explore/rp/gen11.py).\n")
    f.write(head[head.index("\n") + 1:])
    f.write("\n".join(k.rstrip() + "\n" for k in (s8, y8, w8)))
