// The element types the simulated interconnect moves and the element-wise
// reductions of all_reduce and reduce_scatter (collectives.cpp). Every rank
// reduces the ranks' blocks in rank order 0..W-1 with the same code, so every
// rank gets bit-identical results (as NCCL's ring, whatever the order, is
// deterministic for one topology). A real interconnect reduces on the device
// or in its switches instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backplane/collectives.h"  // bp_reduce_op_t

namespace vendor_sim {

// The dtypes collectives accept: the plugin kit's nine (bp_kit_dtype_of)
// plus int16, which the host's communicator API also lists.
enum class Elem : int32_t {
  kInvalid = -1,
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

Elem ElemOf(DLDataType t);
// "float32", as in ops.yaml; "invalid" for kInvalid.
const char* ElemName(Elem e);
// Bytes per element; 0 for kInvalid.
size_t ElemSize(Elem e);
// "sum", "prod", "min", "max", "avg"; "invalid" for anything else.
const char* ReduceOpName(int32_t op);

// Whether `op` (bp_reduce_op_t) is defined on `e`: every op on every dtype
// except AVG on bool (what would half of true be?). An op outside
// bp_reduce_op_t is not.
bool ReduceSupported(Elem e, int32_t op);

// out[i] = srcs[0][i] op srcs[1][i] op ... op srcs[world-1][i] for i < count,
// left to right. float16/bfloat16 accumulate in float and round to nearest
// even once at the end; integers wrap as two's complement; AVG is the SUM
// divided by `world` in the dtype (integers truncate toward zero); MIN/MAX
// propagate NaN; bool is SUM/MAX = or, PROD/MIN = and. `out` may alias
// srcs[k] only if it is srcs[0] exactly (the accumulator starts there).
// Requires ReduceSupported(e, op).
void Reduce(Elem e, int32_t op, const char* const* srcs, int world, size_t count, char* out);

// Adds one to the element at `p` (bool: sets it true). Only for the
// deliberately wrong all_reduce (BP_VENDOR_SIM_COLLECTIVES=wrong).
void AddOne(Elem e, char* p);

}  // namespace vendor_sim
