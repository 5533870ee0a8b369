"""GPU checks of the generated Python packages, on the H200 (torch with CUDA).

Install the wheels that scripts/python-wheels built into .gpu/wheels, then run:
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/wheels/*.whl
    PYTHONPATH=/tmp/site python3 tests/python/test_gpu.py
Each test prints `ok NAME`; the script exits 1 if any failed, after running all of them.
"""

import gc
import os
import subprocess
import sys
import traceback

import torch

import attn_kernels as ak
import planted_bugs_kernels as pb
import rmsnorm_kernels as rk
import strided_kernels as sk

dev = torch.device("cuda", 0)


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
    refused(rk.rms_norm, x.float(), w, y, 1e-6, contains=("x",))
    # A transposed view where the spec wants a contiguous argument.
    sq = torch.randn(256, 256, device=dev, dtype=torch.bfloat16)
    refused(rk.rms_norm, sq.t(), w, torch.empty_like(sq), 1e-6, contains=("x",))
    # A bf16 view 2 bytes off the 16-byte alignment the spec asks for.
    big = torch.randn(8 * 256 + 8, device=dev, dtype=torch.bfloat16)
    off = big[1 : 1 + 8 * 256].view(8, 256)
    refused(rk.rms_norm, off, w, y, 1e-6, contains=("align",))
    # An empty view where the spec says `empty refuse`.
    refused(sk.affine_view, torch.empty(0, 4, device=dev), torch.empty(0, 4, device=dev), 1.0, 0.0)
    # An output overlapping an input.
    refused(rk.rms_norm, x, w, x, 1e-6, contains=("overlap",))
    # A wrong symbol: w's D differs from x's.
    refused(rk.rms_norm, x, w[:128], y, 1e-6, contains=("D",))
    # The same text as the Rust checker: it names the kernel and the argument.
    text = refused(rk.rms_norm, x, w[:128], y, 1e-6)
    assert "rms_norm" in text, text


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
    y = torch.empty(32, 48, device=dev)
    pb.set_checked("wait")
    try:
        pb.transpose_swapped(x, torch.empty(48, 32, device=dev))
    except RuntimeError as e:
        assert type(e).__name__ == "DeviceError", type(e)
        assert "transpose_swapped" in str(e), str(e)
    else:
        raise AssertionError("no report")
    finally:
        pb.set_checked("off")


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
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    rk.rms_norm(Dl(x), w, y, 1e-6)
    torch.testing.assert_close(y, rms_ref(x, w, 1e-6), atol=2e-2, rtol=2e-2)
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


if __name__ == "__main__":
    failed = 0
    for name, f in sorted(globals().items()):
        if not name.startswith("test_"):
            continue
        try:
            f()
            print(f"ok {name}", flush=True)
        except Exception:
            failed += 1
            print(f"FAILED {name}", flush=True)
            traceback.print_exc()
    print(f"{failed} failed")
    sys.exit(1 if failed else 0)
