// Two kernels: k_matmul (tiles staged in local memory, for GPUs) and
// k_matmul_rb (register blocking, no local memory) for devices whose local
// memory is global memory (CPU drivers such as PoCL), where staging only
// adds copies and barriers.
//
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

inline void bp_mbatch(const bp_mgeo* g, long bi, long* bo, long* ba, long* bb, long* bc) {
  long o = g->offs[0], a = g->offs[1], b = g->offs[2], c = g->offs[3];
  for (int k = g->nb - 1; k >= 0; --k) {
    const long q = bi / g->b_sizes[k];
    const long x = bi - q * g->b_sizes[k];
    bi = q;
    o += x * g->b_strides[0][k];
    a += x * g->b_strides[1][k];
    b += x * g->b_strides[2][k];
    c += x * g->b_strides[3][k];
  }
  *bo = o;
  *ba = a;
  *bb = b;
  *bc = c;
}

#ifndef RB
#define RB 4
#endif
#ifndef NB
#define NB 64
#endif
// VW: elements per vector, the device's native vector register
// (linalg.cpp derives RB, NB and VW from it; NB is a multiple of VW).
#ifndef VW
#define VW 8
#endif
#define BP_CAT2(a, b) a##b
#define BP_CAT(a, b) BP_CAT2(a, b)
#if T_KIND == K_FLOAT && T_SIZE == 8
#define VT BP_CAT(double, VW)
#elif T_KIND == K_FLOAT
#define VT BP_CAT(float, VW)
#endif
// fma where the hardware fuses (PoCL compiles mad to a multiply and an
// add: half the speed); double always has it (OpenCL requires CL_FP_FMA for
// cl_khr_fp64), float where the device says CL_FP_FMA (BP_HAS_FMA).
#if defined(BP_HAS_FMA) || (T_KIND == K_FLOAT && T_SIZE == 8)
#define BP_MAD fma
#else
#define BP_MAD mad
#endif
#define VLOAD BP_CAT(vload, VW)
#define VSTORE BP_CAT(vstore, VW)
// One work-item: a RB x NB block of out (rows m0.., columns n0..). CPU
// drivers run a work-item's loops as ordinary code: the RB x NB / VW
// accumulators live in vector registers when the loops over them are
// unrolled (without the pragmas PoCL kept them on the stack, 4x slower),
// each row of B is NB / VW vector loads and each A element one broadcast.
// Interior blocks with unit column stride take the fast path.
__kernel void k_matmul_rb(bp_mgeo g, __global T_ST* o, __global const T_ST* A, __global const T_ST* B,
                          __global const T_ST* C, T_CT alpha, T_CT beta) {
  const long n0 = get_global_id(0) * NB;
  const long m0 = get_global_id(1) * RB;
  if (n0 >= g.N || m0 >= g.M) return;
  long bo, ba, bb, bc;
  bp_mbatch(&g, get_global_id(2), &bo, &ba, &bb, &bc);
  T_CT acc[RB][NB];
  for (int r = 0; r < RB; ++r)
    for (int j = 0; j < NB; ++j) acc[r][j] = 0;
  const bool interior = n0 + NB <= g.N && m0 + RB <= g.M && g.b_sn == 1;
#if T_KIND == K_FLOAT
  // float/double: explicit vectors, whatever the driver's auto-vectorizer
  // does. The last block of rows takes this path too, its missing rows
  // reading row M - 1 (computed, never stored).
  if (n0 + NB <= g.N && g.b_sn == 1) {
    const long last_row = g.M - 1 - m0;
    VT vacc[RB][NB / VW];
#pragma unroll
    for (int r = 0; r < RB; ++r)
#pragma unroll
      for (int j = 0; j < NB / VW; ++j) vacc[r][j] = (VT)0;
    __global const T_ST* arow[RB];
#pragma unroll
    for (int r = 0; r < RB; ++r) arow[r] = A + ba + (m0 + min((long)r, last_row)) * g.a_sm;
    for (long k = 0; k < g.K; ++k) {
      __global const T_ST* brow = B + bb + k * g.b_sk + n0;
      VT bv[NB / VW];
#pragma unroll
      for (int j = 0; j < NB / VW; ++j) bv[j] = VLOAD(j, brow);
#pragma unroll
      for (int r = 0; r < RB; ++r) {
        const VT a = (VT)(arow[r][k * g.a_sk]);
#pragma unroll
        for (int j = 0; j < NB / VW; ++j) vacc[r][j] = BP_MAD(a, bv[j], vacc[r][j]);
      }
    }
#pragma unroll
    for (int r = 0; r < RB; ++r)
#pragma unroll
      for (int j = 0; j < NB / VW; ++j) VSTORE(vacc[r][j], j, &acc[r][0]);
  } else
#endif
  if (interior) {
    for (long k = 0; k < g.K; ++k) {
      const long bk = bb + k * g.b_sk + n0;
      for (int r = 0; r < RB; ++r) {
        const T_CT a = LD(A, ba + (m0 + r) * g.a_sm + k * g.a_sk);
        for (int j = 0; j < NB; ++j) acc[r][j] += a * LD(B, bk + j);
      }
    }
  } else {
    for (long k = 0; k < g.K; ++k) {
      for (int r = 0; r < RB; ++r) {
        const long m = min(m0 + r, g.M - 1);
        const T_CT a = LD(A, ba + m * g.a_sm + k * g.a_sk);
        for (int j = 0; j < NB; ++j) {
          const long n = min(n0 + j, g.N - 1);
          acc[r][j] += a * LD(B, bb + k * g.b_sk + n * g.b_sn);
        }
      }
    }
  }
  for (int r = 0; r < RB; ++r) {
    const long m = m0 + r;
    if (m >= g.M) break;
    for (int j = 0; j < NB; ++j) {
      const long n = n0 + j;
      if (n >= g.N) break;
      T_CT v = alpha * acc[r][j];
      if (g.has_c) v += beta * LD(C, bc + m * g.c_sm + n * g.c_sn);
      STO(o, bo + m * g.o_sm + n * g.o_sn, v);
    }
  }
}

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void k_matmul(
    bp_mgeo g, __global T_ST* o, __global const T_ST* A, __global const T_ST* B, __global const T_ST* C,
    T_CT alpha, T_CT beta) {
  __local T_CT As[TILE][TILE + 1];
  __local T_CT Bs[TILE][TILE + 1];
  const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
  const long n = (long)get_group_id(0) * TILE + tx;
  const long m = (long)get_group_id(1) * TILE + ty;
  long bo, ba, bb, bc;
  bp_mbatch(&g, get_global_id(2), &bo, &ba, &bb, &bc);
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
