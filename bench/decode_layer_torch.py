"""The PyTorch reference of examples/decode_layer's Llama 3 8B layer, on the GPU.

Reads the directories `decode_layer dump DIR LEN...` wrote (the inputs, the GPTQ int4
weights as qweight/qzeros/scales, and imac's outputs), dequantizes the int4 data to fp16
here (its own unpacking, not imac's), runs the layer in torch (fp16 matmuls on cuBLAS,
RoPE, the KV-cache write, scaled_dot_product_attention over the gathered pages) and
compares imac's outputs with it:

    python3 bench/decode_layer_torch.py check DIR...     # exit 1 past the tolerance
    python3 bench/decode_layer_torch.py bench DIR...     # eager and torch.compile medians

Where the Python packages of specs/decode.ima, paged.ima and gemm.ima are installed
(scripts/python-wheels), the layer is also run through them from Python
(examples/decode_layer/decode_layer.py): checked against torch the same way, and timed
call by call and captured with torch.cuda.graph.

Agreement: |imac - torch| <= TOL * (1 + |torch|) for every output element.
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "decode_layer"))
try:
    from decode_layer import DecodeLayer
except ImportError:  # the wheels are not installed: torch and the Rust example only
    DecodeLayer = None

TOL = 2e-2
DTYPES = {"float16": torch.float16, "float32": torch.float32, "int32": torch.int32, "int64": torch.int64}


def load(d):
    with open(os.path.join(d, "manifest.json")) as f:
        m = json.load(f)
    t = {}
    for name, e in m["tensors"].items():
        with open(os.path.join(d, name + ".bin"), "rb") as f:
            raw = bytearray(f.read())
        x = torch.frombuffer(raw, dtype=DTYPES[e["dtype"]]) if raw else torch.empty(0, dtype=DTYPES[e["dtype"]])
        t[name] = x.reshape(e["shape"]).cuda()
    return m["config"], t


def dequant_gptq(qweight, qzeros, scales, group):
    """GPTQ v1, 4 bits: w[k, n] = (q - z) * scale, in fp16. Each zero word is stored as the
    packed zeros less 0x11111111 (runtime/src/quant/format.rs's `ZeroStyle::MinusOne`), so
    the zeros are the nibbles of the stored word plus 0x11111111, carries included (a nibble
    plus one apart would read a zero of 0 as 16)."""
    shifts = torch.arange(0, 32, 4, device=qweight.device, dtype=torch.int32)
    q = (qweight.unsqueeze(1) >> shifts.view(1, 8, 1)) & 0xF  # [K/8, 8, N]: row 8i + j
    q = q.reshape(-1, qweight.shape[1])
    packed = (qzeros.to(torch.int64) + 0x11111111) & 0xFFFFFFFF
    z = (packed.unsqueeze(2) >> shifts.view(1, 1, 8)) & 0xF  # [G, N/8, 8]: column 8i + j
    z = z.reshape(qzeros.shape[0], -1)
    z = z.repeat_interleave(group, dim=0)[: q.shape[0]]
    s = scales.repeat_interleave(group, dim=0)[: q.shape[0]]
    return (q - z).half() * s


def rms(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).half()


def make_layer(c, t):
    heads, kvh, hd, bs = c["heads"], c["kv_heads"], c["head_dim"], c["block_size"]
    w = {
        n: dequant_gptq(t[n + ".qweight"], t[n + ".qzeros"], t[n + ".scales"], c["group"])
        for n in ("qkv", "o", "gate_up", "down")
    }
    inter, unit, eps, scale = c["intermediate"], c["gate_up_unit"], c["eps"], hd ** -0.5
    # The dump interleaves gate's columns and up's by `unit`; torch's layer takes them
    # apart once, here, into [gate | up].
    k_gu = w["gate_up"].shape[0]
    w["gate_up"] = w["gate_up"].view(k_gu, -1, 2, unit).transpose(1, 2).reshape(k_gu, 2 * inter)
    # Without padding rows the cache write needs no boolean mask (whose nonzero() waits
    # for the GPU), so the layer can be captured into a CUDA graph.
    padded = bool((t["slot_mapping"] < 0).any())

    def layer(hidden, residual, positions, slots, tables, lens, k_cache, v_cache):
        b = hidden.shape[0]
        residual = hidden + residual
        x = rms(residual, t["norm1"], eps)
        qkv = x @ w["qkv"]
        q, k, v = qkv.split([heads * hd, kvh * hd, kvh * hd], dim=-1)
        cs = t["cos_sin"][positions]  # [B, hd]: cos | sin
        cos, sin = cs[:, None, : hd // 2], cs[:, None, hd // 2 :]

        def rope(x, n):
            x = x.view(b, n, hd).float()
            x0, x1 = x[..., : hd // 2], x[..., hd // 2 :]
            return torch.cat([x0 * cos - x1 * sin, x1 * cos + x0 * sin], -1).half()

        q, k = rope(q, heads), rope(k, kvh)
        flat_k, flat_v = k_cache.view(-1, kvh, hd), v_cache.view(-1, kvh, hd)
        live = slots >= 0 if padded else slice(None)
        flat_k[slots[live]] = k[live]
        flat_v[slots[live]] = v.reshape(b, kvh, hd)[live]
        # Every page of each row of the table, gathered; tokens past a sequence masked.
        p = tables.shape[1]
        ks = k_cache[tables].view(b, p * bs, kvh, hd).transpose(1, 2)
        vs = v_cache[tables].view(b, p * bs, kvh, hd).transpose(1, 2)
        mask = torch.arange(p * bs, device=hidden.device)[None, :] < lens[:, None]
        o = F.scaled_dot_product_attention(
            q.view(b, heads, 1, hd), ks, vs, attn_mask=mask[:, None, None, :], scale=scale, enable_gqa=True
        )
        o = torch.where((lens > 0)[:, None], o.reshape(b, heads * hd), 0.0)
        o = o @ w["o"]
        residual = o + residual
        x = rms(residual, t["norm2"], eps)
        gu = x @ w["gate_up"]
        act = F.silu(gu[:, :inter]) * gu[:, inter:]
        return act @ w["down"], residual

    return layer


def inputs(t):
    """The layer's inputs, the ones a layer writes (residual, caches) copied."""
    return (
        t["hidden"], t["residual"].clone(), t["positions"], t["slot_mapping"], t["block_tables"],
        t["seq_lens"], t["k_cache"].clone(), t["v_cache"].clone(),
    )


def weights(t):
    return {n: x for n, x in t.items() if not n.startswith("imac.")}


def worst(got, want):
    e = ((got.float() - want.float()).abs() / (1 + want.float().abs())).nan_to_num(float("inf"))
    return e.max().item()


def check(d):
    c, t = load(d)
    out, residual = make_layer(c, t)(*inputs(t))
    e_out, e_res = worst(t["imac.out"], out), worst(t["imac.residual"], residual)
    lens = t["seq_lens"].tolist()
    ok = e_out <= TOL and e_res <= TOL
    batch = f"B={len(lens)} lens {lens[:8]}{' ..' if len(lens) > 8 else ''}"
    print(f"{'ok' if ok else 'FAILED'} {batch}: "
          f"imac (Rust) vs torch: out {e_out:.2e}, residual {e_res:.2e} (tolerance {TOL})")
    if DecodeLayer is not None:
        py_out, py_res = DecodeLayer(c, weights(t))(*inputs(t))
        e_out, e_res = worst(py_out, out), worst(py_res, residual)
        py_ok = e_out <= TOL and e_res <= TOL
        print(f"{'ok' if py_ok else 'FAILED'} {batch}: "
              f"imac (Python) vs torch: out {e_out:.2e}, residual {e_res:.2e} (tolerance {TOL})")
        ok = ok and py_ok
    return ok


def median_us(f, iters):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        times.append((a, b))
    torch.cuda.synchronize()
    us = sorted(a.elapsed_time(b) * 1e3 for a, b in times)
    return us[len(us) // 2]


def captured(f, args):
    """f(*args) captured into a CUDA graph (after warm-up runs); returns its replay."""
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            f(*args)
        with torch.cuda.graph(graph, stream=stream):
            f(*args)
    torch.cuda.current_stream().wait_stream(stream)
    return graph.replay


def bench(d):
    c, t = load(d)
    layer = make_layer(c, t)
    args = inputs(t)
    b, ctx = t["seq_lens"].shape[0], t["seq_lens"].max().item()
    rows = [("torch eager (fp16 weights, SDPA over gathered pages)", median_us(lambda: layer(*args), 50))]
    rows.append(("torch eager, captured in a CUDA graph", median_us(captured(layer, args), 200)))
    if DecodeLayer is not None:
        imac = DecodeLayer(c, weights(t))
        rows.append(("imac from Python, call by call", median_us(lambda: imac(*args), 50)))
        try:
            rows.append(("imac from Python, captured with torch.cuda.graph", median_us(captured(imac, args), 200)))
        except Exception as e:  # noqa: BLE001 - reported in the table instead
            rows.append((f"imac from Python, torch.cuda.graph: failed ({type(e).__name__}: {str(e)[:120]})", float("nan")))
            torch.cuda.synchronize()
    try:
        compiled = torch.compile(layer)
        rows.append(("torch.compile (default)", median_us(lambda: compiled(*args), 50)))
    except Exception as e:  # noqa: BLE001 - reported in the table instead
        rows.append((f"torch.compile: failed ({type(e).__name__})", float("nan")))
    for name, us in rows:
        print(f"| {b} | {ctx} | {name} | {us:.1f} |")


def main():
    what, dirs = sys.argv[1], sys.argv[2:]
    if what == "check":
        ok = [check(d) for d in dirs]
        sys.exit(0 if all(ok) else 1)
    if what == "bench":
        print("| B | context | variant | median (us) |\n|---:|---:|---|---:|")
        for d in dirs:
            bench(d)
        return
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
