"""Throwaway (issue 22): cl_gemm.cu's cluster split-K forms (libcl.so, built beside this file)
against the kernels the decode layer takes at the same rows: gptq_gemm (gemm_kernels) and
gptq_gemm_wg32 (gemm_tma_kernels) at 32 rows, gptq_gemm at 8, the GEMVs at 1
(decode_kernels' gptq_gemv_narrow for QKV, O and down, quant_kernels' gptq_gemv for gate/up),
on the layer's projection shapes, gate/up with SiluAndMul fused, and gen.py's spec forms
(cl_kernels, where its wheel is installed: the same product through imac's accessors and
`cluster(...)`, also launched once in checked mode), each as
CUDA graphs cycling weight sets past L2 (timing.py's graph_us), µs a launch. Each form's
output is checked against torch's f32 product of the same weights dequantised (v1 zeros,
as imac reads them) and against gptq_gemm's; a form whose output differs prints DIFF.
    python3 -u time_cl.py"""
import ctypes
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from timing import gptq_weight, graph_us, weight_sets  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402
import decode_kernels as dk  # noqa: E402
import quant_kernels as qk  # noqa: E402
try:
    import cl_kernels as ck  # gen.py's spec forms (build.sh)
except ImportError:
    ck = None

dev = "cuda"
G = 128
torch.backends.cuda.matmul.allow_tf32 = False
lib = ctypes.CDLL(os.path.join(here, "libcl.so"))
lib.cl_name.restype = ctypes.c_char_p
lib.cl_gemm.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 5 + [ctypes.c_int] * 3 + [ctypes.c_void_p]
lib.cl_shape.argtypes = [ctypes.c_int] + [ctypes.POINTER(ctypes.c_int)] * 4


def dequant(w, k, n):
    """W (k x n, f32) from GPTQ words, v1 zeros (stored + 0x11111111 on the whole word) and
    scales: (q - z) s."""
    shifts = (torch.arange(8, device=dev, dtype=torch.int64) * 4)
    qw = w.qweight.to(torch.int64) & 0xFFFFFFFF
    q = ((qw.unsqueeze(1) >> shifts.view(1, 8, 1)) & 0xF).reshape(k, n)
    zw = (w.qzeros.to(torch.int64) & 0xFFFFFFFF) + 0x11111111
    z = ((zw.unsqueeze(2) >> shifts.view(1, 1, 8)) & 0xF).reshape(-1, n)
    gi = torch.arange(k, device=dev) // G
    return (q - z[gi]).float() * w.scales.float()[gi]


def cl(c, x, w, y):
    m, k = x.shape
    n = w.scales.shape[1]
    err = lib.cl_gemm(c, x.data_ptr(), w.qweight.data_ptr(), w.qzeros.data_ptr(), w.scales.data_ptr(), y.data_ptr(),
                      m, k, n, torch.cuda.current_stream().cuda_stream)
    if err:
        raise RuntimeError(f"cl_gemm form {c}: error {err}")


def forms():
    """Form number -> (name, K, N, most rows, fused)."""
    out = {}
    for c in range(lib.cl_configs()):
        k, n, r, f = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        lib.cl_shape(c, ctypes.byref(k), ctypes.byref(n), ctypes.byref(r), ctypes.byref(f))
        err = lib.cl_prepare(c)
        if err:
            raise RuntimeError(f"cl_prepare({c}): error {err}")
        out[c] = (lib.cl_name(c).decode(), k.value, n.value, r.value, bool(f.value))
    return out


def silu_and_mul(full):
    """vLLM's SiluAndMul of a product whose columns are gate's and up's in alternate units
    of 8 (GATE_UP_UNIT), as the tree's fused kernels read W."""
    m, n = full.shape
    u = full.view(m, n // 16, 2, 8)
    return (torch.nn.functional.silu(u[:, :, 0]) * u[:, :, 1]).reshape(m, n // 2)


def main():
    fs = forms()
    layer = [(4096, 4096, False), (4096, 6144, False), (14336, 4096, False), (4096, 28672, True)]
    for m, k, n, fused in [(32, *s) for s in layer] + [(1, *s) for s in layer] + [(8, 4096, 4096, False)]:
        ny = n // 2 if fused else n
        ws = [gptq_weight(gk.QuantWeight, k, n, G) for _ in range(weight_sets(k, n))]
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        y = torch.empty(m, ny, device=dev, dtype=torch.float16)
        ref = x.float() @ dequant(ws[0], k, n)
        if fused:
            ref = silu_and_mul(ref)
        scale = ref.abs().max().item()
        # The tree's kernel for these rows, as the layer chooses it (examples/decode_layer/layer.rs).
        if m == 1:
            pkg, fn = (qk, qk.gptq_gemv) if fused else (dk, dk.gptq_gemv_narrow)
            name = "gptq_gemv" if fused else "gptq_gemv_narrow"
            own = [pkg.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales, group_size=G)
                   for w in ws]
        else:
            fn, name, own = gk.gptq_gemm, "gptq_gemm", ws
        t_tree = graph_us(lambda w: fn(x, w, y), [(w,) for w in own])
        fn(x, own[0], y)
        y_tree = y.float().clone()
        e_tree = (y_tree - ref).abs().max().item() / scale
        line = (f"M={m} K={k} N={n}{' fused' if fused else ''} ({len(ws)} weight sets): {name} {t_tree:.1f} us "
                f"(err {e_tree:.1e})")
        if m > 16 and k * n >= 3 << 23:
            tw = [tk.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales, group_size=G) for w in ws]
            part = torch.empty(tk.BLOCKS, 3, 4, 128, 4, device=dev, dtype=torch.float32)
            arrivals = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
            t_wg = graph_us(lambda w: tk.gptq_gemm_wg32(x, w, part, arrivals, y), [(w,) for w in tw])
            line += f", gptq_gemm_wg32 {t_wg:.1f}"
        print(line, flush=True)
        spec = {(4096, 4096, False): "o", (4096, 6144, False): "qkv", (14336, 4096, False): "down",
                (4096, 28672, True): "gate_up"}.get((k, n, fused))
        if ck is not None and spec:
            sk = getattr(ck, f"gptq_gemm_cl_{spec}")
            cw = [ck.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales, group_size=G) for w in ws]
            errs = []
            for mode in ("wait", "off"):
                ck.set_checked(mode)
                y.fill_(float("nan"))
                sk(x, cw[0], y)
                torch.cuda.synchronize()
                errs.append((y.float() - ref).abs().max().item() / scale)
            t = graph_us(lambda w: sk(x, w, y), [(w,) for w in cw])
            ok = max(errs) < 5e-3
            print(f"  spec gptq_gemm_cl_{spec}: {t:.1f} us, err {errs[1]:.1e} against torch (checked {errs[0]:.1e})"
                  + ("" if ok else "  DIFF"), flush=True)
        for c, (fname, fk, fn_, rows, f) in fs.items():
            if (fk, fn_, f) != (k, n, fused) or m > rows or (rows == 32 and m <= 8):
                continue
            y.fill_(float("nan"))
            cl(c, x, ws[0], y)
            torch.cuda.synchronize()
            e_ref = (y.float() - ref).abs().max().item() / scale
            e_tree = (y.float() - y_tree).abs().max().item() / scale
            stream = "stream only" in fname
            ok = stream or (e_ref < 5e-3 and e_tree < 5e-3)
            t = graph_us(lambda w: cl(c, x, w, y), [(w,) for w in ws])
            print(f"  form {c} ({fname}): {t:.1f} us" + ("" if stream else f", err {e_ref:.1e} against torch, "
                  f"{e_tree:.1e} against {name}") + ("" if ok else "  DIFF"), flush=True)
        del ws


main()
