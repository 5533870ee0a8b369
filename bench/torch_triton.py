#!/usr/bin/env python3
"""PyTorch and Triton equivalents of the imac benchmark kernels (examples/bench.rs), at the
same shapes, timed the same way: the median (and minimum) of --iters launches, each between
two CUDA events, after --warmup launches. TB/s = bytes that must be moved (inputs read
once, outputs written once) / median time. Prints a markdown table in the Rust bench's
format and writes it to --out (default $OUT/torch_triton.md when OUT is set).

    python3 bench/torch_triton.py [--iters N] [--warmup N] [--out PATH] [--only NAME,...]
"""

import argparse
import os
import sys
import time

import torch

try:
    import triton
    import triton.language as tl
except Exception as e:  # noqa: BLE001 - report whatever went wrong, keep the torch rows
    triton = None
    TRITON_ERROR = f"{type(e).__name__}: {e}"
else:
    TRITON_ERROR = None

DEV = "cuda"
AWQ_REVERSE = [0, 4, 1, 5, 2, 6, 3, 7]  # nibble of column n % 8 in an AWQ word
ROWS = []
NOTES = []


def nbytes(*ts):
    return float(sum(t.numel() * t.element_size() for t in ts))


def mb(b):
    return f"{b / 1e6:.0f} MB"


# The timed launches queue behind torch.cuda._sleep (a spin of this many GPU clocks, about
# 20 ms at the H200's 1.98 GHz), as the bench's do behind bench_hold: they run back to back,
# and the events time the GPU, not Python's launch path.
HOLD_CYCLES = 40_000_000


def timed(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    held = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    held[0].record()
    torch.cuda._sleep(HOLD_CYCLES)
    held[1].record()
    queueing = time.perf_counter()
    events = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        events.append((a, b))
    queueing_ms = (time.perf_counter() - queueing) * 1e3
    torch.cuda.synchronize()
    us = sorted(a.elapsed_time(b) * 1e3 for a, b in events)
    return us[len(us) // 2], us[0], queueing_ms < held[0].elapsed_time(held[1])


def row(kernel, shape, variant, nbytes_, fn, args, output=""):
    try:
        med, lo, queued = timed(fn, args.iters, args.warmup)
        ROWS.append((kernel, shape, variant, med, lo, nbytes_ / (med * 1e-6) / 1e12, output, queued))
    except Exception as e:  # noqa: BLE001
        ROWS.append((kernel, shape, variant, None, None, None, f"error: {type(e).__name__}: {e}", True))
        print(f"{kernel} {variant}: {e}", file=sys.stderr)


def same(a, b, what, rtol=0.0, atol=0.0):
    a, b = a.float(), b.float()
    d = (a - b).abs()
    bad = int((~(d <= atol + rtol * b.abs())).sum())
    worst = float(torch.nan_to_num(d, nan=0.0, posinf=0.0).max()) if d.numel() else 0.0
    if bad == 0:
        return f"= {what} (exact)" if worst == 0.0 else f"= {what} (max abs diff {worst:.1e})"
    return f"**MISMATCH** vs {what}: {bad} of {a.numel()} (max abs diff {worst:.3e})"


def rand_words(*shape):
    return torch.randint(-(2**31), 2**31 - 1, shape, dtype=torch.int32, device=DEV)


def quant_weight(k, n, g, awq):
    groups = -(-k // g)
    words_n = -(-n // 8)
    if awq:
        qweight = rand_words(k, words_n)
    else:
        qweight = rand_words(-(-k // 8), n)
    qzeros = rand_words(groups, words_n)
    scales = (torch.rand(groups, n, device=DEV) * 0.019 + 0.001).half()
    return qweight, qzeros, scales


# ---------------------------------------------------------------------------------------
# Dequantization in PyTorch ops: unpack every nibble, gather per group, (q - z) * s.

def gptq_dequant_torch(qweight, qzeros, scales, k, n, g):
    shifts = torch.arange(0, 32, 4, device=DEV, dtype=torch.int32)
    q = ((qweight.unsqueeze(1) >> shifts.view(1, 8, 1)) & 0xF).reshape(-1, n)[:k]
    z = ((qzeros.unsqueeze(2) >> shifts.view(1, 1, 8)) + 1) & 0xF  # stored minus one
    z = z.reshape(qzeros.shape[0], -1)[:, :n]
    grp = torch.arange(k, device=DEV) // g
    return ((q - z[grp]).float() * scales[grp].float()).half()


def awq_dequant_torch(qweight, qzeros, scales, k, n, g):
    shifts = torch.tensor([4 * r for r in AWQ_REVERSE], device=DEV, dtype=torch.int32)
    q = ((qweight.unsqueeze(2) >> shifts.view(1, 1, 8)) & 0xF).reshape(k, -1)[:, :n]
    z = ((qzeros.unsqueeze(2) >> shifts.view(1, 1, 8)) & 0xF).reshape(qzeros.shape[0], -1)[:, :n]
    grp = torch.arange(k, device=DEV) // g
    return ((q - z[grp]).float() * scales[grp].float()).half()


if triton is not None:

    @triton.jit
    def dequant_kernel(qw, qz, sc, y, K, N, G, NW,
                       AWQ: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
        # A simple masked kernel: one tile of [BLOCK_K, BLOCK_N] outputs per program.
        k = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_K)[:, None]
        n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
        mask = (k < K) & (n < N)
        g = k // G
        if AWQ:
            shift = 4 * ((n % 8) // 2 + (n % 8) % 2 * 4)
            word = tl.load(qw + k * NW + n // 8, mask=mask, other=0)
            q = (word >> shift) & 0xF
            zw = tl.load(qz + g * NW + n // 8, mask=mask, other=0)
            z = (zw >> shift) & 0xF
        else:
            word = tl.load(qw + (k // 8) * N + n, mask=mask, other=0)
            q = (word >> ((k % 8) * 4)) & 0xF
            zw = tl.load(qz + g * NW + n // 8, mask=mask, other=0)
            z = ((zw >> ((n % 8) * 4)) + 1) & 0xF
        s = tl.load(sc + g * N + n, mask=mask, other=0.0).to(tl.float32)
        tl.store(y + k * N + n, ((q - z).to(tl.float32) * s).to(tl.float16), mask=mask)

    def dequant_triton(qweight, qzeros, scales, y, k, n, g, awq):
        bk, bn = 32, 128
        grid = (triton.cdiv(k, bk), triton.cdiv(n, bn))
        dequant_kernel[grid](qweight, qzeros, scales, y, k, n, g, -(-n // 8),
                             AWQ=awq, BLOCK_K=bk, BLOCK_N=bn)


def bench_dequant(args, awq, ragged):
    k, n, g = (5000, 4096, 128) if ragged else (28672, 8192, 128)
    kernel = "awq_dequant" if awq else "gptq_dequant"
    qweight, qzeros, scales = quant_weight(k, n, g, awq)
    y_torch = torch.empty(k, n, dtype=torch.float16, device=DEV)
    b = nbytes(qweight, qzeros, scales, y_torch)
    shape = f"K={k} N={n} G={g} ({mb(b)})"
    ref = awq_dequant_torch if awq else gptq_dequant_torch

    def torch_fn():
        y_torch.copy_(ref(qweight, qzeros, scales, k, n, g))

    row(kernel, shape, "PyTorch ops", b, torch_fn, args)
    if triton is None:
        ROWS.append((kernel, shape, "Triton (masked)", None, None, None, f"error: {TRITON_ERROR}", True))
        return
    y_tri = torch.empty_like(y_torch)
    row(kernel, shape, "Triton (masked)", b,
        lambda: dequant_triton(qweight, qzeros, scales, y_tri, k, n, g, awq), args)
    if ROWS[-1][3] is not None:
        ROWS[-1] = ROWS[-1][:6] + (same(y_tri, y_torch, "PyTorch ops"),) + ROWS[-1][7:]


# ---------------------------------------------------------------------------------------

def bench_gemv(args):
    m, k, n, g = 1, 8192, 28672, 128
    sets = 4  # rotating weights, so that L2 (60 MB) never holds the next one
    kernel = "gptq_gemv"
    # torch's int4 path (tinygemm): weights packed by _convert_weight_to_int4pack, bf16
    # activations, scales and zeros in one bf16 [K/G, N, 2] tensor.
    try:
        x = torch.randn(m, k, dtype=torch.bfloat16, device=DEV)
        packs = []
        for _ in range(sets):
            q = torch.randint(0, 16, (n, k), dtype=torch.int32, device=DEV)
            try:  # torch >= 2.5: uint8 [N, K/2], two nibbles a byte
                packed = torch._convert_weight_to_int4pack((q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8), 8)
            except Exception:  # noqa: BLE001 - older torch: int32 [N, K] values
                packed = torch._convert_weight_to_int4pack(q, 8)
            sz = (torch.rand(k // g, n, 2, device=DEV) * 0.02).to(torch.bfloat16)
            packs.append((packed, sz))
        y = torch._weight_int4pack_mm(x, packs[0][0], g, packs[0][1])
        b = nbytes(packs[0][0], packs[0][1], x, y)
        shape = f"M={m} K={k} N={n} G={g} ({mb(b)}, {sets} weight sets)"
        it = [0]

        def int4_fn():
            p, s = packs[it[0] % sets]
            it[0] += 1
            torch._weight_int4pack_mm(x, p, g, s)

        row(kernel, shape, "torch._weight_int4pack_mm (bf16 x)", b, int4_fn, args)
        del packs
    except Exception as e:  # noqa: BLE001
        shape = f"M={m} K={k} N={n} G={g}"
        ROWS.append((kernel, shape, "torch._weight_int4pack_mm (bf16 x)", None, None, None,
                     f"unavailable: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", True))
    # Dense bf16 GEMV: the bytes int4 saves.
    dsets = 2  # 470 MB each, far beyond L2
    x = torch.randn(m, k, dtype=torch.bfloat16, device=DEV)
    ws = [torch.randn(k, n, dtype=torch.bfloat16, device=DEV) for _ in range(dsets)]
    y = torch.empty(m, n, dtype=torch.bfloat16, device=DEV)
    b = nbytes(ws[0], x, y)
    it = [0]

    def dense_fn():
        torch.matmul(x, ws[it[0] % dsets], out=y)
        it[0] += 1

    row("dense bf16 GEMV", f"M={m} K={k} N={n} ({mb(b)}, {dsets} weight sets)",
        "torch.matmul", b, dense_fn, args)


def bench_attn(args):
    bb, h, s, t, d = 8, 16, 512, 512, 64
    q = torch.rand(bb, h, s, d, device=DEV).mul(2).sub(1).half()
    k = torch.rand(bb, h, t, d, device=DEV).mul(2).sub(1).half()
    scale = 1.0 / d**0.5
    o16 = torch.empty(bb, h, s, t, dtype=torch.float16, device=DEV)
    b = nbytes(q, k, o16)
    q3, k3, o3 = q.view(bb * h, s, d), k.view(bb * h, t, d), o16.view(bb * h, s, t)
    # One cuBLAS batched GEMM, the scale as its alpha.
    row("attn_scores", f"B={bb} H={h} S={s} T={t} D={d}, f16 out ({mb(b)})",
        "torch baddbmm_ (cuBLAS, f16 out)",
        b, lambda: o3.baddbmm_(q3, k3.transpose(1, 2), beta=0.0, alpha=scale), args)
    # The imac kernel writes f32 scores: the same product in f32 out (f16 inputs upcast).
    o32 = torch.empty(bb, h, s, t, dtype=torch.float32, device=DEV)
    b32 = nbytes(q, k, o32)
    row("attn_scores", f"B={bb} H={h} S={s} T={t} D={d} ({mb(b32)})",
        "torch.matmul (f32 out, inputs upcast)", b32,
        lambda: torch.mul(torch.matmul(q.float(), k.float().transpose(-1, -2)), scale, out=o32), args)


def bench_gemm(args):
    # The dense GEMM the tensor-core specs are held to: cuBLAS through torch.matmul.
    n = 8192
    flops = 2.0 * n**3
    for dt, name in [(torch.bfloat16, "bf16"), (torch.float16, "f16")]:
        a = torch.rand(n, n, device=DEV).mul(2).sub(1).to(dt)
        w = torch.rand(n, n, device=DEV).mul(2).sub(1).to(dt)
        c = torch.empty(n, n, dtype=dt, device=DEV)
        b = nbytes(a, w, c)
        row("gemm", f"M=N=K={n} {name} ({mb(b)})", "torch.matmul (cuBLAS)", b,
            lambda: torch.matmul(a, w, out=c), args)
        kernel, shape, variant, med, lo, tbs, _, queued = ROWS[-1]
        if med is not None:
            ROWS[-1] = (kernel, shape, variant, med, lo, tbs, f"{flops / (med * 1e-6) / 1e12:.0f} TFLOP/s", queued)


def bench_gptq_gemm(args):
    # What W4A16 saves: the same x @ W with W dense (bf16 and f16), cuBLAS reading four
    # times the weight bytes; two weight sets, 470 MB each, so neither stays in L2.
    k, n = 8192, 28672
    dsets = 2
    for dt, name in [(torch.bfloat16, "bf16"), (torch.float16, "f16")]:
        ws = [torch.randn(k, n, dtype=dt, device=DEV) for _ in range(dsets)]
        for m in [16, 64, 128]:
            x = torch.randn(m, k, dtype=dt, device=DEV)
            y = torch.empty(m, n, dtype=dt, device=DEV)
            b = nbytes(ws[0], x, y)
            it = [0]

            def dense_fn(x=x, y=y, ws=ws, it=it):
                torch.matmul(x, ws[it[0] % dsets], out=y)
                it[0] += 1

            row("gptq_gemm (dense reference)", f"M={m} K={k} N={n} {name} ({mb(b)}, {dsets} weight sets)",
                "torch.matmul (cuBLAS, dense)", b, dense_fn, args)
        del ws


def bench_rms(args):
    n, d = 16384, 8192
    x = torch.rand(n, d, device=DEV).mul(4).sub(2).to(torch.bfloat16)
    w = torch.rand(d, device=DEV).add(0.5).to(torch.bfloat16)
    y = torch.empty_like(x)
    b = nbytes(x, w, y)
    shape = f"[{n}, {d}] bf16 ({mb(b)})"
    if hasattr(torch.nn.functional, "rms_norm"):
        row("rms_norm", shape, "F.rms_norm", b,
            lambda: y.copy_(torch.nn.functional.rms_norm(x, (d,), weight=w, eps=1e-6)), args)
        # copy_ adds a pass over y; the bare call allocates its own output instead.
        row("rms_norm", shape, "F.rms_norm (no copy)", b,
            lambda: torch.nn.functional.rms_norm(x, (d,), weight=w, eps=1e-6), args)
    else:
        ROWS.append(("rms_norm", shape, "F.rms_norm", None, None, None, "unavailable in this torch", True))


def bench_rope(args):
    bb, s, h, d = 8, 2048, 32, 128
    x = torch.rand(bb, s, h, d, device=DEV).mul(2).sub(1).half()  # stored [B, S, H, D]
    cos = torch.rand(s, d // 2, device=DEV).mul(2).sub(1)
    sin = torch.rand(s, d // 2, device=DEV).mul(2).sub(1)
    y = torch.empty_like(x)
    b = nbytes(x, cos, sin, y)
    c, sn = cos[None, :, None, :], sin[None, :, None, :]

    def fn():
        x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
        y.copy_(torch.stack((x0 * c - x1 * sn, x1 * c + x0 * sn), dim=-1).flatten(-2))

    row("rope", f"B={bb} S={s} H={h} D={d} f16, stored [B,S,H,D] ({mb(b)})", "PyTorch ops", b, fn, args)


def paged_lens(b):
    # The lengths of examples/bench.rs's paged_attn (paged_lens there): fixed and ragged.
    return [1, 4096] + [1 + (i * 2654435761) % 2**32 % 4096 for i in range(2, b)]


def bench_paged(args):
    # Paged attention decode at examples/bench.rs's shape: B = 32 sequences of 1 to 4096
    # tokens, HQ = 32 query heads on HKV = 8 KV heads, D = 128, pages of 16 tokens in random
    # order (torch.randperm's, not the Rust bench's: the same pages per sequence, another
    # order). PyTorch has no paged kernel: gather each sequence's pages into a contiguous,
    # padded [B, HKV, P * BS, D] K and V, then one SDPA with a mask of each length and
    # enable_gqa. Bytes: the K and V rows of the tokens in use, q, out, tables and lengths,
    # as the Rust bench counts them (the gather moves more: every padded row, twice).
    bb, hq, hkv, d, bs = 32, 32, 8, 128, 16
    lens = paged_lens(bb)
    p = 4096 // bs
    pages = [-(-n // bs) for n in lens]
    nb = sum(pages)
    order = torch.randperm(nb, device=DEV).to(torch.int32)
    tables = torch.zeros(bb, p, dtype=torch.int32, device=DEV)
    at = 0
    for s, n in enumerate(pages):
        tables[s, :n] = order[at:at + n]
        at += n
    lens_t = torch.tensor(lens, dtype=torch.int32, device=DEV)
    q = torch.rand(bb, hq, d, device=DEV).mul(2).sub(1).half()
    k_cache = torch.rand(nb, bs, hkv, d, device=DEV).mul(2).sub(1).half()
    v_cache = torch.rand(nb, bs, hkv, d, device=DEV).mul(2).sub(1).half()
    out = torch.empty(bb, hq, d, dtype=torch.float16, device=DEV)
    mask = (torch.arange(p * bs, device=DEV)[None, :] < lens_t[:, None].long())[:, None, None, :]
    idx = tables.long()
    scale = 1.0 / d**0.5
    tokens = sum(lens)
    b = 2.0 * tokens * hkv * d * 2 + nbytes(q, out, tables, lens_t)

    def fn():
        # [B, P, BS, HKV, D] -> [B, HKV, P * BS, D]
        k = k_cache[idx].view(bb, p * bs, hkv, d).transpose(1, 2)
        v = v_cache[idx].view(bb, p * bs, hkv, d).transpose(1, 2)
        o = torch.nn.functional.scaled_dot_product_attention(
            q[:, :, None, :], k, v, attn_mask=mask, scale=scale, enable_gqa=True)
        out.copy_(o[:, :, 0, :])

    row("paged_attn", f"B={bb} HQ={hq} HKV={hkv} D={d} BS={bs}, lens 1..4096 ({tokens} tokens; "
        f"{mb(2.0 * tokens * hkv * d * 2)} of K+V, {mb(b)})",
        "gather pages + SDPA (enable_gqa)", b, fn, args)


def bench_copy(args):
    # The roofline: a device-to-device copy moving as many bytes as each dequant shape
    # (the large one, 592 MB, and the ragged one, 52 MB), as the GEMV (122 MB: its weights,
    # scales and zeros), and the large dequant output's size (940 MB). A small copy does
    # not reach a large one's bandwidth: the ragged dequant is measured against the copy
    # of its own size, and the GEMV's row says what a copy of its size reaches.
    for label, elems in [
        ("as many bytes as the large dequant", (28672 * 8192 * 5 // 4) // 2),
        ("as many bytes as the ragged dequant", (5000 * 4096 * 5 // 4) // 2),
        ("as many bytes as the GEMV", (8192 * 28672 * 33 // 64 + 28672 // 8 * 4 * 64) // 4),
        ("the large dequant's output", 28672 * 8192),
    ]:
        src = torch.empty(elems, dtype=torch.float16, device=DEV)
        dst = torch.empty_like(src)
        b = nbytes(src, dst)
        row("copy (roofline)", f"{src.numel()} f16 ({mb(b)} read + written: {label})",
            "Tensor.copy_", b, lambda: dst.copy_(src), args)


CASES = {
    "gptq_dequant": lambda a: bench_dequant(a, False, False),
    "gptq_dequant_ragged": lambda a: bench_dequant(a, False, True),
    "awq_dequant": lambda a: bench_dequant(a, True, False),
    "awq_dequant_ragged": lambda a: bench_dequant(a, True, True),
    "gptq_gemv": bench_gemv,
    "attn_scores": bench_attn,
    "gemm": bench_gemm,
    "gptq_gemm": bench_gptq_gemm,
    "rms_norm": bench_rms,
    "rope": bench_rope,
    "paged_attn": bench_paged,
    "copy": bench_copy,
}


def markdown(args):
    out = ["### PyTorch and Triton\n"]
    name = torch.cuda.get_device_name()
    tri = triton.__version__ if triton is not None else f"unavailable ({TRITON_ERROR})"
    out.append(
        f"GPU: {name}. torch {torch.__version__} (CUDA {torch.version.cuda}), triton {tri}. "
        f"Median (and minimum) of {args.iters} launches after {args.warmup} warm-up launches, "
        "each between two CUDA events (a multi-kernel PyTorch expression counts as one). "
        "TB/s = bytes that must be moved / median time. The timed launches queue behind a "
        "spin of the GPU (torch.cuda._sleep, about 20 ms), so that they run back to back; "
        "† marks a variant that Python could not queue within it: its times include host time.\n")
    out.append("| kernel | shape | variant | µs (median) | µs (min) | TB/s | x twin | output |")
    out.append("|---|---|---|---:|---:|---:|---:|---|")
    for kernel, shape, variant, med, lo, tbps, output, queued in ROWS:
        if med is None:
            out.append(f"| {kernel} | {shape} | {variant} | - | - | - | - | {output} |")
        else:
            mark = "" if queued else " †"
            out.append(f"| {kernel} | {shape} | {variant} | {med:.1f}{mark} | {lo:.1f} | {tbps:.2f} | - | {output} |")
    out.extend(NOTES)
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--out", default=os.path.join(os.environ["OUT"], "torch_triton.md") if os.environ.get("OUT") else None)
    p.add_argument("--only", default=None, help="comma-separated: " + ", ".join(CASES))
    args = p.parse_args()
    torch.manual_seed(0)
    started = time.time()
    names = args.only.split(",") if args.only else list(CASES)
    for name in names:
        if name not in CASES:
            sys.exit(f"unknown case {name}; cases: {', '.join(CASES)}")
        t = time.time()
        try:
            CASES[name](args)
        except Exception as e:  # noqa: BLE001 - one failing case must not hide the others
            NOTES.append(f"\n- {name}: failed: {type(e).__name__}: {e}")
            print(f"{name}: {e}", file=sys.stderr)
        torch.cuda.empty_cache()
        print(f"{name}: {time.time() - t:.1f} s", file=sys.stderr)
    md = markdown(args) + f"\n(torch_triton.py ran {time.time() - started:.1f} s)\n"
    print(md, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(md)
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
