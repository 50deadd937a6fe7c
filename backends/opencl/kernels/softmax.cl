// softmax / log_softmax of dtype T along one dim, computed stably:
// m = max(x), s = sum(exp(x - m)); softmax = exp(x - m) / s,
// log_softmax = x - m - log(s). Rows are all positions of the other dims.
//   k_<op>_serial: one work-item per row; k_<op>_group: one work-group per
//   row with trees in local memory (power-of-two group size).
typedef struct {
  long rows;
  long n;  // size of the softmax dim
  int kdim;
  int pad;
  long k_sizes[BP_MAXD];
  long k_in_strides[BP_MAXD];
  long k_out_strides[BP_MAXD];
  long in_stride;   // along the softmax dim
  long out_stride;
  long in_off;
  long out_off;
} bp_sgeo;

#if T_KIND == K_FLOAT && T_SIZE == 4 && defined(HAS_FP64)
#define ACC double
#else
#define ACC T_CT
#endif

inline void bp_srow(const bp_sgeo* g, long r, long* ib, long* ob) {
  long i = g->in_off, o = g->out_off;
  for (int k = g->kdim - 1; k >= 0; --k) {
    const long q = r / g->k_sizes[k];
    const long x = r - q * g->k_sizes[k];
    r = q;
    i += x * g->k_in_strides[k];
    o += x * g->k_out_strides[k];
  }
  *ib = i;
  *ob = o;
}

// NaN-propagating max.
inline T_CT bp_smax(T_CT a, T_CT b) { return (isnan(a) || a > b) ? a : b; }

#define SOFTMAX(NAME, IS_LOG)                                                                          \
  __kernel void k_##NAME##_serial(bp_sgeo g, __global T_ST* o, __global const T_ST* a) {             \
    const long r = get_global_id(0);                                                                 \
    if (r >= g.rows) return;                                                                         \
    long ib, ob;                                                                                     \
    bp_srow(&g, r, &ib, &ob);                                                                        \
    T_CT m = -INFINITY;                                                                              \
    for (long j = 0; j < g.n; ++j) m = bp_smax(m, LD(a, ib + j * g.in_stride));                      \
    ACC s = 0;                                                                                       \
    for (long j = 0; j < g.n; ++j) s += (ACC)exp(LD(a, ib + j * g.in_stride) - m);                   \
    const T_CT ls = (T_CT)log(s), inv = (T_CT)((ACC)1 / s);                                          \
    for (long j = 0; j < g.n; ++j) {                                                                 \
      const T_CT x = LD(a, ib + j * g.in_stride) - m;                                                \
      STO(o, ob + j * g.out_stride, IS_LOG ? x - ls : exp(x) * inv);                                 \
    }                                                                                                \
  }                                                                                                  \
  __kernel void k_##NAME##_group(bp_sgeo g, __global T_ST* o, __global const T_ST* a,                \
                                 __local T_CT* sm, __local ACC* ss) {                                \
    const long r = get_group_id(0);                                                                  \
    const int lid = (int)get_local_id(0);                                                            \
    const int L = (int)get_local_size(0);                                                            \
    long ib, ob;                                                                                     \
    bp_srow(&g, r, &ib, &ob);                                                                        \
    T_CT m = -INFINITY;                                                                              \
    for (long j = lid; j < g.n; j += L) m = bp_smax(m, LD(a, ib + j * g.in_stride));                 \
    sm[lid] = m;                                                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
    for (int h = L / 2; h > 0; h >>= 1) {                                                            \
      if (lid < h) sm[lid] = bp_smax(sm[lid], sm[lid + h]);                                          \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    }                                                                                                \
    m = sm[0];                                                                                       \
    ACC s = 0;                                                                                       \
    for (long j = lid; j < g.n; j += L) s += (ACC)exp(LD(a, ib + j * g.in_stride) - m);              \
    ss[lid] = s;                                                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
    for (int h = L / 2; h > 0; h >>= 1) {                                                            \
      if (lid < h) ss[lid] += ss[lid + h];                                                           \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    }                                                                                                \
    s = ss[0];                                                                                       \
    const T_CT ls = (T_CT)log(s), inv = (T_CT)((ACC)1 / s);                                          \
    for (long j = lid; j < g.n; j += L) {                                                            \
      const T_CT x = LD(a, ib + j * g.in_stride) - m;                                                \
      STO(o, ob + j * g.out_stride, IS_LOG ? x - ls : exp(x) * inv);                                 \
    }                                                                                                \
  }

SOFTMAX(softmax, 0)
SOFTMAX(log_softmax, 1)

#if T_KIND == K_FLOAT
// CPU drivers, contiguous rows: one work-item per row with explicit 8-wide
// vectors (a CPU runs each work-item's loops as plain code). NaN needs no
// special max: a NaN in the row makes the sum, hence every output, NaN.
#if T_SIZE == 8
#define VT double8
#define VT4 double4
#define VT2 double2
#else
#define VT float8
#define VT4 float4
#define VT2 float2
#endif
inline T_CT bp_hmax(VT v) {
  VT4 a = fmax(v.lo, v.hi);
  VT2 b = fmax(a.lo, a.hi);
  return fmax(b.x, b.y);
}
// The sum accumulates in double when the device has it (8 partial sums of
// float would lose about 1e-6 relative over long rows).
#if T_SIZE == 4 && defined(HAS_FP64)
#define AVT double8
#define AVT4 double4
#define AVT2 double2
#define TO_AVT(v) convert_double8(v)
#else
#define AVT VT
#define AVT4 VT4
#define AVT2 VT2
#define TO_AVT(v) (v)
#endif
inline ACC bp_hsum(AVT v) {
  AVT4 a = v.lo + v.hi;
  AVT2 b = a.lo + a.hi;
  return b.x + b.y;
}

#define SOFTMAX_VEC(NAME, IS_LOG)                                                         \
  __kernel void k_##NAME##_vec(bp_sgeo g, __global T_ST* o, __global const T_ST* a) {   \
    const long r = get_global_id(0);                                                    \
    if (r >= g.rows) return;                                                            \
    long ib, ob;                                                                        \
    bp_srow(&g, r, &ib, &ob);                                                           \
    __global const T_ST* x = a + ib;                                                    \
    __global T_ST* y = o + ob;                                                          \
    const long n8 = g.n / 8 * 8;                                                        \
    VT mv = (VT)(-INFINITY);                                                            \
    for (long j = 0; j < n8; j += 8) mv = fmax(mv, vload8(0, x + j));                   \
    T_CT m = bp_hmax(mv);                                                               \
    for (long j = n8; j < g.n; ++j) m = fmax(m, x[j]);                                  \
    AVT sv = (AVT)0;                                                                    \
    for (long j = 0; j < n8; j += 8) sv += TO_AVT(exp(vload8(0, x + j) - (VT)m));       \
    ACC s = bp_hsum(sv);                                                                \
    for (long j = n8; j < g.n; ++j) s += (ACC)exp(x[j] - m);                            \
    const T_CT ls = (T_CT)log(s), inv = (T_CT)((ACC)1 / s);                             \
    for (long j = 0; j < n8; j += 8) {                                                  \
      const VT v = vload8(0, x + j) - (VT)m;                                            \
      vstore8(IS_LOG ? v - (VT)ls : exp(v) * (VT)inv, 0, y + j);                        \
    }                                                                                   \
    for (long j = n8; j < g.n; ++j) {                                                   \
      const T_CT v = x[j] - m;                                                          \
      y[j] = IS_LOG ? v - ls : exp(v) * inv;                                            \
    }                                                                                   \
  }

SOFTMAX_VEC(softmax, 0)
SOFTMAX_VEC(log_softmax, 1)
#endif
