// The core operator definitions, generated from abi/ops.yaml by
// dispatcher/codegen/gen_ops.py into <build>/generated/op_table.cpp, with
// every schema already parsed (by schema.cpp, at build time).
#pragma once

#include <cstddef>
#include <cstdint>

#include "schema.h"

namespace bp::core {

enum class OpVariant : int32_t { kFunctional = 0, kInplace = 1, kOut = 2 };

// A parsed default value (DefaultValue as static data).
struct OpDefaultDef {
  int32_t kind;            // enum bp_value_kind; NONE for "=None"
  int64_t i;
  double d;
  bool b;
  const int64_t* ints;     // int-list defaults ("int[2] k=1" arrives as {1, 1})
  int32_t num_ints;
  const char* str;
};

// One parsed argument (Argument as static data).
struct OpArgDef {
  const char* name;
  ArgType type;
  bool optional;
  bool kwarg_only;
  bool is_mutable;
  int32_t list_size;
  const char* alias_set;   // "" when none
  bool has_default;
  OpDefaultDef default_value;
};

struct OpReturnDef {
  ArgType type;
  const char* alias_set;
  bool is_mutable;
};

struct OpTableEntry {
  const char* schema;      // canonical schema text of this variant (bp_op_info)
  const char* ns;          // "" for core operators
  const char* name;        // "add"
  const char* overload;    // "Tensor", "" when none
  const OpArgDef* args;
  int32_t num_args;
  const OpReturnDef* returns;
  int32_t num_returns;
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

// The Schema an entry describes; no parsing.
Schema SchemaFromTable(const OpTableEntry& e);

}  // namespace bp::core
