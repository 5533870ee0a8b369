"""CPU checks of a generated Python package (no GPU, no torch needed).

Run after installing the wheel of specs/rmsnorm.ima (scripts/python-wheel does both):
    python3 tests/python/test_cpu.py
"""

import ast
import pathlib
import sys

import rmsnorm_kernels as rk
from rmsnorm_kernels import _imac


def test_exceptions_subclass_the_builtin_ones():
    assert issubclass(rk.ContractError, ValueError)
    assert issubclass(rk.DeviceError, RuntimeError)


def test_one_function_per_kernel_with_spec_names():
    import inspect

    assert list(inspect.signature(rk.rms_norm).parameters) == ["x", "w", "y", "eps"]
    assert "x (in): bf16 [N, D], contiguous, 16-byte aligned" in rk.rms_norm.__doc__
    assert rk.SPEC_FILE == "specs/rmsnorm.ima"


def test_output_shapes_follow_the_spec():
    class Shaped:
        def __init__(self, *shape):
            self.shape = shape

    assert rk.rms_norm_output_shapes(Shaped(7, 64), Shaped(64), 1e-6) == ((7, 64),)


def test_describes_a_cuda_array_interface():
    # A 3 x 4 f32 array seen transposed (strides in bytes), at address 0x1000.
    cai = {"data": (0x1000, False), "shape": (4, 3), "strides": (4, 16), "typestr": "<f4", "version": 3}
    d = _imac.describe_cai("k", "x", cai, ValueError)
    assert d == (0x1000, 12, "f32", (4, 3), (1, 4), 0, 0)
    # Reversed rows: the buffer starts 2 rows before the first element.
    cai = {"data": (0x1000, False), "shape": (3, 4), "strides": (-16, 4), "typestr": "<f4", "version": 3}
    base, length, _, _, strides, offset, _ = _imac.describe_cai("k", "x", cai, ValueError)
    assert (base, length, strides, offset) == (0x1000 - 32, 12, (-4, 1), 8)
    # Contiguous when strides are None.
    cai = {"data": (0x2000, False), "shape": (2, 5), "strides": None, "typestr": "<f2", "version": 3}
    assert _imac.describe_cai("k", "x", cai, ValueError)[4] == (5, 1)


def test_refuses_what_is_not_device_memory():
    try:
        rk.rms_norm([1.0], [1.0], [0.0], 1e-6)
    except rk.ContractError as e:
        assert isinstance(e, ValueError)
        assert "argument `x` is a list, not a device tensor" in str(e), str(e)
    else:
        raise AssertionError("a list was launched")


def test_refuses_an_unknown_typestr():
    cai = {"data": (0x1000, False), "shape": (4,), "strides": None, "typestr": "<c8", "version": 3}
    try:
        _imac.describe_cai("rms_norm", "x", cai, rk.ContractError)
    except rk.ContractError as e:
        assert "typestr '<c8'" in str(e)
    else:
        raise AssertionError("accepted")


def test_stubs_parse():
    pyi = pathlib.Path(rk.__file__).with_name("__init__.pyi").read_text()
    tree = ast.parse(pyi)
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"rms_norm", "rms_norm_output_shapes", "set_checked", "check_deferred"} <= names


def test_modes_are_settable_without_a_gpu():
    rk.set_checked("deferred")
    rk.set_checked("off")
    rk.set_sync(False)
    try:
        rk.set_checked("sometimes")
    except ValueError as e:
        assert "off, wait or deferred" in str(e)
    else:
        raise AssertionError("accepted")


if __name__ == "__main__":
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")]
    for name, f in tests:
        f()
        print(f"ok {name}")
    print(f"{len(tests)} passed")
    sys.exit(0)
