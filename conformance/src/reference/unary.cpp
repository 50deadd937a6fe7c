// Unary pointwise operators: samples and reference.
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

bool float_only_result(const std::string& op) {
  return op == "exp" || op == "log" || op == "sqrt" || op == "rsqrt" || op == "sin" ||
         op == "cos" || op == "tanh" || op == "sigmoid" || op == "erf" || op == "acos" || op == "asin" ||
         op == "atan";
}

Domain domain_for(const std::string& op) {
  Domain dom;
  if (op == "exp") { dom.lo = -10.0; dom.hi = 10.0; dom.ilo = -10.0; dom.ihi = 10.0; }
  else if (op == "log" || op == "sqrt" || op == "rsqrt") { dom.lo = 0.001; dom.hi = 100.0; dom.ilo = 0.0; dom.ihi = 1000.0; }
  else if (op == "sin" || op == "cos") { dom.lo = -10.0; dom.hi = 10.0; dom.ilo = -100.0; dom.ihi = 100.0; }
  else if (op == "acos" || op == "asin") { dom.lo = -1.0; dom.hi = 1.0; dom.ilo = -1.0; dom.ihi = 1.0; }
  else if (op == "atan") { dom.lo = -20.0; dom.hi = 20.0; dom.ilo = -100.0; dom.ihi = 100.0; }
  else if (op == "tanh" || op == "erf") { dom.lo = -4.0; dom.hi = 4.0; dom.ilo = -5.0; dom.ihi = 5.0; }
  else if (op == "sigmoid" || op == "gelu" || op == "silu") { dom.lo = -8.0; dom.hi = 8.0; dom.ilo = -10.0; dom.ihi = 10.0; }
  else { dom.full_int_range = true; }  // neg, abs, round, relu: integers over the whole range
  return dom;
}

void add_trailing(const std::string& op, Sample* s, int variant) {
  if (op == "gelu") s->args.push_back(Arg::string_of(variant == 0 ? "none" : "tanh"));
}

std::vector<Sample> unary_samples(const std::string& op, DType d, uint64_t seed, bool full) {
  Rng rng(seed);
  std::vector<Sample> out;
  const Domain dom = domain_for(op);
  const int variants = op == "gelu" ? 2 : 1;
  int n = 0;
  for (const ShapeCase& c : pointwise_shape_cases(1, full)) {
    Sample s;
    s.desc = c.desc;
    s.quick = c.quick;
    s.args = inputs_from_shape_case(c, {d}, {dom}, rng);
    const int v = n++ % variants;
    add_trailing(op, &s, v);
    if (op == "gelu") s.desc += v == 0 ? ", approximate none" : ", approximate tanh";
    out.push_back(std::move(s));
  }
  for (int v = 0; v < variants; ++v) {
    Sample s;
    s.desc = "special values";
    s.args.push_back(Arg::tensor_of(tensor_of_values(d, special_values(d))));
    add_trailing(op, &s, v);
    if (op == "gelu") s.desc += v == 0 ? ", approximate none" : ", approximate tanh";
    out.push_back(std::move(s));
  }
  if (op == "round" && dtype_is_float(d)) {
    // Exact halves: ties go to the even neighbour (torch.round, ONNX Round).
    Sample s;
    s.desc = "halves round to even";
    s.args.push_back(Arg::tensor_of(tensor_of_values(d, {-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, -0.25, 0.75})));
    out.push_back(std::move(s));
  }
  // Bad input: a dtype the operator rejects.
  if (d == DType::kFloat32 && (op == "neg" || op == "abs" || op == "round" || op == "relu" || op == "gelu" || op == "silu")) {
    Sample s;
    s.desc = op == "gelu" || op == "silu" ? "error: int32 input (floating dtypes only)"
                                           : "error: bool input (rejected)";
    s.expect_error = true;
    const DType bad = op == "gelu" || op == "silu" ? DType::kInt32 : DType::kBool;
    s.args.push_back(Arg::tensor_of(make_input(rng, bad, {2, 3}, dom)));
    add_trailing(op, &s, 0);
    out.push_back(std::move(s));
  }
  if (op == "gelu" && d == DType::kFloat32) {
    Sample s;
    s.desc = "error: approximate='fast' (must be 'none' or 'tanh')";
    s.expect_error = true;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 3}, dom)));
    s.args.push_back(Arg::string_of("fast"));
    out.push_back(std::move(s));
  }
  return out;
}

double gelu_ref(double x, bool tanh_approx) {
  if (tanh_approx) {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

Expected unary_reference(const std::string& op, const Sample& s) {
  const HostTensor& a = tensor_arg(s, 0);
  const DType d = a.dtype;
  const bool fl = dtype_is_float(d);
  if (float_only_result(op)) {
    const DType r = float_result(d);
    double (*f)(double) = nullptr;
    if (op == "exp") f = [](double x) { return std::exp(x); };
    else if (op == "log") f = [](double x) { return std::log(x); };
    else if (op == "sqrt") f = [](double x) { return std::sqrt(x); };
    else if (op == "rsqrt") f = [](double x) { return 1.0 / std::sqrt(x); };
    else if (op == "sin") f = [](double x) { return std::sin(x); };
    else if (op == "cos") f = [](double x) { return std::cos(x); };
    else if (op == "tanh") f = [](double x) { return std::tanh(x); };
    else if (op == "acos") f = [](double x) { return std::acos(x); };
    else if (op == "asin") f = [](double x) { return std::asin(x); };
    else if (op == "atan") f = [](double x) { return std::atan(x); };
    else if (op == "sigmoid") f = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    else f = [](double x) { return std::erf(x); };
    // Integer and bool inputs are cast to float32 before the function.
    return single_output(map_elementwise({&a}, r, [f, r](const double* x) { return f(dtype_round(r, x[0])); }));
  }
  std::function<double(const double*)> fn;
  if (op == "neg") {
    if (fl) fn = [](const double* x) { return -x[0]; };
    else fn = [d](const double* x) { return wrap_to(d, 0u - as_u64(x[0])); };
  } else if (op == "abs") {
    if (fl) fn = [](const double* x) { return std::fabs(x[0]); };
    else fn = [d](const double* x) { return x[0] < 0 ? wrap_to(d, 0u - as_u64(x[0])) : x[0]; };
  } else if (op == "round") {
    // Halves to even (torch.round); integers unchanged.
    fn = [](const double* x) { return std::nearbyint(x[0]); };
  } else if (op == "relu") {
    fn = [](const double* x) { return std::isnan(x[0]) ? x[0] : (x[0] > 0.0 ? x[0] : 0.0); };
  } else if (op == "gelu") {
    const bool t = s.args.size() > 1 && s.args[1].kind == Arg::kString && s.args[1].s == "tanh";
    fn = [t](const double* x) { return gelu_ref(x[0], t); };
  } else if (op == "silu") {
    fn = [](const double* x) { return x[0] / (1.0 + std::exp(-x[0])); };
  } else {
    return reference_error("no reference for " + op);
  }
  return single_output(map_elementwise({&a}, d, fn));
}

}  // namespace

void register_unary_ops(std::vector<OpDef>* defs) {
  defs->push_back({"neg", unary_samples, unary_reference, 0.5});
  defs->push_back({"abs", unary_samples, unary_reference, 0.5});
  defs->push_back({"round", unary_samples, unary_reference, 0.5});
  defs->push_back({"relu", unary_samples, unary_reference, 0.5});
  defs->push_back({"exp", unary_samples, unary_reference, 3.0});
  defs->push_back({"log", unary_samples, unary_reference, 3.0});
  defs->push_back({"sqrt", unary_samples, unary_reference, 3.0});
  defs->push_back({"rsqrt", unary_samples, unary_reference, 0.0});
  defs->push_back({"sin", unary_samples, unary_reference, 4.0});
  defs->push_back({"cos", unary_samples, unary_reference, 4.0});
  defs->push_back({"tanh", unary_samples, unary_reference, 5.0});
  // OpenCL C's bounds: acos, asin 4 ulp; atan 5 ulp.
  defs->push_back({"acos", unary_samples, unary_reference, 4.0});
  defs->push_back({"asin", unary_samples, unary_reference, 4.0});
  defs->push_back({"atan", unary_samples, unary_reference, 5.0});
  defs->push_back({"sigmoid", unary_samples, unary_reference, 0.0});
  defs->push_back({"erf", unary_samples, unary_reference, 16.0});
  defs->push_back({"gelu", unary_samples, unary_reference, 0.0});
  defs->push_back({"silu", unary_samples, unary_reference, 0.0});
}

}  // namespace bpc
