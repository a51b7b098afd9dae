"""kiln's attention forward written in Triton.

The algorithm of Triton's tutorial 06 (fused attention): one program per
BLOCK_M query rows of one head, an online softmax in base 2 over BLOCK_N key
blocks, the causal case in two stages (the blocks left of the diagonal without
a mask, then the diagonal blocks with it). Pointers, not tensor descriptors, so
the kernel runs on any GPU Triton supports. Q, K, V and O are [batch, heads,
seq, head_dim] and contiguous; seq is a multiple of BLOCK_M and BLOCK_N (the
host checks). The natural-log log-sum-exp of each query row is stored too, as
kiln's kernel does.
"""

import triton
import triton.language as tl


@triton.jit
def _attend_blocks(acc, row_sum, row_max, q, k_head, v_head, rows, lo, hi, qk_scale, BLOCK_N: tl.constexpr,
                   HEAD_DIM: tl.constexpr, DIAGONAL: tl.constexpr):
    dims = tl.arange(0, HEAD_DIM)
    for start in tl.range(lo, hi, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k_t = tl.load(k_head + keys[None, :] * HEAD_DIM + dims[:, None])
        scores = tl.dot(q, k_t)
        if DIAGONAL:
            scores = tl.where(rows[:, None] >= keys[None, :], scores * qk_scale, -1.0e6)
        else:
            scores = scores * qk_scale
        new_max = tl.maximum(row_max, tl.max(scores, axis=1))
        weights = tl.math.exp2(scores - new_max[:, None])
        correction = tl.math.exp2(row_max - new_max)
        row_sum = row_sum * correction + tl.sum(weights, axis=1)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :])
        acc = tl.dot(weights.to(v.dtype), v, acc * correction[:, None])
        row_max = new_max
    return acc, row_sum, row_max


@triton.jit
def attention_forward(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, seq, heads, sm_scale, stride_batch, stride_head,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    block = tl.program_id(0)
    batch_head = tl.program_id(1)
    head_offset = (batch_head // heads) * stride_batch + (batch_head % heads) * stride_head
    q_head, k_head, v_head, o_head = q_ptr + head_offset, k_ptr + head_offset, v_ptr + head_offset, o_ptr + head_offset
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :])
    qk_scale = sm_scale * 1.4426950408889634  # scores in base-2 units
    row_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    row_sum = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        acc, row_sum, row_max = _attend_blocks(acc, row_sum, row_max, q, k_head, v_head, rows, 0, block * BLOCK_M,
                                               qk_scale, BLOCK_N, HEAD_DIM, False)
        acc, row_sum, row_max = _attend_blocks(acc, row_sum, row_max, q, k_head, v_head, rows, block * BLOCK_M,
                                               (block + 1) * BLOCK_M, qk_scale, BLOCK_N, HEAD_DIM, True)
    else:
        acc, row_sum, row_max = _attend_blocks(acc, row_sum, row_max, q, k_head, v_head, rows, 0, seq, qk_scale,
                                               BLOCK_N, HEAD_DIM, False)
    # row_sum started at 1 with row_max at -inf: the first block's correction
    # exp2(-inf) = 0 clears it.
    lse = (row_max + tl.math.log2(row_sum)) * 0.6931471805599453
    tl.store(lse_ptr + batch_head * seq + rows, lse)
    tl.store(o_head + rows[:, None] * HEAD_DIM + dims[None, :], (acc / row_sum[:, None]).to(o_ptr.dtype.element_ty))
