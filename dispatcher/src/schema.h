// Parsed operator schemas (PyTorch's schema grammar, the subset we need).
//
//   add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//   myvendor::fused(Tensor(a!) self, int[2] k=[1,1], str? mode=None) -> Tensor(a!)
//
// Owned by helper B (schema parser). The core runtime only reads these structs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backplane/types.h"
#include "status.h"

namespace bp::core {

enum class ArgType {
  kTensor,      // Tensor
  kTensorList,  // Tensor[]
  kInt,         // int
  kIntList,     // int[], int[N]
  kFloat,       // float
  kBool,        // bool
  kScalar,      // Scalar (INT, DOUBLE or BOOL value)
  kScalarType,  // ScalarType
  kString,      // str
};

// A default value as written in the schema, already typed.
struct DefaultValue {
  int32_t kind = BP_VALUE_NONE;  // enum bp_value_kind; NONE for "=None"
  int64_t i = 0;
  double d = 0.0;
  bool b = false;
  std::vector<int64_t> ints;  // int lists; "int[2] stride=1" is stored as {1, 1}
  std::string str;
};

struct Argument {
  std::string name;
  ArgType type = ArgType::kTensor;
  bool optional = false;      // "Tensor?", "int?", ...
  int32_t list_size = 0;      // N of int[N]; 0 when unsized
  bool kwarg_only = false;    // after "*"
  bool is_mutable = false;    // alias annotation with '!': Tensor(a!)
  std::string alias_set;      // "a" of Tensor(a) / Tensor(a!); empty if none
  std::optional<DefaultValue> default_value;
};

struct Return {
  ArgType type = ArgType::kTensor;
  std::string alias_set;
  bool is_mutable = false;
};

struct Schema {
  std::string ns;        // "" for core ops, "myvendor" for "myvendor::op"
  std::string name;      // "add"
  std::string overload;  // "Tensor"; "" when absent
  std::vector<Argument> arguments;
  std::vector<Return> returns;

  // "add.Tensor", "relu", "myvendor::fused": the key bp_op_find takes.
  std::string full_name() const;
  // Re-serialized schema string (canonical spacing).
  std::string to_string() const;
};

// The base type word as a schema spells it ("Tensor" for Tensor and Tensor[]).
const char* TypeName(ArgType t);

// A default as the canonical schema text writes it: "None", "1", "1e-05",
// "True", "'none'", "[1, 1]".
std::string DefaultText(const DefaultValue& v);

// Parses `text`. On error returns INVALID_ARGUMENT with a message that names
// the column: "schema 'add(Tensor self, Tensr other)': unknown type 'Tensr' at column 18".
Status parse_schema(const std::string& text, Schema* out);

}  // namespace bp::core
