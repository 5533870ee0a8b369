"""Throwaway (issue 22): writes target/explore/cl.ima, cl_gemm.cu's cluster split-K W4A16
product as a spec (`launch ... cluster(CK)`), in four forms for the decode layer's
projections at up to 32 rows: gptq_gemm_cl_o (128 columns a cluster of 4, K = 4096),
gptq_gemm_cl_qkv (192 columns, cluster of 4) and gptq_gemm_cl_down (256 columns, cluster
of 8, K = 14336), each 128 blocks on the layer's shapes, one tile a cluster; and
gptq_gemm_cl_gate_up (SiluAndMul fused, 66 clusters of 2 taking 3 or 4 tiles of 128
columns each, x staged once for all of them). Where cl_gemm.cu reads raw words,
these go through the gptq accessor (`load_whole_tile` of 4 packed rows, every 4th: lane
t's rows of a group, then `dequant_frag`), W as the MMA's A operand as in cl_gemm.cu, x as
B (its staged rows put in `ima_row_pairs`' order once), two groups loaded ahead of the one multiplied, across a cluster's tiles.
At a tile's end the warps' sums go to `part` (two buffers: a tile's are read while the
next one's are written), and after `ima_cluster_sync()` each block adds a CK-th of the
tile's columns from every block of its cluster (`part.in_block(q)`). Checked entry points check every access,
`in_block`'s rank included. build.sh builds the wheel (cl_kernels); time_cl.py times it.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import write  # noqa: E402

KERNEL = """
/// Throwaway: y = x · W (or its SiluAndMul, gate and up in alternate units of 8 columns) for
/// up to 32 rows of x, W in GPTQ int4 with groups of 128, K split across the {ck} blocks of a
/// thread-block cluster ({cols} columns a tile; {wn} warps across them, {kw} along the
/// block's K). bench/explore/cl/gen.py.
kernel gptq_gemm_cl_{name} where M <= 32, G == 128, K % 8 == 0, K % ({ck} * {kw} * 256) == 0, K <= {kmax}, N % {cols} == 0, {ny} {{{args}
    /// The block's 32 rows of x (zeros past M) for its K / {ck} rows of K, each row 32
    /// elements longer than that, so that the 8 rows a warp reads at once fall in
    /// different banks.
    shared xs: f16[32, K / {ck} + 32]
    /// Each warp's sums of a tile, [buffer, warp along K, row of x, column of the tile's].
    shared part: f32[2, {kw}, 32, {cols}]{shared}
    launch grid({clusters} * {ck}) block({threads}) cluster({ck})
    body {{
        constexpr int WN = {wn}, KW = {kw}, CK = {ck}, COLS = {cols};
        const bool fused = NY != N;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
        const int wn = warp % WN, wk = warp / WN;
        const I rank = ima_cluster_rank(), tiles = N / COLS, stride = I(gridDim.x) / CK;
        const I ks = K / CK, kwarp = ks / KW, kb = rank * ks, k0 = kb + wk * kwarp;
        const I q0 = k0 / 128, groups = kwarp / 128;
        // This cluster's tiles: tile0, tile0 + stride, ... below tiles; its steps run over
        // (tile, group) pairs, `groups` of each tile.
        const I tile0 = I(blockIdx.x) / CK;
        const I steps = tile0 < tiles ? (tiles - 1 - tile0) / stride * groups + groups : 0;
        // Lane (g, t) of a step: columns n .. n + 3 of W (the MMA's A rows g and g + 8 of
        // m-tiles 0 and 1) and group q's packed rows 16 q + t + 4 r, r < 4 (its rows of K
        // 128 q + 8 t + 32 r ..): whole tile 4 q + t of 4 rows, every 4th. The steps load in
        // order through a cursor (tile lt, group lq), so that no step divides; a load past
        // the last step loads the last again (in bounds, and never multiplied).
        I lt = tile0, lq = 0, left = steps;
        auto load = [&] {{
            const I n = lt * COLS + 32 * wn + 4 * g;
            const auto tl = w.load_whole_tile(4 * (q0 + lq) + t, n, ImaConst<4>{{}}, ImaConst<4>{{}}, ImaConst<4>{{}});
            if (left > 1) {{
                --left;
                if (++lq == groups) {{
                    lq = 0;
                    lt += stride;
                }}
            }}
            return tl;
        }};
        auto a = load();
        auto b = load();
{stage}        if (steps == 0) {{
            ima_cluster_sync();
            return;
        }}
        // Each 8 elements put in the order (0, 4, 1, 5, 2, 6, 3, 7), once: a B fragment's
        // pairs (ima_row_pairs' order), read with one 16-byte load and no permute.
        for (I i = threadIdx.x; i < 32 * (ks / 8); i += blockDim.x) {{
            uint4& v = *reinterpret_cast<uint4*>(&xs.at8(i / (ks / 8), i % (ks / 8) * 8));
            const uint4 u = v;
            v = uint4{{__byte_perm(u.x, u.z, 0x5410), __byte_perm(u.x, u.z, 0x7632), __byte_perm(u.y, u.w, 0x5410),
                       __byte_perm(u.y, u.w, 0x7632)}};
        }}
        __syncthreads();
        // acc[i][j]: W's columns n + 2i, n + 2i + 1 (the MMA's A rows g, g + 8) by x's rows
        // 8 j .. 8 j + 7 (its B columns), as cl_gemm.cu multiplies: W is the A operand, so
        // that a fragment is four of dequant_frag's registers as they are computed, and x's
        // B fragments are one 16-byte load (x as A would pair two rows' registers with moves).
        ImaAcc4 acc[2][4];
        auto zero = [&] {{
            #pragma unroll
            for (int i = 0; i < 2; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
        }};
        zero();
        // A step's products: its group's 4 packed rows (the tile's rows from tl.k0 = 128 q
        // + 8 t), each 32 rows of K against x's four tiles of 8 rows.
        auto multiply = [&](const decltype(a)& tl) {{
            #pragma unroll
            for (int r = 0; r < 4; ++r) {{
                unsigned bf[4][4];
                w.dequant_frag(tl, r, bf);
                const I kx = tl.k0 + 32 * r - kb;
                #pragma unroll
                for (int j = 0; j < 4; ++j) {{
                    // Row 8 j + g's elements kx .. kx + 7 in the pair order: b0, b1 of k16 step
                    // 0 (pairs (0, 4), (1, 5)), then of step 1.
                    const uint4 xb = *reinterpret_cast<const uint4*>(&xs.at8(8 * j + g, kx));
                    #pragma unroll
                    for (int i = 0; i < 2; ++i) {{
                        const unsigned a0[4] = {{bf[2 * i][0], bf[2 * i + 1][0], bf[2 * i][1], bf[2 * i + 1][1]}};
                        const unsigned a1[4] = {{bf[2 * i][2], bf[2 * i + 1][2], bf[2 * i][3], bf[2 * i + 1][3]}};
                        acc[i][j] = ima_mma_m16n8k16_f16(a0, xb.x, xb.y, acc[i][j]);
                        acc[i][j] = ima_mma_m16n8k16_f16(a1, xb.z, xb.w, acc[i][j]);
                    }}
                }}
            }}
        }};
        // A tile's end: the warps' sums to part's buffer `buf`, then this block's CK-th of
        // the tile's columns (units of 8, or 16 fused: a unit of gate and the unit of up
        // after it) from every block and warp of the cluster, stored.
        auto finish = [&](I tile, int buf) {{
            // Lane (g, t) holds W's columns 4g + 2i (+ 1 in registers 2, 3) of the warp's 32,
            // for x's rows 8 j + 2t (+ 1 in registers 1, 3).
            #pragma unroll
            for (int i = 0; i < 2; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    #pragma unroll
                    for (int e = 0; e < 4; ++e)
                        part(buf, wk, 8 * j + 2 * t + e % 2, 32 * wn + 4 * g + 2 * i + e / 2) = acc[i][j].x[e];
            // Every block's sums of the tile are written; the barrier of the tile before
            // kept this buffer from being written while the cluster still read it.
            ima_cluster_sync();
            const int unit = fused ? 16 : 8, units = COLS / CK / unit;
            for (int i = threadIdx.x; i < 32 * units; i += blockDim.x) {{
                const int r = i / units, col = (int(rank) * units + i % units) * unit;
                if (r >= M) continue;
                float s[16] = {{}};
                #pragma unroll
                for (int q = 0; q < CK; ++q) {{
                    const auto other = part.in_block(unsigned(q));
                    #pragma unroll
                    for (int k = 0; k < KW; ++k)
                        #pragma unroll
                        for (int h = 0; h < 16; h += 4) {{
                            if (h >= unit) break;
                            const ImaVec<float, 4> v = other.at4(buf, k, r, col + h);
                            #pragma unroll
                            for (int e = 0; e < 4; ++e) s[h + e] += v.v[e];
                        }}
                }}
                ImaVec<__half, 8> o;
                #pragma unroll
                for (int e = 0; e < 8; ++e) o.v[e] = __float2half(fused ? s[e] / (1.f + __expf(-s[e])) * s[8 + e] : s[e]);
                y.store8(r, fused ? (tile * COLS + col) / 2 : tile * COLS + col, o);
            }}
        }};
        // Two steps ahead: `groups` is even (the constraint on K), so a tile ends at an odd step.
        int buf = 0;
        I ft = tile0, done = 0;
        for (I j = 0; j < steps; j += 2) {{
            const auto c2 = load();
            multiply(a);
            const auto d2 = load();
            multiply(b);
            a = c2;
            b = d2;
            if ((done += 2) == groups) {{
                finish(ft, buf);
                ft += stride;
                done = 0;
                buf ^= 1;
                zero();
            }}
        }}
        // No block leaves while another may still read its shared memory.
        ima_cluster_sync();
    }}
}}
"""

ARGS = """
    in  x: f16[M, K] align(16)
    in  w: q4[K, N] align(16) gptq(group = G)
    out y: f16[M, NY] align(16)"""

STAGE = """        // x's rows for this block's K, staged once for all its tiles while the first groups load.
        for (I i = threadIdx.x; i < 32 * (ks / 8); i += blockDim.x) {{
            const I r = i / (ks / 8), c = i % (ks / 8) * 8;
            if (r < M) {{
                x.load8_async(xs.at8(r, c), r, kb + c);
            }} else {{
                xs.at8(r, c) = ImaVec<__half, 8>{{}};
            }}
        }}
        ima_async_commit();
        ima_async_wait<0>();
        __syncthreads();
"""

# The forms with decode.ima's add_rms_norm fused in front: x is the normalised residual
# stream, made by the cluster from the sublayer's output h and the residual before it; the
# new residual goes to residual_out (another buffer: every cluster reads `residual`).
NORM_ARGS = """
    /// The sublayer's output, added into the residual stream.
    in    h: f16[M, K] align(16)
    /// The residual stream before: read by every cluster.
    in    residual: f16[M, K] align(16)
    /// h + residual (rounded to f16), written by the first cluster's blocks.
    out   residual_out: f16[M, K] align(16)
    /// The norm's per-channel weight.
    in    gamma: f16[K] align(16)
    in    w: q4[K, N] align(16) gptq(group = G)
    out   y: f16[M, NY] align(16)
    param eps: f32"""

NORM_SHARED = """
    /// Each row's sum of squares over this block's K, and 1 / sqrt(mean + eps) over all K.
    shared ss: f32[32]
    shared inv: f32[32]"""

NORM_STAGE = """        // h + residual for this block's K, rounded to f16 as add_rms_norm rounds it, a warp a
        // row at a time, its squares summed; the first cluster stores it as residual_out
        // (its blocks cover K).
        for (int r = warp; r < 32; r += int(blockDim.x) / 32) {{
            float sq = 0.f;
            for (I c = 8 * lane; c < ks; c += 256) {{
                ImaVec<__half, 8> v{{}};
                if (r < M) {{
                    const ImaVec<__half, 8> p = h.load8(r, kb + c), q = residual.load8(r, kb + c);
                    #pragma unroll
                    for (int e = 0; e < 8; ++e) {{
                        v.v[e] = __float2half(__half2float(p.v[e]) + __half2float(q.v[e]));
                        const float f = __half2float(v.v[e]);
                        sq += f * f;
                    }}
                    if (tile0 == 0) residual_out.store8(r, kb + c, v);
                }}
                uint4 u;
                memcpy(&u, &v, 16);
                *reinterpret_cast<uint4*>(&xs.at8(r, c)) = u;
            }}
            for (int o = 16; o > 0; o /= 2) sq += __shfl_xor_sync(0xffffffffu, sq, o);
            if (lane == 0) ss(r) = sq;
        }}
        // Every block's sums are written (and stay: ss is not written again).
        ima_cluster_sync();
        if (threadIdx.x < 32) {{
            float sum = 0.f;
            for (int q = 0; q < CK; ++q) sum += ss.in_block(unsigned(q))(threadIdx.x);
            inv(threadIdx.x) = rsqrtf(sum / float(K) + eps);
        }}
        __syncthreads();
        // The block's elements normalised and weighted, rounded to f16 once (add_rms_norm's
        // y), in place.
        for (I i = threadIdx.x; i < 32 * (ks / 8); i += blockDim.x) {{
            const I r = i / (ks / 8), c = i % (ks / 8) * 8;
            uint4& slot = *reinterpret_cast<uint4*>(&xs.at8(r, c));
            ImaVec<__half, 8> v;
            const uint4 u = slot;
            memcpy(&v, &u, 16);
            const ImaVec<__half, 8> gm = gamma.load8(kb + c);
            #pragma unroll
            for (int e = 0; e < 8; ++e) v.v[e] = __float2half(__half2float(v.v[e]) * inv(r) * __half2float(gm.v[e]));
            uint4 o;
            memcpy(&o, &v, 16);
            slot = o;
        }}
        __syncthreads();
"""

# (name, warps across, warps along K, blocks a cluster, clusters: a tile each or at most 66,
# fused SiluAndMul, add_rms_norm in front).
FORMS = [("o", 4, 2, 4, "N / 128", False, False), ("qkv", 6, 2, 4, "N / 192", False, False),
         ("down", 8, 1, 8, "N / 256", False, False), ("gate_up", 4, 2, 2, "min(N / 128, 66)", True, False),
         ("qkv_norm", 6, 2, 4, "N / 192", False, True), ("gate_up_norm", 4, 2, 2, "min(N / 128, 66)", True, True)]
text = "// Throwaway: bench/explore/cl/gen.py's cluster split-K W4A16 forms.\n"
for name, wn, kw, ck, clusters, fused, norm in FORMS:
    text += KERNEL.format(name=name, wn=wn, kw=kw, ck=ck, cols=32 * wn, threads=32 * wn * kw, kmax=ck * 2048,
                          clusters=clusters, ny=("2 * NY == N" if fused else "NY == N") + ", NY % 8 == 0",
                          args=NORM_ARGS if norm else ARGS, shared=NORM_SHARED if norm else "",
                          stage=(NORM_STAGE if norm else STAGE).format())
write("cl", text)
