"""Loads libkiln_c.so (the C API, kiln/kiln.h) and declares its functions for ctypes."""

import ctypes
import os
import pathlib


class KilnError(Exception):
    """A failed C API call: `status` is its kiln_status name, the message its kiln_last_error()."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class DLPackArgument(ctypes.Structure):
    """kiln_argument: a kind and a union of a DLManagedTensor*, an int64 and a double."""

    class Value(ctypes.Union):
        _fields_ = [("tensor", ctypes.c_void_p), ("int_value", ctypes.c_int64), ("float_value", ctypes.c_double)]

    _fields_ = [("kind", ctypes.c_int), ("value", Value)]


ARGUMENT_TENSOR, ARGUMENT_INT, ARGUMENT_FLOAT = 0, 1, 2
_LIBRARY_NAME = "libkiln_c.so"


def _candidates():
    """Where libkiln_c.so may be: $KILN_C_LIBRARY, the build folder of the
    source tree this package lies in, then the dynamic loader's search path."""
    if os.environ.get("KILN_C_LIBRARY"):
        return [os.environ["KILN_C_LIBRARY"]]
    source_tree = pathlib.Path(__file__).resolve().parents[2]
    return [str(source_tree / "build" / "capi" / _LIBRARY_NAME), _LIBRARY_NAME]


def _load():
    tried = []
    for candidate in _candidates():
        try:
            return ctypes.CDLL(candidate)
        except OSError as error:
            tried.append(f"{candidate} ({error})")
    raise ImportError(f"kiln: cannot load {_LIBRARY_NAME}; set KILN_C_LIBRARY to its path. Tried: " + "; ".join(tried))


def _declare(library):
    status = ctypes.c_int
    pointer = ctypes.c_void_p
    signatures = {
        "kiln_last_error": (ctypes.c_char_p, []),
        "kiln_status_name": (ctypes.c_char_p, [status]),
        "kiln_device_open": (status, [ctypes.c_char_p, ctypes.POINTER(pointer)]),
        "kiln_device_close": (status, [pointer]),
        "kiln_device_name": (status, [pointer, ctypes.POINTER(ctypes.c_char_p)]),
        "kiln_kernel_from_library": (status, [ctypes.c_char_p, ctypes.POINTER(pointer)]),
        "kiln_kernel_from_ir": (status, [ctypes.c_char_p, ctypes.POINTER(pointer)]),
        "kiln_kernel_release": (status, [pointer]),
        "kiln_kernel_name": (status, [pointer, ctypes.POINTER(ctypes.c_char_p)]),
        "kiln_launch": (
            status,
            [pointer, pointer, ctypes.POINTER(DLPackArgument), ctypes.c_size_t, ctypes.POINTER(ctypes.c_int32)],
        ),
    }
    for name, (result, arguments) in signatures.items():
        function = getattr(library, name)
        function.restype = result
        function.argtypes = arguments
    return library


library = _declare(_load())


def check(status):
    """Raises KilnError with the C API's message unless `status` is KILN_OK."""
    if status != 0:
        raise KilnError(library.kiln_status_name(status).decode(), library.kiln_last_error().decode())
