// copy_ with dtype conversion into destination dtype T, one kernel per
// source dtype (k_copy_<source>), so one program per destination dtype
// serves every source. Conversions are C casts as PyTorch's CPU does; to
// bool is `!= 0` (STO); floating to 8-bit integers goes through int so
// negative values wrap as they do on x86.
#define LD_PLAIN(p, i) ((p)[i])
#define LD_HALF(p, i) vload_half((size_t)(i), (p))
#define LD_BF16(p, i) bp_bf16_to_float((p)[i])

#if T_KIND == K_INT && T_SIZE == 1
#define CONVERT_FROM_FLOAT(v) ((T_ST)(int)(v))
#else
#define CONVERT_FROM_FLOAT(v) CONVERT_FROM_INT(v)
#endif
#if T_KIND == K_INT || T_KIND == K_FLOAT
#define CONVERT_FROM_INT(v) ((T_ST)(v))
#else
#define CONVERT_FROM_INT(v) (v)  // STO converts (bool: != 0; half/bfloat16: rounds)
#endif

#define COPY_FROM(SUFFIX, SRC_ST, LOAD, CONVERT) \
  PW_KERNEL(k_copy_##SUFFIX, T_ST, SRC_ST, SRC_ST, SRC_ST, T_CT, { STO(o, io, CONVERT(LOAD(a, ia))); })

COPY_FROM(bool, uchar, LD_PLAIN, CONVERT_FROM_INT)
COPY_FROM(uint8, uchar, LD_PLAIN, CONVERT_FROM_INT)
COPY_FROM(int8, char, LD_PLAIN, CONVERT_FROM_INT)
COPY_FROM(int32, int, LD_PLAIN, CONVERT_FROM_INT)
COPY_FROM(int64, long, LD_PLAIN, CONVERT_FROM_INT)
COPY_FROM(float16, half, LD_HALF, CONVERT_FROM_FLOAT)
COPY_FROM(bfloat16, ushort, LD_BF16, CONVERT_FROM_FLOAT)
COPY_FROM(float32, float, LD_PLAIN, CONVERT_FROM_FLOAT)
#ifdef HAS_FP64
COPY_FROM(float64, double, LD_PLAIN, CONVERT_FROM_FLOAT)
#endif
