"""The DLManagedTensor behind any object with __dlpack__ (NumPy arrays, torch tensors, ...)."""

import ctypes

import numpy

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def exportable_input(value):
    """`value`, or a copy of it for a read-only NumPy array, which NumPy
    exports only through versioned DLPack (which kiln does not take)."""
    if isinstance(value, numpy.ndarray) and not value.flags.writeable:
        return value.copy()
    return value


def borrow(value, position):
    """(capsule, address of its DLManagedTensor) for `value`. The capsule keeps
    ownership (its destructor releases the tensor), so it must outlive the
    launch that reads the address; kiln never calls the deleter."""
    if not hasattr(value, "__dlpack__"):
        raise TypeError(f"kiln: argument {position} is a {type(value).__name__}, which has no __dlpack__")
    if isinstance(value, numpy.ndarray) and not value.flags.writeable:
        raise TypeError(
            f"kiln: argument {position} is a read-only NumPy array, which NumPy exports only through versioned"
            " DLPack; pass a writeable copy (numpy.array(x))"
        )
    capsule = value.__dlpack__()
    if not _is_valid(capsule, b"dltensor"):
        raise TypeError(f"kiln: argument {position}: __dlpack__ did not return an unused 'dltensor' capsule")
    return capsule, _get_pointer(capsule, b"dltensor")
