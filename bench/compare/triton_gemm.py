"""kiln's GEMM samples written in Triton: matmul with a bias + GELU + dropout
epilogue, and conv2d + batchnorm + SiLU as an implicit GEMM.

The matmul is Triton's tutorial 03 (grouped tile order, a K loop of tl.dot
into an f32 accumulator, the activation fused before the one store) with
kiln's epilogue: bias per column, exact (erf) GELU, dropout of element (i, j)
drawn at offset + i * n + j. The convolution is the same loop over the
im2col matrix, which is never materialised: each [BLOCK_M x BLOCK_K] tile is
gathered from the NCHW input (weights [k, c, r, s], output NCHW, as kiln's
sample), and the per-channel scale and shift of the folded batchnorm and the
SiLU are applied to the accumulator.
"""

import triton
import triton.language as tl


@triton.jit
def matmul_bias_gelu_dropout(a_ptr, b_ptr, c_ptr, bias_ptr, m, n, k, stride_am, stride_ak, stride_bk, stride_bn,
                             stride_cm, stride_cn, p, seed, offset, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, EPILOGUE: tl.constexpr):
    # Grouped order: GROUP_M tile rows share the B tiles they read in L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(m, BLOCK_M)
    tiles_n = tl.cdiv(n, BLOCK_N)
    tiles_per_group = GROUP_M * tiles_n
    first_tile_m = (pid // tiles_per_group) * GROUP_M
    group_rows = min(tiles_m - first_tile_m, GROUP_M)
    tile_m = first_tile_m + (pid % tiles_per_group) % group_rows
    tile_n = (pid % tiles_per_group) // group_rows

    # Rows and columns wrap around instead of being masked; the store masks.
    rows_a = (tile_m * BLOCK_M + tl.arange(0, BLOCK_M)) % m
    cols_b = (tile_n * BLOCK_N + tl.arange(0, BLOCK_N)) % n
    ks = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rows_a[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols_b[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(k, BLOCK_K)):
        k_left = k - step * BLOCK_K
        a = tl.load(a_tile, mask=ks[None, :] < k_left, other=0.0)
        b = tl.load(b_tile, mask=ks[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    y = acc
    if EPILOGUE:
        y += tl.load(bias_ptr + cols, mask=cols < n).to(tl.float32)[None, :]
        y = 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476))
        keep = tl.rand(seed, offset + rows[:, None] * n + cols[None, :]) >= p
        y = tl.where(keep, y * (1.0 / (1.0 - p)), 0.0)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, y.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def conv2d_bn_silu(x_ptr, w_ptr, scale_ptr, shift_ptr, y_ptr, batch, channels, height, width, out_channels,
                   out_height, out_width, kernel_h, kernel_w, stride, pad, dilation, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TAPS_OUTER: tl.constexpr):
    out_plane = out_height * out_width
    positions = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    image = positions // out_plane
    pq = positions % out_plane
    position_valid = positions < batch * out_plane
    image_base = image * (channels * height * width)
    top = (pq // out_width) * stride - pad
    left = (pq % out_width) * stride - pad
    out_ch = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    out_ch_valid = out_ch < out_channels
    taps = kernel_h * kernel_w
    reduction = channels * taps
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if TAPS_OUTER:
        # The taps outside, the channels BLOCK_K at a time inside: each tap's
        # window offsets and padding masks once, no division in the inner loop.
        plane = height * width
        for tap in range(0, taps):
            ih = top + (tap // kernel_w) * dilation
            iw = left + (tap % kernel_w) * dilation
            in_image = position_valid & (ih >= 0) & (ih < height) & (iw >= 0) & (iw < width)
            pixels = image_base + ih * width + iw
            for start in range(0, channels, BLOCK_K):
                cs = start + tl.arange(0, BLOCK_K)
                c_valid = cs < channels
                a = tl.load(x_ptr + pixels[:, None] + (cs * plane)[None, :], mask=in_image[:, None] & c_valid[None, :],
                            other=0.0)
                b = tl.load(w_ptr + out_ch[None, :] * reduction + (cs * taps + tap)[:, None],
                            mask=c_valid[:, None] & out_ch_valid[None, :], other=0.0)
                acc = tl.dot(a, b, acc)
    else:
        # The terms c r s in order: each term's channel, kernel row and kernel
        # column found by division once, then advanced BLOCK_K terms a step
        # with carries, as kiln's flat order does (conv2d_gemm.hpp).
        plane = height * width
        corner = image_base + top * width + left
        first = tl.arange(0, BLOCK_K)
        channel = first // taps
        kernel_row = (first // kernel_w) % kernel_h
        kernel_col = first % kernel_w
        step_channel = BLOCK_K // taps
        step_row = (BLOCK_K // kernel_w) % kernel_h
        step_col = BLOCK_K % kernel_w
        for start in range(0, reduction, BLOCK_K):
            terms = start + first
            term_valid = terms < reduction
            dr = kernel_row * dilation
            ds = kernel_col * dilation
            ih = top[:, None] + dr[None, :]
            iw = left[:, None] + ds[None, :]
            a_mask = (position_valid[:, None] & term_valid[None, :] & (ih >= 0) & (ih < height) & (iw >= 0) &
                      (iw < width))
            a = tl.load(x_ptr + corner[:, None] + (channel * plane + dr * width + ds)[None, :], mask=a_mask,
                        other=0.0)
            b_mask = term_valid[:, None] & out_ch_valid[None, :]
            b = tl.load(w_ptr + out_ch[None, :] * reduction + terms[:, None], mask=b_mask, other=0.0)
            acc = tl.dot(a, b, acc)
            col = kernel_col + step_col
            col_carry = col >= kernel_w
            kernel_col = tl.where(col_carry, col - kernel_w, col)
            row = kernel_row + step_row + col_carry.to(tl.int32)
            row_carry = row >= kernel_h
            kernel_row = tl.where(row_carry, row - kernel_h, row)
            channel = channel + step_channel + row_carry.to(tl.int32)
    channel_scale = tl.load(scale_ptr + out_ch, mask=out_ch_valid)
    channel_shift = tl.load(shift_ptr + out_ch, mask=out_ch_valid)
    z = acc * channel_scale[None, :] + channel_shift[None, :]
    y = z * tl.sigmoid(z)
    out_offsets = (image * (out_channels * out_plane) + pq)[:, None] + (out_ch * out_plane)[None, :]
    mask = position_valid[:, None] & out_ch_valid[None, :]
    tl.store(y_ptr + out_offsets, y.to(y_ptr.dtype.element_ty), mask=mask)
