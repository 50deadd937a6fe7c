// copy_ with dtype conversion: source dtype S (S_KIND, S_ST, S_CT) into
// destination dtype T. Conversion rules follow C casts as PyTorch's CPU
// does; to bool is `!= 0` (STO); float to 8-bit integers goes through int
// so negative values wrap as they do on x86.
#if T_KIND == K_INT && S_KIND >= K_FLOAT && T_SIZE == 1
#define CONVERT(v) ((T_ST)(int)(v))
#elif T_KIND == K_INT || T_KIND == K_FLOAT
#define CONVERT(v) ((T_ST)(v))
#else
#define CONVERT(v) (v)
#endif

PW_KERNEL(k_copy, T_ST, S_ST, S_ST, S_ST, T_CT, { STO(o, io, CONVERT(LDS(a, ia))); })
