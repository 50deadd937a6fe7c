// Binary pointwise operators, comparisons and where: samples and reference.
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

bool is_comparison(const std::string& op) {
  return op == "eq.Tensor" || op == "ne.Tensor" || op == "lt.Tensor" || op == "le.Tensor" ||
         op == "gt.Tensor" || op == "ge.Tensor";
}

// Value ranges: arithmetic on integers wraps over the dtype's whole range
// (int64 products stay below 2^53 so doubles hold them exactly); comparisons
// draw from a few values so that ties occur.
Domain domain_for(const std::string& op, DType d, int arg) {
  Domain dom;
  if (is_comparison(op)) {
    dom.lo = -3.0; dom.hi = 3.0; dom.ilo = -3.0; dom.ihi = 3.0;
  } else if (op == "pow.Tensor_Tensor") {
    if (arg == 0) { dom.lo = 0.1; dom.hi = 4.0; dom.ilo = -4.0; dom.ihi = 4.0; }
    else { dom.lo = -3.0; dom.hi = 3.0; dom.ilo = 0.0; dom.ihi = 6.0; }
  } else if (op == "div.Tensor_mode") {
    dom.ilo = -100.0; dom.ihi = 100.0;
  } else if (op == "mul.Tensor") {
    dom.full_int_range = d != DType::kInt64;
    dom.ilo = -67108864.0; dom.ihi = 67108864.0;  // 2^26
  } else {
    dom.full_int_range = d != DType::kInt64;
    dom.ilo = -1125899906842624.0; dom.ihi = 1125899906842624.0;  // 2^50
  }
  return dom;
}

// Comparisons draw floats on a grid of 0.5 so that equal pairs are common.
void snap_for_ties(Sample* s) {
  for (Arg& a : s->args) {
    if (a.kind != Arg::kTensor || !dtype_is_float(a.tensor.t.dtype)) continue;
    for (double& v : a.tensor.t.values) v = std::round(v * 2.0) / 2.0;
  }
}

// Divisors of floor/trunc division: powers of two keep the quotient exact,
// so the rounded quotient is unambiguous; integer divisors are never zero.
// The replacement depends only on the value, so an expanded (broadcast)
// input stays consistent with its base.
void fix_divisors(Sample* s) {
  static const double kPow2[] = {0.25, 0.5, 1.0, 2.0, 4.0, -0.25, -0.5, -1.0, -2.0, -4.0};
  HostTensor& t = s->args[1].tensor.t;
  for (double& v : t.values) {
    if (dtype_is_float(t.dtype)) v = kPow2[static_cast<uint64_t>(std::fabs(v) * 1024.0) % 10];
    else if (v == 0.0) v = 1.0;
  }
}

void add_trailing_args(const std::string& op, DType d, Sample* s, int variant) {
  if (op == "add.Tensor" || op == "sub.Tensor") {
    if (variant == 0) s->args.push_back(Arg::int_of(1));
    else if (dtype_is_float(d)) s->args.push_back(Arg::double_of(0.5));
    else s->args.push_back(Arg::int_of(d == DType::kBool ? 1 : 2));
  } else if (op == "div.Tensor_mode") {
    if (variant == 0) s->args.push_back(Arg::none());
    else s->args.push_back(Arg::string_of(variant == 1 ? "trunc" : "floor"));
  }
}

std::vector<Sample> binary_samples(const std::string& op, DType d, uint64_t seed, bool full) {
  Rng rng(seed);
  std::vector<Sample> out;
  const bool where = op == "where.self";
  const int arity = where ? 3 : 2;
  const int variants = op == "div.Tensor_mode" ? 3 : (op == "add.Tensor" || op == "sub.Tensor") ? 2 : 1;
  std::vector<DType> dtypes(static_cast<size_t>(arity), d);
  std::vector<Domain> doms;
  for (int k = 0; k < arity; ++k) doms.push_back(domain_for(op, d, where ? k - 1 : k));
  if (where) dtypes[0] = DType::kBool;
  int n = 0;
  for (const ShapeCase& c : pointwise_shape_cases(arity, full)) {
    Sample s;
    s.desc = c.desc;
    s.quick = c.quick;
    s.args = inputs_from_shape_case(c, dtypes, doms, rng);
    const int variant = n++ % variants;
    add_trailing_args(op, d, &s, variant);
    if (variant == 1 && (op == "add.Tensor" || op == "sub.Tensor")) s.desc += ", alpha != 1";
    if (op == "div.Tensor_mode") s.desc += variant == 0 ? ", mode None" : variant == 1 ? ", mode trunc" : ", mode floor";
    if (is_comparison(op)) snap_for_ties(&s);
    if (op == "div.Tensor_mode") fix_divisors(&s);
    out.push_back(std::move(s));
  }
  // Special values: every pair (pow on integers: exponents must be >= 0).
  for (int variant = 0; variant < variants; ++variant) {
    Sample s;
    s.desc = "special values (all pairs)";
    TensorInput a, b;
    std::vector<double> sp = special_values(d);
    special_pairs(d, sp, &a, &b);
    if (op == "pow.Tensor_Tensor" && !dtype_is_float(d)) {
      for (double& v : b.t.values) v = std::fmod(std::fabs(v), 4.0);
    }
    if (where) {
      TensorInput cond = tensor_of_values(DType::kBool, std::vector<double>(a.t.values.size()));
      for (size_t i = 0; i < cond.t.values.size(); ++i) cond.t.values[i] = (i % 3) == 1;
      s.args.push_back(Arg::tensor_of(cond));
    }
    s.args.push_back(Arg::tensor_of(a));
    s.args.push_back(Arg::tensor_of(b));
    if (op == "div.Tensor_mode" && !dtype_is_float(d)) {
      for (double& v : s.args[1].tensor.t.values) if (v == 0.0) v = 1.0;
    }
    add_trailing_args(op, d, &s, variant);
    if (op == "div.Tensor_mode") s.desc += variant == 0 ? ", mode None" : variant == 1 ? ", mode trunc" : ", mode floor";
    if (variant == 1 && (op == "add.Tensor" || op == "sub.Tensor")) s.desc += ", alpha != 1";
    out.push_back(std::move(s));
  }
  // Bad input: shapes that do not broadcast.
  {
    Sample s;
    s.desc = "error: shapes [2,3] and [4,3] do not broadcast";
    s.expect_error = true;
    if (where) s.args.push_back(Arg::tensor_of(make_input(rng, DType::kBool, {2, 3}, doms[0])));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 3}, doms[0])));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {4, 3}, doms[0])));
    add_trailing_args(op, d, &s, 0);
    out.push_back(std::move(s));
  }
  if (where) {
    Sample s;
    s.desc = "error: condition of dtype " + std::string(dtype_name(d == DType::kBool ? DType::kFloat32 : d)) + " (must be bool)";
    s.expect_error = true;
    const DType cd = d == DType::kBool ? DType::kFloat32 : d;
    s.args.push_back(Arg::tensor_of(make_input(rng, cd, {2, 3}, doms[1])));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 3}, doms[1])));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 3}, doms[1])));
    out.push_back(std::move(s));
  }
  if (op == "pow.Tensor_Tensor" && d == DType::kInt64) {
    // Promotion: a bool base computes in the exponent's dtype (torch: int64 {1, 0}).
    Sample s;
    s.desc = "promotion: bool base, int64 exponent";
    s.args.push_back(Arg::tensor_of(tensor_of_values(DType::kBool, {1, 0, 1, 0})));
    s.args.push_back(Arg::tensor_of(tensor_of_values(DType::kInt64, {3, 2, 0, 0})));
    out.push_back(std::move(s));
  }
  if (op == "sub.Tensor" && d == DType::kFloat32) {
    Sample s;
    s.desc = "error: bool inputs (sub rejects bool)";
    s.expect_error = true;
    s.args.push_back(Arg::tensor_of(make_input(rng, DType::kBool, {2, 3}, doms[0])));
    s.args.push_back(Arg::tensor_of(make_input(rng, DType::kBool, {2, 3}, doms[0])));
    s.args.push_back(Arg::int_of(1));
    out.push_back(std::move(s));
  }
  return out;
}

uint64_t ipow(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1u) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

// Python's a // b for floats, as torch.div(rounding_mode='floor') defines it:
// computed from fmod so that inf // 1 is NaN and -1 // inf is -1.
double floor_div(double a, double b) {
  if (b == 0.0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && (b < 0.0) != (mod < 0.0)) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  if (div - fl > 0.5) fl += 1.0;
  return fl;
}

Expected binary_reference(const std::string& op, const Sample& s) {
  if (op == "where.self") {
    const HostTensor& c = tensor_arg(s, 0);
    const HostTensor& a = tensor_arg(s, 1);
    const HostTensor& b = tensor_arg(s, 2);
    return single_output(map_elementwise({&c, &a, &b}, a.dtype,
                                         [](const double* x) { return x[0] != 0.0 ? x[1] : x[2]; }));
  }
  const HostTensor& a = tensor_arg(s, 0);
  const HostTensor& b = tensor_arg(s, 1);
  // Samples mix dtypes only with a bool operand, which promotes to the other's.
  const DType d = a.dtype == DType::kBool ? b.dtype : a.dtype;
  const bool fl = dtype_is_float(d);
  if (is_comparison(op)) {
    const std::string name = op.substr(0, 2);
    return single_output(map_elementwise({&a, &b}, DType::kBool, [name](const double* x) {
      bool r = false;
      if (name == "eq") r = x[0] == x[1];
      else if (name == "ne") r = x[0] != x[1];
      else if (name == "lt") r = x[0] < x[1];
      else if (name == "le") r = x[0] <= x[1];
      else if (name == "gt") r = x[0] > x[1];
      else r = x[0] >= x[1];
      return r ? 1.0 : 0.0;
    }));
  }
  double alpha = 1.0;
  if (s.args.size() > 2 && s.args[2].kind == Arg::kInt) alpha = static_cast<double>(s.args[2].i);
  if (s.args.size() > 2 && s.args[2].kind == Arg::kDouble) alpha = s.args[2].d;
  if (s.args.size() > 2 && s.args[2].kind == Arg::kBool) alpha = s.args[2].b ? 1.0 : 0.0;
  std::string mode;
  if (op == "div.Tensor_mode" && s.args.size() > 2 && s.args[2].kind == Arg::kString) mode = s.args[2].s;
  if (op == "div.Tensor" || (op == "div.Tensor_mode" && mode.empty())) {
    // True division: integer and bool inputs are cast to float32 first.
    const DType r = float_result(d);
    return single_output(map_elementwise({&a, &b}, r, [r](const double* x) {
      return dtype_round(r, x[0]) / dtype_round(r, x[1]);
    }));
  }
  if (op == "div.Tensor_mode") {
    const bool trunc = mode == "trunc";
    return single_output(map_elementwise({&a, &b}, d, [fl, trunc, d](const double* x) {
      if (fl) return trunc ? std::trunc(x[0] / x[1]) : floor_div(x[0], x[1]);
      // Integers: C division truncates; floor corrects toward -inf.
      const int64_t p = static_cast<int64_t>(x[0]), q = static_cast<int64_t>(x[1]);
      if (q == -1) return wrap_to(d, 0u - static_cast<uint64_t>(p));  // min / -1 wraps
      int64_t t = p / q;
      if (!trunc && (p % q != 0) && ((p < 0) != (q < 0))) t -= 1;
      return static_cast<double>(t);
    }));
  }
  std::function<double(const double*)> fn;
  if (op == "add.Tensor" || op == "sub.Tensor") {
    const double sign = op == "add.Tensor" ? 1.0 : -1.0;
    if (fl) {
      fn = [alpha, sign](const double* x) { return x[0] + sign * alpha * x[1]; };
    } else {
      const uint64_t al = static_cast<uint64_t>(static_cast<int64_t>(alpha));
      fn = [al, sign, d](const double* x) {
        const uint64_t t = al * as_u64(x[1]);
        return wrap_to(d, sign > 0 ? as_u64(x[0]) + t : as_u64(x[0]) - t);
      };
    }
  } else if (op == "mul.Tensor") {
    if (fl) fn = [](const double* x) { return x[0] * x[1]; };
    else fn = [d](const double* x) { return wrap_to(d, as_u64(x[0]) * as_u64(x[1])); };
  } else if (op == "maximum" || op == "minimum") {
    const bool mx = op == "maximum";
    fn = [mx](const double* x) {
      if (std::isnan(x[0]) || std::isnan(x[1])) return static_cast<double>(NAN);
      return mx ? std::max(x[0], x[1]) : std::min(x[0], x[1]);
    };
  } else if (op == "pow.Tensor_Tensor") {
    if (fl) fn = [](const double* x) { return std::pow(x[0], x[1]); };
    else fn = [d](const double* x) { return wrap_to(d, ipow(as_u64(x[0]), as_u64(x[1]))); };
  } else {
    return reference_error("no reference for " + op);
  }
  return single_output(map_elementwise({&a, &b}, d, fn));
}

}  // namespace

void register_binary_ops(std::vector<OpDef>* defs) {
  defs->push_back({"add.Tensor", binary_samples, binary_reference, 0.5});
  defs->push_back({"sub.Tensor", binary_samples, binary_reference, 0.5});
  defs->push_back({"mul.Tensor", binary_samples, binary_reference, 0.5});
  defs->push_back({"div.Tensor", binary_samples, binary_reference, 2.5});
  defs->push_back({"div.Tensor_mode", binary_samples, binary_reference, 2.5});
  defs->push_back({"maximum", binary_samples, binary_reference, 0.5});
  defs->push_back({"minimum", binary_samples, binary_reference, 0.5});
  defs->push_back({"pow.Tensor_Tensor", binary_samples, binary_reference, 16.0});
  for (const char* c : {"eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor"}) {
    defs->push_back({c, binary_samples, binary_reference, 0.0});
  }
  defs->push_back({"where.self", binary_samples, binary_reference, 0.0});
}

}  // namespace bpc
