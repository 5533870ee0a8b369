"""Throwaway (issue 22, B = 1): writes target/explore/clattn.ima, specs/paged.ima's
paged_attn and paged_attn_rope as the working tree has them with ima.cuh's
ima_paged_attend inlined, renamed paged_attn_cl and paged_attn_rope_cl, whose partitions of a (sequence, KV head) meet through distributed shared
memory instead of the workspace: the 8 blocks along x are one thread-block cluster
(`cluster(8)`), each sequence's tokens split evenly over them (runs of PART tokens, at most
ceil(n / 8) a block), and at the end each block leaves its partition's normalised output
and log-sum-exp in its own shared memory; after `ima_cluster_sync()` every block weighs 16
of the 128 dimensions of each head from all 8 (`in_block`), with no global write, no
count, no gpu-scope fence and no second pass through L2. A block without tokens still
meets the cluster (its log-sum-exp -inf). part_o, part_lse and arrivals stay in the
signature, unused, so that the timers call both kernels alike. D = 128 only.

The tree's end costs a block at B = 1 and a context of 1024 (64 blocks of 128 tokens)
its output through L2, an acquire-release count, and the last block's reads of the others'
(session 48's stamps: 3.4 µs from a block's last tile to its end at B = 32).
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel, root, write  # noqa: E402


def attend_body():
    """The body of ima.cuh's ima_paged_attend, between its braces."""
    text = open(f"{root()}/codegen/include/ima.cuh").read()
    i = text.index("__device__ __forceinline__ void ima_paged_attend(")
    i = text.index("{\n", text.index("const PG& pages)", i)) + 2
    j = text.index("\n}\n", i)
    return text[i:j + 1]


body = edit(attend_body(), [
    # Tokens spread evenly over the cluster's 8 blocks.
    ("""        const I n = (len + PART - 1) / PART, pairs = I(gridDim.y) * gridDim.z, all = n * pairs;
        const I rule = n <= SPAN && pairs >= 128 ? max(n, I(1)) : all >= 1024 ? I(3) : all >= 256 ? I(2) : I(1);
        return max(rule, (n + I(gridDim.x) - 1) / I(gridDim.x));""",
     """        return max(I(1), ((len + PART - 1) / PART + 7) / 8);"""),
    # The cluster's meeting: every block's partition weighed together, 16 dimensions of each
    # head a block (its rank's), a thread each.
    ("""    // Partition blockIdx.x: those past the sequence's end return at once.""",
     """    auto meet = [&] {
        ima_cluster_sync();
        const int hd = threadIdx.x / 16, d = int(ima_cluster_rank()) * 16 + threadIdx.x % 16;
        if (hd < gn && len > 0) {
            float lse[8], mx = -INFINITY;
            #pragma unroll
            for (int q = 0; q < 8; ++q) {
                lse[q] = cl_lse.in_block(unsigned(q))(hd);
                mx = fmaxf(mx, lse[q]);
            }
            float sum = 0.f, o = 0.f;
            #pragma unroll
            for (int q = 0; q < 8; ++q) {
                // An empty partition's -inf weighs 0.
                const float wq = exp2f(lse[q] - mx);
                sum += wq;
                o += wq * cl_o.in_block(unsigned(q))(hd, d);
            }
            out(b, h * G + g0 + hd, d) = __float2half(o / sum);
        }
        // No block leaves while another may still read its shared memory.
        ima_cluster_sync();
    };
    // Partition blockIdx.x: those past the sequence's end only meet the cluster."""),
    ("""            if (g0 == 0) new_token(h);
        }
        return;
    }""",
     """            if (g0 == 0) new_token(h);
        }
        if (threadIdx.x < GC) cl_lse(threadIdx.x) = -INFINITY;
        meet();
        return;
    }"""),
    ("""    // The sequence's partitions, for the arrivals' count at the end.
    const I parts = (len + runs() * PART - 1) / (runs() * PART);
""", ""),
])
i = body.index("        // Pair 0 holds the partition, whose first token it attended: l > 0.")
j = body.index("        if (threadIdx.x == 0) arrivals(b, h * G + g0) = 0;\n") + len(
    "        if (threadIdx.x == 0) arrivals(b, h * G + g0) = 0;\n")
body = body[:i] + """        // Pair 0 holds the partition, whose first token it attended: l > 0. Its output,
        // normalised, and log-sum-exp stay in this block's shared memory for the cluster.
        if (pw == 0 && gid < gn) {
            const float inv = 1.f / l;
            #pragma unroll
            for (int j = 0; j < DTILES; ++j) {
                cl_o(gid, half_d * DH + 8 * j + 2 * t4) = acc[j][0] * inv;
                cl_o(gid, half_d * DH + 8 * j + 2 * t4 + 1) = acc[j][1] * inv;
            }
            if (t4 == 0 && half_d == 0) cl_lse(gid) = m + __log2f(l);
        }
        meet();
""" + body[j:]
body = edit(body, [("    ima_for_dim<DIMS...>(D, attend);\n", "    attend(ImaConst<128>{});\n")])



def variant(name, where, new_token):
    """Kernel `name` of specs/paged.ima (whose `where` clause is `where`) with its call of
    ima_paged_attend replaced by the edited body, in a cluster of 8 along x. `new_token`:
    the body's definition of the function, where the kernel has none of its own."""
    before, k = kernel("paged.ima", name)
    call_start = k.index("        ima_paged_attend<")
    call_end = k.index("pages);\n", call_start) + len("pages);\n")
    k = k[:call_start] + new_token + "        {\n" + body + "        }\n" + k[call_end:]
    launch_start = k.index("    launch grid(")
    launch_end = k.index("\n", launch_start)
    k = k[:launch_start] + "    launch grid(8, HKV * ceil(HQ / HKV / 8), B) block(128) cluster(8) min_blocks 3" + k[launch_end:]
    # A block takes at most SPAN runs (the pages it stages), so the tables hold at most 8
    # SPAN runs of PART tokens.
    k = edit(k, [
        (f"kernel {name} where {where} {{",
         f"kernel {name}_cl where {where.replace('D <= 256, ', '').replace('D == 64 || D == 128 || D == 256', 'D == 128')}, "
         "P * BS <= 8 * SPAN * PART {"),
        ("    shared pages: i32[SPAN * PART / BS + 2]\n",
         "    shared pages: i32[SPAN * PART / BS + 2]\n"
         "    /// The block's partition: each head's output, normalised, and its log-sum-exp.\n"
         "    shared cl_o: f32[8, 128]\n"
         "    shared cl_lse: f32[8]\n"),
    ])
    return before, k


before, plain = variant("paged_attn", "HQ % HKV == 0, D % 8 == 0, D <= 256, BS >= 1, D == 64 || D == 128 || D == 256",
                        "        const auto new_token = [](I) {};\n")
_, rope = variant("paged_attn_rope", "HQ % HKV == 0, HQ <= 8 * HKV, BS >= 1, D == 128", "")
write("clattn", "// Throwaway: bench/explore/clattn/gen.py.\n" + constants(before) + "\n" + plain + "\n" + rope)
