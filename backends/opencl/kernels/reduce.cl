// Reductions sum, mean, amax, amin, argmax of dtype T over any dims.
// Per the contract the input already has the output dtype (argmax: its own,
// output int64) and the output has keepdim sizes. The host splits the dims
// into kept dims (one output element each) and reduced dims (looped over in
// row-major order, so argmax's index is the row-major index within them).
//   k_<op>_serial: one work-item per output element (many outputs);
//   k_<op>_group:  one work-group per output element, a tree in local memory
//                  (few outputs, long reductions). Group size: power of two.
typedef struct {
  long out_numel;
  long red_numel;
  int kdim;
  int rdim;
  long k_sizes[BP_MAXD];
  long k_out_strides[BP_MAXD];
  long k_in_strides[BP_MAXD];
  long r_sizes[BP_MAXD];
  long r_in_strides[BP_MAXD];
  long in_off;
  long out_off;
} bp_rgeo;

// Accumulators: float32 sums in double when the device has it.
#if T_KIND == K_FLOAT && T_SIZE == 4 && defined(HAS_FP64)
#define ACC double
#elif T_FLOATING
#define ACC T_CT
#else
#define ACC long
#endif

#if T_FLOATING
#define T_LOWEST (-INFINITY)
#define T_HIGHEST (INFINITY)
#define BP_ISNAN(v) isnan(v)
#elif T_KIND == K_BOOL
#define T_LOWEST 0
#define T_HIGHEST 1
#define BP_ISNAN(v) 0
#else
#if T_SIZE == 1
#define T_LOWEST (T_SIGNED ? CHAR_MIN : 0)
#define T_HIGHEST (T_SIGNED ? CHAR_MAX : UCHAR_MAX)
#elif T_SIZE == 4
#define T_LOWEST INT_MIN
#define T_HIGHEST INT_MAX
#else
#define T_LOWEST LONG_MIN
#define T_HIGHEST LONG_MAX
#endif
#define BP_ISNAN(v) 0
#endif

inline void bp_rout(const bp_rgeo* g, long oi, long* in_base, long* out_at) {
  long ib = g->in_off, ob = g->out_off;
  for (int k = g->kdim - 1; k >= 0; --k) {
    const long q = oi / g->k_sizes[k];
    const long x = oi - q * g->k_sizes[k];
    oi = q;
    ib += x * g->k_in_strides[k];
    ob += x * g->k_out_strides[k];
  }
  *in_base = ib;
  *out_at = ob;
}

inline long bp_rin(const bp_rgeo* g, long ri) {
  if (g->rdim == 1) return ri * g->r_in_strides[0];  // no division in the common case
  long off = 0;
  for (int k = g->rdim - 1; k >= 0; --k) {
    const long q = ri / g->r_sizes[k];
    off += (ri - q * g->r_sizes[k]) * g->r_in_strides[k];
    ri = q;
  }
  return off;
}

// NaN propagates: once acc is NaN it stays.
#define MAX_STEP(acc, v) ((BP_ISNAN(v) || (v) > (acc)) ? (v) : (acc))
#define MIN_STEP(acc, v) ((BP_ISNAN(v) || (v) < (acc)) ? (v) : (acc))
#define SUM_STEP(acc, v) ((acc) + (ACC)(v))

// REDUCE(NAME, ACC_T, INIT, STEP, FINAL): FINAL(acc) is the stored value.
#define REDUCE(NAME, ACC_T, INIT, STEP, FINAL)                                                         \
  __kernel void k_##NAME##_serial(bp_rgeo g, __global T_ST* o, __global const T_ST* a) {             \
    const long oi = get_global_id(0);                                                                \
    if (oi >= g.out_numel) return;                                                                   \
    long ib, ob;                                                                                     \
    bp_rout(&g, oi, &ib, &ob);                                                                       \
    ACC_T acc = INIT;                                                                                \
    for (long ri = 0; ri < g.red_numel; ++ri) {                                                      \
      const T_CT v = LD(a, ib + bp_rin(&g, ri));                                                     \
      acc = STEP(acc, v);                                                                            \
    }                                                                                                \
    STO(o, ob, FINAL(acc));                                                                          \
  }                                                                                                  \
  __kernel void k_##NAME##_group(bp_rgeo g, __global T_ST* o, __global const T_ST* a,                \
                                 __local ACC_T* scratch) {                                           \
    const long oi = get_group_id(0);                                                                 \
    const int lid = (int)get_local_id(0);                                                            \
    const int L = (int)get_local_size(0);                                                            \
    long ib, ob;                                                                                     \
    bp_rout(&g, oi, &ib, &ob);                                                                       \
    ACC_T acc = INIT;                                                                                \
    for (long ri = lid; ri < g.red_numel; ri += L) {                                                 \
      const T_CT v = LD(a, ib + bp_rin(&g, ri));                                                     \
      acc = STEP(acc, v);                                                                            \
    }                                                                                                \
    scratch[lid] = acc;                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
    for (int s = L / 2; s > 0; s >>= 1) {                                                            \
      if (lid < s) scratch[lid] = STEP(scratch[lid], scratch[lid + s]);                              \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    }                                                                                                \
    if (lid == 0) STO(o, ob, FINAL(scratch[0]));                                                     \
  }

// Split reductions (few outputs, long reductions, CPU drivers): pass 1 has
// P work-items per output, each reducing one contiguous chunk of the reduced
// index range into part[oi * P + p]; pass 2 combines the P partials.
#define REDUCE_SPLIT(NAME, ACC_T, INIT, STEP, FINAL)                                                 \
  __kernel void k_##NAME##_part(bp_rgeo g, __global ACC_T* part, __global const T_ST* a, long chunk, \
                                int P) {                                                           \
    const long w = get_global_id(0);                                                               \
    if (w >= g.out_numel * P) return;                                                              \
    const long oi = w / P;                                                                         \
    const long lo = (w - oi * P) * chunk;                                                          \
    const long hi = min(lo + chunk, g.red_numel);                                                  \
    long ib, ob;                                                                                   \
    bp_rout(&g, oi, &ib, &ob);                                                                     \
    ACC_T acc = INIT;                                                                              \
    for (long ri = lo; ri < hi; ++ri) {                                                            \
      const T_CT v = LD(a, ib + bp_rin(&g, ri));                                                   \
      acc = STEP(acc, v);                                                                          \
    }                                                                                              \
    part[w] = acc;                                                                                 \
  }                                                                                                \
  __kernel void k_##NAME##_fin(bp_rgeo g, __global T_ST* o, __global const ACC_T* part, int P) {    \
    const long oi = get_global_id(0);                                                              \
    if (oi >= g.out_numel) return;                                                                 \
    long ib, ob;                                                                                   \
    bp_rout(&g, oi, &ib, &ob);                                                                     \
    ACC_T acc = INIT;                                                                              \
    for (int p = 0; p < P; ++p) acc = STEP(acc, part[oi * P + p]);                                 \
    STO(o, ob, FINAL(acc));                                                                        \
  }

#define FINAL_ID(acc) (acc)
#define FINAL_MEAN(acc) ((acc) / (ACC)g.red_numel)

#define REDUCE_ALL(NAME, ACC_T, INIT, STEP, FINAL) \
  REDUCE(NAME, ACC_T, INIT, STEP, FINAL)            \
  REDUCE_SPLIT(NAME, ACC_T, INIT, STEP, FINAL)

REDUCE_ALL(sum, ACC, (ACC)0, SUM_STEP, FINAL_ID)
#if T_FLOATING
REDUCE_ALL(mean, ACC, (ACC)0, SUM_STEP, FINAL_MEAN)
#endif
REDUCE_ALL(amax, T_CT, (T_CT)T_LOWEST, MAX_STEP, FINAL_ID)
REDUCE_ALL(amin, T_CT, (T_CT)T_HIGHEST, MIN_STEP, FINAL_ID)

// argmax: (value, index) pairs; index -1 means "nothing seen yet". The
// first occurrence wins ties; the first NaN beats everything.
inline int bp_arg_better(T_CT v, long i, T_CT best, long bi) {
  if (i < 0) return 0;
  if (bi < 0) return 1;
#if T_FLOATING
  if (isnan(v) || isnan(best)) return isnan(v) && (!isnan(best) || i < bi);
#endif
  return v > best || (v == best && i < bi);
}

__kernel void k_argmax_serial(bp_rgeo g, __global long* o, __global const T_ST* a) {
  const long oi = get_global_id(0);
  if (oi >= g.out_numel) return;
  long ib, ob;
  bp_rout(&g, oi, &ib, &ob);
  T_CT best = 0;
  long bi = -1;
  for (long ri = 0; ri < g.red_numel; ++ri) {
    const T_CT v = LD(a, ib + bp_rin(&g, ri));
    if (bp_arg_better(v, ri, best, bi)) {
      best = v;
      bi = ri;
    }
  }
  o[ob] = bi < 0 ? 0 : bi;
}

__kernel void k_argmax_group(bp_rgeo g, __global long* o, __global const T_ST* a, __local T_CT* sv,
                             __local long* si) {
  const long oi = get_group_id(0);
  const int lid = (int)get_local_id(0);
  const int L = (int)get_local_size(0);
  long ib, ob;
  bp_rout(&g, oi, &ib, &ob);
  T_CT best = 0;
  long bi = -1;
  for (long ri = lid; ri < g.red_numel; ri += L) {
    const T_CT v = LD(a, ib + bp_rin(&g, ri));
    if (bp_arg_better(v, ri, best, bi)) {
      best = v;
      bi = ri;
    }
  }
  sv[lid] = best;
  si[lid] = bi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = L / 2; s > 0; s >>= 1) {
    if (lid < s && bp_arg_better(sv[lid + s], si[lid + s], sv[lid], si[lid])) {
      sv[lid] = sv[lid + s];
      si[lid] = si[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) o[ob] = si[0] < 0 ? 0 : si[0];
}
