// The core operator table, generated from dispatcher/ops.yaml by
// dispatcher/codegen/gen_ops.py into <build>/generated/op_table.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bp::core {

enum class OpVariant : int32_t { kFunctional = 0, kInplace = 1, kOut = 2 };

struct OpTableEntry {
  const char* schema;      // full schema string of this variant
  const char* kind;        // "pointwise", "reduction", "view", "composite", ...
  const char* meta;        // meta family name (FindMetaFunctions / FindViewFunctions)
  OpVariant variant;
  int32_t functional_index;  // index of the functional entry in kOpTable; own index if functional
  uint32_t dtype_mask;     // DtypeBit() of each dtype the operator takes
  const char* doc;
  const char* torch;       // PyTorch op the semantics come from
  const char* onnx;        // ONNX op, "" if none
};

extern const OpTableEntry kOpTable[];
extern const size_t kOpTableSize;

}  // namespace bp::core
