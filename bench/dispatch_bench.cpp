// Dispatcher overhead on the CPU backend: a no-op kernel through bp_op_call,
// and add of two 1-element tensors (out given; output allocated).
// Targets (ARCHITECTURE.md section 9): <= 15 ns, <= 60 ns, <= 100 ns.
#include <benchmark/benchmark.h>

#include "bench_context.h"
#include "ratio_reporter.h"

namespace {

using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;

bp_status_t NoopKernel(const bp_kernel_call_t*) { return BP_STATUS_OK; }

// fill_.Scalar with its kernel overridden by a no-op: the whole dispatch path
// (argument check, meta, kernel lookup, call) with no work in the kernel.
void BM_DispatchNoopKernel(benchmark::State& state) {
  bp_op_t* fill = Op("fill_.Scalar");
  bp_registration_t* reg = nullptr;
  if (bp_op_register_kernel(Context(), fill, 0, NoopKernel, nullptr, BP_REGISTER_OVERRIDE, &reg) !=
      BP_STATUS_OK) {
    state.SkipWithError(bp_last_error_message());
    return;
  }
  bp_tensor_t* t = bp_bench::Filled(bp_device_t{0, 0}, {1});
  bp_value_t args[2] = {TensorValue(t), {}};
  args[1].kind = BP_VALUE_DOUBLE;
  args[1].u.d = 1.0;
  for (auto _ : state) {
    bp_status_t s = bp_op_call(Context(), fill, args, 2, nullptr, 0);
    benchmark::DoNotOptimize(s);
  }
  bp_registration_remove(Context(), reg);
  bp_tensor_release(t);
}
BENCHMARK(BM_DispatchNoopKernel);

void BM_AddOut1Element(benchmark::State& state) {
  bp_op_t* add_out = Op("add.out");
  bp_tensor_t* a = bp_bench::Filled(bp_device_t{0, 0}, {1});
  bp_tensor_t* b = bp_bench::Filled(bp_device_t{0, 0}, {1});
  bp_tensor_t* out = bp_bench::Filled(bp_device_t{0, 0}, {1});
  bp_value_t args[4] = {TensorValue(a), TensorValue(b), {}, TensorValue(out)};
  args[2].kind = BP_VALUE_INT;
  args[2].u.i = 1;
  for (auto _ : state) {
    bp_status_t s = bp_op_call(Context(), add_out, args, 4, nullptr, 0);
    benchmark::DoNotOptimize(s);
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
BENCHMARK(BM_AddOut1Element);

// add.out whose operands broadcast ([1, 1] + [1]): the generic meta path
// (infer, output check, prepare), which the pointwise fast path skips.
void BM_AddOutGenericPath(benchmark::State& state) {
  bp_op_t* add_out = Op("add.out");
  bp_tensor_t* a = bp_bench::Filled(bp_device_t{0, 0}, {1, 1});
  bp_tensor_t* b = bp_bench::Filled(bp_device_t{0, 0}, {1});
  bp_tensor_t* out = bp_bench::Filled(bp_device_t{0, 0}, {1, 1});
  bp_value_t args[4] = {TensorValue(a), TensorValue(b), {}, TensorValue(out)};
  args[2].kind = BP_VALUE_INT;
  args[2].u.i = 1;
  for (auto _ : state) {
    bp_status_t s = bp_op_call(Context(), add_out, args, 4, nullptr, 0);
    benchmark::DoNotOptimize(s);
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
BENCHMARK(BM_AddOutGenericPath);

void BM_Add1ElementAllocated(benchmark::State& state) {
  bp_op_t* add = Op("add.Tensor");
  bp_tensor_t* a = bp_bench::Filled(bp_device_t{0, 0}, {1});
  bp_tensor_t* b = bp_bench::Filled(bp_device_t{0, 0}, {1});
  bp_value_t args[2] = {TensorValue(a), TensorValue(b)};
  for (auto _ : state) {
    bp_tensor_t* result = nullptr;
    bp_op_call(Context(), add, args, 2, &result, 1);
    bp_tensor_release(result);
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
}
BENCHMARK(BM_Add1ElementAllocated);

}  // namespace

int main(int argc, char** argv) { return bp_bench::RunWithRatios(argc, argv); }
