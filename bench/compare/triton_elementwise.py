"""kiln's elementwise samples written in Triton: vector add and seeded dropout.

Both follow Triton's tutorials (01 vector add, 04 low-memory dropout); the
dropout keeps an element when its Philox draw for `offset + index` is at least
p and scales it by 1 / (1 - p) in f32, as kiln's dropout does, so that the two
agree element for element on a GPU.
"""

import triton
import triton.language as tl


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offsets < n
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    y = tl.load(y_ptr + offsets, mask=in_bounds)
    tl.store(out_ptr + offsets, x + y, mask=in_bounds)


@triton.jit
def dropout(x_ptr, out_ptr, n, p, seed, offset, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offsets < n
    x = tl.load(x_ptr + offsets, mask=in_bounds).to(tl.float32)
    keep = tl.rand(seed, offset + offsets) >= p
    scale = 1.0 / (1.0 - p)
    tl.store(out_ptr + offsets, tl.where(keep, x * scale, 0.0).to(out_ptr.dtype.element_ty), mask=in_bounds)
