"""CPU checks of a generated Python package (no GPU, no torch needed).

Run after installing the wheels of specs/rmsnorm.ima and specs/quant.ima
(scripts/python-wheels does both):
    python3 tests/python/test_cpu.py
"""

import ast
import contextlib
import os
import pathlib
import subprocess
import sys

import quant_kernels as qk
import rmsnorm_kernels as rk
from rmsnorm_kernels import _imac


class Shaped:
    """A stand-in for a tensor where only the shape is read."""

    def __init__(self, *shape):
        self.shape = shape


def test_exceptions_subclass_the_builtin_ones():
    assert issubclass(rk.ContractError, ValueError)
    assert issubclass(rk.DeviceError, RuntimeError)
    # A traceback names them where they are imported from.
    assert (rk.ContractError.__module__, qk.DeviceError.__module__) == ("rmsnorm_kernels", "quant_kernels")


def test_one_function_per_kernel_with_spec_names():
    import inspect

    assert list(inspect.signature(rk.rms_norm).parameters) == ["x", "w", "y", "eps"]
    assert "x (in): bf16 [N, D], contiguous, 16-byte aligned" in rk.rms_norm.__doc__
    assert rk.SPEC_FILE == "specs/rmsnorm.ima"


def test_output_shapes_follow_the_spec():
    assert rk.rms_norm_output_shapes(Shaped(7, 64), Shaped(64), 1e-6) == ((7, 64),)


def test_describes_a_cuda_array_interface():
    # A 3 x 4 f32 array seen transposed (strides in bytes), at address 0x1000: its first
    # element's address and strides in elements (the native side spans the buffer).
    cai = {"data": (0x1000, False), "shape": (4, 3), "strides": (4, 16), "typestr": "<f4", "version": 3}
    assert _imac.describe_cai("x", cai, ValueError) == (0x1000, "f32", (4, 3), (1, 4), 0, None, False)
    cai = {"data": (0x1000, False), "shape": (3, 4), "strides": (-16, 4), "typestr": "<f4", "version": 3}
    assert _imac.describe_cai("x", cai, ValueError)[3] == (-4, 1)
    # Contiguous when strides are None.
    cai = {"data": (0x2000, False), "shape": (2, 5), "strides": None, "typestr": "<f2", "version": 3}
    assert _imac.describe_cai("x", cai, ValueError)[3] == (5, 1)


def test_a_cuda_array_interface_stream_is_passed_on():
    # v3's `stream`: the launch waits for the work on it (1: the legacy default stream,
    # 2: the per-thread one, else a cudaStream_t); None or absent: nothing to wait for.
    cai = {"data": (0x1000, False), "shape": (4,), "strides": None, "typestr": "<f4", "version": 3}
    for stream in (None, 1, 2, 0x5A5A0000):
        assert _imac.describe_cai("x", dict(cai, stream=stream), ValueError)[5] == stream
    # 0 is ambiguous and disallowed by the interface; a stream is an integer.
    for stream in (0, -1, "1", True):
        try:
            _imac.describe_cai("kernel rms_norm: argument `x`", dict(cai, stream=stream), rk.ContractError)
        except rk.ContractError as e:
            text = (
                f"kernel rms_norm: argument `x` has __cuda_array_interface__ stream {stream!r}, "
                "expected None, 1 (the legacy default stream), 2 (the per-thread default stream) "
                "or a cudaStream_t (0 is disallowed by the interface: it is ambiguous)"
            )
            assert str(e) == text, str(e)
        else:
            raise AssertionError(f"stream {stream!r} accepted")

    # Through a call: refused before the driver is asked anything.
    class Cai:
        __cuda_array_interface__ = dict(cai, stream=0)

    try:
        rk.rms_norm(Cai(), [1.0], [0.0], 1e-6)
    except rk.ContractError as e:
        assert str(e).startswith("kernel rms_norm: argument `x` has __cuda_array_interface__ stream 0,"), str(e)
    else:
        raise AssertionError("stream 0 accepted")


def test_an_interface_that_raises_says_why():
    # A property that raises AttributeError (a torch CPU tensor's) is no missing one.
    class Host:
        @property
        def __cuda_array_interface__(self):
            raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type")

    refused(
        lambda: rk.rms_norm(Host(), Cai(), Cai(), 1e-6),
        "kernel rms_norm: argument `x` is a Host whose __cuda_array_interface__ raised: "
        "Can't get __cuda_array_interface__ on non-CUDA tensor type",
    )


def test_refuses_what_is_not_device_memory():
    try:
        rk.rms_norm([1.0], [1.0], [0.0], 1e-6)
    except rk.ContractError as e:
        assert isinstance(e, ValueError)
        assert "argument `x` is a list, not a device tensor" in str(e), str(e)
    else:
        raise AssertionError("a list was launched")


def test_refuses_a_cuda_array_interface_it_cannot_read_whole():
    cai = {"data": (0x1000, False), "shape": (4,), "strides": None, "typestr": "<f4", "version": 3}
    # The read-only flag is passed on (the native side refuses it for a written argument).
    assert _imac.describe_cai("x", dict(cai, data=(0x1000, True)), ValueError)[6] is True
    what = "kernel rms_norm: argument `x`"
    for bad, text in [
        ({k: v for k, v in cai.items() if k != "shape"}, "a __cuda_array_interface__ without 'shape'"),
        ({k: v for k, v in cai.items() if k != "typestr"}, "a __cuda_array_interface__ without 'typestr'"),
        (dict(cai, mask=(0x2000, False)), "a __cuda_array_interface__ mask: imac reads every element"),
    ]:
        try:
            _imac.describe_cai(what, bad, rk.ContractError)
        except rk.ContractError as e:
            assert str(e).startswith(what + " has " + text), str(e)
        else:
            raise AssertionError(f"accepted {bad}")
    # No elements, no memory: a null pointer is what such a view has.
    assert _imac.describe_cai("x", dict(cai, shape=(0,), data=(0, False)), ValueError)[0] == 0

    # With elements, a call refuses it (the native side's one check for every source),
    # before the driver is asked anything.
    class Null:
        __cuda_array_interface__ = dict(cai, shape=(4, 8), data=(0, False))

    try:
        rk.rms_norm(Null(), Null(), Null(), 1e-6)
    except rk.ContractError as e:
        assert str(e) == f"{what} has a null data pointer for its shape [4, 8]", str(e)
    else:
        raise AssertionError("a null pointer was launched")


def test_refuses_a_param_it_would_change():
    # Empty arrays at address 0: described without asking the driver, so the params are
    # converted (and refused) here without a GPU.
    class Empty:
        __cuda_array_interface__ = {"data": (0, False), "shape": (0, 8), "strides": None,
                                    "typestr": "<f4", "version": 3}

    for eps, text in [(True, "param `eps` takes f32, not a bool"),
                      (1e40, "param `eps` takes f32, and 1e40 is outside its range"),
                      # Below f32's least magnitude, it would be 0: a division by zero.
                      (1e-50, "param `eps` takes f32, and 1e-50 is outside its range")]:
        try:
            rk.rms_norm(Empty(), Empty(), Empty(), eps)
        except rk.ContractError as e:
            assert str(e) == "kernel rms_norm: " + text, str(e)
        else:
            raise AssertionError(f"eps {eps!r} accepted")


def test_a_torch_without_cuda_is_no_torch_to_a_launch():
    # In a process of its own (the module looks torch up once): a torch built without
    # CUDA has no _cuda_getCurrentRawStream; a call with other device arrays goes on as
    # without torch, to the param's refusal, instead of failing on torch.
    script = """
import sys, types
torch = types.ModuleType("torch")
torch.Tensor = type("Tensor", (), {})
torch._C = types.ModuleType("torch._C")
torch.cuda = types.ModuleType("torch.cuda")

class Op:  # what the package's custom-op registration asks of torch.library
    def __init__(self, f):
        self.f = f

    def register_fake(self, g):
        return g

torch.library = types.SimpleNamespace(custom_op=lambda *a, **k: Op)
torch.ops = type("Ops", (), {"__getattr__": lambda self, ns: types.SimpleNamespace()})()
sys.modules["torch"] = torch
import rmsnorm_kernels as rk

class Empty:
    __cuda_array_interface__ = {"data": (0, False), "shape": (0, 8), "strides": None,
                                "typestr": "<f4", "version": 3}

try:
    rk.rms_norm(Empty(), Empty(), Empty(), True)
except rk.ContractError as e:
    print(e)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.stdout.strip() == "kernel rms_norm: param `eps` takes f32, not a bool", (out.stdout, out.stderr)


def test_refuses_an_unknown_typestr():
    cai = {"data": (0x1000, False), "shape": (4,), "strides": None, "typestr": "<c8", "version": 3}
    try:
        _imac.describe_cai("kernel rms_norm: argument `x`", cai, rk.ContractError)
    except rk.ContractError as e:
        assert "typestr '<c8'" in str(e)
    else:
        raise AssertionError("accepted")


def test_stubs_parse():
    pyi = pathlib.Path(rk.__file__).with_name("__init__.pyi").read_text()
    tree = ast.parse(pyi)
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert {"rms_norm", "rms_norm_output_shapes", "set_checked", "check_deferred", "QuantWeight"} <= names


def quant_refused(text, format, **parts):
    try:
        rk.QuantWeight(format, **parts)
    except rk.ContractError as e:
        assert str(e) == text, str(e)
    else:
        raise AssertionError(f"QuantWeight({format!r}, {parts}) accepted")


def test_quant_weight_dims_follow_the_format():
    # GPTQ, K = 128, N = 96, G = 32: qweight [K/8, N], qzeros [K/G, N/8], scales [K/G, N].
    w = rk.QuantWeight("gptq", qweight=Shaped(16, 96), qzeros=Shaped(4, 12), scales=Shaped(4, 96), group_size=32)
    assert (w.k, w.n, w.group_size) == (128, 96, 32)
    # K from g_idx, and a config's -1: one group.
    w = rk.QuantWeight(
        "gptq(zeros = plain)", qweight=Shaped(16, 96), qzeros=Shaped(1, 12), scales=Shaped(1, 96),
        g_idx=Shaped(125), group_size=-1,
    )
    assert (w.k, w.group_size) == (125, 125)
    assert "g_idx" in repr(w)
    # AWQ packs along N; int8 has no qzeros; a K that is no multiple of 8 given as k.
    w = rk.QuantWeight("awq", qweight=Shaped(128, 12), qzeros=Shaped(4, 12), scales=Shaped(4, 96), group_size=32)
    assert (w.k, w.n) == (128, 96)
    w = rk.QuantWeight("int8", qweight=Shaped(100, 96), scales=Shaped(4, 96), group_size=32)
    assert (w.k, w.n, w.group_size) == (100, 96, 32)
    w = rk.QuantWeight("gptq(sym)", qweight=Shaped(13, 96), scales=Shaped(4, 96), group_size=32, k=100)
    assert w.k == 100
    # A bare CUDA Array Interface producer: the shape comes from its dict.
    class Cai:
        def __init__(self, *shape):
            self.__cuda_array_interface__ = {"shape": shape, "typestr": "<i4", "data": (0, False), "version": 3}

    w = rk.QuantWeight("gptq", qweight=Cai(16, 96), qzeros=Cai(4, 12), scales=Cai(4, 96), group_size=32)
    assert (w.k, w.n) == (128, 96)


def test_quant_weight_parts_are_checked_with_rust_s_text():
    quant_refused(
        "scales has shape [3, 96], but its shape [ceil(K/G), N] is [4, 96]",
        "gptq", qweight=Shaped(16, 96), qzeros=Shaped(4, 12), scales=Shaped(3, 96), group_size=32,
    )
    quant_refused(
        "format gptq needs a qzeros buffer, but none was given",
        "gptq", qweight=Shaped(16, 96), scales=Shaped(4, 96), group_size=32,
    )
    quant_refused(
        "format awq takes no g_idx (act-order is GPTQ only)",
        "awq", qweight=Shaped(128, 12), qzeros=Shaped(4, 12), scales=Shaped(4, 96), g_idx=Shaped(128), group_size=32,
    )
    quant_refused(
        "qweight has shape [1536], but its shape [ceil(K/8), N] has 2 dimensions",
        "gptq", qweight=Shaped(1536), qzeros=Shaped(4, 12), scales=Shaped(4, 96), group_size=32,
    )
    quant_refused(
        "group size 0 is invalid for K = 128: it must be in 1..=K",
        "gptq", qweight=Shaped(16, 96), qzeros=Shaped(4, 12), scales=Shaped(4, 96), group_size=0,
    )
    try:
        rk.QuantWeight("gptq_v2", qweight=Shaped(16, 96), scales=Shaped(4, 96), group_size=32)
    except rk.ContractError as e:
        assert "gptq(zeros = plain)" in str(e), str(e)
    else:
        raise AssertionError("accepted")


def test_a_quant_weight_where_a_tensor_goes_is_refused():
    w = rk.QuantWeight("int8", qweight=Shaped(100, 96), scales=Shaped(4, 96), group_size=32)
    try:
        rk.rms_norm(w, [1.0], [0.0], 1e-6)
    except rk.ContractError as e:
        assert "argument `x` is a QuantWeight, not a device tensor" in str(e), str(e)
    else:
        raise AssertionError("accepted")


def test_a_quant_kernel_refuses_another_format_before_the_gpu():
    # Made by another package: any package's QuantWeight goes to any package's kernels.
    w = rk.QuantWeight("gptq", qweight=Shaped(64, 256), qzeros=Shaped(4, 32), scales=Shaped(4, 256), group_size=128)
    assert qk.gptq_dequant_output_shapes(w) == ((512, 256),)
    # y's width is NY, which only y carries: W's N, or half of it with SiluAndMul fused.
    assert qk.gptq_gemv_output_shapes(Shaped(3, 512), w, 256) == ((3, 256),)
    assert qk.gptq_gemv_output_shapes(Shaped(3, 512), w, 128) == ((3, 128),)
    try:
        qk.gptq_act_order_dequant(w, Shaped(512, 256))
    except qk.ContractError as e:
        text = "kernel gptq_act_order_dequant: argument `w`: the kernel reads gptq(zeros = plain) with g_idx, but the weight is gptq"
        assert str(e) == text, str(e)
    else:
        raise AssertionError("accepted")
    try:
        qk.gptq_dequant(Shaped(64, 256), Shaped(512, 256))
    except qk.ContractError as e:
        assert "argument `w` is a Shaped, not a QuantWeight" in str(e), str(e)
    else:
        raise AssertionError("accepted")
    assert hasattr(qk.gptq_act_order_dequant, "validate") and not hasattr(qk.gptq_dequant, "validate")


def test_modes_are_settable_without_a_gpu():
    # Spelled as IMA_CHECKED may be.
    for mode in ("deferred", "on", "wait", "1", "TRUE", "off"):
        rk.set_checked(mode)
    rk.set_sync(False)
    for mode in ("sometimes", ""):
        try:
            rk.set_checked(mode)
        except ValueError as e:
            assert str(e) == f'checked mode "{mode}": off, wait (or on) or deferred', str(e)
        else:
            raise AssertionError(f"{mode!r} accepted")


class Cai:
    """A `__cuda_array_interface__` producer; by default an empty f32 array at address 0,
    which a call describes without asking the driver."""

    def __init__(self, **fields):
        self.__cuda_array_interface__ = dict(
            {"data": (0, False), "shape": (0, 8), "strides": None, "typestr": "<f4", "version": 3}, **fields
        )


def refused(call, text):
    try:
        call()
    except rk.ContractError as e:
        assert str(e) == text, str(e)
    else:
        raise AssertionError(f"accepted, expected: {text}")


def test_refuses_a_malformed_cuda_array_interface_by_the_argument():
    # Each refused naming the argument, before the driver is asked anything; none as
    # Python's own TypeError or OverflowError from deep inside.
    what = "kernel rms_norm: argument `x` has __cuda_array_interface__"
    expected_address = "expected (address, read_only)"
    for fields, text in [
        ({"data": None}, f"data None, {expected_address}"),
        ({"data": (0,)}, f"data (0,), {expected_address}"),
        ({"data": (None, False)}, f"data (None, False), {expected_address}"),
        ({"data": (-16, False)}, f"data (-16, False), {expected_address}"),
        ({"data": (1 << 64, False)}, f"data ({1 << 64}, False), {expected_address}"),
        ({"shape": (-1, 8)}, "shape (-1, 8), expected a tuple of extents"),
        ({"shape": (4.9, 8)}, "shape (4.9, 8), expected a tuple of extents"),
        ({"shape": (True, 8)}, "shape (True, 8), expected a tuple of extents"),
        ({"shape": ("3", "8")}, "shape ('3', '8'), expected a tuple of extents"),
        ({"strides": ("32", "4")}, "strides ('32', '4'), expected a tuple of 2 byte strides"),
        ({"strides": (32.0, 4.0)}, "strides (32.0, 4.0), expected a tuple of 2 byte strides"),
        ({"strides": (4,)}, "strides (4,), expected a tuple of 2 byte strides"),
        ({"stream": 1 << 64}, f"stream {1 << 64}, expected None, 1 (the legacy default stream), 2 (the "
         "per-thread default stream) or a cudaStream_t (0 is disallowed by the interface: it is ambiguous)"),
    ]:
        refused(lambda: rk.rms_norm(Cai(**fields), Cai(), Cai(), 1e-6), f"{what} {text}")
    refused(
        lambda: rk.rms_norm(Cai(typestr=["<f4"]), Cai(), Cai(), 1e-6),
        "kernel rms_norm: argument `x` has typestr ['<f4'], which imac does not know",
    )

    class NotADict:
        __cuda_array_interface__ = [("shape", (0,))]

    refused(
        lambda: rk.rms_norm(NotADict(), Cai(), Cai(), 1e-6),
        "kernel rms_norm: argument `x` has a __cuda_array_interface__ that is a list, not a dict",
    )
    # A list is taken as a tuple, as producers written by hand give it.
    assert _imac.describe_cai("x", Cai(shape=[0, 8], strides=[32, 4]).__cuda_array_interface__, ValueError)[2:4] == ((0, 8), (8, 1))
    # A producer of both protocols with a typestr that is no string is refused, not a TypeError.
    class BothBad:
        __cuda_array_interface__ = {"data": (0, False), "shape": (0,), "typestr": ["<f4"], "version": 3}

        def __dlpack__(self, stream=None):
            raise AssertionError("a typestr that is no string is refused first")

    refused(lambda: rk.rms_norm(BothBad(), Cai(), Cai(), 1e-6),
            "kernel rms_norm: argument `x` has typestr ['<f4'], which imac does not know")
    # Extents through __index__ (numpy's integers) are extents.
    class Index:
        def __index__(self):
            return 0

    assert _imac.describe_cai("x", Cai(shape=(Index(), 8)).__cuda_array_interface__, ValueError)[2] == (0, 8)


def test_a_zero_size_array_is_on_no_device():
    # Its address is 0, which names no device: described with none, it takes the launch's
    # (the first argument's that has one), instead of device 0's.
    assert _imac.describe_cai("x", Cai().__cuda_array_interface__, ValueError, lambda p: 1)[4] is None
    assert _imac.describe_cai("x", Cai(data=(0x1000, False), shape=(2, 8)).__cuda_array_interface__,
                              ValueError, lambda p: 1)[4] == 1


@contextlib.contextmanager
def torch_whose_from_dlpack_gives(tensor):
    """A stand-in for torch, while the block runs, whose from_dlpack gives `tensor`."""
    import types

    saved = sys.modules.get("torch")
    sys.modules["torch"] = types.SimpleNamespace(from_dlpack=lambda t: tensor)
    try:
        yield
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved


def test_a_dlpack_producer_needs_torch_and_cuda_memory():
    class Host:
        def __dlpack__(self, stream=None):
            raise AssertionError("not asked without torch")

    # In a process where torch cannot be imported.
    script = """
import sys
sys.modules["torch"] = None
import rmsnorm_kernels as rk
from test_cpu import Cai

class Host:
    def __dlpack__(self, stream=None):
        raise AssertionError("not asked without torch")

try:
    rk.rms_norm(Host(), Cai(), Cai(), 1e-6)
except rk.ContractError as e:
    print(e)
"""
    here = str(pathlib.Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=here + ":" + os.environ.get("PYTHONPATH", "")))
    assert out.stdout.strip() == (
        "kernel rms_norm: argument `x` is a Host read through __dlpack__, which needs torch "
        "(torch.from_dlpack); install torch, or pass an object with __cuda_array_interface__"
    ), (out.stdout, out.stderr)

    # Through a torch whose from_dlpack gives host memory (a numpy array's, a CPU tensor's).
    class Device:
        type = "cpu"

        def __str__(self):
            return "cpu"

    with torch_whose_from_dlpack_gives(type("Tensor", (), {"device": Device()})()):
        refused(
            lambda: _imac.foreign(Host(), "kernel rms_norm: argument `x`", rk.ContractError, None),
            "kernel rms_norm: argument `x` is a Host whose memory is on cpu, not a CUDA device",
        )


def test_an_interface_without_a_typestr_imac_knows_goes_through_dlpack():
    # bf16 and fp8 have no typestr: a producer with both protocols is read through DLPack.
    class Both:
        __cuda_array_interface__ = {"data": (0x1000, False), "shape": (4,), "typestr": "<V2", "version": 3}

        def __dlpack__(self, stream=None):
            raise AssertionError("from_dlpack is the fake's")

    import types
    marker = type("Tensor", (), {"device": types.SimpleNamespace(type="cuda")})()
    with torch_whose_from_dlpack_gives(marker):
        assert _imac.foreign(Both(), "x", rk.ContractError, None) is marker


def test_output_shapes_read_an_interface_s_shape():
    assert rk.rms_norm_output_shapes(Cai(shape=(7, 64)), Cai(shape=(64,)), 1e-6) == ((7, 64),)


def test_an_output_extent_negative_for_the_inputs_is_refused():
    # What NAME_output_shapes returns through (an extent `B1 - 1` with no offsets given):
    # refused by the spec's text, where torch would refuse the allocation without it.
    refused(
        lambda: _imac.output_shape("kernel k: argument `y`", (-1, 4), ("B1 - 1", "D"), rk.ContractError),
        "kernel k: argument `y` has extent B1 - 1 = -1 for these inputs: the spec's constraints do not hold",
    )
    assert _imac.output_shape("y", (0, 4), ("B1 - 1", "D"), rk.ContractError) == (0, 4)


def test_quant_weight_numbers_are_ints():
    parts = dict(qweight=Shaped(16, 96), qzeros=Shaped(4, 12), scales=Shaped(4, 96))
    quant_refused("group_size is True, not an int", "gptq", group_size=True, **parts)
    quant_refused("group_size is 32.0, not an int", "gptq", group_size=32.0, **parts)
    quant_refused("k is True, not an int", "gptq", group_size=32, k=True, **parts)
    quant_refused("qweight has shape (-16, 96), not extents", "gptq", group_size=32,
                  **dict(parts, qweight=Shaped(-16, 96)))


if __name__ == "__main__":
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")]
    for name, f in tests:
        f()
        print(f"ok {name}")
    print(f"{len(tests)} passed")
    sys.exit(0)
