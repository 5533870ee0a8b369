"""Throwaway, session 34 (issue 21): what sets gptq_gemm_wg16's consumers' pace? Its blocks
end 42.5 to 46.1 µs after the first start at K = 8192, N = 28672 (dyn.py's stamps), 1.2 µs
(about 2,300 cycles) a stage, where the weights alone stream a stage in 0.8. pace.ima's
kernels load one stage (W's 40 x 192 words and x's 16 x 256) into shared memory once,
then each of 3 consumer warpgroups runs REPS stage bodies on it, timed by clock64:
  full   ima_wg_w4_stage<true> (gptq_gemm_wg16's stage: decode, MMAs, waits, folds);
  mma    its MMAs, waits and folds on registers decoded once, before the loop;
  dec    its decode alone (the words read and decoded, XOR-ed into a register);
  acc4   mma with each quarter's 4 steps into an accumulator of its own (no chain);
  nowait full with all four quarters' registers distinct (no wait before the 3rd quarter);
  ilv    full with the weights' nibbles taken in pairs i, i + 4 of one word (Marlin's decode:
         a shift, four LOP3s and four HADD2/HFMA2 a word, one 8-byte read for two steps),
         which needs x's k permuted alike within each 32 (not done here: the sums are wrong);
  *_s    full, mma, dec and ilv while the producer streams the block's strip of W through a second
         stage (TMA writes into shared memory beside the consumers, as in the kernel).
    python3 pace_gen.py"""

with open("../../../specs/gemm_tma.ima") as f:
    spec = f.read()
head = spec[: spec.index("/// Dense GEMM on Hopper")]

KERNEL = r'''
kernel pace_NAME where M <= 16, G >= 128, K % 8 == 0, N % 8 == 0 {
    in    x: f16[M, K] align(16) tma(16, 64)
    in    w: q4[K, N] align(16) tma(256, 192) gptq(group = G)
    /// Each block's consumer warpgroups' cycles for REPS stages.
    inout cycles: i64[BLOCKS, 4]
    /// The sums, so that nothing is dead code.
    out   y: f16[BLOCKS, 3, 128]
    shared ws: i32[2, 40, 192] align(1024)
    shared xs: f16[2, 16, 256] align(1024)
    shared done: i32[1]
    launch persistent(BLOCKS) block(512)
    body {
        constexpr int REPS = 400;
        using Pipe = ImaTmaPipeline<2, 3>;
        const Pipe pipe;
        const I KS = ima_ceil_div(K, I(256)), NS = ima_ceil_div(N, I(192));
        if (threadIdx.x == 0) done(0) = 0;
        __syncthreads();
        if (pipe.consumer() < 0) {
            asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Pipe::PRODUCER_REGS));
            if (threadIdx.x != 0) return;
            const ImaBarrier bar{pipe.full};
            const I kc = I(blockIdx.x) % KS, tile = I(blockIdx.x) % NS;
            w.tma_load(ws.tma_tile(ImaConst<40>{}, ImaConst<192>{}, 0), bar, 256 * kc, tile * 192);
            x.tma_load(xs.tma_tile(ImaConst<16>{}, ImaConst<256>{}, 0), bar, 0, 256 * kc);
            ima_mbar_arrive(pipe.full);
            if (STREAMING) {
                // Stage 1 streams the block's strip of W (from DRAM, past L2) until the consumers are done.
                const ImaBarrier bar1{pipe.full + 8};
                #pragma unroll 1
                for (int r = 0; *reinterpret_cast<volatile int*>(&done(0)) == 0; ++r) {
                    w.tma_load(ws.tma_tile(ImaConst<40>{}, ImaConst<192>{}, 1), bar1, 256 * ((kc + 1 + r) % KS), tile * 192);
                    ima_mbar_arrive(pipe.full + 8);
                    ima_mbar_wait(pipe.full + 8, unsigned(r & 1));
                }
            }
            return;
        }
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Pipe::CONSUMER_REGS));
        const int wg = pipe.consumer(), lane = threadIdx.x % 32;
        const int c0 = 64 * wg + 16 * (threadIdx.x / 32 % 4) + 2 * (lane / 4);
        ima_mbar_wait(pipe.full, 0u);
        const auto wt = ws.tma_tile(ImaConst<40>{}, ImaConst<192>{}, 0);
        const auto xt = xs.tma_tile(ImaConst<16>{}, ImaConst<256>{}, 0);
        ImaWgAcc<16> acc;
        unsigned sink = 0;
        PRE
        const long long t0 = clock64();
        #pragma unroll 1
        for (int r = 0; r < REPS; ++r) {
            STAGE
        }
        const long long t1 = clock64();
        if (threadIdx.x % 128 == 0) cycles(I(blockIdx.x), I(1 + wg)) = t1 - t0;
        if (threadIdx.x == 128) *reinterpret_cast<volatile int*>(&done(0)) = 1;
        float v = float(sink & 1);
        #pragma unroll
        for (int j = 0; j < 2; ++j)
            #pragma unroll
            for (int e = 0; e < 4; ++e) v += acc.c[j].x[e];
        y(I(blockIdx.x), I(wg), I(threadIdx.x % 128)) = __float2half(v);
    }
}
'''

FULL = "ima_wg_w4_stage<true>(acc, w, wt, xt, c0, 0);"

# Registers decoded once: each step's fragment, kept for every rep.
PRE_FRAGS = r'''const decltype(w.tma_wg_group(wt, 0, c0)) q[2] = {w.tma_wg_group(wt, 0, c0), w.tma_wg_group(wt, 128, c0)};
        unsigned f[2][4][4];
        #pragma unroll
        for (int j = 0; j < 8; ++j) w.tma_wg_frag_unscaled(wt, q[j / 4 % 2], j, c0, f[j / 4][j % 4]);'''

MMA = r'''ImaWgAcc<16> half[2];
            #pragma unroll
            for (int h = 0; h < 4; ++h) {
                if (h >= 2) acc.template wait<1>();
                if (h == 3) acc.fma_rows(half[0], q[0].scale(0), q[0].scale(1));
                acc.fence();
                #pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j) half[h / 2].mma_regs(f[h % 2][j % 4], xt, 16 * j);
                acc.commit();
            }
            acc.template wait<0>();
            acc.fma_rows(half[1], q[1].scale(0), q[1].scale(1));'''

ACC4 = r'''ImaWgAcc<16> part[4];
            #pragma unroll
            for (int h = 0; h < 4; ++h) {
                if (h >= 2) acc.template wait<1>();
                acc.fence();
                #pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j) part[j % 4].mma_regs(f[h % 2][j % 4], xt, 16 * j);
                acc.commit();
            }
            acc.template wait<0>();
            #pragma unroll
            for (int p = 0; p < 4; ++p) acc.fma_rows(part[p], q[p / 2].scale(0), q[p / 2].scale(1));'''

DEC = r'''const decltype(w.tma_wg_group(wt, 0, c0)) q[2] = {w.tma_wg_group(wt, 0, c0), w.tma_wg_group(wt, 128, c0)};
            #pragma unroll
            for (int j = 0; j < 16; ++j) {
                unsigned a[4];
                w.tma_wg_frag_unscaled(wt, q[j / 8], j, c0, a);
                sink ^= a[0] ^ a[1] ^ a[2] ^ a[3];
            }
            asm volatile("" : "+r"(sink));'''

NOWAIT = r'''const decltype(w.tma_wg_group(wt, 0, c0)) q[2] = {w.tma_wg_group(wt, 0, c0), w.tma_wg_group(wt, 128, c0)};
            ImaWgAcc<16> half[2];
            unsigned a[4][4][4];
            #pragma unroll
            for (int h = 0; h < 4; ++h) {
                #pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j) w.tma_wg_frag_unscaled(wt, q[h / 2], j, c0, a[h][j % 4]);
                acc.fence();
                #pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j) half[h / 2].mma_regs(a[h][j % 4], xt, 16 * j);
                acc.commit();
            }
            acc.template wait<0>();
            acc.fma_rows(half[0], q[0].scale(0), q[0].scale(1));
            acc.fma_rows(half[1], q[1].scale(0), q[1].scale(1));'''

ILV = r'''const decltype(w.tma_wg_group(wt, 0, c0)) q[2] = {w.tma_wg_group(wt, 0, c0), w.tma_wg_group(wt, 128, c0)};
            __half2 blo[2][2], bhi[2][2];
            #pragma unroll
            for (int gi = 0; gi < 2; ++gi)
                #pragma unroll
                for (int e = 0; e < 2; ++e) {
                    blo[gi][e] = __low2half2(q[gi].c[e].bias);
                    bhi[gi][e] = __high2half2(q[gi].c[e].bias);
                }
            const __half2 sixteenth = __float2half2_rn(0.0625f);
            ImaWgAcc<16> half[2];
            unsigned a[2][4][4];
            #pragma unroll
            for (int h = 0; h < 4; ++h) {
                if (h >= 2) acc.template wait<1>();
                if (h == 3) acc.fma_rows(half[0], q[0].scale(0), q[0].scale(1));
                #pragma unroll
                for (int bb = 0; bb < 2; ++bb) {
                    unsigned wv[2];
                    ima_ld_shared(w.tma_word(wt, 4 * (2 * h + bb) + int(threadIdx.x % 4), unsigned(c0 % 192 / 2 * 2 * 4)), wv);
                    #pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const unsigned x0 = wv[e], x8 = wv[e] >> 8;
                        unsigned r[4];
                        asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r[0]) : "r"(x0), "n"(0x000F000F), "r"(0x64006400));
                        asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r[1]) : "r"(x0), "n"(0x00F000F0), "r"(0x64006400));
                        asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r[2]) : "r"(x8), "n"(0x000F000F), "r"(0x64006400));
                        asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r[3]) : "r"(x8), "n"(0x00F000F0), "r"(0x64006400));
                        __half2 d[4];
                        #pragma unroll
                        for (int u = 0; u < 4; ++u) memcpy(&d[u], &r[u], 4);
                        d[0] = __hadd2(d[0], blo[h / 2][e]);
                        d[1] = __hfma2(d[1], sixteenth, bhi[h / 2][e]);
                        d[2] = __hadd2(d[2], blo[h / 2][e]);
                        d[3] = __hfma2(d[3], sixteenth, bhi[h / 2][e]);
                        memcpy(&a[h % 2][2 * bb][e], &d[0], 4);
                        memcpy(&a[h % 2][2 * bb][2 + e], &d[1], 4);
                        memcpy(&a[h % 2][2 * bb + 1][e], &d[2], 4);
                        memcpy(&a[h % 2][2 * bb + 1][2 + e], &d[3], 4);
                    }
                }
                acc.fence();
                #pragma unroll
                for (int j = 4 * h; j < 4 * h + 4; ++j) half[h / 2].mma_regs(a[h % 2][j % 4], xt, 16 * j);
                acc.commit();
            }
            acc.template wait<0>();
            acc.fma_rows(half[1], q[1].scale(0), q[1].scale(1));'''

variants = [("full", "", FULL, 0), ("mma", PRE_FRAGS, MMA, 0), ("dec", "", DEC, 0), ("acc4", PRE_FRAGS, ACC4, 0),
            ("nowait", "", NOWAIT, 0), ("full_s", "", FULL, 1), ("mma_s", PRE_FRAGS, MMA, 1), ("dec_s", "", DEC, 1), ("ilv", "", ILV, 0), ("ilv_s", "", ILV, 1)]
with open("pace.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg16's stage timed on one resident stage (bench/explore/dyn/pace_gen.py).\n")
    f.write(head[head.index("\n") + 1:])
    for name, pre, stage, streaming in variants:
        f.write(KERNEL.replace("NAME", name).replace("PRE", pre).replace("STAGE", stage)
                .replace("STREAMING", "true" if streaming else "false"))
