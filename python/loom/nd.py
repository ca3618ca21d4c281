"""Arrays (TVM's ``tvm.nd``): ``array(numpy_array)``, ``empty(shape, dtype)``, DLPack import and
export, ``.numpy()``.

``array(a)`` shares ``a``'s memory (no copy) when it is C-contiguous, writeable and aligned to
``loom.nd.ALIGNMENT`` bytes, as compiled kernels require; otherwise it copies into aligned
storage. Compiled functions also take numpy arrays directly (see loom.runtime)."""
import numpy as _np

from . import _ffi

NDArray = _ffi.NDArray
ALIGNMENT = _ffi.alignment()


def array(arr, device=None, copy=False):
    """A loom.nd.NDArray of ``arr`` (a numpy array or anything numpy.asarray takes, or a DLPack
    producer). Zero-copy where alignment allows, unless ``copy``."""
    if isinstance(arr, NDArray):
        return _ffi.nd_array(arr.numpy(), True) if copy else arr
    if not isinstance(arr, _np.ndarray) and hasattr(arr, "__dlpack__") and not copy:
        return from_dlpack(arr)
    return _ffi.nd_array(_np.asarray(arr), copy)


def empty(shape, dtype="float32", device=None):
    """A new aligned array (zero-filled)."""
    return _ffi.nd_empty([int(s) for s in shape], str(dtype))


def from_dlpack(obj):
    """An array sharing the memory of a DLPack producer (an object with ``__dlpack__`` or a
    "dltensor" capsule); copied when not aligned for compiled kernels."""
    return _ffi.from_dlpack(obj)


def aligned_empty(shape, dtype="float32"):
    """A numpy array whose data is aligned for zero-copy use by compiled kernels."""
    dtype = _np.dtype(dtype)
    n = int(_np.prod(shape)) * dtype.itemsize
    raw = _np.empty(n + ALIGNMENT, dtype=_np.uint8)
    off = (-raw.ctypes.data) % ALIGNMENT
    return raw[off:off + n].view(dtype).reshape(shape)


def aligned_array(arr):
    """A copy of ``arr`` in aligned memory (see aligned_empty)."""
    arr = _np.asarray(arr)
    out = aligned_empty(arr.shape, arr.dtype)
    out[...] = arr
    return out
