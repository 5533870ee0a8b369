"""Writes bench/explore/lean/lean.ima (target/lean/lean.ima) from the tree's
specs/paged.ima: paged_attn as a fixed grid of LEAN blocks (3 an SM of the H200, one wave)
that share out every (sequence, head block) pair's runs of PART tokens evenly, stream-K's
way, instead of a block per partition. A block walks its range of runs in chunks of at
most SPAN runs (a chunk never crosses a pair), each chunk a partition as before: its
result in the workspace's slot of its first run, its runs counted on the pair's counter,
and the chunk that completes the count weighing the pair's chunks. Meant to remove the
second wave's stagger at B = 32 (768 blocks of 3 runs over 396 slots), where the blocks
of the last wave end one after another while SMs fall idle.
    python3 bench/explore/lean/gen.py   # then explorer-wheels.sh target/lean/lean.ima"""
import os
import re

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
src = open(os.path.join(root, "specs/paged.ima")).read()


def sub(old, new, count=1):
    global src
    assert src.count(old) >= 1, old[:80]
    src = src.replace(old, new, count)


# Keep the kernel only (the constants and the kernel's docs stay), renamed.
sub("kernel paged_attn where", "kernel paged_attn_lean where")
sub("const BLOCKS = 1024\n", "const BLOCKS = 1024\n\n/// The lean grid: 3 blocks an SM of the H200.\nconst LEAN = 396\n")
sub("    shared pages: i32[SPAN * PART / BS + 2]\n",
    "    shared pages: i32[SPAN * PART / BS + 2]\n    /// The block's tallies: runs and the longest sequence's runs by warp, then the walk's start.\n    shared tally: i32[2, 4]\n"
    "    /// The walk, which thread 0 advances: the next run c, its segment's end e, chunk size cs,\n"
    "    /// sequence b, its first run base, the block's end u1, the pair's first run F, runs n,\n"
    "    /// length len, head block hb, then the runs' split (q, r).\n    shared walk: i32[12]\n"
    "    /// Chunks as the walk emits them, two in turn: b, hb, r0, cr, n, F, len, done.\n    shared chunk: i32[2, 8]\n")
src = re.sub(r"    launch grid\(.*\) block\(128\) min_blocks 3\n", "    launch grid(LEAN) block(128) min_blocks 3\n", src)

# The partition's setup becomes the walk over the block's runs.
head_old = src[src.index("        const I b = blockIdx.z;\n"):src.index("        // 2^x, the exponential")]
head_new = '''        const I G = HQ / HKV, chunks_of_g = (G + GC - 1) / GC, HB = HKV * chunks_of_g;
        const int warp0 = threadIdx.x / 32, lane0 = threadIdx.x % 32;
        // Every sequence's runs (a bad length reads as 0), summed, and the most; a sequence
        // of length 0 comes out as zeros, written by one block.
        I my_runs = 0, my_most = 0;
        for (I s = threadIdx.x; s < B; s += 128) {
            const I len_s = seq_lens(s), n = (len_s + PART - 1) / PART;
            my_runs += n;
            my_most = max(my_most, n);
        }
        for (I s = blockIdx.x; s < B; s += gridDim.x) {
            if (seq_lens(s) == 0) {
                for (I i = threadIdx.x; i < HQ * D; i += 128) out(s, i / D, i % D) = __float2half(0.f);
            }
        }
        #pragma unroll
        for (int o = 16; o >= 1; o /= 2) {
            my_runs += __shfl_xor_sync(0xffffffffu, my_runs, o);
            my_most = max(my_most, I(__shfl_xor_sync(0xffffffffu, my_most, o)));
        }
        if (lane0 == 0) {
            tally(0, warp0) = int(my_runs);
            tally(1, warp0) = int(my_most);
        }
        __syncthreads();
        const I seq_runs = I(tally(0, 0)) + tally(0, 1) + tally(0, 2) + tally(0, 3);
        const I most = max(max(I(tally(1, 0)), I(tally(1, 1))), max(I(tally(1, 2)), I(tally(1, 3))));
        const I U = HB * seq_runs, pairs = HB * B;
        // Runs a block aims at (paged.ima's rule over the whole batch), then as many blocks
        // as that takes, at most the grid's, the runs shared out evenly.
        const I want = most <= SPAN && pairs >= 128 ? max(most, I(1)) : U >= 1024 ? I(3) : U >= 256 ? I(2) : I(1);
        const I used = min(I(gridDim.x), (U + want - 1) / want);
        if (I(blockIdx.x) >= used) return;
        const I qu = U / used, ru = U % used;
        auto first = [&](I k) { return k * qu + min(k, ru); };
        const I u0 = first(blockIdx.x), u1 = first(I(blockIdx.x) + 1);
        // The sequence that holds run u0 (runs ordered by sequence, head block, run), found
        // by warp 0 a 32 sequences at a time.
        __syncthreads();
        if (warp0 == 0) {
            I carry = 0;
            for (I c = 0; c < B; c += 32) {
                const I s = c + lane0;
                const I n = s < B ? HB * ((seq_lens(s) + PART - 1) / PART) : I(0);
                I incl = n;
                #pragma unroll
                for (int o = 1; o < 32; o *= 2) {
                    const I v = __shfl_up_sync(0xffffffffu, incl, o);
                    if (lane0 >= o) incl += v;
                }
                const I excl = carry + incl - n;
                if (n > 0 && excl <= u0 && u0 < excl + n) {
                    tally(0, 0) = int(s);
                    tally(0, 1) = int(excl);
                }
                carry += __shfl_sync(0xffffffffu, incl, 31);
                if (carry > u0) break;
            }
        }
        // The walk starts at u0 with an empty segment, so that thread 0's first advance
        // enters the pair that holds it.
        __syncthreads();
        if (threadIdx.x == 0) {
            walk(0) = int(u0); walk(1) = int(u0); walk(2) = 1; walk(3) = tally(0, 0); walk(4) = tally(0, 1);
            walk(5) = int(u1); walk(10) = int(qu); walk(11) = int(ru);
        }
        // Thread 0 writes the chunk after the walk's position into row `row` of chunk: the
        // block's part of each pair split evenly into chunks of at most SPAN runs. All in
        // shared memory, so that no register holds the walk across a chunk's attention.
        auto advance = [&](int row) {
            I c = walk(0), e = walk(1);
            if (c >= e) {
                const I u = e, u1w = walk(5);
                if (u >= u1w) {
                    chunk(row, 7) = 1;
                    return;
                }
                I b = walk(3), base = walk(4), len = seq_lens(b), n = (len + PART - 1) / PART;
                while (u >= base + HB * n) {
                    base += HB * n;
                    ++b;
                    len = seq_lens(b);
                    n = (len + PART - 1) / PART;
                }
                const I hb = (u - base) / n, F = base + hb * n;
                e = min(u1w, F + n);
                const I sl = e - u, nch = (sl + SPAN - 1) / SPAN;
                c = u;
                walk(1) = int(e); walk(2) = int((sl + nch - 1) / nch); walk(3) = int(b); walk(4) = int(base);
                walk(6) = int(F); walk(7) = int(n); walk(8) = int(len); walk(9) = int(hb);
            }
            const I cs = walk(2), F = walk(6);
            chunk(row, 0) = walk(3); chunk(row, 1) = walk(9); chunk(row, 2) = int(c - F); chunk(row, 3) = int(min(cs, e - c));
            chunk(row, 4) = walk(7); chunk(row, 5) = int(F); chunk(row, 6) = walk(8); chunk(row, 7) = 0;
            walk(0) = int(c + cs);
        };
        // The chunk being attended (read from `chunk` at its start).
        I b = 0, start = 0, end = 0, first_page = 0, h = 0, g0 = 0;
        int gn = 0, row = 0;
        // Whether run rr of the chunk's pair is a chunk's first (the walk's split, redone
        // from the pair's first run F and runs n for any block's part of it).
        auto chunk_first = [&](I rr) {
            const I F = chunk(row, 5), n = chunk(row, 4), qw = walk(10), rw = walk(11);
            const I u = F + rr, o = u < rw * (qw + 1) ? u / (qw + 1) : rw + (u - rw * (qw + 1)) / qw;
            auto firstw = [&](I k) { return k * qw + min(k, rw); };
            const I s = max(firstw(o), F), e = min(firstw(o + 1), F + n), sl = e - s;
            const I cs = (sl + (sl + SPAN - 1) / SPAN - 1) / ((sl + SPAN - 1) / SPAN);
            return (u - s) % cs == 0;
        };
'''
src = src.replace(head_old, head_new)
sub("        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gid = lane / 4, t4 = lane % 4;\n",
    "        const int warp = warp0, lane = lane0, gid = lane / 4, t4 = lane % 4;\n")
# The partition's slot is its first run; the count is of runs.
sub("                const I part = blockIdx.x;\n", "                const I part = chunk(row, 2);\n")
sub("if (threadIdx.x == 0) last = ima_atomic_add_acq_rel(&arrivals(b, h * G + g0), 1) == int(parts - 1);\n            if (!__syncthreads_or(last)) return;",
    "if (threadIdx.x == 0) last = ima_atomic_add_acq_rel(&arrivals(b, h * G + g0), chunk(row, 3)) == chunk(row, 4) - chunk(row, 3);\n            if (!__syncthreads_or(last)) return;")
sub("                for (I p = 0; p < parts; ++p) {\n                    // Every partition",
    "                for (I p = 0; p < I(chunk(row, 4)); ++p) {\n                    if (!chunk_first(p)) continue;\n                    // Every partition")
# The D dispatch runs once a chunk, over the walk.
tail_old = src[src.index("        if (D == 64) {\n            attend(ImaConst<64>{});"):]
tail_new = '''        if (threadIdx.x == 0) advance(0);
        for (int it = 0;; ++it) {
            // The chunk's row is ready, and the chunk before is done with shared memory.
            __syncthreads();
            row = it % 2;
            if (chunk(row, 7)) break;
            b = chunk(row, 0);
            const I hb = chunk(row, 1), r0 = chunk(row, 2), cr = chunk(row, 3), len = chunk(row, 6);
            h = hb / chunks_of_g;
            g0 = hb % chunks_of_g * GC;
            gn = int(min(I(GC), G - g0));
            start = r0 * PART;
            end = min((r0 + cr) * PART, len);
            first_page = start / BS;
            const I npages = (end - 1) / BS - first_page + 1;
            for (I j = threadIdx.x; j < npages; j += 128) pages(j) = int(block_tables(b, first_page + j));
            __syncthreads();
            // The next chunk, into the other row, while this one is attended.
            if (threadIdx.x == 0) advance(row ^ 1);
            if (D == 64) {
                attend(ImaConst<64>{});
            } else if (D == 128) {
                attend(ImaConst<128>{});
            } else {
                attend(ImaConst<256>{});
            }
        }
    }
}
'''
src = src.replace(tail_old, tail_new)
out = os.path.join(root, "target/lean")
os.makedirs(out, exist_ok=True)
open(os.path.join(out, "lean.ima"), "w").write(src)
print(os.path.join(out, "lean.ima"))

# lean2 (session 47, prepared): lean without its walk's loads. lean reads every length from
# global memory three times before its first tile (summed, the search, thread 0's first
# advance) and thread 0 advances the walk before attending, so that warp 0 waits a round
# trip to L2 at each new pair. lean2 keeps the first LENS lengths in shared memory from the
# one pass that sums them, writes the zeros after it, searches and advances from there, and
# advances after the chunk instead of before it. LENS is 128 (512 bytes): with it a block's
# shared memory is 76,704 bytes, and three an SM still fit the H200's 228 KB.
sub("kernel paged_attn_lean where", "kernel paged_attn_lean2 where")
sub("const LEAN = 396\n", "const LEAN = 396\n\n/// Lengths lean2 keeps in shared memory (past them it reads seq_lens).\nconst LENS = 128\n")
sub("    shared chunk: i32[2, 8]\n", "    shared chunk: i32[2, 8]\n    /// The first LENS sequences' lengths.\n    shared lens: i32[LENS]\n")
sub("""            const I len_s = seq_lens(s), n = (len_s + PART - 1) / PART;
""", """            const I len_s = seq_lens(s), n = (len_s + PART - 1) / PART;
            if (s < LENS) lens(s) = int(len_s);
""")
zeros = """        for (I s = blockIdx.x; s < B; s += gridDim.x) {
            if (seq_lens(s) == 0) {
                for (I i = threadIdx.x; i < HQ * D; i += 128) out(s, i / D, i % D) = __float2half(0.f);
            }
        }
"""
sub(zeros, "")
sub("""        __syncthreads();
        const I seq_runs""", """        __syncthreads();
        auto len_of = [&](I s) { return s < LENS ? I(lens(s)) : I(seq_lens(s)); };
""" + zeros.replace("seq_lens(s) == 0", "len_of(s) == 0") + """        const I seq_runs""")
sub("const I n = s < B ? HB * ((seq_lens(s) + PART - 1) / PART) : I(0);", "const I n = s < B ? HB * ((len_of(s) + PART - 1) / PART) : I(0);")
sub("I b = walk(3), base = walk(4), len = seq_lens(b), n = (len + PART - 1) / PART;", "I b = walk(3), base = walk(4), len = len_of(b), n = (len + PART - 1) / PART;")
sub("""                    len = seq_lens(b);
                    n = (len + PART - 1) / PART;""", """                    len = len_of(b);
                    n = (len + PART - 1) / PART;""")
sub("""            // The next chunk, into the other row, while this one is attended.
            if (threadIdx.x == 0) advance(row ^ 1);
""", "")
sub("""                attend(ImaConst<256>{});
            }
        }
    }
}
""", """                attend(ImaConst<256>{});
            }
            // The next chunk, into the other row, once this one is done.
            if (threadIdx.x == 0) advance(row ^ 1);
        }
    }
}
""")
open(os.path.join(out, "lean2.ima"), "w").write(src)
print(os.path.join(out, "lean2.ima"))
