"""Flash attention, forward and backward, in the style of upstream's fused-attention tutorial.

    O = softmax(Q K^T * sm_scale [+ causal mask]) V        Q, K, V, O: (B*H, S, D), fp16 or bf16

Forward: one program per (BLOCK_M rows of Q, head). It walks K and V BLOCK_N rows at a time
and keeps, per row, the running maximum m_i and the running sum l_i of exp(s - m_i)
(online softmax): when the maximum grows, the partial output and l_i are rescaled by
exp(m_old - m_new). The scale is folded into the exponent (exp2 of s * sm_scale * log2(e)
minus the running maximum: one fma per score). The probabilities P are cast to the input
type and fed straight into the second dot, P @ V. Blocks that need no mask (every key
in range and, if causal, strictly below the diagonal) run in a loop without one; the
diagonal band and the last partial block run a masked copy of the same step. The row
statistics m_i + log2(l_i) are saved for the backward.

Backward (upstream's two loops): a preprocessing kernel computes delta_i = sum_d O * dO.
Then, per (BLOCK_N rows of K/V, head), dV += P^T dO and dK += dS^T Q over the Q blocks
at or below the diagonal, recomputing P = exp2(s - lse) from the saved statistics
(dS = P * (dP - delta), dP = dO V^T); and per (BLOCK_M rows of Q, head), dQ += dS K over
the K/V blocks. Sequence lengths need not be block multiples.
"""

import numpy as np

import tritium
import tritium.language as tl

LOG2E = 1.4426950408889634  # 1 / ln(2): exp(x) = exp2(x * LOG2E)
# numpy has no bfloat16: its bits travel as uint16 and the kernels read them through *bf16
# (a global: the frontend does not evaluate tl.pointer_type inside a kernel)
BF16_PTR = tl.pointer_type(tl.bfloat16)


@tritium.jit
def _attn_fwd_step(
    acc, l_i, m_i, q, k_ptrs, v_ptrs, start_n, offs_m, offs_n, seq_len, qk_scale,
    MASKED: tl.constexpr, CAUSAL: tl.constexpr,
):  # fmt: skip
    """One BLOCK_N block of keys/values: scores, online-softmax update, P @ V."""
    if MASKED:
        kv_ok = (start_n + offs_n) < seq_len
        k = tl.load(k_ptrs, mask=kv_ok[:, None], other=0.0)
        v = tl.load(v_ptrs, mask=kv_ok[:, None], other=0.0)
    else:
        k = tl.load(k_ptrs)
        v = tl.load(v_ptrs)
    qk = tl.dot(q, tl.trans(k))
    if MASKED:
        keep = kv_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= (start_n + offs_n)[None, :])
        qk = qk * qk_scale + tl.where(keep, 0.0, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk = qk - m_ij[:, None]
    else:
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
    p = tl.math.exp2(qk)
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_ij


@tritium.jit
def attn_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, seq_len,
    stride_qh, stride_qs, stride_kh, stride_ks, stride_vh, stride_vs, stride_oh, stride_os,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
    BF16: tl.constexpr,
):  # fmt: skip
    if BF16:
        q_ptr = q_ptr.to(BF16_PTR, bitcast=True)
        k_ptr = k_ptr.to(BF16_PTR, bitcast=True)
        v_ptr = v_ptr.to(BF16_PTR, bitcast=True)
        o_ptr = o_ptr.to(BF16_PTR, bitcast=True)
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_ptr + head * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :]
    k_ptrs = k_ptr + head * stride_kh + offs_n[:, None] * stride_ks + offs_d[None, :]
    v_ptrs = v_ptr + head * stride_vh + offs_n[:, None] * stride_vs + offs_d[None, :]
    q = tl.load(q_ptrs, mask=(offs_m < seq_len)[:, None], other=0.0)

    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 instead of exp
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # keys every row of the block may see without a mask: all of them below the diagonal
    # band (causal), all whole blocks (otherwise); then the masked rest
    if CAUSAL:
        full_end = start_m * BLOCK_M
        end = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    else:
        full_end = seq_len // BLOCK_N * BLOCK_N
        end = seq_len
    for start_n in range(0, full_end, BLOCK_N):
        acc, l_i, m_i = _attn_fwd_step(
            acc, l_i, m_i, q, k_ptrs + start_n * stride_ks, v_ptrs + start_n * stride_vs,
            start_n, offs_m, offs_n, seq_len, qk_scale, False, CAUSAL,
        )  # fmt: skip
    for start_n in range(full_end, end, BLOCK_N):
        acc, l_i, m_i = _attn_fwd_step(
            acc, l_i, m_i, q, k_ptrs + start_n * stride_ks, v_ptrs + start_n * stride_vs,
            start_n, offs_m, offs_n, seq_len, qk_scale, True, CAUSAL,
        )  # fmt: skip

    acc = acc / l_i[:, None]
    row_ok = offs_m < seq_len
    tl.store(lse_ptr + head * seq_len + offs_m, m_i + tl.math.log2(l_i), mask=row_ok)
    o_ptrs = o_ptr + head * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :]
    tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])


@tritium.jit
def attn_bwd_preprocess_kernel(
    o_ptr, do_ptr, delta_ptr, seq_len, stride_oh, stride_os, stride_doh, stride_dos,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BF16: tl.constexpr,
):  # fmt: skip
    """delta = rowsum(O * dO), the softmax backward's correction term."""
    if BF16:
        o_ptr = o_ptr.to(BF16_PTR, bitcast=True)
        do_ptr = do_ptr.to(BF16_PTR, bitcast=True)
    head = tl.program_id(1).to(tl.int64)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < seq_len
    o = tl.load(o_ptr + head * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :],
                mask=row_ok[:, None], other=0.0)  # fmt: skip
    do = tl.load(do_ptr + head * stride_doh + offs_m[:, None] * stride_dos + offs_d[None, :],
                 mask=row_ok[:, None], other=0.0)  # fmt: skip
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), 1)
    tl.store(delta_ptr + head * seq_len + offs_m, delta, mask=row_ok)


@tritium.jit
def attn_bwd_dkdv_kernel(
    q_ptr, k_ptr, v_ptr, do_ptr, dk_ptr, dv_ptr, lse_ptr, delta_ptr, sm_scale, seq_len,
    stride_h, stride_s,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
    BF16: tl.constexpr,
):  # fmt: skip
    """dK and dV of BLOCK_N keys: a loop over the query blocks that see them. Works on the
    transposed scores (keys as rows), so P^T and dS^T feed the dots without a transpose.
    Q, K, V, dO, dK, dV share one layout (stride_h, stride_s; D contiguous)."""
    if BF16:
        q_ptr = q_ptr.to(BF16_PTR, bitcast=True)
        k_ptr = k_ptr.to(BF16_PTR, bitcast=True)
        v_ptr = v_ptr.to(BF16_PTR, bitcast=True)
        do_ptr = do_ptr.to(BF16_PTR, bitcast=True)
        dk_ptr = dk_ptr.to(BF16_PTR, bitcast=True)
        dv_ptr = dv_ptr.to(BF16_PTR, bitcast=True)
    head = tl.program_id(1).to(tl.int64)
    start_n = tl.program_id(0) * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = head * stride_h
    kv_ok = offs_n < seq_len
    kv_offs = offs_n[:, None] * stride_s + offs_d[None, :]
    k_ptr += base
    v_ptr += base
    dk_ptr += base
    dv_ptr += base
    k = tl.load(k_ptr + kv_offs, mask=kv_ok[:, None], other=0.0)
    v = tl.load(v_ptr + kv_offs, mask=kv_ok[:, None], other=0.0)
    # the head folded into the pointers: i32 offsets, one per row, shared by Q and dO (and
    # by K, V, dK, dV), not a 64-bit pointer per row and tensor live across the loop
    q_offs = offs_m[:, None] * stride_s + offs_d[None, :]
    q_ptr += base
    do_ptr += base
    qk_scale = sm_scale * 1.4426950408889634
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    lo = 0
    if CAUSAL:
        lo = start_n // BLOCK_M * BLOCK_M  # earlier queries see none of these keys
    for start_m in range(lo, seq_len, BLOCK_M):
        rows = start_m + offs_m
        row_ok = rows < seq_len
        offs = q_offs + start_m * stride_s
        q = tl.load(q_ptr + offs, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + offs, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + head * seq_len + rows, mask=row_ok, other=0.0)
        delta = tl.load(delta_ptr + head * seq_len + rows, mask=row_ok, other=0.0)
        keep = kv_ok[:, None] & row_ok[None, :]
        if CAUSAL:
            keep = keep & (rows[None, :] >= offs_n[:, None])
        s_t = tl.dot(k, tl.trans(q))  # scores, transposed: (keys, queries)
        p_t = tl.where(keep, tl.math.exp2(s_t * qk_scale - lse[None, :]), 0.0)
        dv += tl.dot(p_t.to(do.dtype), do)
        dp_t = tl.dot(v, tl.trans(do))
        ds_t = p_t * (dp_t - delta[None, :])
        dk += tl.dot(ds_t.to(q.dtype), q)
    dk = dk * sm_scale
    tl.store(dk_ptr + kv_offs, dk.to(dk_ptr.dtype.element_ty), mask=kv_ok[:, None])
    tl.store(dv_ptr + kv_offs, dv.to(dv_ptr.dtype.element_ty), mask=kv_ok[:, None])


@tritium.jit
def attn_bwd_dq_kernel(
    q_ptr, k_ptr, v_ptr, do_ptr, dq_ptr, lse_ptr, delta_ptr, sm_scale, seq_len,
    stride_h, stride_s,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
    BF16: tl.constexpr,
):  # fmt: skip
    """dQ of BLOCK_M queries: a loop over the key blocks they see."""
    if BF16:
        q_ptr = q_ptr.to(BF16_PTR, bitcast=True)
        k_ptr = k_ptr.to(BF16_PTR, bitcast=True)
        v_ptr = v_ptr.to(BF16_PTR, bitcast=True)
        do_ptr = do_ptr.to(BF16_PTR, bitcast=True)
        dq_ptr = dq_ptr.to(BF16_PTR, bitcast=True)
    head = tl.program_id(1).to(tl.int64)
    start_m = tl.program_id(0) * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = head * stride_h
    row_ok = offs_m < seq_len
    q_offs = base + offs_m[:, None] * stride_s + offs_d[None, :]
    q = tl.load(q_ptr + q_offs, mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + q_offs, mask=row_ok[:, None], other=0.0)
    lse = tl.load(lse_ptr + head * seq_len + offs_m, mask=row_ok, other=0.0)
    delta = tl.load(delta_ptr + head * seq_len + offs_m, mask=row_ok, other=0.0)
    kv_offs = base + offs_n[:, None] * stride_s + offs_d[None, :]
    qk_scale = sm_scale * 1.4426950408889634
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = seq_len
    if CAUSAL:
        hi = tl.minimum(start_m + BLOCK_M, seq_len)  # later keys are masked for every row
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kv_ok = cols < seq_len
        k = tl.load(k_ptr + kv_offs + start_n * stride_s, mask=kv_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv_offs + start_n * stride_s, mask=kv_ok[:, None], other=0.0)
        keep = kv_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        s = tl.dot(q, tl.trans(k))
        p = tl.where(keep, tl.math.exp2(s * qk_scale - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    dq = dq * sm_scale
    tl.store(dq_ptr + q_offs, dq.to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])


# --------------------------------------------------------------------------- host side
def _launch_args(x):
    """(array, stride per head, stride per row) in elements of a (heads, S, D) array whose
    last dim is contiguous."""
    item = x.itemsize
    assert x.strides[2] == item, "the head dim must be contiguous"
    return x, x.strides[0] // item, x.strides[1] // item


def attention_forward(q, k, v, causal=False, sm_scale=None, block_m=64, block_n=64,
                      num_warps=4, num_stages=3):  # fmt: skip
    """q, k, v: (heads, S, D) numpy fp16 arrays (or uint16 holding bf16 bits).
    Returns (o, lse): o like q, lse (heads, S) fp32 in log2 units."""
    heads, seq, d = q.shape
    sm_scale = float(1.0 / np.sqrt(d) if sm_scale is None else sm_scale)
    o = np.full_like(q, 0x7E00 if q.dtype == np.uint16 else np.nan)  # NaN: unwritten shows
    lse = np.full((heads, seq), np.nan, np.float32)
    grid = (tritium.cdiv(seq, block_m), heads)
    attn_fwd_kernel[grid](
        q, k, v, o, lse, sm_scale, seq,
        *_launch_args(q)[1:], *_launch_args(k)[1:], *_launch_args(v)[1:], *_launch_args(o)[1:],
        HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, BF16=q.dtype == np.uint16,
        num_warps=num_warps, num_stages=num_stages,
    )  # fmt: skip
    return o, lse


def attention_backward(q, k, v, o, do, lse, causal=False, sm_scale=None, block_m=64,
                       block_n=64, num_warps=4, num_stages=3):  # fmt: skip
    """Gradients (dq, dk, dv) of sum(O * dO) given the forward's o and lse. All of q, k, v,
    o, do: (heads, S, D), contiguous, one dtype."""
    heads, seq, d = q.shape
    sm_scale = float(1.0 / np.sqrt(d) if sm_scale is None else sm_scale)
    bf16 = q.dtype == np.uint16
    for x in (q, k, v, o, do):
        assert x.flags.c_contiguous and x.shape == q.shape and x.dtype == q.dtype
    delta = np.full((heads, seq), np.nan, np.float32)
    attn_bwd_preprocess_kernel[(tritium.cdiv(seq, block_m), heads)](
        o, do, delta, seq, seq * d, d, seq * d, d, HEAD_DIM=d, BLOCK_M=block_m, BF16=bf16
    )
    fill = 0x7E00 if bf16 else np.nan
    dq, dk, dv = (np.full_like(q, fill) for _ in range(3))
    opts = dict(HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, BF16=bf16,
                num_warps=num_warps, num_stages=num_stages)  # fmt: skip
    attn_bwd_dkdv_kernel[(tritium.cdiv(seq, block_n), heads)](
        q, k, v, do, dk, dv, lse, delta, sm_scale, seq, seq * d, d, **opts
    )
    attn_bwd_dq_kernel[(tritium.cdiv(seq, block_m), heads)](
        q, k, v, do, dq, lse, delta, sm_scale, seq, seq * d, d, **opts
    )
    return dq, dk, dv


# --------------------------------------------------------------------------- reference
def to_bf16_bits(x):
    """float array -> uint16 bfloat16 bits (round to nearest even)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bits(x):
    """fp16 or uint16-bf16 array -> float64."""
    if x.dtype == np.uint16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def reference(q, k, v, do, causal, sm_scale):
    """float64 attention and its gradients: (o, dq, dk, dv)."""
    s = q @ k.transpose(0, 2, 1) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ v
    dv = p.transpose(0, 2, 1) @ do
    dp = do @ v.transpose(0, 2, 1)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * sm_scale
    return o, ds @ k, ds.transpose(0, 2, 1) @ q, dv


def relative_error(got, want):
    """|got - want| / |want| (Frobenius); |want| at least 1e-3 (S = 1 makes dQ, dK zero)."""
    return float(np.linalg.norm(from_bits(got) - want) / max(np.linalg.norm(want), 1e-3))


def check_attention(rng, heads, seq, d, causal, bf16, backward=None, **blocks):
    """Forward and backward against float64 numpy; returns the bytes the forward touched.
    `backward`: the backward's blocks and warps, if not the forward's (the causal forward
    needs BLOCK_N to divide BLOCK_M; the backward takes BLOCK_N = 2 * BLOCK_M)."""
    make = to_bf16_bits if bf16 else (lambda x: x.astype(np.float16))
    q, k, v, do = (make(rng.standard_normal((heads, seq, d))) for _ in range(4))
    scale = 1.0 / np.sqrt(d)
    o, lse = attention_forward(q, k, v, causal, scale, **blocks)
    dq, dk, dv = attention_backward(q, k, v, o, do, lse, causal, scale, **(backward or blocks))
    want = reference(*(from_bits(x) for x in (q, k, v, do)), causal, scale)
    tol = 1e-2 if bf16 else 2e-3  # inputs and outputs rounded to 8 / 11 significant bits
    for name, got, ref in zip(("o", "dq", "dk", "dv"), (o, dq, dk, dv), want):
        err = relative_error(got, ref)
        assert err < tol, f"{name}: relative error {err:.2e} (S={seq}, D={d}, causal={causal})"
    return 4 * q.nbytes


def check(rng):
    total = 0
    for causal in (False, True):
        for bf16 in (False, True):
            total += check_attention(rng, 2, 67, 64, causal, bf16, block_m=32, block_n=16)
    return total


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from examples._common import run_example

    run_example("flash attention", check)
