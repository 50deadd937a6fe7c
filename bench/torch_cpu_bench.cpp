// The CPU backend beside libtorch (Debian's libtorch-dev) and beside "the
// limit": a plain two-thread vectorized loop with the op's memory traffic
// (STREAM-like copy / scale / read / add), or dnnl_sgemm of the same shape for
// GEMM-shaped ops. One process; each row runs its three contenders in
// interleaved rounds and reports the median over rounds of the per-round
// ratios Backplane / libtorch and Backplane / limit (< 1: Backplane faster);
// a round times each contender over about 50 ms of calls and keeps its
// fastest call. The last two rows are model forwards (a small CNN and a
// transformer encoder block), with no limit loop.
//
//   bp_bench_torch [--rounds N] [--filter SUBSTRING] [--threads N]
//
// Threads: 2 everywhere (torch::set_num_threads(2); OpenMP, which the CPU
// plugin and the limit loops use, is set to 2 as well). Targets are in
// docs/benchmarks.md.
#include <dnnl.h>
#include <omp.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench_context.h"

namespace {

using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;
using Clock = std::chrono::steady_clock;

int kThreads = 2;  // --threads

// ---- Backplane calls ---------------------------------------------------------

bp_value_t Int(int64_t i) {
  bp_value_t v{};
  v.kind = BP_VALUE_INT;
  v.u.i = i;
  return v;
}
bp_value_t Double(double d) {
  bp_value_t v{};
  v.kind = BP_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
bp_value_t Bool(bool b) {
  bp_value_t v{};
  v.kind = BP_VALUE_BOOL;
  v.u.b = b ? 1 : 0;
  return v;
}
bp_value_t None() { return bp_value_t{}; }
bp_value_t Str(const char* s) {
  bp_value_t v{};
  v.kind = BP_VALUE_STRING;
  v.u.str = s;
  return v;
}
// The list must outlive the call.
bp_value_t IntList(const std::vector<int64_t>& l) {
  bp_value_t v{};
  v.kind = BP_VALUE_INT_LIST;
  v.u.int_list.data = l.data();
  v.u.int_list.size = static_cast<int64_t>(l.size());
  return v;
}

bp_tensor_t* Host(std::vector<int64_t> sizes) { return bp_bench::Filled(bp_device_t{0, 0}, std::move(sizes)); }

// Calls op(args) and returns its result, which the caller releases.
bp_tensor_t* CallResult(bp_op_t* op, std::vector<bp_value_t> args) {
  bp_tensor_t* result = nullptr;
  if (bp_op_call(Context(), op, args.data(), static_cast<int32_t>(args.size()), &result, 1) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_op_call: %s\n", bp_last_error_message());
    std::abort();
  }
  return result;
}

// Calls op(args) and releases its result (or writes into an out= tensor,
// whose result is none). Aborts on error: a benchmark of a failing call is
// meaningless.
void Call(bp_op_t* op, std::vector<bp_value_t> args, bool has_result = true) {
  if (has_result) {
    bp_tensor_release(CallResult(op, std::move(args)));
    return;
  }
  if (bp_op_call(Context(), op, args.data(), static_cast<int32_t>(args.size()), nullptr, 0) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_op_call: %s\n", bp_last_error_message());
    std::abort();
  }
}

// ---- the limit loops (two threads, vectorized, same traffic) ------------------

struct Buffers {
  std::vector<float> a, b, c;
  explicit Buffers(int64_t n, int64_t out_n = -1)
      : a(static_cast<size_t>(n), 1.0f), b(static_cast<size_t>(n), 2.0f),
        c(static_cast<size_t>(out_n < 0 ? n : out_n), 0.0f) {}
};

// y = x (read n, write n): softmax, layer_norm, exp, gelu, relu, transpose.
void CopyLimit(Buffers& m) {
  const float* x = m.a.data();
  float* y = m.c.data();
  const int64_t n = static_cast<int64_t>(m.a.size());
#pragma omp parallel for simd num_threads(kThreads) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}
// y = x * s + t (read n, write n): batch_norm.
void ScaleLimit(Buffers& m) {
  const float* x = m.a.data();
  float* y = m.c.data();
  const int64_t n = static_cast<int64_t>(m.a.size());
#pragma omp parallel for simd num_threads(kThreads) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * 1.5f + 0.25f;
}
// sum of x (read n): sum, mean. 64 partial sums per thread, so the adds
// are vectorized and not one dependency chain.
float ReadLimit(Buffers& m) {
  const float* x = m.a.data();
  const int64_t n = static_cast<int64_t>(m.a.size());
  float total = 0;
#pragma omp parallel num_threads(kThreads) reduction(+ : total)
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t i = n * t / nt;
    const int64_t end = n * (t + 1) / nt;
    float acc[64] = {};
    for (; i + 64 <= end; i += 64)
      for (int k = 0; k < 64; ++k) acc[k] += x[i + k];
    for (; i < end; ++i) acc[0] += x[i];
    for (float a : acc) total += a;
  }
  return total;
}
// c = a + b (read 2n, write n): add.
void AddLimit(Buffers& m) {
  const float* a = m.a.data();
  const float* b = m.b.data();
  float* c = m.c.data();
  const int64_t n = static_cast<int64_t>(m.a.size());
#pragma omp parallel for simd num_threads(kThreads) schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
// y[i] = max of x[4i..4i+3] (read n, write n/4): 2x2 pooling.
void Reduce4Limit(Buffers& m) {
  const float* x = m.a.data();
  float* y = m.c.data();
  const int64_t n = static_cast<int64_t>(m.c.size());
#pragma omp parallel for simd num_threads(kThreads) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = std::max(std::max(x[4 * i], x[4 * i + 1]), std::max(x[4 * i + 2], x[4 * i + 3]));
}

// dnnl_sgemm of M x K times K x N (row-major).
struct Gemm {
  int64_t M, N, K;
  std::vector<float> a, b, c;
  Gemm(int64_t m, int64_t n, int64_t k)
      : M(m), N(n), K(k), a(static_cast<size_t>(m * k), 0.5f), b(static_cast<size_t>(k * n), 0.25f),
        c(static_cast<size_t>(m * n)) {}
  void Run() { dnnl_sgemm('N', 'N', M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N); }
};

// ---- rows -------------------------------------------------------------------

struct Row {
  std::string name, shape;
  std::function<void()> bp, torch, limit;  // limit may be empty ("-")
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Seconds per call of f in one round: each call is timed and the round
// keeps the fastest, so a call that lost its core to another process (the
// machine is shared) does not decide the round. Calls under 50 us are timed
// in batches of 100.
double Time(const std::function<void()>& f, int reps) {
  const int batch = reps >= 400 ? 100 : 1;
  double best = 1e30;
  for (int i = 0; i < reps; i += batch) {
    const auto t0 = Clock::now();
    for (int k = 0; k < batch; ++k) f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / batch);
  }
  return best;
}

std::string LoadAvg() {
  std::ifstream f("/proc/loadavg");
  std::string s;
  std::getline(f, s);
  return s;
}

void RunRow(const Row& r, int rounds) {
  // Calibrate: enough calls for about 50 ms per contender per round.
  r.bp();
  r.torch();
  if (r.limit) r.limit();
  const double t1 = std::max(Time(r.bp, 1), 1e-7);
  const int reps = std::max(5, static_cast<int>(0.05 / t1));
  std::vector<double> vs_torch, vs_limit, bp_t, torch_t, limit_t;
  for (int k = 0; k < rounds; ++k) {
    const double tb = Time(r.bp, reps);
    const double tt = Time(r.torch, reps);
    bp_t.push_back(tb);
    torch_t.push_back(tt);
    vs_torch.push_back(tb / tt);
    if (r.limit) {
      const double tl = Time(r.limit, reps);
      limit_t.push_back(tl);
      vs_limit.push_back(tb / tl);
    }
  }
  char lim[64] = "-";
  char lim_t[64] = "-";
  if (r.limit) {
    std::snprintf(lim, sizeof lim, "%.2f", Median(vs_limit));
    std::snprintf(lim_t, sizeof lim_t, "%.2f", Median(limit_t) * 1e6);
  }
  std::printf("| %-34s | %-18s | %9.1f | %9.1f | %9s | %6.2f | %6s |\n", r.name.c_str(), r.shape.c_str(),
              Median(bp_t) * 1e6, Median(torch_t) * 1e6, lim_t, Median(vs_torch), lim);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 11;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      kThreads = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--rounds N] [--filter SUBSTRING] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  omp_set_num_threads(kThreads);
  torch::set_num_threads(kThreads);
  torch::NoGradGuard no_grad;
  Context();  // load the plugins before timing

  std::vector<Row> rows;
  const auto topt = torch::TensorOptions().dtype(torch::kFloat32);
  auto T = [&](std::vector<int64_t> s) { return torch::rand(s, topt); };

  // softmax / log_softmax 4096x1024, dim -1
  {
    static bp_tensor_t* x = Host({4096, 1024});
    static torch::Tensor tx = T({4096, 1024});
    static Buffers lim(4096 * 1024);
    static bp_op_t* sm = Op("softmax.int");
    static bp_op_t* lsm = Op("log_softmax.int");
    rows.push_back({"softmax, dim -1", "4096x1024", [] { Call(sm, {TensorValue(x), Int(-1), None()}); },
                    [] { (void)torch::softmax(tx, -1); }, [] { CopyLimit(lim); }});
    rows.push_back({"log_softmax, dim -1", "4096x1024", [] { Call(lsm, {TensorValue(x), Int(-1), None()}); },
                    [] { (void)torch::log_softmax(tx, -1); }, [] { CopyLimit(lim); }});
  }
  // batch_norm inference 8x64x56x56
  {
    static bp_tensor_t* x = Host({8, 64, 56, 56});
    static bp_tensor_t *w = Host({64}), *b = Host({64}), *rm = Host({64}), *rv = Host({64});
    static torch::Tensor tx = T({8, 64, 56, 56}), tw = T({64}), tb = T({64}), trm = T({64}), trv = T({64}) + 0.5;
    static Buffers lim(8 * 64 * 56 * 56);
    static bp_op_t* bn = Op("batch_norm");
    rows.push_back({"batch_norm, inference", "8x64x56x56",
                    [] {
                      Call(bn, {TensorValue(x), TensorValue(w), TensorValue(b), TensorValue(rm), TensorValue(rv),
                                Bool(false), Double(0.1), Double(1e-5), Bool(false)});
                    },
                    [] { (void)torch::batch_norm(tx, tw, tb, trm, trv, false, 0.1, 1e-5, false); },
                    [] { ScaleLimit(lim); }});
  }
  // sum dim 1 4096x1024; mean of all 16M
  {
    static bp_tensor_t* x = Host({4096, 1024});
    static bp_tensor_t* big = Host({16 * 1024 * 1024});
    static torch::Tensor tx = T({4096, 1024}), tbig = T({16 * 1024 * 1024});
    static Buffers lim(4096 * 1024), lim16(16 * 1024 * 1024, 1);
    static std::vector<int64_t> dim1 = {1};
    static bp_op_t* sum = Op("sum.dim_IntList");
    static bp_op_t* mean = Op("mean.dim");
    rows.push_back({"sum, dim 1", "4096x1024", [] { Call(sum, {TensorValue(x), IntList(dim1), Bool(false), None()}); },
                    [] { (void)tx.sum(1); }, [] { (void)ReadLimit(lim); }});
    rows.push_back({"mean, all", "16M", [] { Call(mean, {TensorValue(big), None(), Bool(false), None()}); },
                    [] { (void)tbig.mean(); }, [] { (void)ReadLimit(lim16); }});
  }
  // layer_norm last dim with weight and bias, 4096x1024
  {
    static bp_tensor_t* x = Host({4096, 1024});
    static bp_tensor_t *w = Host({1024}), *b = Host({1024});
    static torch::Tensor tx = T({4096, 1024}), tw = T({1024}), tb = T({1024});
    static Buffers lim(4096 * 1024);
    static std::vector<int64_t> ns = {1024};
    static bp_op_t* ln = Op("layer_norm");
    rows.push_back({"layer_norm, last dim, weight+bias", "4096x1024",
                    [] {
                      Call(ln, {TensorValue(x), IntList(ns), TensorValue(w), TensorValue(b), Double(1e-5),
                                Bool(true)});
                    },
                    [] { (void)torch::layer_norm(tx, {1024}, tw, tb, 1e-5); }, [] { CopyLimit(lim); }});
  }
  // elementwise 16M: exp (out given), gelu (erf), relu, add
  {
    constexpr int64_t n = 16 * 1024 * 1024;
    static bp_tensor_t *x = Host({n}), *y = Host({n}), *out = Host({n});
    static torch::Tensor tx = T({n}), ty = T({n}), tout = T({n});
    static Buffers lim(n);
    static bp_op_t* exp_out = Op("exp.out");
    static bp_op_t* gelu = Op("gelu");
    static bp_op_t* relu = Op("relu");
    static bp_op_t* add_out = Op("add.out");
    rows.push_back({"exp, out given", "16M", [] { Call(exp_out, {TensorValue(x), TensorValue(out)}, false); },
                    [] { (void)torch::exp_out(tout, tx); }, [] { CopyLimit(lim); }});
    rows.push_back({"gelu (erf)", "16M", [] { Call(gelu, {TensorValue(x), Str("none")}); },
                    [] { (void)torch::gelu(tx); }, [] { CopyLimit(lim); }});
    rows.push_back({"relu", "16M", [] { Call(relu, {TensorValue(x)}); }, [] { (void)torch::relu(tx); },
                    [] { CopyLimit(lim); }});
    rows.push_back({"add.out", "16M",
                    [] { Call(add_out, {TensorValue(x), TensorValue(y), Int(1), TensorValue(out)}, false); },
                    [] { (void)torch::add_out(tout, tx, ty); }, [] { AddLimit(lim); }});
  }
  // max_pool2d k2 8x64x56x56
  {
    static bp_tensor_t* x = Host({8, 64, 56, 56});
    static torch::Tensor tx = T({8, 64, 56, 56});
    static Buffers lim(8 * 64 * 56 * 56, 8 * 64 * 28 * 28);
    static std::vector<int64_t> k2 = {2, 2}, zero = {0, 0}, one = {1, 1}, empty = {};
    static bp_op_t* pool = Op("max_pool2d");
    rows.push_back({"max_pool2d k2", "8x64x56x56",
                    [] { Call(pool, {TensorValue(x), IntList(k2), IntList(empty), IntList(zero), IntList(one), Bool(false)}); },
                    [] { (void)torch::max_pool2d(tx, {2, 2}); }, [] { Reduce4Limit(lim); }});
  }
  // add.out [1,1] + [1]: dispatch-bound
  {
    static bp_tensor_t *a = Host({1, 1}), *b = Host({1}), *out = Host({1, 1});
    static torch::Tensor ta = T({1, 1}), tb = T({1}), tout = T({1, 1});
    static bp_op_t* add_out = Op("add.out");
    rows.push_back({"add.out [1,1]+[1] (dispatch-bound)", "tiny",
                    [] { Call(add_out, {TensorValue(a), TensorValue(b), Int(1), TensorValue(out)}, false); },
                    [] { (void)torch::add_out(tout, ta, tb); }, nullptr});
  }
  // transpose(0,1) + contiguous 4096x4096
  {
    static bp_tensor_t* x = Host({4096, 4096});
    static torch::Tensor tx = T({4096, 4096});
    static Buffers lim(4096 * 4096);
    static bp_op_t* tr = Op("transpose.int");
    static bp_op_t* contig = Op("contiguous");
    rows.push_back({"transpose(0,1) + contiguous", "4096x4096",
                    [] {
                      bp_value_t args[3] = {TensorValue(x), Int(0), Int(1)};
                      bp_tensor_t* t = nullptr;
                      if (bp_op_call(Context(), tr, args, 3, &t, 1) != BP_STATUS_OK) std::abort();
                      Call(contig, {TensorValue(t)});
                      bp_tensor_release(t);
                    },
                    [] { (void)tx.transpose(0, 1).contiguous(); }, [] { CopyLimit(lim); }});
  }
  // GEMM-shaped ops vs dnnl_sgemm of the same shape
  {
    static bp_tensor_t *a = Host({1024, 1024}), *b = Host({1024, 1024});
    static torch::Tensor ta = T({1024, 1024}), tb = T({1024, 1024});
    static Gemm g(1024, 1024, 1024);
    static bp_op_t* mm = Op("matmul");
    rows.push_back({"matmul", "1024x1024x1024", [] { Call(mm, {TensorValue(a), TensorValue(b)}); },
                    [] { (void)torch::matmul(ta, tb); }, [] { g.Run(); }});
  }
  {
    static bp_tensor_t *x = Host({1024, 1024}), *w = Host({1024, 1024}), *b = Host({1024});
    static torch::Tensor tx = T({1024, 1024}), tw = T({1024, 1024}), tb = T({1024});
    static Gemm g(1024, 1024, 1024);
    static bp_op_t* linear = Op("linear");
    rows.push_back({"linear, bias", "1024x1024 @ 1024^2", [] { Call(linear, {TensorValue(x), TensorValue(w), TensorValue(b)}); },
                    [] { (void)torch::linear(tx, tw, tb); }, [] { g.Run(); }});
  }
  {
    static bp_tensor_t *x = Host({8, 64, 56, 56}), *w = Host({64, 64, 3, 3});
    static torch::Tensor tx = T({8, 64, 56, 56}), tw = T({64, 64, 3, 3});
    static Gemm g(8 * 56 * 56, 64, 64 * 9);  // the convolution as im2col GEMM
    static std::vector<int64_t> one = {1, 1};
    static bp_op_t* conv = Op("conv2d");
    rows.push_back({"conv2d k3 pad 1", "8x64x56x56, 64", [] {
                      Call(conv, {TensorValue(x), TensorValue(w), None(), IntList(one), IntList(one), IntList(one), Int(1)});
                    },
                    [] { (void)torch::conv2d(tx, tw, {}, 1, 1); }, [] { g.Run(); }});
  }

  // A small CNN forward: (conv3x3 pad 1, batch_norm, relu, max_pool 2) x 2,
  // flatten, linear; input 8x3x64x64, 16 then 32 channels, 10 outputs. No
  // limit: the target is the libtorch ratio.
  {
    struct Stage {
      bp_tensor_t *w, *b, *g, *beta, *rm, *rv;
      torch::Tensor tw, tb, tg, tbeta, trm, trv;
    };
    static Stage st[2];
    const int64_t chans[3] = {3, 16, 32};
    for (int k = 0; k < 2; ++k) {
      const int64_t ci = chans[k], co = chans[k + 1];
      st[k] = Stage{Host({co, ci, 3, 3}), Host({co}), Host({co}), Host({co}), Host({co}), Host({co}),
                    T({co, ci, 3, 3}), T({co}), T({co}), T({co}), T({co}), T({co}) + 0.5};
    }
    static bp_tensor_t* x = Host({8, 3, 64, 64});
    static bp_tensor_t *fw = Host({10, 32 * 16 * 16}), *fb = Host({10});
    static torch::Tensor tx = T({8, 3, 64, 64}), tfw = T({10, 32 * 16 * 16}), tfb = T({10});
    static std::vector<int64_t> one = {1, 1}, k2 = {2, 2}, zero = {0, 0}, empty = {}, flat = {8, 32 * 16 * 16};
    static bp_op_t *conv = Op("conv2d"), *bn = Op("batch_norm"), *relu = Op("relu"), *pool = Op("max_pool2d"),
                   *reshape = Op("reshape"), *linear = Op("linear");
    rows.push_back({"small CNN forward", "8x3x64x64",
                    [] {
                      bp_tensor_t* h = x;
                      for (const Stage& s : st) {
                        bp_tensor_t* c = CallResult(conv, {TensorValue(h), TensorValue(s.w), TensorValue(s.b), IntList(one),
                                                        IntList(one), IntList(one), Int(1)});
                        if (h != x) bp_tensor_release(h);
                        bp_tensor_t* n = CallResult(bn, {TensorValue(c), TensorValue(s.g), TensorValue(s.beta),
                                                      TensorValue(s.rm), TensorValue(s.rv), Bool(false), Double(0.1),
                                                      Double(1e-5), Bool(false)});
                        bp_tensor_release(c);
                        bp_tensor_t* r = CallResult(relu, {TensorValue(n)});
                        bp_tensor_release(n);
                        h = CallResult(pool, {TensorValue(r), IntList(k2), IntList(empty), IntList(zero), IntList(one),
                                           Bool(false)});
                        bp_tensor_release(r);
                      }
                      bp_tensor_t* f = CallResult(reshape, {TensorValue(h), IntList(flat)});
                      bp_tensor_release(h);
                      bp_tensor_t* y = CallResult(linear, {TensorValue(f), TensorValue(fw), TensorValue(fb)});
                      bp_tensor_release(f);
                      bp_tensor_release(y);
                    },
                    [] {
                      torch::Tensor h = tx;
                      for (const Stage& s : st) {
                        h = torch::conv2d(h, s.tw, s.tb, 1, 1);
                        h = torch::batch_norm(h, s.tg, s.tbeta, s.trm, s.trv, false, 0.1, 1e-5, false);
                        h = torch::max_pool2d(torch::relu(h), {2, 2});
                      }
                      (void)torch::linear(h.reshape({8, 32 * 16 * 16}), tfw, tfb);
                    },
                    nullptr});
  }

  // A transformer encoder block forward (post-norm): batch 8, sequence 128,
  // d_model 256, 4 heads of 64, FFN 1024 with GELU, layer norms with weight
  // and bias. The 1/sqrt(64) score scale is folded into the query weights on
  // both sides. No limit.
  {
    constexpr int64_t B = 8, S = 128, D = 256, H = 4, Dh = 64, F = 1024;
    static bp_tensor_t* x = Host({B, S, D});
    static bp_tensor_t *wq = Host({D, D}), *wk = Host({D, D}), *wv = Host({D, D}), *wo = Host({D, D});
    static bp_tensor_t *bq = Host({D}), *bk = Host({D}), *bv = Host({D}), *bo = Host({D});
    static bp_tensor_t *w1 = Host({F, D}), *b1 = Host({F}), *w2 = Host({D, F}), *b2 = Host({D});
    static bp_tensor_t *g1 = Host({D}), *be1 = Host({D}), *g2 = Host({D}), *be2 = Host({D});
    static torch::Tensor tx = T({B, S, D}), twq = T({D, D}), twk = T({D, D}), twv = T({D, D}), two = T({D, D});
    static torch::Tensor tbq = T({D}), tbk = T({D}), tbv = T({D}), tbo = T({D});
    static torch::Tensor tw1 = T({F, D}), tb1 = T({F}), tw2 = T({D, F}), tb2 = T({D});
    static torch::Tensor tg1 = T({D}), tbe1 = T({D}), tg2 = T({D}), tbe2 = T({D});
    static std::vector<int64_t> heads = {B, S, H, Dh}, merged = {B, S, D}, norm = {D};
    static bp_op_t *linear = Op("linear"), *reshape = Op("reshape"), *tr = Op("transpose.int"),
                   *matmul = Op("matmul"), *softmax = Op("softmax.int"), *add = Op("add.Tensor"),
                   *ln = Op("layer_norm"), *gelu = Op("gelu");
    rows.push_back({"transformer encoder block forward", "8x128x256",
                    [] {
                      // [B, S, D] -> [B, H, S, Dh]
                      auto split = [](bp_tensor_t* t) {
                        bp_tensor_t* r = CallResult(reshape, {TensorValue(t), IntList(heads)});
                        bp_tensor_t* u = CallResult(tr, {TensorValue(r), Int(1), Int(2)});
                        bp_tensor_release(r);
                        bp_tensor_release(t);
                        return u;
                      };
                      bp_tensor_t* q = split(CallResult(linear, {TensorValue(x), TensorValue(wq), TensorValue(bq)}));
                      bp_tensor_t* k = split(CallResult(linear, {TensorValue(x), TensorValue(wk), TensorValue(bk)}));
                      bp_tensor_t* v = split(CallResult(linear, {TensorValue(x), TensorValue(wv), TensorValue(bv)}));
                      bp_tensor_t* kt = CallResult(tr, {TensorValue(k), Int(2), Int(3)});
                      bp_tensor_t* scores = CallResult(matmul, {TensorValue(q), TensorValue(kt)});
                      bp_tensor_t* p = CallResult(softmax, {TensorValue(scores), Int(-1), None()});
                      bp_tensor_t* ctx = CallResult(matmul, {TensorValue(p), TensorValue(v)});
                      bp_tensor_t* ctx_t = CallResult(tr, {TensorValue(ctx), Int(1), Int(2)});
                      bp_tensor_t* ctx_m = CallResult(reshape, {TensorValue(ctx_t), IntList(merged)});
                      bp_tensor_t* attn = CallResult(linear, {TensorValue(ctx_m), TensorValue(wo), TensorValue(bo)});
                      bp_tensor_t* r1 = CallResult(add, {TensorValue(x), TensorValue(attn), Int(1)});
                      bp_tensor_t* h = CallResult(ln, {TensorValue(r1), IntList(norm), TensorValue(g1), TensorValue(be1),
                                                       Double(1e-5), Bool(true)});
                      bp_tensor_t* f1 = CallResult(linear, {TensorValue(h), TensorValue(w1), TensorValue(b1)});
                      bp_tensor_t* f2 = CallResult(gelu, {TensorValue(f1), Str("none")});
                      bp_tensor_t* f3 = CallResult(linear, {TensorValue(f2), TensorValue(w2), TensorValue(b2)});
                      bp_tensor_t* r2 = CallResult(add, {TensorValue(h), TensorValue(f3), Int(1)});
                      bp_tensor_t* y = CallResult(ln, {TensorValue(r2), IntList(norm), TensorValue(g2), TensorValue(be2),
                                                       Double(1e-5), Bool(true)});
                      for (bp_tensor_t* t : {q, k, v, kt, scores, p, ctx, ctx_t, ctx_m, attn, r1, h, f1, f2, f3, r2, y})
                        bp_tensor_release(t);
                    },
                    [] {
                      auto split = [](const torch::Tensor& t) { return t.reshape({B, S, H, Dh}).transpose(1, 2); };
                      torch::Tensor q = split(torch::linear(tx, twq, tbq));
                      torch::Tensor k = split(torch::linear(tx, twk, tbk));
                      torch::Tensor v = split(torch::linear(tx, twv, tbv));
                      torch::Tensor p = torch::softmax(torch::matmul(q, k.transpose(2, 3)), -1);
                      torch::Tensor ctx = torch::matmul(p, v).transpose(1, 2).reshape({B, S, D});
                      torch::Tensor h =
                          torch::layer_norm(tx + torch::linear(ctx, two, tbo), {D}, tg1, tbe1, 1e-5);
                      torch::Tensor f = torch::linear(torch::gelu(torch::linear(h, tw1, tb1)), tw2, tb2);
                      (void)torch::layer_norm(h + f, {D}, tg2, tbe2, 1e-5);
                    },
                    nullptr});
  }

  std::printf("bp_bench_torch: %d threads each, %d interleaved rounds, median of per-round ratios\n", kThreads,
              rounds);
  std::printf("load average before: %s\n\n", LoadAvg().c_str());
  std::printf("| %-34s | %-18s | %9s | %9s | %9s | %6s | %6s |\n", "op", "shape", "bp us", "torch us", "limit us",
              "/torch", "/limit");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(20, '-').c_str(),
              std::string(11, '-').c_str(), std::string(11, '-').c_str(), std::string(11, '-').c_str(),
              std::string(8, '-').c_str(), std::string(8, '-').c_str());
  for (const Row& r : rows)
    if (filter.empty() || r.name.find(filter) != std::string::npos) RunRow(r, rounds);
  std::printf("\nload average after: %s\n", LoadAvg().c_str());
  return 0;
}
