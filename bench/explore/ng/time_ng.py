"""Throwaway: the decode layer's first two launches at B = 1 (specs/decode.ima's
add_rms_norm, then gptq_gemv_narrow on QKV's shape) against ng.ima's norm_gemv_narrow,
which does both in one, as CUDA graphs cycling through weight sets larger than L2 (µs a
pair of launches, or a launch); outputs compared."""
from norm_pair import compare
import decode_kernels as dk
import ng_kernels as ng

compare(dk.add_rms_norm, dk.gptq_gemv_narrow, ng.norm_gemv_narrow, dk.QuantWeight,
        [(4096, 6144, 6144), (4096, 4096, 4096), (4096, 28672, 28672)])
