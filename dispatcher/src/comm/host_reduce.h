// Element-wise reductions over host buffers for the Gloo engine, in each
// dtype Backplane has (float16 and bfloat16 through float, rounded to
// nearest even back), and AVG's final division.
#pragma once

#include <cstddef>
#include <functional>

#include "backplane/backplane.h"
#include "dtype.h"

namespace bp::core {

// Gloo's reduction signature: out[i] = a[i] (op) b[i] for n elements; out
// may alias a or b.
using HostReduceFn = std::function<void(void* out, const void* a, const void* b, size_t n)>;

// The reduction for `op` in `dtype`; AVG reduces as SUM (DivideInPlace
// finishes it). Empty for a combination that does not exist (AVG of bool).
HostReduceFn HostReduce(DType dtype, bp_reduce_op_t op);

// data[i] /= divisor, in the dtype (integers truncate toward zero).
void DivideInPlace(DType dtype, void* data, size_t n, int32_t divisor);

}  // namespace bp::core
