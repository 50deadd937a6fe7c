// The CPU backend's vectorized binary pointwise path (add, sub, mul, div,
// comparisons, where on float32, add and sub with alpha;
// backends/cpu/kernels/simd_binary.cpp), broadcast-by-row on either side:
// lengths that are not a multiple of any vector width, row and one-element
// broadcasts, 0-dim, strided rows (staged), NaN, calls large enough to split
// across threads, and the other dtypes, which keep the scalar loop. Every
// expectation is the scalar C++ result of the same float operation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cpu_kernels_fixture.h"

using namespace bp_test;

namespace {

// Values with NaN, infinities, signed zeros and a spread of magnitudes.
float Value(int64_t i, int salt) {
  switch ((i * 7 + salt) % 11) {
    case 0:
      return std::numeric_limits<float>::quiet_NaN();
    case 1:
      return -0.0f;
    case 2:
      return std::numeric_limits<float>::infinity();
    case 3:
      return 2.0f;
    default:
      return static_cast<float>((i * 37 + salt * 11) % 23) * 0.37f - 4.0f;
  }
}

void FillValues(HostTensor& t, int64_t n, int salt) {
  float* p = t.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = Value(i, salt);
}

// Same bits, or both NaN.
bool SameFloat(float x, float y) { return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, 4) == 0; }

struct ArithCase {
  const char* op;
  float (*f)(float, float);
};
const ArithCase kArith[] = {
    {"add.Tensor", [](float x, float y) { return x + y; }},
    {"sub.Tensor", [](float x, float y) { return x - y; }},
    {"mul.Tensor", [](float x, float y) { return x * y; }},
    {"div.Tensor", [](float x, float y) { return x / y; }},
};
struct CmpCase {
  const char* op;
  bool (*f)(float, float);
};
const CmpCase kCmp[] = {
    {"eq.Tensor", [](float x, float y) { return x == y; }}, {"ne.Tensor", [](float x, float y) { return x != y; }},
    {"lt.Tensor", [](float x, float y) { return x < y; }},  {"le.Tensor", [](float x, float y) { return x <= y; }},
    {"gt.Tensor", [](float x, float y) { return x > y; }},  {"ge.Tensor", [](float x, float y) { return x >= y; }},
};

std::vector<bp_kernel_arg_t> Args(const std::string& op, const HostTensor& a, const HostTensor& b) {
  if (op == "add.Tensor" || op == "sub.Tensor") return {TArg(a), TArg(b), IArg(1)};
  return {TArg(a), TArg(b)};
}

class VecBinary : public CpuKernels {
 protected:
  static void CheckAll(int64_t rows, int64_t cols, std::vector<int64_t> b_strides);
};

// out = op(a, b) with a [rows, cols] and b [rows, cols] through the view
// b_strides (contiguous, row broadcast {0, 1}, one element {0, 0}); every
// element checked against the scalar operation.
void VecBinary::CheckAll(int64_t rows, int64_t cols, std::vector<int64_t> b_strides) {
  const int64_t n = rows * cols;
  HostTensor a(F32(), {rows, cols}), b(F32(), {rows, cols}), out(F32(), {rows, cols}), c(Bool(), {rows, cols});
  FillValues(a, n, 1);
  FillValues(b, n, 4);
  b.SetView({rows, cols}, b_strides);
  auto bv = [&](int64_t i) { return b.data<float>()[(i / cols) * b_strides[0] + (i % cols) * b_strides[1]]; };
  const float* pa = a.data<float>();
  const std::string where = std::to_string(rows) + "x" + std::to_string(cols);
  for (const ArithCase& k : kArith) {
    ASSERT_EQ(Call(k.op, Args(k.op, a, b), {&out}), BP_STATUS_OK) << LastError();
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += !SameFloat(out.data<float>()[i], k.f(pa[i], bv(i)));
    EXPECT_EQ(bad, 0) << k.op << " " << where;
  }
  for (const CmpCase& k : kCmp) {
    ASSERT_EQ(Call(k.op, Args(k.op, a, b), {&c}), BP_STATUS_OK) << LastError();
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += c.data<uint8_t>()[i] != (k.f(pa[i], bv(i)) ? 1 : 0);
    EXPECT_EQ(bad, 0) << k.op << " " << where;
  }
  // where(a > b, a, b) selects the stored bits, NaN payloads and -0.0 included.
  ASSERT_EQ(Call("where.self", {TArg(c), TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float want = c.data<uint8_t>()[i] ? pa[i] : bv(i);
    bad += std::memcmp(&out.data<float>()[i], &want, 4) != 0;
  }
  EXPECT_EQ(bad, 0) << "where.self " << where;
}

TEST_F(VecBinary, TailsOfEveryLength) {
  // Below 64 elements the scalar loop runs (vec_rows.h); 64..100 covers
  // every tail of 4-, 8- and 16-lane vectors after several full vectors.
  for (int64_t n = 1; n <= 100; ++n) CheckAll(1, n, {n, 1});
}

TEST_F(VecBinary, RowAndElementBroadcast) {
  CheckAll(5, 37, {0, 1});  // b is a row vector
  CheckAll(5, 37, {0, 0});  // b is one element (a 0-dim operand broadcast)
  CheckAll(3, 1, {0, 0});
  CheckAll(70, 1, {0, 0});  // rows of one element, coalesced into one row
}

// The broadcast row on either side (row - x is not x - row), over a
// contiguous [rows, cols] and over a channels-last [N, C, H, W] whose
// per-channel operand is [1, C, 1, 1]: every element against the scalar
// operation, in both operand orders.
TEST_F(VecBinary, BroadcastRowOnEitherSide) {
  struct Layout {
    std::vector<int64_t> sizes, dense_strides, row_strides;
  };
  const Layout layouts[] = {
      {{300, 37}, {37, 1}, {0, 1}},                             // a bias over rows
      {{2, 24, 9, 7}, {24 * 63, 1, 7 * 24, 24}, {0, 1, 0, 0}},  // a channels-last image and a per-channel scale
  };
  for (const Layout& l : layouts) {
    int64_t n = 1;
    for (int64_t v : l.sizes) n *= v;
    const int64_t cols = l.sizes[1];  // the row operand's length: columns, or channels
    HostTensor x(F32(), {n}), r(F32(), {cols}), out(F32(), {n});
    FillValues(x, n, 2);
    FillValues(r, cols, 5);
    x.SetView(l.sizes, l.dense_strides);
    r.SetView(l.sizes, l.row_strides);
    out.SetView(l.sizes, l.dense_strides);
    // Element i of the dense memory order: its row-operand element is i % cols.
    for (const ArithCase& k : kArith) {
      for (bool row_first : {false, true}) {
        const HostTensor& a = row_first ? r : x;
        const HostTensor& b = row_first ? x : r;
        ASSERT_EQ(Call(k.op, Args(k.op, a, b), {&out}), BP_STATUS_OK) << LastError();
        int64_t bad = 0;
        for (int64_t i = 0; i < n; ++i) {
          const float xv = x.data<float>()[i], rv = r.data<float>()[i % cols];
          bad += !SameFloat(out.data<float>()[i], row_first ? k.f(rv, xv) : k.f(xv, rv));
        }
        EXPECT_EQ(bad, 0) << k.op << (row_first ? " row first" : " row second") << " over " << l.sizes.size() << "-D";
      }
    }
  }
}

TEST_F(VecBinary, LargeCallsSplitAcrossThreads) {
  CheckAll(1, 300 * 1001, {0, 1});  // contiguous, above the parallel grain
  CheckAll(300, 1001, {0, 1});      // row broadcast, odd row length
}

TEST_F(VecBinary, ZeroDim) {
  HostTensor a(F32(), {}), b(F32(), {}), out(F32(), {}), c(Bool(), {});
  a.Set<float>({1.5f});
  b.Set<float>({-0.5f});
  ASSERT_EQ(Call("sub.Tensor", {TArg(a), TArg(b), IArg(1)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(1)[0], 2.0f);
  ASSERT_EQ(Call("div.Tensor", {TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(1)[0], -3.0f);
  ASSERT_EQ(Call("gt.Tensor", {TArg(a), TArg(b)}, {&c}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(c.Get<uint8_t>(1)[0], 1);
  ASSERT_EQ(Call("where.self", {TArg(c), TArg(b), TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(1)[0], -0.5f);
}

TEST_F(VecBinary, StridedRowsAreStaged) {
  // a is the transpose of a contiguous [19, 3] and out an every-other view:
  // rows with stride 3 and 2 go through the staging buffers.
  HostTensor a(F32(), {19, 3}), b(F32(), {3, 19}), out(F32(), {3, 38}), c(Bool(), {3, 19});
  FillValues(a, 57, 2);
  FillValues(b, 57, 5);
  a.SetView({3, 19}, {1, 3});
  out.SetView({3, 19}, {38, 2});
  ASSERT_EQ(Call("mul.Tensor", {TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  ASSERT_EQ(Call("le.Tensor", {TArg(a), TArg(b)}, {&c}), BP_STATUS_OK) << LastError();
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 19; ++j) {
      const float x = a.data<float>()[j * 3 + i], y = b.data<float>()[i * 19 + j];
      EXPECT_TRUE(SameFloat(out.data<float>()[i * 38 + j * 2], x * y)) << i << "," << j;
      EXPECT_EQ(c.data<uint8_t>()[i * 19 + j], x <= y ? 1 : 0) << i << "," << j;
    }
  }
  EXPECT_EQ(out.data<float>()[1], 0.0f);  // the skipped elements stay untouched
}

TEST_F(VecBinary, OtherDtypesKeepTheScalarLoop) {
  // int32 wraps, bool add is logical or, int64 compares exactly above 2^53,
  // where on int64 selects whole values: none of them is float32.
  HostTensor i(I32(), {9}), io(I32(), {9});
  i.Set<int32_t>({INT32_MAX, 1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(Call("add.Tensor", {TArg(i), TArg(i), IArg(1)}, {&io}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(io.Get<int32_t>(9), (std::vector<int32_t>{-2, 2, 4, 6, 8, 10, 12, 14, 16}));
  HostTensor t(Bool(), {3}), f(Bool(), {3}), bo(Bool(), {3});
  t.Set<uint8_t>({1, 0, 1});
  f.Set<uint8_t>({0, 0, 1});
  ASSERT_EQ(Call("add.Tensor", {TArg(t), TArg(f), IArg(1)}, {&bo}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bo.Get<uint8_t>(3), (std::vector<uint8_t>{1, 0, 1}));
  HostTensor l(I64(), {2}), m(I64(), {2}), lo(I64(), {2}), lc(Bool(), {2});
  l.Set<int64_t>({(int64_t{1} << 53) + 1, 5});
  m.Set<int64_t>({int64_t{1} << 53, 5});
  ASSERT_EQ(Call("gt.Tensor", {TArg(l), TArg(m)}, {&lc}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(lc.Get<uint8_t>(2), (std::vector<uint8_t>{1, 0}));
  ASSERT_EQ(Call("where.self", {TArg(lc), TArg(l), TArg(m)}, {&lo}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(lo.Get<int64_t>(2), (std::vector<int64_t>{(int64_t{1} << 53) + 1, 5}));
}

TEST_F(VecBinary, AddAndSubWithAlpha) {
  // a + alpha * b and a - alpha * b (torch.add / torch.sub with alpha), the
  // product rounded before the sum, on the scalar loop (below 64 elements)
  // and the vector path, contiguous and broadcast; alpha given as a double
  // is rounded to float first, as the scalar kernel does.
  for (const double alpha_arg : {2.5, -0.3, 0.0}) {
    const float alpha = static_cast<float>(alpha_arg);
    for (const int64_t cols : {5, 64, 67, 1000}) {
      for (const std::vector<int64_t>& bs : {std::vector<int64_t>{cols, 1}, std::vector<int64_t>{0, 1}}) {
        const int64_t rows = 3, n = rows * cols;
        HostTensor a(F32(), {rows, cols}), b(F32(), {rows, cols}), out(F32(), {rows, cols});
        FillValues(a, n, 3);
        FillValues(b, n, 6);
        b.SetView({rows, cols}, bs);
        const float* pa = a.data<float>();
        auto bv = [&](int64_t i) { return b.data<float>()[(i / cols) * bs[0] + (i % cols) * bs[1]]; };
        for (const bool sub : {false, true}) {
          const char* op = sub ? "sub.Tensor" : "add.Tensor";
          ASSERT_EQ(Call(op, {TArg(a), TArg(b), DArg(alpha_arg)}, {&out}), BP_STATUS_OK) << LastError();
          int64_t bad = 0;
          for (int64_t i = 0; i < n; ++i) {
            const float scaled = alpha * bv(i);
            bad += !SameFloat(out.data<float>()[i], sub ? pa[i] - scaled : pa[i] + scaled);
          }
          EXPECT_EQ(bad, 0) << op << " alpha=" << alpha_arg << " " << rows << "x" << cols << " b strides {" << bs[0]
                            << ", " << bs[1] << "}";
        }
      }
    }
  }
}

TEST_F(VecBinary, BadInputWritesNothing) {
  HostTensor a(F32(), {4}), c(I32(), {4}), out(F32(), {4});
  out.Set<float>({7, 7, 7, 7});
  // where's condition must be bool.
  EXPECT_EQ(Call("where.self", {TArg(c), TArg(a), TArg(a)}, {&out}), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("condition"), std::string::npos) << LastError();
  EXPECT_EQ(out.Get<float>(4), (std::vector<float>{7, 7, 7, 7}));
}

}  // namespace
