// Prepended to every Backplane OpenCL program.
//
// The host compiles each program once per dtype with -D options:
//   T_KIND  storage kind of the main dtype (K_* below); T_ST its storage
//           type, T_CT the type arithmetic uses (float for half/bfloat16),
//           T_UT the unsigned type of the same width, T_SIGNED 0/1.
//   HAS_FP64 when the device has cl_khr_fp64 (double accumulators).
// half and bfloat16 are storage formats only: values are loaded to float,
// computed in float and rounded to nearest-even on store, so they need no
// cl_khr_fp16 (vload_half/vstore_half are core OpenCL C).
#ifdef HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define K_BOOL 0
#define K_INT 1
#define K_FLOAT 2
#define K_HALF 3
#define K_BF16 4

// Up to 16 dims and 4 tensors (output first). Mirrors bpcl::PwGeo.
#define BP_MAXD 16
typedef struct {
  long numel;
  int ndim;
  int pad;
  long sizes[BP_MAXD];
  long strides[4][BP_MAXD];
  long offsets[4];
} bp_geo;

// Element offsets of linear index i (row-major over sizes) in 4 tensors.
inline void bp_offsets(const bp_geo* g, long i, long* r0, long* r1, long* r2, long* r3) {
  long a = g->offsets[0], b = g->offsets[1], c = g->offsets[2], d = g->offsets[3];
  for (int k = g->ndim - 1; k >= 0; --k) {
    const long s = g->sizes[k];
    const long q = i / s;
    const long x = i - q * s;
    i = q;
    a += x * g->strides[0][k];
    b += x * g->strides[1][k];
    c += x * g->strides[2][k];
    d += x * g->strides[3][k];
  }
  *r0 = a;
  *r1 = b;
  *r2 = c;
  *r3 = d;
}

inline float bp_bf16_to_float(ushort h) { return as_float(((uint)h) << 16); }
inline ushort bp_float_to_bf16(float f) {
  uint u = as_uint(f);
  if (isnan(f)) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

#ifdef T_KIND
#if T_KIND == K_HALF
#define LD(p, i) vload_half((size_t)(i), (p))
#define STO(p, i, v) vstore_half_rte((float)(v), (size_t)(i), (p))
#elif T_KIND == K_BF16
#define LD(p, i) bp_bf16_to_float((p)[i])
#define STO(p, i, v) ((p)[i] = bp_float_to_bf16((float)(v)))
#elif T_KIND == K_BOOL
#define LD(p, i) ((p)[i])
#define STO(p, i, v) ((p)[i] = (uchar)(((v) != 0) ? 1 : 0))
#else
#define LD(p, i) ((p)[i])
#define STO(p, i, v) ((p)[i] = (T_ST)(v))
#endif
#define T_FLOATING (T_KIND >= K_FLOAT)
#endif


// Every pointwise kernel comes in two forms with one argument layout per
// form, so the host launches all of them the same way:
//   NAME_1d: n elements, each tensor (out, a, b, c) as offset + one stride;
//   NAME_nd: a bp_geo with up to 16 dims.
// The body sees io, ia, ib, ic (element offsets), alpha and beta.
#define PW_KERNEL(NAME, OT, AT, BT, CT3, SCALAR_T, ...)                                           \
  __kernel void NAME##_1d(long n, __global OT* o, long o0, long s0, __global const AT* a, long o1, \
                          long s1, __global const BT* b, long o2, long s2, __global const CT3* c,   \
                          long o3, long s3, SCALAR_T alpha, SCALAR_T beta) {                        \
    const long i = get_global_id(0);                                                                \
    if (i >= n) return;                                                                             \
    const long io = o0 + i * s0, ia = o1 + i * s1, ib = o2 + i * s2, ic = o3 + i * s3;             \
    __VA_ARGS__                                                                                     \
  }                                                                                                 \
  __kernel void NAME##_nd(bp_geo g, __global OT* o, __global const AT* a, __global const BT* b,    \
                          __global const CT3* c, SCALAR_T alpha, SCALAR_T beta) {                   \
    const long i = get_global_id(0);                                                                \
    if (i >= g.numel) return;                                                                       \
    long io, ia, ib, ic;                                                                            \
    bp_offsets(&g, i, &io, &ia, &ib, &ic);                                                          \
    __VA_ARGS__                                                                                     \
  }
