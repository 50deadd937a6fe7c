// What the CPU fallback costs a device that lacks an operator: the same
// call on vendor_sim tensors with the operator's kernel masked (one copy of
// each input to the host, the CPU kernel, one copy of the result back) beside
// the CPU backend running it on host tensors. Interleaved rounds, median of
// the per-round ratios (bench/interleaved.h); issue 12's target is at most
// 1.15x for operators of 1M elements or more.
//
// Usage: bp_bench_fallback [rounds] [iterations per round] [row filter]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_context.h"
#include "interleaved.h"

namespace {

using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;

struct Call {
  bp_op_t* op = nullptr;
  std::vector<bp_value_t> args;
};

// Runs the call `iters` times and releases each result.
void RunCall(void* s, int64_t iters) {
  auto* c = static_cast<Call*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    bp_tensor_t* r = nullptr;
    if (bp_op_call(Context(), c->op, c->args.data(), static_cast<int32_t>(c->args.size()), &r, 1) != BP_STATUS_OK) {
      std::fprintf(stderr, "bp_op_call: %s\n", bp_last_error_message());
      std::exit(1);
    }
    bp_tensor_release(r);
  }
}

bp_value_t Int(int64_t v) {
  bp_value_t x{};
  x.kind = BP_VALUE_INT;
  x.u.i = v;
  return x;
}

struct RowSpec {
  const char* name;
  const char* op;            // the operator called
  const char* masked;        // the kernel masked on vendor_sim (the functional overload)
  std::vector<std::vector<int64_t>> inputs;  // float32 tensor inputs, in order
  std::vector<bp_value_t> extra;             // scalar arguments after them
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const int64_t iters = argc > 2 ? std::atoll(argv[2]) : 20;
  const std::string filter = argc > 3 ? argv[3] : "";
  bp_device_t cpu{}, dev{};
  if (!bp_bench::DeviceOf("cpu:0", &cpu) || !bp_bench::DeviceOf("vendor_sim:0", &dev)) {
    std::fprintf(stderr, "bp_bench_fallback needs the cpu and vendor_sim plugins: %s\n", bp_last_error_message());
    return 1;
  }
  const RowSpec specs[] = {
      {"exp, 1M", "exp", "exp", {{1 << 20}}, {}},
      {"exp, 8M", "exp", "exp", {{8 << 20}}, {}},
      {"add.Tensor, 4M + 4M", "add.Tensor", "add.Tensor", {{4 << 20}, {4 << 20}}, {}},
      {"softmax dim -1, 1024x1024", "softmax.int", "softmax.int", {{1024, 1024}}, {Int(-1)}},
      {"matmul, 512x512x512", "matmul", "matmul", {{512, 512}, {512, 512}}, {}},
  };
  std::printf("CPU fallback from vendor_sim beside the CPU backend on host tensors, %d interleaved rounds of %lld "
              "calls, load average %s\n",
              rounds, static_cast<long long>(iters), bp_bench::LoadAverage().c_str());
  std::printf("%-30s %14s %14s %16s\n", "row", "fallback us", "cpu us", "ratio (median)");
  for (const RowSpec& s : specs) {
    if (std::string(s.name).find(filter) == std::string::npos) continue;
    Call on_cpu{Op(s.op), {}}, on_dev{Op(s.op), {}};
    std::vector<bp_tensor_t*> owned;
    for (const auto& sizes : s.inputs) {
      owned.push_back(bp_bench::Filled(cpu, sizes));
      on_cpu.args.push_back(TensorValue(owned.back()));
      owned.push_back(bp_bench::Filled(dev, sizes));
      on_dev.args.push_back(TensorValue(owned.back()));
    }
    for (const bp_value_t& v : s.extra) {
      on_cpu.args.push_back(v);
      on_dev.args.push_back(v);
    }
    if (bp_op_set_kernel_masked(Context(), Op(s.masked), dev.backend, 1) != BP_STATUS_OK) {
      std::fprintf(stderr, "bp_op_set_kernel_masked(%s): %s\n", s.masked, bp_last_error_message());
      return 1;
    }
    const bp_bench::RowResult r = bp_bench::Interleave(s.name, RunCall, &on_dev, RunCall, &on_cpu, rounds, iters);
    std::printf("%-30s %14.1f %14.1f %16.2f\n", r.name.c_str(), r.ours_ns / 1e3, r.anchor_ns / 1e3, r.ratio);
    bp_op_set_kernel_masked(Context(), Op(s.masked), dev.backend, 0);
    for (bp_tensor_t* t : owned) bp_tensor_release(t);
  }
  std::printf("load average after: %s\n", bp_bench::LoadAverage().c_str());
  return 0;
}
