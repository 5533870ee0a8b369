"""What the throwaway generators of gptq_gemm's 16-row variants (g16/gen.py, xs/gen.py)
share: the end of a kernel body, for str.format templates (braces doubled), after a main
loop that leaves a lane's accumulators acc[4] (lane (g, t4) holding columns 8 t4 + j of
rows g and g + 8, as gptq_gemm's): the 8 warps' sums meet in `part` (f32[8, 16, 32]) and
leave as 16-byte stores of y's rows below M."""

EPILOGUE = r"""        #pragma unroll
        for (int hh = 0; hh < 2; ++hh)
            #pragma unroll
            for (int j = 0; j < 8; ++j) part(warp, g + 8 * hh, 8 * t4 + j) = acc[j % 4].x[2 * hh + j / 4];
        __syncthreads();
        if (threadIdx.x < 64) {{
            const int r = threadIdx.x / 4, c8 = threadIdx.x % 4 * 8;
            if (m0 + r < M) {{
                float sum[8];
                #pragma unroll
                for (int j = 0; j < 8; ++j) sum[j] = 0.f;
                #pragma unroll
                for (int s8 = 0; s8 < 8; ++s8)
                    #pragma unroll
                    for (int h = 0; h < 2; ++h) {{
                        const ImaVec<float, 4>& q = part.at4(s8, r, c8 + 4 * h);
                        #pragma unroll
                        for (int e = 0; e < 4; ++e) sum[4 * h + e] += q.v[e];
                    }}
                ImaVec<__half, 8> v;
                #pragma unroll
                for (int j = 0; j < 8; ++j) v.v[j] = __float2half_rn(sum[j]);
                y.store8(m0 + r, n0 + c8, v);
            }}
        }}
    }}
}}
"""
