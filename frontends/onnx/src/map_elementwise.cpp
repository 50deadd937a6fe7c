// ONNX elementwise operators -> Backplane pointwise operators (numpy-style
// broadcasting is the same on both sides). Activations Backplane lacks as one
// operator are written with a few pointwise calls, following the ONNX
// operator's defining formula.
#include <cmath>
#include <limits>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

// Legacy (opset < 7) broadcasting with `broadcast`/`axis` attributes.
void no_legacy_broadcast(const OnnxNode& n) {
  if (n.get_int("broadcast", 0) != 0) unsupported_attr(n.op_type, "broadcast", std::to_string(n.get_int("broadcast", 0)));
}

// A binary operator that is one Backplane call.
MapFn binary(const char* bp_op) {
  return [bp_op](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    no_legacy_broadcast(n);
    need_dtype(n.op_type, bp_op, dtype_of(in[0].t));
    return {ex.call(bp_op, {vt(in[0].t), vt(in[1].t)})};
  };
}

MapFn unary(const char* bp_op) {
  return [bp_op](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, bp_op, dtype_of(in[0].t));
    return {ex.call(bp_op, {vt(in[0].t)})};
  };
}

// Float-only activations written as a formula of pointwise calls.
using Formula = std::function<bp_tensor_t*(Exec&, const OnnxNode&, bp_tensor_t* x, DType d)>;
MapFn formula(std::vector<const char*> uses, Formula f) {
  return [uses, f](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    if (!dtype_is_float(d)) throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(d) + ")"};
    for (const char* op : uses) need_dtype(n.op_type, op, d);
    return {f(ex, n, in[0].t, d)};
  };
}

bp_tensor_t* mul_s(Exec& ex, bp_tensor_t* x, double s) { return ex.call("mul.Tensor", {vt(x), vt(ex.scalar(s, dtype_of(x)))}); }
bp_tensor_t* add_s(Exec& ex, bp_tensor_t* x, double s) { return ex.call("add.Tensor", {vt(x), vt(ex.scalar(s, dtype_of(x)))}); }
bp_tensor_t* cmp_s(Exec& ex, const char* op, bp_tensor_t* x, double s) {
  return ex.call(op, {vt(x), vt(ex.scalar(s, dtype_of(x)))});
}
bp_tensor_t* where(Exec& ex, bp_tensor_t* c, bp_tensor_t* a, bp_tensor_t* b) {
  return ex.call("where.self", {vt(c), vt(a), vt(b)});
}
bp_tensor_t* clamp(Exec& ex, bp_tensor_t* x, double lo, double hi) {
  bp_tensor_t* y = ex.call("maximum", {vt(x), vt(ex.scalar(lo, dtype_of(x)))});
  return ex.call("minimum", {vt(y), vt(ex.scalar(hi, dtype_of(x)))});
}

// Sum / Mean / Max / Min of any number of inputs, folded pairwise.
MapFn variadic(const char* bp_op, bool mean) {
  return [bp_op, mean](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, bp_op, d);
    if (mean && !dtype_is_float(d)) throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(d) + ")"};
    bp_tensor_t* acc = in[0].t;
    for (size_t k = 1; k < in.size(); ++k) acc = ex.call(bp_op, {vt(acc), vt(in[k].t)});
    if (in.size() == 1) acc = ex.call("clone", {vt(acc)});
    if (mean) acc = ex.call("div.Tensor", {vt(acc), vt(ex.scalar(static_cast<double>(in.size()), d))});
    return {acc};
  };
}

}  // namespace

void register_elementwise(MapTable* t) {
  MapTable& m = *t;
  m["Add"] = binary("add.Tensor");
  m["Sub"] = binary("sub.Tensor");
  m["Mul"] = binary("mul.Tensor");
  m["Equal"] = binary("eq.Tensor");
  m["Less"] = binary("lt.Tensor");
  m["LessOrEqual"] = binary("le.Tensor");
  m["Greater"] = binary("gt.Tensor");
  m["GreaterOrEqual"] = binary("ge.Tensor");
  // Logical operators on bool tensors.
  m["And"] = binary("mul.Tensor");
  m["Or"] = binary("maximum");
  m["Xor"] = binary("ne.Tensor");
  m["Not"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "eq.Tensor", dtype_of(in[0].t));
    return {ex.call("eq.Tensor", {vt(in[0].t), vt(ex.scalar(0, DType::kBool))})};
  };
  // Integer Div truncates (ONNX: the C operator; numpy's // for the unsigned tests).
  m["Div"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    no_legacy_broadcast(n);
    const DType d = dtype_of(in[0].t);
    if (dtype_is_float(d)) {
      need_dtype(n.op_type, "div.Tensor", d);
      return {ex.call("div.Tensor", {vt(in[0].t), vt(in[1].t)})};
    }
    need_dtype(n.op_type, "div.Tensor_mode", d);
    return {ex.call("div.Tensor_mode", {vt(in[0].t), vt(in[1].t), vs("trunc")})};
  };
  // Mod: fmod=0 takes the divisor's sign (floor division), fmod=1 the dividend's (trunc).
  m["Mod"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    const bool fmod = n.get_int("fmod", 0) != 0;
    need_dtype(n.op_type, "div.Tensor_mode", d);
    bp_tensor_t* q = ex.call("div.Tensor_mode", {vt(in[0].t), vt(in[1].t), vs(fmod ? "trunc" : "floor")});
    return {ex.call("sub.Tensor", {vt(in[0].t), vt(ex.call("mul.Tensor", {vt(q), vt(in[1].t)}))})};
  };
  // Pow's result has the base's type (exponent may be another type).
  m["Pow"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    no_legacy_broadcast(n);
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "pow.Tensor_Tensor", d);
    need_dtype(n.op_type, "pow.Tensor_Tensor", dtype_of(in[1].t));
    // A float base squared (a constant exponent 2, as in exported layer
    // norms and variances): one multiply, as torch's pow does; x * x is the
    // correctly rounded square, so no less exact than pow.
    // (An exponent of higher rank than the base would broadcast it: no.)
    if (dtype_is_float(d) && in[1].host != nullptr && in[1].host->values.size() == 1 && in[1].host->values[0] == 2.0 &&
        in[1].host->ndim() <= bp_tensor_ndim(in[0].t)) {
      need_dtype(n.op_type, "mul.Tensor", d);
      return {ex.call("mul.Tensor", {vt(in[0].t), vt(in[0].t)})};
    }
    return {ex.cast(ex.call("pow.Tensor_Tensor", {vt(in[0].t), vt(in[1].t)}), d)};
  };
  m["Sum"] = variadic("add.Tensor", false);
  m["Mean"] = variadic("add.Tensor", true);
  m["Max"] = variadic("maximum", false);
  m["Min"] = variadic("minimum", false);
  m["Where"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "where.self", dtype_of(in[1].t));
    return {where(ex, in[0].t, in[1].t, in[2].t)};
  };

  m["Neg"] = unary("neg");
  m["Abs"] = unary("abs");
  m["Round"] = unary("round");
  m["Exp"] = unary("exp");
  m["Log"] = unary("log");
  m["Sqrt"] = unary("sqrt");
  m["Sin"] = unary("sin");
  m["Cos"] = unary("cos");
  m["Acos"] = unary("acos");
  m["Asin"] = unary("asin");
  m["Atan"] = unary("atan");
  m["Tanh"] = unary("tanh");
  m["Sigmoid"] = unary("sigmoid");
  m["Erf"] = unary("erf");
  m["Relu"] = unary("relu");
  m["Identity"] = unary("clone");
  m["Gelu"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "gelu", dtype_of(in[0].t));
    const std::string approx = n.get_string("approximate", "none");
    return {ex.call("gelu", {vt(in[0].t), vs(approx.c_str())})};
  };
  m["Reciprocal"] = formula({"div.Tensor"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType d) {
    return ex.call("div.Tensor", {vt(ex.scalar(1.0, d)), vt(x)});
  });
  // floor(x) = floor-division by 1, exact for floats; ceil(x) = -floor(-x).
  m["Floor"] = formula({"div.Tensor_mode"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType d) {
    return ex.call("div.Tensor_mode", {vt(x), vt(ex.scalar(1.0, d)), vs("floor")});
  });
  m["Ceil"] = formula({"div.Tensor_mode", "neg"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType d) {
    bp_tensor_t* f = ex.call("div.Tensor_mode", {vt(ex.call("neg", {vt(x)})), vt(ex.scalar(1.0, d)), vs("floor")});
    return ex.call("neg", {vt(f)});
  });
  m["LeakyRelu"] = formula({"where.self"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType) {
    return where(ex, cmp_s(ex, "lt.Tensor", x, 0), mul_s(ex, x, n.get_float("alpha", 0.01)), x);
  });
  m["PRelu"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "where.self", d);
    need_dtype(n.op_type, "mul.Tensor", d);
    bp_tensor_t* neg = ex.call("mul.Tensor", {vt(in[0].t), vt(in[1].t)});
    bp_tensor_t* y = where(ex, cmp_s(ex, "lt.Tensor", in[0].t, 0), neg, in[0].t);
    // PRelu broadcasts slope to x only (unidirectional): x's sizes win.
    return {ex.call("expand", {vt(y), vl(sizes_of(in[0].t))})};
  };
  m["ThresholdedRelu"] = formula({"where.self"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType d) {
    return where(ex, cmp_s(ex, "gt.Tensor", x, n.get_float("alpha", 1.0)), x, ex.scalar(0, d));
  });
  m["Elu"] = formula({"exp", "where.self"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType) {
    bp_tensor_t* e = mul_s(ex, add_s(ex, ex.call("exp", {vt(x)}), -1.0), n.get_float("alpha", 1.0));
    return where(ex, cmp_s(ex, "lt.Tensor", x, 0), e, x);
  });
  m["Celu"] = formula({"exp", "where.self"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType) {
    const double alpha = n.get_float("alpha", 1.0);
    bp_tensor_t* e = mul_s(ex, add_s(ex, ex.call("exp", {vt(mul_s(ex, x, 1.0 / alpha))}), -1.0), alpha);
    return where(ex, cmp_s(ex, "lt.Tensor", x, 0), e, x);
  });
  m["Selu"] = formula({"exp", "where.self"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType) {
    const double alpha = n.get_float("alpha", 1.67326319217681884765625);
    const double gamma = n.get_float("gamma", 1.05070102214813232421875);
    bp_tensor_t* e = mul_s(ex, add_s(ex, ex.call("exp", {vt(x)}), -1.0), alpha * gamma);
    return where(ex, cmp_s(ex, "le.Tensor", x, 0), e, mul_s(ex, x, gamma));
  });
  m["Softplus"] = formula({"exp", "log"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    return ex.call("log", {vt(add_s(ex, ex.call("exp", {vt(x)}), 1.0))});
  });
  m["Softsign"] = formula({"abs", "div.Tensor"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    return ex.call("div.Tensor", {vt(x), vt(add_s(ex, ex.call("abs", {vt(x)}), 1.0))});
  });
  m["HardSigmoid"] = formula({"maximum"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType) {
    return clamp(ex, add_s(ex, mul_s(ex, x, n.get_float("alpha", 0.2)), n.get_float("beta", 0.5)), 0.0, 1.0);
  });
  m["HardSwish"] = formula({"maximum"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    return ex.call("mul.Tensor", {vt(x), vt(clamp(ex, add_s(ex, mul_s(ex, x, 1.0 / 6.0), 0.5), 0.0, 1.0))});
  });
  m["Shrink"] = formula({"where.self"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType d) {
    const double l = n.get_float("lambd", 0.5), b = n.get_float("bias", 0.0);
    bp_tensor_t* hi = where(ex, cmp_s(ex, "gt.Tensor", x, l), add_s(ex, x, -b), ex.scalar(0, d));
    return where(ex, cmp_s(ex, "lt.Tensor", x, -l), add_s(ex, x, b), hi);
  });
  // Hyperbolic and tangent functions from their exp/sin/cos/log/sqrt definitions.
  m["Sinh"] = formula({"exp"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    bp_tensor_t* d = ex.call("sub.Tensor", {vt(ex.call("exp", {vt(x)})), vt(ex.call("exp", {vt(ex.call("neg", {vt(x)}))}))});
    return mul_s(ex, d, 0.5);
  });
  m["Cosh"] = formula({"exp"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    bp_tensor_t* s = ex.call("add.Tensor", {vt(ex.call("exp", {vt(x)})), vt(ex.call("exp", {vt(ex.call("neg", {vt(x)}))}))});
    return mul_s(ex, s, 0.5);
  });
  m["Tan"] = formula({"sin", "cos"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    return ex.call("div.Tensor", {vt(ex.call("sin", {vt(x)})), vt(ex.call("cos", {vt(x)}))});
  });
  m["Asinh"] = formula({"log", "sqrt"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    bp_tensor_t* r = ex.call("sqrt", {vt(add_s(ex, ex.call("mul.Tensor", {vt(x), vt(x)}), 1.0))});
    return ex.call("log", {vt(ex.call("add.Tensor", {vt(x), vt(r)}))});
  });
  m["Acosh"] = formula({"log", "sqrt"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    bp_tensor_t* r = ex.call("sqrt", {vt(add_s(ex, ex.call("mul.Tensor", {vt(x), vt(x)}), -1.0))});
    return ex.call("log", {vt(ex.call("add.Tensor", {vt(x), vt(r)}))});
  });
  m["Atanh"] = formula({"log"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType d) {
    bp_tensor_t* q = ex.call("div.Tensor", {vt(add_s(ex, x, 1.0)),
                                            vt(ex.call("sub.Tensor", {vt(ex.scalar(1.0, d)), vt(x)}))});
    return mul_s(ex, ex.call("log", {vt(q)}), 0.5);
  });
  m["IsNaN"] = formula({"ne.Tensor"}, [](Exec& ex, const OnnxNode&, bp_tensor_t* x, DType) {
    return ex.call("ne.Tensor", {vt(x), vt(x)});
  });
  m["IsInf"] = formula({"eq.Tensor"}, [](Exec& ex, const OnnxNode& n, bp_tensor_t* x, DType d) {
    const double inf = std::numeric_limits<double>::infinity();
    const bool pos = n.get_int("detect_positive", 1) != 0, negv = n.get_int("detect_negative", 1) != 0;
    bp_tensor_t* p = pos ? cmp_s(ex, "eq.Tensor", x, inf) : nullptr;
    bp_tensor_t* q = negv ? cmp_s(ex, "eq.Tensor", x, -inf) : nullptr;
    if (p && q) return ex.call("maximum", {vt(p), vt(q)});
    if (p || q) return p ? p : q;
    (void)d;
    return ex.full(sizes_of(x), DType::kBool, 0.0);
  });
  // Sign: (x > 0) - (x < 0) in x's dtype.
  m["Sign"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "sub.Tensor", d);
    bp_tensor_t* p = ex.cast(cmp_s(ex, "gt.Tensor", in[0].t, 0), d);
    bp_tensor_t* q = ex.cast(cmp_s(ex, "lt.Tensor", in[0].t, 0), d);
    return {ex.call("sub.Tensor", {vt(p), vt(q)})};
  };
  // Clip: bounds are attributes before opset 11, optional 0-dim inputs after.
  m["Clip"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "maximum", d);
    bp_tensor_t* y = in[0].t;
    bp_tensor_t* lo = nullptr;
    bp_tensor_t* hi = nullptr;
    if (n.opset < 11) {
      if (n.has("min")) lo = ex.scalar(n.get_float("min", 0), d);
      if (n.has("max")) hi = ex.scalar(n.get_float("max", 0), d);
    } else {
      if (in.size() > 1 && in[1].present()) lo = in[1].t;
      if (in.size() > 2 && in[2].present()) hi = in[2].t;
    }
    if (lo != nullptr) y = ex.call("maximum", {vt(y), vt(lo)});
    if (hi != nullptr) y = ex.call("minimum", {vt(y), vt(hi)});
    if (y == in[0].t) y = ex.call("clone", {vt(y)});
    return {y};
  };
}

}  // namespace bponnx
