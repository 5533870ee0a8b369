"""GPU checks of the generated Python packages, on the H200 (torch with CUDA).

Install the wheels that scripts/python-wheels built into .gpu/wheels, then run:
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/wheels/*.whl
    PYTHONPATH=/tmp/site python3 tests/python/test_gpu.py
Each test prints `ok NAME`; the script exits 1 if any failed, after running all of them.
The tests marked `@needs_two_gpus` run only with `--two-gpus`, on a machine with two GPUs
(with fewer they fail); without it they are listed as not run, never counted as passed.
"""

import gc
import os
import pathlib
import re
import subprocess
import sys
import traceback

import torch

import attn_kernels as ak
import clusters_kernels as ck
import gemm_tma_kernels as tk
import index_kernels as ik
import planted_bugs_kernels as pb
import quant_kernels as qk
import rmsnorm_kernels as rk
import strided_kernels as sk

dev = torch.device("cuda", 0)


def needs_two_gpus(test):
    """Marks a test that needs a second GPU: run only with `--two-gpus`."""
    test.needs_two_gpus = True
    return test


def refused(f, *args, contains=()):
    """Runs f(*args), which must raise ContractError; returns its text."""
    try:
        f(*args)
    except ValueError as e:
        assert type(e).__name__ == "ContractError", type(e)
        text = str(e)
        for c in contains:
            assert c in text, f"{c!r} not in:\n{text}"
        return text
    raise AssertionError(f"{f.__name__} accepted {args!r}")


def reported(pkg, f, *args, contains=()):
    """Runs f(*args) in `pkg`'s checked mode "wait", which must raise DeviceError; checked
    mode is off again after it."""
    pkg.set_checked("wait")
    try:
        f(*args)
    except RuntimeError as e:
        assert type(e).__name__ == "DeviceError", type(e)
        for c in contains:
            assert c in str(e), f"{c!r} not in:\n{e}"
    else:
        raise AssertionError(f"{f.__name__} reported nothing for {args!r}")
    finally:
        pkg.set_checked("off")


def rms_ref(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def test_rmsnorm_matches_torch():
    x = torch.randn(37, 1024, device=dev, dtype=torch.bfloat16)
    w = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    rk.rms_norm(x, w, y, 1e-6)
    torch.testing.assert_close(y, rms_ref(x, w, 1e-6), atol=2e-2, rtol=2e-2)
    # Keyword arguments, named as in the spec.
    y2 = torch.empty_like(x)
    rk.rms_norm(x=x, w=w, y=y2, eps=1e-6)
    torch.testing.assert_close(y2, y)
    # The functional custom op allocates the output.
    torch.testing.assert_close(rk.ops.rms_norm(x, w, 1e-6), y)


def test_attn_matches_torch():
    b, h, s, t, d = 2, 4, 77, 45, 64
    q = torch.randn(b, h, s, d, device=dev, dtype=torch.float16)
    k = torch.randn(b, h, t, d, device=dev, dtype=torch.float16)
    v = torch.randn(b, h, t, d, device=dev, dtype=torch.float16)
    o = torch.empty(b, h, s, t, device=dev, dtype=torch.float32)
    ak.attn_scores(q, k, o, 0.125)
    ref = (q.float() @ k.float().transpose(-1, -2)) * 0.125
    torch.testing.assert_close(o, ref, atol=1e-2, rtol=1e-3)
    p = torch.empty(b, h, s, t, device=dev, dtype=torch.float16)
    ak.softmax_rows(o, p)
    torch.testing.assert_close(p.float(), torch.softmax(ref, -1), atol=2e-3, rtol=2e-3)
    out = torch.empty(b, h, s, d, device=dev, dtype=torch.float32)
    ak.attn_pv(p, v, out)
    torch.testing.assert_close(out, p.float() @ v.float(), atol=1e-2, rtol=1e-3)
    # On a side stream too: the launch follows torch.cuda.current_stream().
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        o2 = torch.empty_like(o)
        ak.attn_scores(q, k, o2, 0.125)
    side.synchronize()
    torch.testing.assert_close(o2, o)


def test_strided_view_is_accepted_where_the_spec_allows():
    x = torch.randn(64, 48, device=dev)
    y = torch.empty(48, 64, device=dev)
    sk.affine_view(x.t(), y, 2.0, 1.0)
    torch.testing.assert_close(y, x.t() * 2.0 + 1.0)


def test_each_bad_argument_is_refused():
    x = torch.randn(8, 256, device=dev, dtype=torch.bfloat16)
    w = torch.randn(256, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    # A CPU tensor.
    refused(rk.rms_norm, x.cpu(), w, y, 1e-6, contains=("argument `x` is a cpu tensor",))
    # A wrong dtype.
    refused(rk.rms_norm, x.float(), w, y, 1e-6, contains=("argument x: dtype is f32, expected bf16",))
    # A transposed view where the spec wants a contiguous argument.
    sq = torch.randn(256, 256, device=dev, dtype=torch.bfloat16)
    refused(rk.rms_norm, sq.t(), w, torch.empty_like(sq), 1e-6, contains=("argument x: not contiguous",))
    # A bf16 view 2 bytes off the 16-byte alignment the spec asks for.
    big = torch.randn(8 * 256 + 8, device=dev, dtype=torch.bfloat16)
    off = big[1 : 1 + 8 * 256].view(8, 256)
    refused(rk.rms_norm, off, w, y, 1e-6, contains=("argument x: data pointer", "is not aligned to 16 bytes"))
    # An empty view where the spec says `empty refuse`.
    refused(sk.affine_view, torch.empty(0, 4, device=dev), torch.empty(0, 4, device=dev), 1.0, 0.0,
            contains=("has no elements (shape [0, 4]) and the kernel refuses empty launches",))
    # An output overlapping an input.
    refused(rk.rms_norm, x, w, x, 1e-6, contains=("output y overlaps argument x",))
    # A wrong symbol: w's D differs from x's.
    text = refused(rk.rms_norm, x, w[:128], y, 1e-6, contains=("argument w: shape[0] is 128, expected D = 256",))
    # The same text as the Rust checker: the kernel's signature and spec line, then each
    # violation.
    assert text.startswith("rms_norm(x: bf16[N,D], w: bf16[D], y: bf16[N,D], eps: f32) at "), text
    assert "rmsnorm.ima:5: 1 argument error" in text, text


def test_a_dropped_tensor_stays_alive_until_the_kernel_is_done():
    # The inputs are dropped right after the launch, and their memory handed out again on
    # the same stream: record_stream keeps the allocator from reusing it too early.
    b, h, s, t, d = 1, 8, 512, 512, 128
    o = torch.empty(b, h, s, t, device=dev)
    side = torch.cuda.Stream()
    q = torch.randn(b, h, s, d, device=dev, dtype=torch.float16)
    k = torch.randn(b, h, t, d, device=dev, dtype=torch.float16)
    ref = (q.float() @ k.float().transpose(-1, -2)) * 0.5
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(10_000_000)  # keep the side stream busy
        ak.attn_scores(q, k, o, 0.5)
    del q, k
    gc.collect()
    # Fresh allocations on the default stream of the same size, filled at once.
    junk = [torch.full((b, h, s, d), 7.0, device=dev, dtype=torch.float16) for _ in range(4)]
    side.synchronize()
    torch.testing.assert_close(o, ref, atol=1e-2, rtol=1e-3)
    del junk


def test_checked_mode_report_raises_in_python():
    x = torch.randn(32, 48, device=dev)
    reported(pb, pb.transpose_swapped, x, torch.empty(48, 32, device=dev), contains=("transpose_swapped",))


def test_a_cluster_kernel_matches_torch_and_reports_a_rank_past_its_cluster():
    # tests/in/clusters.ima's cluster_row_sums: each row's columns split over the 4 blocks of
    # a thread-block cluster, their sums added through distributed shared memory.
    x = torch.randn(37, 4096, device=dev)
    y = torch.full((37,), float("nan"), device=dev)
    ck.cluster_row_sums(x, y, 0)
    torch.testing.assert_close(y.double(), x.double().sum(1), atol=1e-3, rtol=1e-4)
    # Block 0 of each cluster reads blocks 1 to 4 of a cluster of 4: a checked launch
    # reports rank 4, and the context stays healthy.
    reported(ck, ck.cluster_row_sums, x, y, 1,
             contains=("shared part of block 4 of the cluster: the cluster has 4 blocks",))
    ck.cluster_row_sums(x, y, 0)
    torch.cuda.synchronize()
    # Rows whose K no cluster of 4 splits are refused before the launch.
    refused(ck.cluster_row_sums, torch.randn(2, 6, device=dev), torch.empty(2, device=dev), 0,
            contains=("K % 4 == 0",))


def test_checked_mode_from_the_environment():
    code = (
        "import torch, planted_bugs_kernels as pb\n"
        "x = torch.randn(32, 48, device='cuda'); y = torch.empty(48, 32, device='cuda')\n"
        "pb.transpose_swapped(x, y)\n"
        "try:\n"
        "    pb.transpose_swapped(x, y)\n"
        "    pb.check_deferred()\n"
        "except RuntimeError as e:\n"
        "    print('reported', type(e).__name__)\n"
    )
    env = dict(os.environ, IMA_CHECKED="deferred")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert "reported DeviceError" in out.stdout, out.stdout + out.stderr


def test_torch_compile_of_a_model_calling_a_kernel():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(512, device=dev, dtype=torch.bfloat16))
            self.lin = torch.nn.Linear(512, 512, device=dev, dtype=torch.bfloat16)

        def forward(self, x):
            return self.lin(rk.ops.rms_norm(x, self.w, 1e-6)) + x

    # imac's ops register no autograd formula (the kernels are forward only): compile an
    # inference model, as serving code does, so that AOTAutograd traces no backward.
    m = Block()
    with torch.no_grad():
        x = torch.randn(16, 512, device=dev, dtype=torch.bfloat16)
        eager = m(x)
        compiled = torch.compile(m, fullgraph=True)
        torch.testing.assert_close(compiled(x), eager)
        # Another row count: the fake function's shapes follow the input's.
        x2 = torch.randn(24, 512, device=dev, dtype=torch.bfloat16)
        torch.testing.assert_close(compiled(x2), m(x2))


def test_opcheck():
    x = torch.randn(8, 256, device=dev, dtype=torch.bfloat16)
    w = torch.randn(256, device=dev, dtype=torch.bfloat16)
    torch.library.opcheck(rk.ops.rms_norm.default, (x, w, 1e-6))
    y = torch.empty_like(x)
    torch.library.opcheck(rk.ops.rms_norm_out.default, (x, w, y, 1e-6))
    q = torch.randn(1, 2, 16, 64, device=dev, dtype=torch.float16)
    k = torch.randn(1, 2, 24, 64, device=dev, dtype=torch.float16)
    torch.library.opcheck(ak.ops.attn_scores.default, (q, k, 0.125))


def test_dlpack_and_cuda_array_interface_producers():
    x = torch.randn(8, 256, device=dev, dtype=torch.bfloat16)
    w = torch.randn(256, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)

    class Dl:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            self.stream = stream
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    rk.rms_norm(Dl(x), w, y, 1e-6)
    torch.testing.assert_close(y, rms_ref(x, w, 1e-6), atol=2e-2, rtol=2e-2)
    # The producer is given the launch stream (1 for the legacy default one), to order its
    # pending work before the kernel.
    side = torch.cuda.Stream()
    dl = Dl(x)
    with torch.cuda.stream(side):
        y2 = torch.empty_like(x)
        rk.rms_norm(dl, w, y2, 1e-6)
    side.synchronize()
    assert dl.stream == side.cuda_stream, (dl.stream, side.cuda_stream)
    torch.testing.assert_close(y2, y)
    dl = Dl(x)
    rk.rms_norm(dl, w, y2, 1e-6)
    assert dl.stream == 1, dl.stream
    # __cuda_array_interface__ (f32: the interface has no bf16 typestr).
    xs = torch.randn(64, 48, device=dev)
    ys = torch.empty(64, 48, device=dev)

    class Cai:
        def __init__(self, t):
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    torch.cuda.synchronize()
    sk.affine_view(Cai(xs), Cai(ys), 3.0, 0.0)
    torch.cuda.synchronize()
    torch.testing.assert_close(ys, xs * 3.0)
    # An output its producer marks read-only is refused, and left as it was.
    frozen = Cai(ys)
    frozen.__cuda_array_interface__ = dict(ys.__cuda_array_interface__, data=(ys.data_ptr(), True))
    before = ys.clone()
    refused(sk.affine_view, Cai(xs), frozen, 2.0, 0.0,
            contains=("kernel affine_view: argument `y`: the kernel writes it, but its "
                      "__cuda_array_interface__ marks the data read-only",))
    torch.cuda.synchronize()
    assert torch.equal(ys, before)


class StreamCai:
    """A `__cuda_array_interface__` (v3) producer over a torch tensor's memory, whose
    pending work is on `stream` (a CUstream handle, 1 or 2 for the default streams)."""

    def __init__(self, t, stream):
        self.t = t
        self.__cuda_array_interface__ = dict(t.__cuda_array_interface__, version=3, stream=stream)


def test_the_launch_waits_for_a_cuda_array_interface_producer_s_stream():
    xs = torch.zeros(64, 48, device=dev)
    ys = torch.empty(64, 48, device=dev)
    torch.cuda.synchronize()
    # The producer's side stream is busy, then fills x: the kernel (on the current,
    # default stream) reads zeros unless it waits for the side stream.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        xs.fill_(2.0)
    sk.affine_view(StreamCai(xs, side.cuda_stream), ys, 3.0, 1.0)
    torch.cuda.current_stream().synchronize()
    torch.testing.assert_close(ys, torch.full_like(ys, 7.0))
    side.synchronize()
    # The other way round: the producer's work on the legacy default stream (1), the
    # launch on a side stream.
    torch.cuda.synchronize()
    torch.cuda._sleep(50_000_000)
    xs.fill_(4.0)
    with torch.cuda.stream(side):
        ys2 = torch.empty(64, 48, device=dev)
        sk.affine_view(StreamCai(xs, 1), ys2, 3.0, 1.0)
    side.synchronize()
    torch.testing.assert_close(ys2, torch.full_like(ys2, 13.0))
    # The per-thread default stream (2) and the launch stream itself are accepted too.
    torch.cuda.synchronize()
    sk.affine_view(StreamCai(xs, 2), ys, 1.0, 0.0)
    sk.affine_view(StreamCai(xs, torch.cuda.current_stream().cuda_stream or 1), ys, 1.0, 0.0)
    torch.cuda.synchronize()
    torch.testing.assert_close(ys, xs)
    # Stream 0 is refused, as the interface disallows it.
    refused(sk.affine_view, StreamCai(xs, 0), ys, 1.0, 0.0, contains=("stream 0",))


def test_a_dropped_foreign_producer_is_held_until_its_kernel_is_done():
    # A `__cuda_array_interface__` producer has no allocator that record_stream tells: the
    # call holds the object itself until its kernel has completed, and a later call lets
    # it go.
    import weakref

    xs = torch.full((64, 48), 2.0, device=dev)
    ys = torch.empty(64, 48, device=dev)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    producer = StreamCai(xs, None)
    held = weakref.ref(producer)
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # the kernel cannot have run before this is done
        sk.affine_view(producer, ys, 3.0, 1.0)
    del producer
    gc.collect()
    assert held() is not None, "a producer was let go while its kernel was queued"
    side.synchronize()
    sk.affine_view(xs, ys, 3.0, 1.0)  # the next call lets go of finished launches
    gc.collect()
    assert held() is None, "a producer was held after its kernel completed"
    torch.cuda.synchronize()
    torch.testing.assert_close(ys, torch.full_like(ys, 7.0))


# Quantized weights, packed in torch as the checkpoints hold them (runtime/src/quant has
# the layouts): the reference dequantizes the same parts in torch, f16((q - z) * s) with
# the product in f32, exactly what the kernels compute.

AWQ_REVERSE = [0, 4, 1, 5, 2, 6, 3, 7]


def as_i32(words):
    """int64 words holding 32-bit patterns, as the int32 tensors checkpoints store."""
    words = words & 0xFFFFFFFF
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def pack_along_k(q):
    """GPTQ qweight: [K, N] nibbles to [K/8, N] words, row 8r + i at nibble i."""
    k, n = q.shape
    q = q.to(torch.int64).view(k // 8, 8, n)
    return as_i32(sum(q[:, i] << (4 * i) for i in range(8)))


def pack_along_n(v, order=range(8)):
    """GPTQ qzeros (order 0..7) or AWQ qweight and qzeros (AWQ_REVERSE): [R, N] nibbles to
    [R, N/8] words, column 8w + j at nibble order[j]."""
    r, n = v.shape
    v = v.to(torch.int64).view(r, n // 8, 8)
    return as_i32(sum(v[:, :, j] << (4 * order[j]) for j in range(8)))


def quant_case(k=256, n=128, group=64, zeros=True, seed=0):
    g = torch.Generator(device=dev).manual_seed(seed)
    groups = -(-k // group)
    q = torch.randint(0, 16, (k, n), device=dev, generator=g)
    z = torch.randint(0, 16, (groups, n), device=dev, generator=g) if zeros else torch.full((groups, n), 8, device=dev)
    s = (torch.rand(groups, n, device=dev, generator=g) * 0.02 + 0.001).half()
    return q, z, s


def dequant_ref(q, z, s, g_idx):
    g = g_idx.long()
    return ((q - z[g]).float() * s[g].float()).half()


def rows_groups(k, group):
    return torch.arange(k, device=dev, dtype=torch.int32) // group


def gptq_v1_weight(k=256, n=128, group=64):
    q, z, s = quant_case(k, n, group)
    # v1 stores the whole word of real zeros minus 0x11111111.
    qzeros = as_i32(pack_along_n(z).to(torch.int64) - 0x11111111)
    w = qk.QuantWeight("gptq", qweight=pack_along_k(q), qzeros=qzeros, scales=s, group_size=group)
    return w, dequant_ref(q, z, s, rows_groups(k, group))


def test_gptq_dequant_matches_torch():
    w, ref = gptq_v1_weight()
    for f in (qk.gptq_dequant, qk.gptq_dequant_any_n):
        y = torch.empty(256, 128, device=dev, dtype=torch.float16)
        f(w, y)
        assert torch.equal(y, ref), f.__name__
    # The functional custom op takes the parts flattened.
    y = qk.ops.gptq_dequant_any_n(w.qweight, w.qzeros, w.scales, 64, None)
    assert torch.equal(y, ref)


def test_gptq_act_order_awq_and_int8_match_torch():
    k, n, group = 197, 96, 32
    q, z, s = quant_case(k, n, group, seed=1)
    g_idx = torch.randint(0, -(-k // group), (k,), device=dev, dtype=torch.int32)
    qweight = pack_along_k(torch.cat([q, q.new_zeros(200 - k, n)]))  # K padded to words
    w = qk.QuantWeight(
        "gptq(zeros = plain)", qweight=qweight, qzeros=pack_along_n(z), scales=s, g_idx=g_idx, group_size=group
    )
    assert w.k == k
    y = torch.empty(k, n, device=dev, dtype=torch.float16)
    qk.gptq_act_order_dequant(w, y)
    assert torch.equal(y, dequant_ref(q, z, s, g_idx))
    qk.gptq_act_order_dequant.validate(w, y)
    # AWQ: packed along N with its interleave.
    w = qk.QuantWeight(
        "awq", qweight=pack_along_n(q, AWQ_REVERSE), qzeros=pack_along_n(z, AWQ_REVERSE), scales=s, group_size=group
    )
    y = torch.empty(k, n, device=dev, dtype=torch.float16)
    qk.awq_dequant_any_n(w, y)
    assert torch.equal(y, dequant_ref(q, z, s, rows_groups(k, group)))
    # int8: signed values, zero 0.
    q8 = torch.randint(-128, 128, (k, n), device=dev, dtype=torch.int8)
    w = qk.QuantWeight("int8", qweight=q8, scales=s, group_size=group)
    qk.int8_dequant(w, y)
    assert torch.equal(y, dequant_ref(q8.long(), torch.zeros_like(z), s, rows_groups(k, group)))


def test_gptq_gemv_matches_torch():
    w, ref = gptq_v1_weight(k=512, n=256, group=128)
    for m in (1, 3, 8):
        x = torch.randn(m, 512, device=dev, dtype=torch.float16)
        y = torch.empty(m, 256, device=dev, dtype=torch.float16)
        qk.gptq_gemv(x, w, y)
        torch.testing.assert_close(y.float(), x.float() @ ref.float(), atol=2e-2, rtol=2e-2)


def test_bad_quantized_weights_are_refused():
    w, _ = gptq_v1_weight()
    y = torch.empty(256, 128, device=dev, dtype=torch.float16)
    # Another format than the kernel reads, or a g_idx it does not read.
    plain = qk.QuantWeight("gptq(zeros = plain)", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales, group_size=64)
    refused(qk.gptq_dequant_any_n, plain, y, contains=("the kernel reads gptq, but the weight is gptq(zeros = plain)",))
    with_g = qk.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales, g_idx=rows_groups(256, 64), group_size=64)
    refused(qk.gptq_dequant_any_n, with_g, y, contains=("with g_idx",))
    refused(qk.gptq_act_order_dequant, w, y, contains=("the kernel reads gptq(zeros = plain) with g_idx",))
    # A part on the CPU, of the wrong dtype, or misaligned, named as the contract names it.
    cpu = qk.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales.cpu(), group_size=64)
    refused(qk.gptq_dequant_any_n, cpu, y, contains=("argument `w.scales` is a cpu tensor",))
    f32 = qk.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales.float(), group_size=64)
    refused(qk.gptq_dequant_any_n, f32, y, contains=("argument w.scales: dtype is f32, expected f16",))
    words = torch.cat([w.qweight.flatten(), w.qweight.new_zeros(4)])
    off = qk.QuantWeight("gptq", qweight=words[1 : 1 + w.qweight.numel()].view(32, 128), qzeros=w.qzeros, scales=w.scales, group_size=64)
    refused(qk.gptq_dequant, off, y, contains=("w.qweight", "align"))
    # Transposed scales: refused when the weight is made, with Rust's text.
    refused(
        lambda: qk.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales.t(), group_size=64),
        contains=("scales has shape [128, 4], but its shape [ceil(K/G), N] is [4, 128]",),
    )


def test_validate_checks_values_on_the_host_and_launches_nothing():
    table = torch.randn(100, 64, device=dev, dtype=torch.bfloat16)
    y = torch.zeros(5, 64, device=dev, dtype=torch.bfloat16)
    ids = torch.tensor([0, 3, 99, 7, 2], device=dev, dtype=torch.int32)
    ik.embedding.validate(ids, table, y)
    assert not y.any(), "validate launched"
    ik.embedding(ids, table, y)
    torch.testing.assert_close(y, table[ids.long()])
    bad = torch.tensor([0, 3, 100, 7, 2], device=dev, dtype=torch.int32)
    refused(ik.embedding.validate, bad, table, y, contains=("ids", "100"))
    # A quantized weight's g_idx: one group per row, each in 0 .. ceil(K / G).
    k, n, group = 64, 32, 16
    q, z, s = quant_case(k, n, group)
    g_idx = rows_groups(k, group).clone()
    g_idx[5] = 4
    w = qk.QuantWeight("gptq(zeros = plain)", qweight=pack_along_k(q), qzeros=pack_along_n(z), scales=s, g_idx=g_idx, group_size=group)
    refused(qk.gptq_act_order_dequant.validate, w, torch.empty(k, n, device=dev, dtype=torch.float16), contains=("g_idx",))


def test_quantized_custom_ops_compile_and_pass_opcheck():
    w, ref = gptq_v1_weight(k=512, n=256, group=128)
    x = torch.randn(2, 512, device=dev, dtype=torch.float16)
    args = (x, w.qweight, w.qzeros, w.scales, 128, None)
    # gptq_gemv's y may be half as wide as W (its fused SiluAndMul): its width NY, which
    # only y carries, is the op's last argument.
    torch.library.opcheck(qk.ops.gptq_gemv.default, args + (256,))
    torch.library.opcheck(qk.ops.gptq_gemv.default, args + (128,))
    torch.library.opcheck(qk.ops.gptq_dequant.default, args[1:])

    def f(x, qweight, qzeros, scales):
        return qk.ops.gptq_gemv(x, qweight, qzeros, scales, 128, None, qweight.shape[1]) * 2

    with torch.no_grad():
        compiled = torch.compile(f, fullgraph=True)
        torch.testing.assert_close(compiled(*args[:4]), f(*args[:4]))


def test_gemm_tma_matches_torch_on_ragged_shapes_in_both_modes():
    # TMA tensor maps encoded from torch tensors: partial tiles in M, N and K.
    for mode in ("off", "wait"):
        tk.set_checked(mode)
        try:
            for (m, k, n), dtype in (((77, 200, 136), torch.bfloat16), ((130, 1000, 264), torch.float16)):
                a = torch.randn(m, k, device=dev, dtype=dtype)
                b = torch.randn(k, n, device=dev, dtype=dtype)
                f = tk.gemm_tma_bf16 if dtype == torch.bfloat16 else tk.gemm_tma_f16
                c = torch.full((m, n), float("nan"), device=dev, dtype=dtype)
                f(a, b, c)
                ref = (a.double() @ b.double()).to(dtype)
                torch.testing.assert_close(c, ref, atol=5e-2, rtol=2e-2)
        finally:
            tk.set_checked("off")
    # A view whose rows are not contiguous has no tensor map: refused before launching.
    a = torch.randn(64, 256, device=dev, dtype=torch.bfloat16)[:, :128]
    b = torch.randn(128, 64, device=dev, dtype=torch.bfloat16)
    refused(tk.gemm_tma_bf16, a, b, torch.empty(64, 64, device=dev, dtype=torch.bfloat16),
            contains=("argument a: not contiguous",))


def test_gptq_gemm_tma_matches_torch_and_refuses_groups_its_tiles_cannot_hold():
    # The GPTQ weight's words, scales and zeros come by TMA maps the runtime encodes from
    # the torch tensors; K no multiple of a tile, two row tiles of x at M = 17.
    k, n = 1000, 96
    w, ref = gptq_v1_weight(k=k, n=n, group=128)
    for mode in ("off", "wait"):
        tk.set_checked(mode)
        try:
            for m in (1, 17):
                x = torch.randn(m, k, device=dev, dtype=torch.float16)
                y = torch.full((m, n), float("nan"), device=dev, dtype=torch.float16)
                tk.gptq_gemm_tma(x, w, y)
                torch.testing.assert_close(y.float(), (x.double() @ ref.double()).float(), atol=2e-2, rtol=2e-2)
        finally:
            tk.set_checked("off")
    # Groups of 20 do not tile 512 rows: the constraint the checker added names why.
    w20, _ = gptq_v1_weight(k=640, n=64, group=20)
    x = torch.randn(2, 640, device=dev, dtype=torch.float16)
    refused(tk.gptq_gemm_tma, x, w20, torch.empty(2, 64, device=dev, dtype=torch.float16), contains=("512 % G == 0",))


def test_gptq_gemm_wg_matches_torch_and_leaves_its_counters_zero():
    # Warpgroup MMA on the decoded weights, stream-K over the GPU's blocks: a tile split
    # between blocks is added up from the blocks' slots in `part` (scratch: NaN here, so a
    # slot read before it is written shows), counted in `arrivals`, left zero; one, two and
    # four accumulator widths, and two row blocks of x at M = 100.
    k, n = 1000, 4352
    w, ref = gptq_v1_weight(k=k, n=n, group=128)
    for mode in ("off", "wait"):
        tk.set_checked(mode)
        try:
            for m in (1, 17, 100):
                x = torch.randn(m, k, device=dev, dtype=torch.float16)
                part = torch.full((tk.BLOCKS, 3, 8, 128, 4), float("nan"), device=dev, dtype=torch.float32)
                arrivals = torch.zeros((m + 63) // 64, n // 64, device=dev, dtype=torch.int32)
                y = torch.full((m, n), float("nan"), device=dev, dtype=torch.float16)
                tk.gptq_gemm_wg(x, w, part, arrivals, y)
                torch.testing.assert_close(y.float(), (x.double() @ ref.double()).float(), atol=2e-2, rtol=2e-2)
                assert not arrivals.any(), "the counters are left zero"
        finally:
            tk.set_checked("off")
    # Groups of 20 do not tile 256 rows: the constraint the checker added names why.
    w20, _ = gptq_v1_weight(k=640, n=64, group=20)
    x = torch.randn(2, 640, device=dev, dtype=torch.float16)
    part = torch.empty(tk.BLOCKS, 3, 8, 128, 4, device=dev, dtype=torch.float32)
    arrivals = torch.zeros(1, 1, device=dev, dtype=torch.int32)
    refused(tk.gptq_gemm_wg, x, w20, part, arrivals, torch.empty(2, 64, device=dev, dtype=torch.float16),
            contains=("256 % G == 0",))


def test_gptq_gemm_wg16_and_wg32_match_torch_and_refuse_what_they_cannot_take():
    # gptq_gemm_wg's units for up to 16 and 32 rows of x, the group's scale applied after
    # the MMA: one, nine and all rows (and 25 for wg32), groups of 128 and 256, in release
    # and checked mode.
    k, n = 1000, 4352
    kernels = ((tk.gptq_gemm_wg16, 16, 2, (1, 9, 16)), (tk.gptq_gemm_wg32, 32, 4, (1, 17, 25, 32)))
    for group in (128, 256):
        w, ref = gptq_v1_weight(k=k, n=n, group=group)
        for mode in ("off", "wait"):
            tk.set_checked(mode)
            try:
                for kernel, _, tiles, rows in kernels:
                    for m in rows:
                        x = torch.randn(m, k, device=dev, dtype=torch.float16)
                        part = torch.full((tk.BLOCKS, 3, tiles, 128, 4), float("nan"), device=dev, dtype=torch.float32)
                        arrivals = torch.zeros(1, n // 64, device=dev, dtype=torch.int32)
                        y = torch.full((m, n), float("nan"), device=dev, dtype=torch.float16)
                        kernel(x, w, part, arrivals, y)
                        torch.testing.assert_close(y.float(), (x.double() @ ref.double()).float(), atol=2e-2, rtol=2e-2)
                        assert not arrivals.any(), "the counters are left zero"
            finally:
                tk.set_checked("off")
    # Groups of 64 would need their scale inside a half stage, and one row more than the
    # kernel's is past its tile.
    for kernel, most, tiles, _ in kernels:
        part = torch.empty(tk.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
        arrivals = torch.zeros(1, 1, device=dev, dtype=torch.int32)
        w64, _ = gptq_v1_weight(k=512, n=64, group=64)
        x = torch.randn(2, 512, device=dev, dtype=torch.float16)
        refused(kernel, x, w64, part, arrivals, torch.empty(2, 64, device=dev, dtype=torch.float16),
                contains=("G >= 128",))
        w128, _ = gptq_v1_weight(k=512, n=64, group=128)
        x = torch.randn(most + 1, 512, device=dev, dtype=torch.float16)
        refused(kernel, x, w128, part, arrivals, torch.empty(most + 1, 64, device=dev, dtype=torch.float16),
                contains=(f"M <= {most}",))


def test_gptq_gemm_wg_is_captured_by_torch_cuda_graph():
    # A `persistent` launch (its blocks wait for each other) is cooperative: captured by
    # torch.cuda.graph as such, and replayed on new inputs.
    k, n, m = 1000, 4352, 17
    w, ref = gptq_v1_weight(k=k, n=n, group=128)
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part = torch.empty(tk.BLOCKS, 3, 8, 128, 4, device=dev, dtype=torch.float32)
    arrivals = torch.zeros((m + 63) // 64, n // 64, device=dev, dtype=torch.int32)
    y = torch.full((m, n), float("nan"), device=dev, dtype=torch.float16)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tk.gptq_gemm_wg(x, w, part, arrivals, y)  # warm up outside the capture
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        tk.gptq_gemm_wg(x, w, part, arrivals, y)
    for _ in range(3):
        x.copy_(torch.randn(m, k, device=dev, dtype=torch.float16))
        y.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(y.float(), (x.double() @ ref.double()).float(), atol=2e-2, rtol=2e-2)
        assert not arrivals.any(), "the counters are left zero"


def test_torch_s_op_namespaces_have_no_public_attribute_the_checker_does_not_refuse():
    """A kernel named as a public attribute of torch's op namespaces (`torch.ops.NS.name`)
    would be shadowed by it, so the checker refuses the names of dsl/src/names.rs's
    TORCH_OPS_NAMES (and every name starting with `_`): this holds that list to torch's."""
    names_rs = pathlib.Path(__file__).resolve().parents[2] / "dsl/src/names.rs"
    listed = re.search(r"TORCH_OPS_NAMES: &\[&str\] = &\[(.*?)\];", names_rs.read_text(), re.S)
    refused_names = set(re.findall(r'"(\w+)"', listed.group(1)))
    # A namespace nothing registers: the ops a package's namespace has loaded are no part
    # of what torch gives every namespace.
    empty = torch.ops.imac_no_such_kernels
    assert type(empty) is type(rk.ops), (type(empty), type(rk.ops))
    public = {a for a in dir(empty) if not a.startswith("_")}
    assert public <= refused_names, f"torch's {sorted(public - refused_names)} are not refused"


@needs_two_gpus
def test_a_call_on_another_device_launches_there():
    n = torch.cuda.device_count()
    assert n >= 2, f"this test needs two GPUs and found {n}"
    d1 = torch.device("cuda", 1)
    x = torch.randn(8, 256, device=d1, dtype=torch.bfloat16)
    w = torch.randn(256, device=d1, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    rk.rms_norm(x, w, y, 1e-6)
    torch.testing.assert_close(y, rms_ref(x, w, 1e-6), atol=2e-2, rtol=2e-2)
    refused(rk.rms_norm, x, w.to(dev), y, 1e-6, contains=("device",))
    # A __cuda_array_interface__ output on cuda:1, with a stream there to wait for, in a
    # launch on cuda:0: refused for its device by the checker, not by a wait's driver error.
    side = torch.cuda.Stream(device=d1)
    y1 = torch.empty(4, 8, device=d1)

    class Cai:
        __cuda_array_interface__ = dict(y1.__cuda_array_interface__, version=3, stream=side.cuda_stream)

    refused(sk.affine_view, torch.randn(4, 8, device=dev), Cai(), 1.0, 0.0, contains=("argument y: on ",))
    # A zero-size interface array, whose address (0) is on no device, first: the call
    # takes the next argument's device, cuda:1, and skips the empty launch, where device 0
    # once was taken and the table refused for being on cuda:1.
    class NoIds:
        __cuda_array_interface__ = {"data": (0, False), "shape": (0,), "typestr": "<i4", "version": 3}

    table = torch.randn(16, 64, device=d1, dtype=torch.bfloat16)
    assert ik.embedding(NoIds(), table, torch.empty(0, 64, device=d1, dtype=torch.bfloat16)) is None


if __name__ == "__main__":
    two_gpus = "--two-gpus" in sys.argv[1:]
    failed, not_run = 0, []
    for name, f in sorted(globals().items()):
        if not name.startswith("test_"):
            continue
        if getattr(f, "needs_two_gpus", False) and not two_gpus:
            not_run.append(name)
            continue
        try:
            f()
            print(f"ok {name}", flush=True)
        except Exception:
            failed += 1
            print(f"FAILED {name}", flush=True)
            traceback.print_exc()
    for name in not_run:
        print(f"not run {name}: needs two GPUs (--two-gpus, on a two-GPU machine)")
    print(f"{failed} failed")
    sys.exit(1 if failed else 0)
