"""Devices, kernels and launches over the C API."""

import ctypes
import numbers
import threading

import numpy

from . import _dlpack
from ._library import ARGUMENT_FLOAT, ARGUMENT_INT, ARGUMENT_TENSOR, DLPackArgument, check, library


class Device:
    """An open kiln device: "cpu", "emu", "cpu:N", "emu:N", "cuda", "cuda:N"."""

    def __init__(self, name):
        handle = ctypes.c_void_p()
        check(library.kiln_device_open(name.encode(), ctypes.byref(handle)))
        self._handle = handle
        opened = ctypes.c_char_p()
        check(library.kiln_device_name(handle, ctypes.byref(opened)))
        self.name = opened.value.decode()

    _close = library.kiln_device_close  # kept here: module globals may be gone when __del__ runs at exit

    def __del__(self):
        if getattr(self, "_handle", None):
            self._close(self._handle)

    def __repr__(self):
        return f"kiln.Device({self.name!r})"


_devices = {}
_devices_lock = threading.Lock()


def _device(device):
    """A Device for a Device or a name (one open Device per name, kept)."""
    if isinstance(device, Device):
        return device
    with _devices_lock:
        if device not in _devices:
            _devices[device] = Device(device)
        return _devices[device]


def _argument(value, position, keep):
    """The kiln_argument for a tensor (anything with __dlpack__), an int or a float."""
    argument = DLPackArgument()
    if isinstance(value, (bool, numbers.Integral)):
        argument.kind = ARGUMENT_INT
        argument.value.int_value = int(value)
    elif isinstance(value, numbers.Real):
        argument.kind = ARGUMENT_FLOAT
        argument.value.float_value = float(value)
    else:
        capsule, address = _dlpack.borrow(value, position)
        keep.append(capsule)
        argument.kind = ARGUMENT_TENSOR
        argument.value.tensor = address
    return argument


def _device_of(arguments):
    """The device for tensors where they live: "cuda" / "cuda:N" for GPU
    memory (DLPack kDLCUDA or kDLCUDAManaged), else "cpu"."""
    for value in arguments:
        if hasattr(value, "__dlpack_device__"):
            device_type, device_id = value.__dlpack_device__()
            if int(device_type) in (2, 13):
                return "cuda" if device_id == 0 else f"cuda:{device_id}"
            return "cpu"
    return "cpu"


class Kernel:
    """A compiled kernel: one of the sample library's (from_library) or tile-IR text (from_ir)."""

    def __init__(self, handle):
        self._handle = handle
        name = ctypes.c_char_p()
        check(library.kiln_kernel_name(handle, ctypes.byref(name)))
        self.name = name.value.decode()

    @classmethod
    def from_library(cls, name):
        """The library kernel `name`: "softmax", "matmul" or "vector_add" (kiln/kiln.h)."""
        handle = ctypes.c_void_p()
        check(library.kiln_kernel_from_library(name.encode(), ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def from_ir(cls, text):
        """A kernel from the tile IR's text form (ir/OPS.md)."""
        handle = ctypes.c_void_p()
        check(library.kiln_kernel_from_ir(text.encode(), ctypes.byref(handle)))
        return cls(handle)

    _release = library.kiln_kernel_release  # kept here: module globals may be gone when __del__ runs at exit

    def __del__(self):
        if getattr(self, "_handle", None):
            self._release(self._handle)

    def __repr__(self):
        return f"kiln.Kernel({self.name!r})"

    def launch(self, *arguments, grid=None, device=None):
        """Runs the kernel on `device` (a name or a Device; by default "cpu",
        or "cuda" for tensors in GPU memory) and returns when it has finished.
        Tensors (objects with __dlpack__) are used in place; ints and floats
        are scalars. `grid`, for IR kernels, is the number of programs: an
        int or a tuple of up to three. On "cuda" kiln uses a stream of its
        own: synchronize first (torch.cuda.synchronize()) when another
        library's work on the tensors may still be running."""
        keep = []  # the capsules, alive until the launch returns
        packed = (DLPackArgument * max(len(arguments), 1))(
            *[_argument(value, i, keep) for i, value in enumerate(arguments)]
        )
        grid_values = None
        if grid is not None:
            sizes = (grid,) if isinstance(grid, numbers.Integral) else tuple(grid)
            if not 1 <= len(sizes) <= 3:
                raise ValueError(f"kiln: the grid {grid!r} has {len(sizes)} numbers, give 1 to 3")
            grid_values = (ctypes.c_int32 * 3)(*(list(sizes) + [1] * (3 - len(sizes))))
        if device is None:
            device = _device_of(arguments)
        check(library.kiln_launch(_device(device)._handle, self._handle, packed, len(arguments), grid_values))


def _like(template, shape, dtype=None):
    """An empty array of `shape` of the kind and dtype of `template`: a NumPy
    array, or (for torch tensors and alike) through its new_empty."""
    if isinstance(template, numpy.ndarray):
        return numpy.empty(shape, dtype=template.dtype if dtype is None else dtype)
    if hasattr(template, "new_empty"):
        return template.new_empty(shape)
    raise TypeError(f"kiln.run: cannot make an output like a {type(template).__name__}; pass out=")


def _matmul_shape(a, b):
    """(rows of a, columns of b); for other ranks a's shape, which the C API
    then rejects with a message naming a or b."""
    if len(a.shape) == 2 and len(b.shape) == 2:
        return (a.shape[0], b.shape[1])
    return tuple(a.shape)


# For each library kernel: how many inputs, and the output's shape from them.
_OUTPUT_SHAPES = {
    "softmax": (1, lambda x: tuple(x.shape)),
    "matmul": (2, _matmul_shape),
    "vector_add": (2, lambda x, y: tuple(x.shape)),
}
_kernels = {}


def run(name, *inputs, device=None, out=None):
    """Runs the library kernel `name` on `inputs` and returns its output: `out`
    when given, else a new array like the first input (a NumPy array for
    NumPy inputs). kiln.run("softmax", x) is the softmax of each row of x.
    `device` as for Kernel.launch.
    Read-only NumPy inputs are copied (NumPy exports them only through
    versioned DLPack); every other tensor is used in place."""
    if name not in _OUTPUT_SHAPES:
        Kernel.from_library(name)  # raises the C API's message naming the kernels there are
        raise ValueError(f"kiln.run: no output rule for {name!r}; launch Kernel.from_library({name!r}) with out")
    count, output_shape = _OUTPUT_SHAPES[name]
    if len(inputs) != count:
        raise TypeError(f"kiln.run: {name} takes {count} input(s), {len(inputs)} were given")
    if out is None:
        out = _like(inputs[0], output_shape(*inputs))
    if name not in _kernels:
        _kernels[name] = Kernel.from_library(name)
    _kernels[name].launch(*[_dlpack.exportable_input(x) for x in inputs], out, device=device)
    return out
