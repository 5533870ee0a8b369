"""Throwaway (issue 22): writes target/explore/ropeattn.ima, specs/paged.ima's paged_attn
with decode.ima's rope_cache fused in front of it, as `paged_attn_rope` (D = 128 only):
it takes the QKV projection's output, the positions, the cos/sin table and the slot
mapping in place of the rotated queries. Each block rotates its own query heads'
fragments from qkv (rounded to f16 as rope_cache's q store rounds them), and the block
whose partition holds a sequence's last token (len - 1, the one being decoded) rotates
its KV head's new key, and stores it and the new value through slot_mapping, before the
barrier after which its warps read that token's tile. So the caches get what rope_cache
writes for every sequence of length 1 or more (a sequence of length 0 writes nothing
here, where rope_cache writes its slot when it is not -1). In the layer's graph rope_cache
adds 1.1 to 2.1 us (bench/RESULTS.md, session 48, `decode_layer ablate`): time_ropeattn.py
says what the fusion saves.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel, write  # noqa: E402

before, k = kernel("paged.ima", "paged_attn")
fused = edit(k, [
    ("kernel paged_attn where HQ % HKV == 0, D % 8 == 0, D <= 256, BS >= 1, D == 64 || D == 128 || D == 256 {",
     "kernel paged_attn_rope where HQ % HKV == 0, D % 16 == 0, D <= 256, BS >= 1, D == 128 {"),
    ("    /// Queries of the step, one a head.\n    in    q: f16[B, HQ, D] align(16)\n",
     "    /// The QKV projection's output, one row a sequence (rope_cache's).\n"
     "    in    qkv: f16[B, (HQ + 2 * HKV) * D] align(16)\n"
     "    in    positions: i64[B] values(0 .. MAXPOS)\n"
     "    in    cos_sin: f32[MAXPOS, D] align(16)\n"
     "    in    slot_mapping: i64[B] values(0 .. NB * BS, or -1)\n"),
    ("    in    k_cache: f16[NB, BS, HKV, D] align(16)\n", "    inout k_cache: f16[NB, BS, HKV, D] align(16)\n"),
    ("    in    v_cache: f16[NB, BS, HKV, D] align(16)\n", "    inout v_cache: f16[NB, BS, HKV, D] align(16)\n"),
    # The new token's key and value, from the block that reads it, before its barrier.
    ("        for (I j = threadIdx.x; j < npages; j += 128) pages(j) = int(block_tables(b, first_page + j));\n        __syncthreads();\n",
     "        for (I j = threadIdx.x; j < npages; j += 128) pages(j) = int(block_tables(b, first_page + j));\n"
     "        const I pos = positions(b);\n"
     "        if (end == len && g0 == 0 && threadIdx.x < 2 * (D / 16)) {\n"
     "            // Thread t: the key (t < D / 16) or the value, 8 of each half's D / 2.\n"
     "            const bool key = threadIdx.x < D / 16;\n"
     "            const I j = I(threadIdx.x) % (D / 16) * 8, hd = (key ? HQ : HQ + HKV) + h;\n"
     "            const auto lo = qkv.load8(b, hd * D + j), hi = qkv.load8(b, hd * D + j + D / 2);\n"
     "            ImaVec<__half, 8> rlo = lo, rhi = hi;\n"
     "            if (key) {\n"
     "                const auto c = cos_sin.load4(pos, j), c4 = cos_sin.load4(pos, j + 4);\n"
     "                const auto s = cos_sin.load4(pos, j + D / 2), s4 = cos_sin.load4(pos, j + D / 2 + 4);\n"
     "                #pragma unroll\n"
     "                for (int e = 0; e < 8; ++e) {\n"
     "                    const float cs = e < 4 ? c.v[e] : c4.v[e - 4], sn = e < 4 ? s.v[e] : s4.v[e - 4];\n"
     "                    const float x0 = __half2float(lo.v[e]), x1 = __half2float(hi.v[e]);\n"
     "                    rlo.v[e] = __float2half(x0 * cs - x1 * sn);\n"
     "                    rhi.v[e] = __float2half(x1 * cs + x0 * sn);\n"
     "                }\n"
     "            }\n"
     "            slot_mapping(b).then([&](I slot) {\n"
     "                if (key) {\n"
     "                    k_cache.store8(slot / BS, slot % BS, h, j, rlo);\n"
     "                    k_cache.store8(slot / BS, slot % BS, h, j + D / 2, rhi);\n"
     "                } else {\n"
     "                    v_cache.store8(slot / BS, slot % BS, h, j, rlo);\n"
     "                    v_cache.store8(slot / BS, slot % BS, h, j + D / 2, rhi);\n"
     "                }\n"
     "            });\n"
     "        }\n"
     "        __syncthreads();\n"),
    # Each lane's query fragments, rotated: dimension d's partner d +- D / 2 is k-step
    # kk +- KSTEPS / 2 of the same lane.
    ("                        qa[kk][half] = has ? ima_pack_f16x2(__half2float(q(b, hq, d)), __half2float(q(b, hq, d + 1))) : 0u;\n",
     "                        float r[2];\n"
     "                        #pragma unroll\n"
     "                        for (int e = 0; e < 2; ++e) {\n"
     "                            const I i = d + e, jj = i % (DD / 2);\n"
     "                            const float cs = cos_sin(pos, jj), sn = cos_sin(pos, DD / 2 + jj);\n"
     "                            const float x = __half2float(qkv(b, hq * DD + i));\n"
     "                            const float y = __half2float(qkv(b, hq * DD + (i < DD / 2 ? i + DD / 2 : i - DD / 2)));\n"
     "                            r[e] = __half2float(__float2half(i < DD / 2 ? x * cs - y * sn : x * cs + y * sn));\n"
     "                        }\n"
     "                        qa[kk][half] = has ? ima_pack_f16x2(r[0], r[1]) : 0u;\n"),
    # D = 128 keeps its queries in registers: the shared path is never taken.
    ("                        dst = q.load8(b, h * G + g0 + r, I(c * 8));\n", "                        dst = {};\n"),
    ("        if (D == 64) {\n            attend(ImaConst<64>{});\n        } else if (D == 128) {\n            attend(ImaConst<128>{});\n        } else {\n            attend(ImaConst<256>{});\n        }\n",
     "        attend(ImaConst<128>{});\n"),
])
write("ropeattn", "/// Throwaway: rope_cache fused into paged_attn (bench/explore/ropeattn/gen.py).\n" + constants(before)
      + "\n" + fused)
