// What the CPU fallback costs a device that lacks an operator, beside the CPU
// backend running the same call on host tensors (interleaved rounds, median
// of the per-round ratios, bench/interleaved.h), on two kinds of device:
//   - unified: vendor_sim with BP_VENDOR_SIM_UNIFIED=1 (its memory is
//     host-addressable, BP_DEVICE_CAP_UNIFIED; a context of its own): the
//     fallback wraps its tensors and the CPU kernel writes into its memory,
//     nothing is copied. Issue 18's goal: at most 1.15x.
//   - copying: vendor_sim as it is: one copy of each input to the host, the
//     CPU kernel, one copy of the result back. The three steps are also timed
//     alone (copy in, host op, copy out) to say where the time goes.
// The operator's kernel is masked on vendor_sim in both contexts.
//
// Usage: bp_bench_fallback [rounds] [iterations per round] [row filter]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_context.h"
#include "interleaved.h"

namespace {

using bp_bench::TensorValue;

struct Call {
  bp_context_t* ctx = nullptr;
  bp_op_t* op = nullptr;
  std::vector<bp_value_t> args;
};

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, bp_last_error_message());
  std::exit(1);
}

// Runs the call `iters` times and releases each result.
void RunCall(void* s, int64_t iters) {
  auto* c = static_cast<Call*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    bp_tensor_t* r = nullptr;
    if (bp_op_call(c->ctx, c->op, c->args.data(), static_cast<int32_t>(c->args.size()), &r, 1) != BP_STATUS_OK) {
      Die("bp_op_call");
    }
    bp_tensor_release(r);
  }
}

// One step of the copying fallback alone: each tensor of `from` moved to `to`.
struct Move {
  std::vector<bp_tensor_t*> from;
  bp_device_t to{};
};

void RunMove(void* s, int64_t iters) {
  auto* m = static_cast<Move*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    for (bp_tensor_t* t : m->from) {
      bp_tensor_t* moved = nullptr;
      if (bp_tensor_to_device(t, m->to, &moved) != BP_STATUS_OK) Die("bp_tensor_to_device");
      bp_tensor_release(moved);
    }
  }
}

bp_op_t* Find(bp_context_t* ctx, const char* name) {
  bp_op_t* op = nullptr;
  if (bp_op_find(ctx, name, &op) != BP_STATUS_OK) Die(name);
  return op;
}

bp_device_t Device(bp_context_t* ctx, const char* spec) {
  bp_device_t d{};
  if (bp_device_parse(ctx, spec, &d) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_bench_fallback needs the cpu and vendor_sim plugins: %s\n", bp_last_error_message());
    std::exit(1);
  }
  return d;
}

// A context of its own whose vendor_sim reports BP_DEVICE_CAP_UNIFIED (the
// plugin reads its options at init).
bp_context_t* UnifiedContext() {
  setenv("BP_VENDOR_SIM_UNIFIED", "1", 1);
  bp_context_options_t opts{};
  opts.struct_size = sizeof(opts);
  opts.discover_plugins = 1;
  opts.min_log_level = BP_LOG_ERROR;
  bp_context_t* c = nullptr;
  if (bp_context_create(&opts, &c) != BP_STATUS_OK) Die("bp_context_create");
  unsetenv("BP_VENDOR_SIM_UNIFIED");
  return c;
}

bp_value_t Int(int64_t v) {
  bp_value_t x{};
  x.kind = BP_VALUE_INT;
  x.u.i = v;
  return x;
}

struct RowSpec {
  const char* name;
  const char* op;                            // the operator called
  const char* masked;                        // the kernel masked on vendor_sim (the functional overload)
  std::vector<std::vector<int64_t>> inputs;  // float32 tensor inputs, in order
  std::vector<bp_value_t> extra;             // scalar arguments after them
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const int64_t iters = argc > 2 ? std::atoll(argv[2]) : 20;
  const std::string filter = argc > 3 ? argv[3] : "";
  bp_context_t* ctx = bp_bench::Context();  // cpu, and vendor_sim as a copying device
  bp_context_t* uctx = UnifiedContext();
  const bp_device_t cpu = Device(ctx, "cpu:0"), dev = Device(ctx, "vendor_sim:0"), udev = Device(uctx, "vendor_sim:0");
  bp_device_properties_t props{};
  props.struct_size = sizeof(props);
  if (bp_device_properties(uctx, udev, &props) != BP_STATUS_OK || (props.capabilities & BP_DEVICE_CAP_UNIFIED) == 0) {
    std::fprintf(stderr, "vendor_sim did not report BP_DEVICE_CAP_UNIFIED with BP_VENDOR_SIM_UNIFIED=1\n");
    return 1;
  }
  const RowSpec specs[] = {
      {"exp, 1M", "exp", "exp", {{1 << 20}}, {}},
      {"exp, 8M", "exp", "exp", {{8 << 20}}, {}},
      {"add.Tensor, 4M + 4M", "add.Tensor", "add.Tensor", {{4 << 20}, {4 << 20}}, {}},
      {"softmax dim -1, 1024x1024", "softmax.int", "softmax.int", {{1024, 1024}}, {Int(-1)}},
      {"matmul, 512x512x512", "matmul", "matmul", {{512, 512}, {512, 512}}, {}},
  };
  std::printf(
      "CPU fallback from vendor_sim beside the CPU backend on host tensors, %d interleaved rounds of %lld "
      "calls, load average %s (times in us per call)\n",
      rounds, static_cast<long long>(iters), bp_bench::LoadAverage().c_str());
  std::printf("%-28s %9s | %9s %7s | %9s %7s | %8s %8s %8s\n", "row", "cpu", "unified", "ratio", "copying", "ratio",
              "copy in", "host op", "copy out");
  for (const RowSpec& s : specs) {
    if (std::string(s.name).find(filter) == std::string::npos) continue;
    Call on_cpu{ctx, Find(ctx, s.op), {}}, on_dev{ctx, Find(ctx, s.op), {}}, on_udev{uctx, Find(uctx, s.op), {}};
    Move copy_in{{}, cpu};
    std::vector<bp_tensor_t*> owned;
    for (const auto& sizes : s.inputs) {
      owned.push_back(bp_bench::Filled(cpu, sizes));
      on_cpu.args.push_back(TensorValue(owned.back()));
      owned.push_back(bp_bench::Filled(dev, sizes));
      on_dev.args.push_back(TensorValue(owned.back()));
      copy_in.from.push_back(owned.back());
      owned.push_back(bp_bench::Filled(udev, sizes, uctx));
      on_udev.args.push_back(TensorValue(owned.back()));
    }
    for (const bp_value_t& v : s.extra) {
      on_cpu.args.push_back(v);
      on_dev.args.push_back(v);
      on_udev.args.push_back(v);
    }
    bp_tensor_t* host_result = nullptr;
    if (bp_op_call(ctx, on_cpu.op, on_cpu.args.data(), static_cast<int32_t>(on_cpu.args.size()), &host_result, 1) !=
        BP_STATUS_OK) {
      Die(s.op);
    }
    Move copy_out{{host_result}, dev};
    if (bp_op_set_kernel_masked(ctx, Find(ctx, s.masked), dev.backend, 1) != BP_STATUS_OK ||
        bp_op_set_kernel_masked(uctx, Find(uctx, s.masked), udev.backend, 1) != BP_STATUS_OK) {
      Die("bp_op_set_kernel_masked");
    }
    const bp_bench::RowResult u = bp_bench::Interleave(s.name, RunCall, &on_udev, RunCall, &on_cpu, rounds, iters);
    const bp_bench::RowResult c = bp_bench::Interleave(s.name, RunCall, &on_dev, RunCall, &on_cpu, rounds, iters);
    // Where the copying fallback's time goes: each step alone, each beside
    // the host op so that all see the same load.
    const bp_bench::RowResult in = bp_bench::Interleave(s.name, RunMove, &copy_in, RunCall, &on_cpu, rounds, iters);
    const bp_bench::RowResult out = bp_bench::Interleave(s.name, RunMove, &copy_out, RunCall, &on_cpu, rounds, iters);
    std::printf("%-28s %9.1f | %9.1f %7.2f | %9.1f %7.2f | %8.1f %8.1f %8.1f\n", s.name, u.anchor_ns / 1e3,
                u.ours_ns / 1e3, u.ratio, c.ours_ns / 1e3, c.ratio, in.ours_ns / 1e3, in.anchor_ns / 1e3,
                out.ours_ns / 1e3);
    bp_op_set_kernel_masked(ctx, Find(ctx, s.masked), dev.backend, 0);
    bp_op_set_kernel_masked(uctx, Find(uctx, s.masked), udev.backend, 0);
    bp_tensor_release(host_result);
    for (bp_tensor_t* t : owned) bp_tensor_release(t);
  }
  std::printf("load average after: %s\n", bp_bench::LoadAverage().c_str());
  bp_context_destroy(uctx);
  return 0;
}
