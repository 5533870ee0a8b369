"""Throwaway: writes stream.ima, kernels that only read a [KP, N] int32 matrix (GPTQ's
qweight) in strips of 4 LA columns a block, a warp's load reading LA x 16 contiguous bytes
of each of 32 / LA rows, U loads in flight a lane, MINB blocks an SM: how fast DRAM serves
each access shape, without any arithmetic."""
VARIANTS = [(4, 4, 2), (8, 4, 2), (16, 4, 2), (32, 4, 2), (8, 8, 2), (32, 8, 2), (8, 4, 4), (32, 4, 4)]
BODY = r"""
kernel s{LA}_u{U}_b{B} where N % 4 == 0 {{
    in  w: i32[KP, N] align(16)
    out o: i32[ceil(N / {COLS}), 256]
    launch grid(ceil(N / {COLS})) block(256) min_blocks {B}
    body {{
        constexpr int LA = {LA}, LD = 32 / LA, U = {U};
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        const I n = I(blockIdx.x) * {COLS} + 4 * (lane % LA);
        unsigned acc = 0;
        if (n < N) {{
            for (I r0 = I(warp) * LD + lane / LA; r0 < KP; r0 += 8 * LD * U) {{
                ImaVec<int, 4> v[U];
                #pragma unroll
                for (int u = 0; u < U; ++u) {{
                    const I r = r0 + 8 * LD * u;
                    if (r < KP) v[u] = w.load4(r, n);
                    else v[u] = ImaVec<int, 4>{{{{0, 0, 0, 0}}}};
                }}
                #pragma unroll
                for (int u = 0; u < U; ++u) acc ^= unsigned(v[u].v[0] ^ v[u].v[1] ^ v[u].v[2] ^ v[u].v[3]);
            }}
        }}
        o(blockIdx.x, threadIdx.x) = int(acc);
    }}
}}
"""
# The same reads of the matrix stored strip by strip (session 55): w as [S, KP, COLS], the
# KP rows of each strip of COLS columns contiguous, so that a warp's load reads 512
# contiguous bytes and a block's strip one contiguous run, whatever LA. The timer passes
# the same buffer viewed so: what a layout prepared at load time would give the GEMVs.
TILED = [(4, 4, 2), (8, 4, 2), (16, 4, 2), (32, 4, 2), (8, 4, 4)]
TILED_BODY = r"""
kernel t{LA}_u{U}_b{B} {{
    in  w: i32[S, KP, {COLS}] align(16)
    out o: i32[S, 256]
    launch grid(S) block(256) min_blocks {B}
    body {{
        constexpr int LA = {LA}, LD = 32 / LA, U = {U};
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        const I s = I(blockIdx.x);
        const int c = 4 * (lane % LA);
        unsigned acc = 0;
        for (I r0 = I(warp) * LD + lane / LA; r0 < KP; r0 += 8 * LD * U) {{
            ImaVec<int, 4> v[U];
            #pragma unroll
            for (int u = 0; u < U; ++u) {{
                const I r = r0 + 8 * LD * u;
                if (r < KP) v[u] = w.load4(s, r, c);
                else v[u] = ImaVec<int, 4>{{{{0, 0, 0, 0}}}};
            }}
            #pragma unroll
            for (int u = 0; u < U; ++u) acc ^= unsigned(v[u].v[0] ^ v[u].v[1] ^ v[u].v[2] ^ v[u].v[3]);
        }}
        o(s, threadIdx.x) = int(acc);
    }}
}}
"""
with open("stream.ima", "w") as f:
    f.write("/// Throwaway access-shape kernels (bench/explore/stream/gen.py).\n")
    for la, u, b in VARIANTS:
        f.write(BODY.format(LA=la, U=u, B=b, COLS=4 * la))
    for la, u, b in TILED:
        f.write(TILED_BODY.format(LA=la, U=u, B=b, COLS=4 * la))
