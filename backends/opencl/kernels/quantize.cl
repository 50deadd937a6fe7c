// quantize_linear and dequantize_linear (ONNX QuantizeLinear-13 /
// DequantizeLinear-13) as pointwise kernels over out's sizes: a is x, b the
// float32 scale and c the zero point, both seen with out's sizes (stride 0
// except along the axis). alpha != 0 says there is a zero point (c is read
// only then). Q: the quantized dtype (quantize's output, dequantize's x).

// saturate(round_half_even(x / scale) + zero_point): rint rounds half to
// even in the default rounding mode, fmax(lo, NaN) is lo (NaN saturates to
// the low bound, as the CPU kernel), and the program is built with
// -cl-fp32-correctly-rounded-divide-sqrt so x / scale is the IEEE quotient
// ONNX specifies.
PW_KERNEL(k_quantize, Q_ST, float, float, Q_ST, float, {
  const float zp = alpha != 0.0f ? (float)c[ic] : 0.0f;
  const float v = fmin(fmax(Q_LO, rint(a[ia] / b[ib]) + zp), Q_HI);
  o[io] = (Q_ST)(int)v;
})

// (x - zero_point) * scale, both converted to float first (as ONNX's
// reference and the CPU kernel).
PW_KERNEL(k_dequantize, float, Q_ST, float, Q_ST, float, {
  const float zp = alpha != 0.0f ? (float)c[ic] : 0.0f;
  o[io] = ((float)a[ia] - zp) * b[ib];
})

// Before anything is written: o[0] = 1 when a scale is not positive and
// finite.
PW_KERNEL(k_chk_scale, int, float, float, float, float, {
  const float s = b[ib];
  if (!(s > 0.0f) || isinf(s)) o[0] = 1;
})
