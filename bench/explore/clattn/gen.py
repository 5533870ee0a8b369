"""Throwaway (issue 22, B = 1): writes target/explore/clattn.ima, specs/paged.ima's
paged_attn and paged_attn_rope as the working tree has them with ima.cuh's
ima_paged_attend inlined: paged_attn_cl and paged_attn_rope_cl (clusters of 8) and
paged_attn_cl4 (of 4), whose partitions of a (sequence, KV head) meet through distributed
shared memory instead of the workspace. The CL blocks along x are one thread-block cluster
(`cluster(CL)`), each sequence's tokens split evenly over them (runs of PART tokens, at most
ceil(n / CL) a block), and at the end each block leaves its partition's normalised output
and log-sum-exp in its own shared memory; after `ima_cluster_sync()` every block weighs
128 / CL of the 128 dimensions of each head from all CL blocks (`in_block`), with no
global write, no count, no gpu-scope fence and no second pass through L2. A block without
tokens still meets the cluster (its log-sum-exp -inf). part_o, part_lse and arrivals stay
in the signature, unused, so that the timers call these kernels and the tree's alike. D =
128 only; tables of at most CL * SPAN runs of PART tokens (a block stages at most SPAN
runs of pages).

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


RUNS = """        const I n = (len + PART - 1) / PART, pairs = I(gridDim.y) * gridDim.z, all = n * pairs;
        const I rule = n <= SPAN && pairs >= 128 ? max(n, I(1)) : all >= 1024 ? I(3) : all >= 256 ? I(2) : I(1);
        return max(rule, (n + I(gridDim.x) - 1) / I(gridDim.x));"""

# The cluster's meeting: every block's partition weighed together, 128 / CL dimensions of
# each of the block's heads a block (its rank's), a thread each.
MEET = """    auto meet = [&] {
        ima_cluster_sync();
        constexpr int CL = @CL@, EACH = 128 / CL;
        for (int i = threadIdx.x; i < GC * EACH; i += 128) {
            const int hd = i / EACH, d = int(ima_cluster_rank()) * EACH + i % EACH;
            if (hd >= gn || len == 0) continue;
            float lse[CL], mx = -INFINITY;
            #pragma unroll
            for (int q = 0; q < CL; ++q) {
                lse[q] = cl_lse.in_block(unsigned(q))(hd);
                mx = fmaxf(mx, lse[q]);
            }
            float sum = 0.f, o = 0.f;
            #pragma unroll
            for (int q = 0; q < CL; ++q) {
                // An empty partition's -inf weighs 0, and its output is unwritten (0 times
                // a NaN left there is NaN: session 54's B = 32 at 512): skipped.
                const float wq = exp2f(lse[q] - mx);
                sum += wq;
                if (wq > 0.f) o += wq * cl_o.in_block(unsigned(q))(hd, d);
            }
            out(b, h * G + g0 + hd, d) = __float2half(o / sum);
        }
        // No block leaves while another may still read its shared memory.
        ima_cluster_sync();
    };
    // Partition blockIdx.x: those past the sequence's end only meet the cluster."""

EMPTY = """            if (g0 == 0) new_token(h);
        }
        return;
    }"""

EMPTY_MEETS = """            if (g0 == 0) new_token(h);
        }
        if (threadIdx.x < GC) cl_lse(threadIdx.x) = -INFINITY;
        meet();
        return;
    }"""

END_FIRST = "        // Pair 0 holds the partition, whose first token it attended: l > 0.\n"
END_LAST = "        if (threadIdx.x == 0) arrivals(b, h * G + g0) = 0;\n"
END = """        // Pair 0 holds the partition, whose first token it attended: l > 0. Its output,
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
"""


def attend(cl):
    """ima_paged_attend's body for partitions that meet in clusters of `cl` blocks."""
    body = edit(attend_body(), [
        (RUNS, f"        return max(I(1), ((len + PART - 1) / PART + {cl - 1}) / {cl});"),
        ("    // Partition blockIdx.x: those past the sequence's end return at once.", MEET.replace("@CL@", str(cl))),
        (EMPTY, EMPTY_MEETS),
        ("""    // The sequence's partitions, for the arrivals' count at the end.
    const I parts = (len + runs() * PART - 1) / (runs() * PART);
""", ""),
        ("    ima_for_dim<DIMS...>(D, attend);\n", "    attend(ImaConst<128>{});\n"),
    ])
    i = body.index(END_FIRST)
    j = body.index(END_LAST) + len(END_LAST)
    return body[:i] + END + body[j:]


def variant(name, suffix, where, new_token, cl):
    """Kernel `name` of specs/paged.ima (whose `where` clause is `where`) as `name` + `suffix`,
    its call of ima_paged_attend replaced by attend(cl) in a cluster of `cl` along x.
    `new_token`: the body's definition of the function, where the kernel has none of its own."""
    before, k = kernel("paged.ima", name)
    call_start = k.index("        ima_paged_attend<")
    call_end = k.index("pages);\n", call_start) + len("pages);\n")
    k = k[:call_start] + new_token + "        {\n" + attend(cl) + "        }\n" + k[call_end:]
    launch_start = k.index("    launch grid(")
    launch_end = k.index("\n", launch_start)
    k = (k[:launch_start] + f"    launch grid({cl}, HKV * ceil(HQ / HKV / 8), B) block(128) cluster({cl}) min_blocks 3"
         + k[launch_end:])
    kept = where.replace("D <= 256, ", "").replace("D == 64 || D == 128 || D == 256", "D == 128")
    k = edit(k, [
        (f"kernel {name} where {where} {{", f"kernel {name}{suffix} where {kept}, P * BS <= {cl} * SPAN * PART {{"),
        ("    shared pages: i32[SPAN * PART / BS + 2]\n",
         "    shared pages: i32[SPAN * PART / BS + 2]\n"
         "    /// The block's partition: each head's output, normalised, and its log-sum-exp.\n"
         "    shared cl_o: f32[8, 128]\n"
         "    shared cl_lse: f32[8]\n"),
    ])
    return before, k


PLAIN = "HQ % HKV == 0, D % 8 == 0, D <= 256, BS >= 1, D == 64 || D == 128 || D == 256"
NO_TOKEN = "        const auto new_token = [](I) {};\n"
before, plain = variant("paged_attn", "_cl", PLAIN, NO_TOKEN, 8)
_, plain4 = variant("paged_attn", "_cl4", PLAIN, NO_TOKEN, 4)
_, rope = variant("paged_attn_rope", "_cl", "HQ % HKV == 0, HQ <= 8 * HKV, BS >= 1, D == 128", "", 8)
write("clattn", "// Throwaway: bench/explore/clattn/gen.py.\n" + constants(before) + "\n" + plain + "\n" + plain4
      + "\n" + rope)
