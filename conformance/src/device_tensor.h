// Making and reading tensors on a backend device for a case, through the
// public API only. Every tensor made is held by a TensorPool and released
// when the case ends.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "sample.h"

namespace bpc {

class TensorPool {
 public:
  TensorPool() = default;
  TensorPool(const TensorPool&) = delete;
  TensorPool& operator=(const TensorPool&) = delete;
  ~TensorPool();
  bp_tensor_t* hold(bp_tensor_t* t);

 private:
  std::vector<bp_tensor_t*> tensors_;
};

// Looks an operator up by name (cached by the caller).
using OpLookup = std::function<bp_op_t*(const std::string&)>;

// "<function>: <status name>: <last error message>".
std::string api_error(const char* what, bp_status_t st);

// Makes `in` on `dev` in its layout (a view made with the core's view
// operators when the layout asks for one). A cpu_scalar input stays on the CPU.
bool make_device_tensor(bp_context_t* ctx, const OpLookup& ops, const TensorInput& in,
                        bp_device_t dev, TensorPool* pool, bp_tensor_t** out, std::string* err);

// Makes `in` (in.alias_of >= 0) as a view of `base`, the device tensor of
// the argument it aliases: the same view (kContiguous) or its transpose.
bool make_alias_tensor(bp_context_t* ctx, const OpLookup& ops, const TensorInput& in, bp_tensor_t* base,
                       TensorPool* pool, bp_tensor_t** out, std::string* err);

// Reads a tensor back (row-major) as doubles; checks dtype is one of the nine.
bool read_tensor(const bp_tensor_t* t, DType* dtype, std::vector<int64_t>* sizes,
                 std::vector<double>* values, std::string* err);

}  // namespace bpc
