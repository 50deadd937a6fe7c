// Pointwise operators for one dtype T (see common.cl). Kernel names get a
// k_ prefix pasted before expansion: OpenCL C builtins (exp, pow) may be macros.
// Per the kernel
// contract every input already has the compute dtype and the output's sizes
// (broadcast dims have stride 0); comparisons write bool (uchar 0/1).

#define BINARY(NAME, EXPR) \
  PW_KERNEL(k_##NAME, T_ST, T_ST, T_ST, T_ST, T_CT, { const T_CT x = LD(a, ia); const T_CT y = LD(b, ib); STO(o, io, (EXPR)); })
#define UNARY(NAME, EXPR) PW_KERNEL(k_##NAME, T_ST, T_ST, T_ST, T_ST, T_CT, { const T_CT x = LD(a, ia); STO(o, io, (EXPR)); })
#define COMPARE(NAME, OPR) \
  PW_KERNEL(k_##NAME, uchar, T_ST, T_ST, T_ST, T_CT, { o[io] = (LD(a, ia) OPR LD(b, ib)) ? 1 : 0; })

BINARY(add, x + alpha * y)
BINARY(sub, x - alpha * y)
BINARY(mul, x * y)
COMPARE(eq, ==)
COMPARE(ne, !=)
COMPARE(lt, <)
COMPARE(le, <=)
COMPARE(gt, >)
COMPARE(ge, >=)
PW_KERNEL(k_where, T_ST, uchar, T_ST, T_ST, T_CT, { STO(o, io, a[ia] ? LD(b, ib) : LD(c, ic)); })
PW_KERNEL(k_fill, T_ST, T_ST, T_ST, T_ST, T_CT, { STO(o, io, alpha); })
// Runtime checks run before integer div/pow write anything: they set o[0].
PW_KERNEL(k_chk_zero, int, T_ST, T_ST, T_ST, T_CT, { if (LD(b, ib) == 0) o[0] = 1; })
PW_KERNEL(k_chk_neg, int, T_ST, T_ST, T_ST, T_CT, { if (LD(b, ib) < 0) o[0] = 1; })

#if T_FLOATING
// Floor division as PyTorch defines it for floats: from fmod, so that
// floor_divide(a, b) * b + remainder(a, b) == a.
inline T_CT bp_div_floor(T_CT x, T_CT y) {
  if (y == 0) return x / y;
  T_CT m = fmod(x, y);
  T_CT d = (x - m) / y;
  if (m != 0 && ((y < 0) != (m < 0))) d -= 1;
  if (d != 0) {
    T_CT f = floor(d);
    if (d - f > (T_CT)0.5) f += 1;
    return f;
  }
  return copysign((T_CT)0, x / y);
}
inline T_CT bp_max(T_CT x, T_CT y) { return isnan(x) ? x : (isnan(y) ? y : fmax(x, y)); }
inline T_CT bp_min(T_CT x, T_CT y) { return isnan(x) ? x : (isnan(y) ? y : fmin(x, y)); }
inline T_CT bp_sigmoid(T_CT x) { return (T_CT)1 / ((T_CT)1 + exp(-x)); }
// tanh saturating to exactly +-1 where the rounded result is 1 (PoCL's tanh
// stops at 1 - 2^-24, which gelu's (1 + tanh) turns into large errors).
inline T_CT bp_tanh(T_CT y) {
  const T_CT big = sizeof(T_CT) == 8 ? (T_CT)19.1 : (T_CT)9.1;
  return fabs(y) >= big ? copysign((T_CT)1, y) : tanh(y);
}

BINARY(div, x / y)
BINARY(div_trunc, trunc(x / y))
BINARY(div_floor, bp_div_floor(x, y))
BINARY(maximum, bp_max(x, y))
BINARY(minimum, bp_min(x, y))
BINARY(pow, pow(x, y))
UNARY(neg, -x)
UNARY(abs, fabs(x))
UNARY(round, rint(x))
UNARY(relu, (x < 0) ? (T_CT)0 : x)
UNARY(exp, exp(x))
UNARY(log, log(x))
UNARY(sqrt, sqrt(x))
UNARY(rsqrt, rsqrt(x))
UNARY(sin, sin(x))
UNARY(cos, cos(x))
UNARY(acos, acos(x))
UNARY(asin, asin(x))
UNARY(atan, atan(x))
UNARY(tanh, bp_tanh(x))
UNARY(sigmoid, bp_sigmoid(x))
UNARY(erf, erf(x))
UNARY(gelu, (T_CT)0.5 * x * ((T_CT)1 + erf(x * (T_CT)0.70710678118654752440)))
UNARY(gelu_tanh, (T_CT)0.5 * x *
                     ((T_CT)1 + bp_tanh((T_CT)0.79788456080286535588 * (x + (T_CT)0.044715 * x * x * x))))
UNARY(silu, x * bp_sigmoid(x))
#else
// Integer and bool kernels. Division and pow operands were checked (no zero
// divisor, no negative exponent) by chk_* first. x / -1 is computed as a
// negation in unsigned arithmetic: INT_MIN / -1 traps on x86.
inline T_CT bp_neg(T_CT x) { return (T_CT)(-(T_UT)x); }
inline T_CT bp_div_trunc(T_CT x, T_CT y) {
#if T_SIGNED
  if (y == (T_CT)-1) return bp_neg(x);
#endif
  return x / y;
}
inline T_CT bp_div_floor(T_CT x, T_CT y) {
#if T_SIGNED
  if (y == (T_CT)-1) return bp_neg(x);
  T_CT q = x / y;
  if ((x - q * y) != 0 && ((x < 0) != (y < 0))) q -= 1;
  return q;
#else
  return x / y;
#endif
}
inline T_CT bp_ipow(T_CT base, T_CT e) {
  T_CT r = 1;
  while (e > 0) {
    if (e & 1) r = (T_CT)(r * base);
    base = (T_CT)(base * base);
    e >>= 1;
  }
  return r;
}
BINARY(div_trunc, bp_div_trunc(x, y))
BINARY(div_floor, bp_div_floor(x, y))
BINARY(maximum, (x > y) ? x : y)
BINARY(minimum, (x < y) ? x : y)
BINARY(pow, bp_ipow(x, y))
UNARY(neg, bp_neg(x))
#if T_SIGNED
UNARY(abs, (x < 0) ? bp_neg(x) : x)
#else
UNARY(abs, x)
#endif
UNARY(round, x)
UNARY(relu, (x < 0) ? (T_CT)0 : x)
#endif
