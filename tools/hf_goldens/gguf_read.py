"""A minimal GGUF reader (numpy) for the golden scripts: metadata and F32/F16
tensors. Independent of Strata's C++ reader on purpose: the goldens check that
the HF model and Strata read the same weights from the same file."""
import struct

import numpy as np

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_TENSOR_DTYPES = {0: np.float32, 1: np.float16}


class _Cursor:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self):
        n = self.take("<Q")
        s = bytes(self.data[self.pos:self.pos + n]).decode("utf-8")
        self.pos += n
        return s

    def value(self, vtype):
        if vtype in _SCALARS:
            return self.take(_SCALARS[vtype])
        if vtype == 8:
            return self.string()
        if vtype == 9:
            item_type, n = self.take("<I"), self.take("<Q")
            return [self.value(item_type) for _ in range(n)]
        raise ValueError(f"unknown GGUF value type {vtype}")


def read_gguf(path):
    """Returns (metadata dict, {name: numpy array in HF/row-major shape})."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    c = _Cursor(data)
    assert c.take("<I") == 0x46554747, "not a GGUF file"
    version = c.take("<I")
    assert version in (2, 3), f"GGUF version {version}"
    n_tensors, n_kv = c.take("<Q"), c.take("<Q")
    meta = {}
    for _ in range(n_kv):
        key = c.string()
        meta[key] = c.value(c.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        n_dims = c.take("<I")
        dims = [c.take("<Q") for _ in range(n_dims)]
        ttype, offset = c.take("<I"), c.take("<Q")
        infos.append((name, dims, ttype, offset))
    align = meta.get("general.alignment", 32)
    start = (c.pos + align - 1) // align * align
    tensors = {}
    for name, dims, ttype, offset in infos:
        if ttype not in _TENSOR_DTYPES:
            continue  # quantized: the goldens only read F32 / F16 files
        dtype = _TENSOR_DTYPES[ttype]
        count = int(np.prod(dims))
        raw = np.frombuffer(data, dtype=dtype, count=count, offset=start + offset)
        # ggml dims are innermost first; numpy wants outermost first.
        tensors[name] = raw.reshape(list(reversed(dims))).astype(np.float64)
    return meta, tensors
