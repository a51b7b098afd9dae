"""kiln's row-wise samples written in Triton: softmax, layer norm forward and
backward, RMS norm.

The algorithms are those of Triton's tutorials: 02 (a persistent softmax, one
whole row per tile, rows strided over the programs), 05 (layer norm: the
forward loops over the row in BLOCK_N chunks; the backward sums dw and db into
GROUP_M partial rows under a spin lock, then reduces them). RMS norm has no
tutorial; it is the layer-norm forward without the mean, one row per tile, as
Triton users write it. Statistics are f32, like kiln's.
"""

import triton
import triton.language as tl


@triton.jit
def softmax(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr,
            NUM_STAGES: tl.constexpr):
    first_row = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row in tl.range(first_row, n_rows, row_step, num_stages=NUM_STAGES):
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=in_row, other=-float("inf")).to(tl.float32)
        shifted = x - tl.max(x, axis=0)
        numerator = tl.exp(shifted)
        result = numerator / tl.sum(numerator, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, result.to(out_ptr.dtype.element_ty), mask=in_row)


@triton.jit
def layer_norm_forward(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, row_stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    partial_sum = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        partial_sum += tl.load(x_row + cols, mask=cols < n, other=0.0).to(tl.float32)
    mean = tl.sum(partial_sum, axis=0) / n
    partial_squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n, other=0.0).to(tl.float32)
        centred = tl.where(cols < n, x - mean, 0.0)
        partial_squares += centred * centred
    rstd = 1.0 / tl.sqrt(tl.sum(partial_squares, axis=0) / n + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        in_row = cols < n
        w = tl.load(w_ptr + cols, mask=in_row).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=in_row).to(tl.float32)
        x = tl.load(x_row + cols, mask=in_row, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=in_row)


@triton.jit
def layer_norm_backward_dx(dx_ptr, dy_ptr, partial_dw_ptr, partial_db_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr,
                           locks_ptr, row_stride, n, GROUP_M: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    in_row = cols < n
    x = tl.load(x_ptr + row * row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=in_row).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    x_hat = tl.where(in_row, (x - mean) * rstd, 0.0)
    w_dy = tl.where(in_row, w * dy, 0.0)
    mean_x_hat_w_dy = tl.sum(x_hat * w_dy, axis=0) / n
    mean_w_dy = tl.sum(w_dy, axis=0) / n
    dx = (w_dy - (x_hat * mean_x_hat_w_dy + mean_w_dy)) * rstd
    tl.store(dx_ptr + row * row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=in_row)
    # This row's dw and db go into partial row `row % GROUP_M`, under that
    # row's lock; the first writer of a partial row stores, the others add.
    group = row % GROUP_M
    lock = locks_ptr + group
    count = locks_ptr + GROUP_M + group
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    partial_dw = dy * x_hat
    partial_db = dy
    first_writer = tl.load(count) == 0
    if first_writer:
        tl.atomic_xchg(count, 1)
    else:
        partial_dw += tl.load(partial_dw_ptr + group * n + cols, mask=in_row)
        partial_db += tl.load(partial_db_ptr + group * n + cols, mask=in_row)
    tl.store(partial_dw_ptr + group * n + cols, partial_dw, mask=in_row)
    tl.store(partial_db_ptr + group * n + cols, partial_db, mask=in_row)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def layer_norm_backward_dwdb(partial_dw_ptr, partial_db_ptr, dw_ptr, db_ptr, groups, n, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, groups, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < groups) & (cols[None, :] < n)
        offsets = rows[:, None] * n + cols[None, :]
        dw += tl.load(partial_dw_ptr + offsets, mask=mask, other=0.0)
        db += tl.load(partial_db_ptr + offsets, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0), mask=cols < n)
    tl.store(db_ptr + cols, tl.sum(db, axis=0), mask=cols < n)


@triton.jit
def rms_norm_forward(x_ptr, y_ptr, w_ptr, rstd_ptr, row_stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    in_row = cols < n
    x = tl.load(x_ptr + row * row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + cols, mask=in_row).to(tl.float32)
    tl.store(y_ptr + row * row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=in_row)
