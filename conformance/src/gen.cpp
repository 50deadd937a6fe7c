#include "gen.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace bpc {

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Rng::uniform(double lo, double hi) {
  const double u = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}

int64_t Rng::integer(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<int64_t>(next());
  return lo + static_cast<int64_t>(next() % span);
}

uint64_t hash_name(uint64_t seed, const std::string& s) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t HostTensor::numel() const { return numel_of(sizes); }

std::string sizes_str(const std::vector<int64_t>& sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? "," : "") << sizes[i];
  os << "]";
  return os.str();
}

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kContiguous: return "contiguous";
    case Layout::kTransposed: return "transposed";
    case Layout::kStrided: return "strided";
    case Layout::kOffset: return "offset";
    case Layout::kExpanded: return "expanded";
  }
  return "?";
}

std::vector<double> random_values(Rng& rng, DType d, int64_t n, const Domain& dom) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if (d == DType::kBool) {
      x = static_cast<double>(rng.next() & 1u);
    } else if (dtype_is_int(d)) {
      double lo = std::max(dom.ilo, dtype_int_min(d));
      double hi = std::min(dom.ihi, dtype_int_max(d));
      if (dom.full_int_range) {
        lo = dtype_int_min(d);
        // int64: stay where doubles are exact.
        hi = d == DType::kInt64 ? 9007199254740991.0 : dtype_int_max(d);
        if (d == DType::kInt64) lo = -9007199254740991.0;
      }
      x = static_cast<double>(rng.integer(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
    } else {
      x = dtype_round(d, rng.uniform(dom.lo, dom.hi));
    }
  }
  return v;
}

std::vector<double> special_values(DType d) {
  if (d == DType::kBool) return {0.0, 1.0};
  if (dtype_is_int(d)) {
    std::vector<double> v = {0.0, 1.0, dtype_int_max(d)};
    if (d == DType::kInt64) v[2] = 9007199254740991.0;  // largest exact in double
    if (d != DType::kUInt8) {
      v.push_back(-1.0);
      v.push_back(d == DType::kInt64 ? -9007199254740991.0 : dtype_int_min(d));
    } else {
      v.push_back(128.0);
    }
    return v;
  }
  const double mx = dtype_max_finite(d);
  const double mn = dtype_min_normal(d);
  const double sub = d == DType::kFloat64 ? 4.9406564584124654e-324 : dtype_ulp(d, 0.0);
  std::vector<double> v = {0.0,  -0.0,       INFINITY, -INFINITY, NAN,     1.0,
                           -1.0, mx,         -mx,      mx / 3.0,  mn,      -mn,
                           sub,  sub * 3.0,  0.5,      -2.5,      1e4,     -3e2};
  for (auto& x : v) x = dtype_round(d, x);
  return v;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

void unravel(int64_t flat, const std::vector<int64_t>& sizes, std::vector<int64_t>* idx) {
  idx->assign(sizes.size(), 0);
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return;
    (*idx)[i] = flat % sizes[i];
    flat /= sizes[i];
  }
}

bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>* out) {
  const size_t n = std::max(a.size(), b.size());
  out->assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    (*out)[i] = x == 1 ? y : x;
  }
  return true;
}

HostTensor broadcast_to(const HostTensor& t, const std::vector<int64_t>& sizes) {
  HostTensor r;
  r.dtype = t.dtype;
  r.sizes = sizes;
  const int64_t n = numel_of(sizes);
  r.values.resize(static_cast<size_t>(n));
  const std::vector<int64_t> src_strides = contiguous_strides(t.sizes);
  const size_t lead = sizes.size() - t.sizes.size();
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < n; ++k) {
    unravel(k, sizes, &idx);
    int64_t off = 0;
    for (size_t i = 0; i < t.sizes.size(); ++i) {
      if (t.sizes[i] != 1) off += idx[lead + i] * src_strides[i];
    }
    r.values[static_cast<size_t>(k)] = t.values[static_cast<size_t>(off)];
  }
  return r;
}

TensorInput make_input(Rng& rng, DType d, std::vector<int64_t> sizes, const Domain& dom,
                       Layout layout) {
  TensorInput in;
  in.t.dtype = d;
  in.t.sizes = std::move(sizes);
  in.t.values = random_values(rng, d, in.t.numel(), dom);
  in.layout = layout;
  return in;
}

TensorInput make_expanded(Rng& rng, DType d, std::vector<int64_t> base, std::vector<int64_t> sizes,
                          const Domain& dom) {
  HostTensor b;
  b.dtype = d;
  b.sizes = base;
  b.values = random_values(rng, d, numel_of(base), dom);
  TensorInput in;
  in.t = broadcast_to(b, sizes);
  in.layout = Layout::kExpanded;
  in.expand_from = std::move(base);
  return in;
}

namespace {

ShapeCase uniform_case(const std::string& desc, int arity, std::vector<int64_t> sizes,
                       bool quick = true) {
  ShapeCase c;
  c.desc = desc;
  c.sizes.assign(static_cast<size_t>(arity), sizes);
  c.layouts.assign(static_cast<size_t>(arity), Layout::kContiguous);
  c.expand_from.assign(static_cast<size_t>(arity), {});
  c.cpu_scalar.assign(static_cast<size_t>(arity), false);
  c.quick = quick;
  return c;
}

}  // namespace

std::vector<ShapeCase> pointwise_shape_cases(int arity, bool full) {
  std::vector<ShapeCase> cases;
  cases.push_back(uniform_case("contiguous [2,3]", arity, {2, 3}));
  cases.push_back(uniform_case("odd size [7]", arity, {7}));
  cases.push_back(uniform_case("odd size [17]", arity, {17}, false));
  cases.push_back(uniform_case("odd size [33]", arity, {33}));
  if (full) cases.push_back(uniform_case("odd size [1023]", arity, {1023}, false));
  if (arity >= 2) {
    ShapeCase c = uniform_case("broadcast [3,1] x [1,4]", arity, {3, 4});
    c.sizes[0] = {3, 1};
    c.sizes[1] = {1, 4};
    cases.push_back(c);
    ShapeCase r = uniform_case("broadcast [4,5] x [5] (rank)", arity, {4, 5}, false);
    r.sizes[1] = {5};
    cases.push_back(r);
  }
  {
    ShapeCase c = uniform_case("transposed view [5,7]", arity, {5, 7});
    c.layouts.assign(static_cast<size_t>(arity), Layout::kTransposed);
    if (arity >= 2) c.layouts[1] = Layout::kContiguous;
    cases.push_back(c);
  }
  {
    ShapeCase c = uniform_case("strided view [4,9] (slice step 2)", arity, {4, 9});
    c.layouts[0] = Layout::kStrided;
    cases.push_back(c);
  }
  {
    ShapeCase c = uniform_case("offset view [3,5] (narrow)", arity, {3, 5}, false);
    c.layouts.assign(static_cast<size_t>(arity), Layout::kOffset);
    cases.push_back(c);
  }
  {
    ShapeCase c = uniform_case("expanded view [1,6] -> [4,6]", arity, {4, 6});
    const size_t k = arity >= 2 ? 1 : 0;
    c.layouts[k] = Layout::kExpanded;
    c.expand_from[k] = {1, 6};
    cases.push_back(c);
  }
  cases.push_back(uniform_case("0-dim", arity, {}));
  if (arity >= 2) {
    ShapeCase c = uniform_case("0-dim CPU scalar with [2,3]", arity, {2, 3});
    c.sizes[1] = {};
    c.cpu_scalar[1] = true;
    cases.push_back(c);
  }
  cases.push_back(uniform_case("zero-size (0,)", arity, {0}));
  cases.push_back(uniform_case("zero-size (1,0,3)", arity, {1, 0, 3}));
  if (full && arity >= 2) {
    ShapeCase c = uniform_case("broadcast rank 4 [2,3,1,5] x [3,4,1]", arity, {2, 3, 4, 5}, false);
    c.sizes[0] = {2, 3, 1, 5};
    c.sizes[1] = {3, 4, 1};
    cases.push_back(c);
  }
  return cases;
}

}  // namespace bpc
