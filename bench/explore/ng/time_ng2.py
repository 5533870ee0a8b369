"""Throwaway: the decode layer's second norm and gate/up projection at B = 1
(specs/decode.ima's add_rms_norm, then specs/quant.ima's gptq_gemv with SiluAndMul fused)
against ng2.ima's norm_gemv, which does both in one, as CUDA graphs cycling through weight
sets larger than L2 (µs a pair of launches, or a launch); outputs compared. Also an
unfused shape (QKV's), for the form without SiluAndMul."""
from norm_pair import compare
import decode_kernels as dk
import ng2_kernels as ng
import quant_kernels as qk

compare(dk.add_rms_norm, qk.gptq_gemv, ng.norm_gemv, qk.QuantWeight, [(4096, 28672, 14336), (4096, 6144, 6144)])
