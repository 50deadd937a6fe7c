// Batched matrix product with an optional epilogue, for matmul, addmm and
// linear:  out[b] = alpha * (A[b] @ B[b]) + beta * C[b]  (C when has_c).
// Every operand is strided (transposed views need no copy) and batch dims
// may broadcast with stride 0. Tiled: each work-group computes a TILE x TILE
// block of out, staging TILE x TILE blocks of A and B in local memory;
// accumulation in T_CT (float for float16/bfloat16).
#define BP_MAXB 14
typedef struct {
  long M, N, K;
  long batch;
  int nb;
  int has_c;
  long b_sizes[BP_MAXB];
  long b_strides[4][BP_MAXB];  // out, A, B, C
  long o_sm, o_sn, a_sm, a_sk, b_sk, b_sn, c_sm, c_sn;
  long offs[4];
} bp_mgeo;

#ifndef TILE
#define TILE 16
#endif

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void k_matmul(
    bp_mgeo g, __global T_ST* o, __global const T_ST* A, __global const T_ST* B, __global const T_ST* C,
    T_CT alpha, T_CT beta) {
  __local T_CT As[TILE][TILE + 1];
  __local T_CT Bs[TILE][TILE + 1];
  const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
  const long n = (long)get_group_id(0) * TILE + tx;
  const long m = (long)get_group_id(1) * TILE + ty;
  long bo = g.offs[0], ba = g.offs[1], bb = g.offs[2], bc = g.offs[3];
  long bi = get_global_id(2);
  for (int k = g.nb - 1; k >= 0; --k) {
    const long q = bi / g.b_sizes[k];
    const long x = bi - q * g.b_sizes[k];
    bi = q;
    bo += x * g.b_strides[0][k];
    ba += x * g.b_strides[1][k];
    bb += x * g.b_strides[2][k];
    bc += x * g.b_strides[3][k];
  }
  T_CT acc = 0;
  const long a_row = (long)get_group_id(1) * TILE + ty;  // row of A this item stages
  const long b_col = (long)get_group_id(0) * TILE + tx;  // column of B this item stages
  for (long k0 = 0; k0 < g.K; k0 += TILE) {
    const long ka = k0 + tx, kb = k0 + ty;
    As[ty][tx] = (a_row < g.M && ka < g.K) ? LD(A, ba + a_row * g.a_sm + ka * g.a_sk) : (T_CT)0;
    Bs[ty][tx] = (kb < g.K && b_col < g.N) ? LD(B, bb + kb * g.b_sk + b_col * g.b_sn) : (T_CT)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TILE; ++kk) acc += As[ty][kk] * Bs[kk][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (m < g.M && n < g.N) {
    T_CT r = alpha * acc;
    if (g.has_c) r += beta * LD(C, bc + m * g.c_sm + n * g.c_sn);
    STO(o, bo + m * g.o_sm + n * g.o_sn, r);
  }
}
