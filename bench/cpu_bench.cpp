// CPU backend throughput beside its anchors, in one run:
//   add, gt and where of 16M float32 vs the limit loop, a plain two-thread
//   loop doing the same work (STREAM-like), in interleaved rounds,
//   float32 matmul 256/1024/2048 vs oneDNN's dnnl_sgemm.
// Targets (ARCHITECTURE.md section 9): >= 90% of each anchor.
#include <benchmark/benchmark.h>
#include <dnnl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "bench_context.h"
#include "interleaved.h"
#include "ratio_reporter.h"

namespace {

using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;

constexpr int64_t k16M = 16 * 1024 * 1024;

// Pointwise rows at the memory limit: add, gt and where over 16M float32
// (bool for gt's output and where's condition) against the "limit loop",
// the same work as a plain loop split across two threads (STREAM-like), in
// interleaved rounds (interleaved.h).
struct Pointwise {
  bp_op_t* op;
  std::vector<bp_value_t> args;
};

void RunPointwise(void* state, int64_t iters) {
  auto* p = static_cast<Pointwise*>(state);
  for (int64_t i = 0; i < iters; ++i) {
    if (bp_op_call(Context(), p->op, p->args.data(), p->args.size(), nullptr, 0) != BP_STATUS_OK) {
      std::fprintf(stderr, "bp_op_call: %s\n", bp_last_error_message());
      std::abort();
    }
  }
}

struct LimitData {
  std::vector<float> a, b, c;
  std::vector<uint8_t> m;
};

// body(lo, hi) on the calling thread and one more, as the two-thread loop.
template <typename Body>
void TwoThreads(Body body) {
  std::thread t(body, int64_t{0}, k16M / 2);
  body(k16M / 2, k16M);
  t.join();
}

void LimitAdd(void* state, int64_t iters) {
  auto* d = static_cast<LimitData*>(state);
  for (int64_t it = 0; it < iters; ++it)
    TwoThreads([d](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d->c[i] = d->a[i] + d->b[i];
    });
  benchmark::ClobberMemory();
}
void LimitGt(void* state, int64_t iters) {
  auto* d = static_cast<LimitData*>(state);
  for (int64_t it = 0; it < iters; ++it)
    TwoThreads([d](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d->m[i] = d->a[i] > d->b[i];
    });
  benchmark::ClobberMemory();
}
void LimitWhere(void* state, int64_t iters) {
  auto* d = static_cast<LimitData*>(state);
  for (int64_t it = 0; it < iters; ++it)
    TwoThreads([d](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d->c[i] = d->m[i] ? d->a[i] : d->b[i];
    });
  benchmark::ClobberMemory();
}

bp_tensor_t* BoolTensor(int64_t n) {
  std::vector<uint8_t> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<uint8_t>(i % 3 == 0);
  bp_tensor_t* t = nullptr;
  const DLDataType dt{BP_DTYPE_CODE_BOOL, 8, 1};
  if (bp_tensor_from_host(Context(), bp_device_t{0, 0}, 1, &n, dt, host.data(), host.size(), &t) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_tensor_from_host: %s\n", bp_last_error_message());
    std::abort();
  }
  return t;
}

// Prints one line per row: median time per call of each side and the median
// of the per-round ratios ours / limit loop.
void PointwiseRows(int rounds) {
  const bp_device_t cpu{0, 0};
  bp_tensor_t* a = bp_bench::Filled(cpu, {k16M});
  bp_tensor_t* b = bp_bench::Filled(cpu, {k16M});
  bp_tensor_t* out = bp_bench::Filled(cpu, {k16M});
  bp_tensor_t* mask = BoolTensor(k16M);
  bp_tensor_t* mask_out = BoolTensor(k16M);
  bp_value_t one{};
  one.kind = BP_VALUE_INT;
  one.u.i = 1;
  Pointwise add{Op("add.out"), {TensorValue(a), TensorValue(b), one, TensorValue(out)}};
  Pointwise gt{Op("gt.out"), {TensorValue(a), TensorValue(b), TensorValue(mask_out)}};
  Pointwise where{Op("where.self_out"), {TensorValue(mask), TensorValue(a), TensorValue(b), TensorValue(out)}};
  LimitData limit{std::vector<float>(k16M, 1.0f), std::vector<float>(k16M, 2.0f), std::vector<float>(k16M),
                  std::vector<uint8_t>(k16M, 1)};
  struct Row {
    const char* name;
    Pointwise* ours;
    bp_bench::Batch anchor;
  };
  const Row rows[] = {{"add.out 16M float32", &add, LimitAdd},
                      {"gt.out 16M float32", &gt, LimitGt},
                      {"where.self_out 16M float32", &where, LimitWhere}};
  std::printf("Pointwise vs the limit loop (two threads), %d interleaved rounds, load average %s\n", rounds,
              bp_bench::LoadAverage().c_str());
  std::printf("%-28s %10s %12s %16s\n", "row", "ours ms", "limit ms", "ratio (median)");
  for (const Row& r : rows) {
    const bp_bench::RowResult res = bp_bench::Interleave(r.name, RunPointwise, r.ours, r.anchor, &limit, rounds, 1);
    std::printf("%-28s %10.2f %12.2f %16.2f\n", r.name, res.ours_ns / 1e6, res.anchor_ns / 1e6, res.ratio);
  }
  for (bp_tensor_t* t : {a, b, out, mask, mask_out}) bp_tensor_release(t);
}

void Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  bp_op_t* mm_out = Op("matmul.out");
  bp_tensor_t* a = bp_bench::Filled(bp_device_t{0, 0}, {n, n});
  bp_tensor_t* b = bp_bench::Filled(bp_device_t{0, 0}, {n, n});
  bp_tensor_t* out = bp_bench::Filled(bp_device_t{0, 0}, {n, n});
  bp_value_t args[3] = {TensorValue(a), TensorValue(b), TensorValue(out)};
  for (auto _ : state) {
    if (bp_op_call(Context(), mm_out, args, 3, nullptr, 0) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      break;
    }
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
BENCHMARK(Matmul)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

void Anchor_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(Anchor_Matmul)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

// Usage: bp_bench_cpu [--pointwise-rounds=N] [google benchmark flags]
// (the pointwise rows first, 11 rounds by default; 0 skips them).
int main(int argc, char** argv) {
  int rounds = 11;
  if (argc > 1 && std::strncmp(argv[1], "--pointwise-rounds=", 19) == 0) {
    rounds = std::atoi(argv[1] + 19);
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  if (rounds > 0) PointwiseRows(rounds);
  return bp_bench::RunWithRatios(argc, argv);
}
