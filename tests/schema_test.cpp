// Schema parser: every grammar feature Backplane uses, round trips through
// to_string, and each error with the column it names.
#include <gtest/gtest.h>

#include "op_table.h"
#include "schema.h"

namespace bp::core {
namespace {

Schema Parse(const std::string& text) {
  Schema s;
  Status st = parse_schema(text, &s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

TEST(SchemaTest, NameNamespaceOverload) {
  Schema s = Parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(s.ns, "");
  EXPECT_EQ(s.name, "add");
  EXPECT_EQ(s.overload, "Tensor");
  EXPECT_EQ(s.full_name(), "add.Tensor");
  Schema v = Parse("myvendor::fused_gelu(Tensor self) -> Tensor");
  EXPECT_EQ(v.ns, "myvendor");
  EXPECT_EQ(v.name, "fused_gelu");
  EXPECT_EQ(v.overload, "");
  EXPECT_EQ(v.full_name(), "myvendor::fused_gelu");
  EXPECT_EQ(Parse("relu(Tensor self) -> Tensor").full_name(), "relu");
}

TEST(SchemaTest, KeywordOnlyAndScalarDefault) {
  Schema s = Parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_FALSE(s.arguments[1].kwarg_only);
  EXPECT_TRUE(s.arguments[2].kwarg_only);
  EXPECT_EQ(s.arguments[2].type, ArgType::kScalar);
  ASSERT_TRUE(s.arguments[2].default_value.has_value());
  EXPECT_EQ(s.arguments[2].default_value->kind, BP_VALUE_INT);
  EXPECT_EQ(s.arguments[2].default_value->i, 1);
  EXPECT_FALSE(s.arguments[0].default_value.has_value());
}

TEST(SchemaTest, Types) {
  Schema s = Parse(
      "f(Tensor a, Tensor? b, Tensor[] c, int d, int[] e, int[3] g, float h, bool i, Scalar j, ScalarType k, "
      "ScalarType? l, str m, str? n, int? o, int[1]? p, SymInt q) -> Tensor");
  ASSERT_EQ(s.arguments.size(), 16u);
  const auto& a = s.arguments;
  EXPECT_EQ(a[0].type, ArgType::kTensor);
  EXPECT_FALSE(a[0].optional);
  EXPECT_EQ(a[1].type, ArgType::kTensor);
  EXPECT_TRUE(a[1].optional);
  EXPECT_EQ(a[2].type, ArgType::kTensorList);
  EXPECT_EQ(a[3].type, ArgType::kInt);
  EXPECT_EQ(a[4].type, ArgType::kIntList);
  EXPECT_EQ(a[4].list_size, 0);
  EXPECT_EQ(a[5].type, ArgType::kIntList);
  EXPECT_EQ(a[5].list_size, 3);
  EXPECT_EQ(a[6].type, ArgType::kFloat);
  EXPECT_EQ(a[7].type, ArgType::kBool);
  EXPECT_EQ(a[8].type, ArgType::kScalar);
  EXPECT_EQ(a[9].type, ArgType::kScalarType);
  EXPECT_TRUE(a[10].optional);
  EXPECT_EQ(a[11].type, ArgType::kString);
  EXPECT_TRUE(a[12].optional);
  EXPECT_EQ(a[13].type, ArgType::kInt);
  EXPECT_TRUE(a[13].optional);
  EXPECT_EQ(a[14].type, ArgType::kIntList);
  EXPECT_EQ(a[14].list_size, 1);
  EXPECT_TRUE(a[14].optional);
  EXPECT_EQ(a[15].type, ArgType::kInt);  // SymInt reads as int
}

TEST(SchemaTest, Defaults) {
  Schema s = Parse(
      "f(Tensor x, float eps=1e-05, bool a=True, bool b=False, Tensor? w=None, int[2] stride=1, "
      "int[2] pad=[0, 1], int[1] dim=[], str mode='none', int k=-3, float m=2, Scalar s=0.5, str q=\"tanh\") "
      "-> Tensor");
  const auto& a = s.arguments;
  EXPECT_EQ(a[1].default_value->kind, BP_VALUE_DOUBLE);
  EXPECT_DOUBLE_EQ(a[1].default_value->d, 1e-05);
  EXPECT_EQ(a[2].default_value->kind, BP_VALUE_BOOL);
  EXPECT_TRUE(a[2].default_value->b);
  EXPECT_FALSE(a[3].default_value->b);
  EXPECT_EQ(a[4].default_value->kind, BP_VALUE_NONE);
  EXPECT_EQ(a[5].default_value->kind, BP_VALUE_INT_LIST);
  EXPECT_EQ(a[5].default_value->ints, (std::vector<int64_t>{1, 1}));  // scalar-to-list
  EXPECT_EQ(a[6].default_value->ints, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(a[7].default_value->kind, BP_VALUE_INT_LIST);
  EXPECT_TRUE(a[7].default_value->ints.empty());
  EXPECT_EQ(a[8].default_value->kind, BP_VALUE_STRING);
  EXPECT_EQ(a[8].default_value->str, "none");
  EXPECT_EQ(a[9].default_value->i, -3);
  EXPECT_EQ(a[10].default_value->kind, BP_VALUE_DOUBLE);  // "float m=2" is the float 2.0
  EXPECT_DOUBLE_EQ(a[10].default_value->d, 2.0);
  EXPECT_EQ(a[11].default_value->kind, BP_VALUE_DOUBLE);
  EXPECT_EQ(a[12].default_value->str, "tanh");
}

TEST(SchemaTest, AliasAnnotations) {
  Schema s = Parse("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  EXPECT_TRUE(s.arguments[0].is_mutable);
  EXPECT_EQ(s.arguments[0].alias_set, "a");
  EXPECT_FALSE(s.arguments[1].is_mutable);
  EXPECT_EQ(s.arguments[1].alias_set, "");
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_TRUE(s.returns[0].is_mutable);
  EXPECT_EQ(s.returns[0].alias_set, "a");
  Schema v = Parse("view(Tensor(a) self, int[] size) -> Tensor(a)");
  EXPECT_FALSE(v.arguments[0].is_mutable);
  EXPECT_EQ(v.arguments[0].alias_set, "a");
  EXPECT_EQ(v.returns[0].alias_set, "a");
  EXPECT_FALSE(v.returns[0].is_mutable);
}

TEST(SchemaTest, MultipleAndNamedReturns) {
  Schema s = Parse("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  ASSERT_EQ(s.returns.size(), 2u);
  Schema t = Parse("f(Tensor(a!) x, Tensor(b!) y) -> (Tensor(a!), Tensor(b!))");
  ASSERT_EQ(t.returns.size(), 2u);
  EXPECT_EQ(t.returns[1].alias_set, "b");
  EXPECT_TRUE(t.returns[1].is_mutable);
  Schema n = Parse("g(Tensor x) -> ()");
  EXPECT_TRUE(n.returns.empty());
  Schema l = Parse("h(Tensor x) -> Tensor[]");
  EXPECT_EQ(l.returns[0].type, ArgType::kTensorList);
}

TEST(SchemaTest, ToStringRoundTrips) {
  const char* cases[] = {
      "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
      "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
      "bool cudnn_enable=True) -> Tensor",
      "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=[1, 1], int[2] padding=[0, 0], "
      "int[2] dilation=[1, 1], int groups=1) -> Tensor",
      "gelu(Tensor self, *, str approximate='none') -> Tensor",
      "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      "myvendor::f(Tensor(a!) x, Tensor[] ys, float s=0.5) -> (Tensor(a!), Tensor)",
  };
  for (const char* text : cases) {
    Schema s = Parse(text);
    EXPECT_EQ(s.to_string(), text);
    Schema again = Parse(s.to_string());
    EXPECT_EQ(again.to_string(), s.to_string());
  }
  // Canonical spacing and scalar-to-list defaults are normalized.
  EXPECT_EQ(Parse("f( Tensor  x,int[2] k=1 )->Tensor").to_string(), "f(Tensor x, int[2] k=[1, 1]) -> Tensor");
  EXPECT_EQ(Parse("f(Scalar s=2.0) -> Tensor").to_string(), "f(Scalar s=2.0) -> Tensor");
}

// The column (1-based) in the message points at the offending token.
void ExpectError(const std::string& text, const std::string& what, int column) {
  Schema s;
  Status st = parse_schema(text, &s);
  ASSERT_FALSE(st.ok()) << text;
  EXPECT_EQ(st.code(), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("at column " + std::to_string(column)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("schema '" + text + "'"), std::string::npos) << st.message();
}

TEST(SchemaTest, Errors) {
  ExpectError("add(Tensor self, Tensr other) -> Tensor", "unknown type 'Tensr'", 18);
  ExpectError("add(Tensor self -> Tensor", "expected ')'", 17);
  ExpectError("add(Tensor self) Tensor", "expected '->'", 18);
  ExpectError("add(Tensor self) -> Tensor junk", "unexpected trailing text", 28);
  ExpectError("(Tensor self) -> Tensor", "expected an operator name", 1);
  ExpectError("ns::(Tensor x) -> Tensor", "operator name after '::'", 5);
  ExpectError("f.(Tensor x) -> Tensor", "overload name", 3);
  ExpectError("f(Tensor x, Tensor x) -> Tensor", "duplicate argument 'x'", 20);
  ExpectError("f(Tensor x, *, *, int y) -> Tensor", "'*' appears twice", 16);
  ExpectError("f(Tensor) -> Tensor", "expected an argument name", 9);
  ExpectError("f(int x=None) -> Tensor", "default None for non-optional", 9);
  ExpectError("f(int x=1.5) -> Tensor", "float default for an int argument", 9);
  ExpectError("f(int[] x=1) -> Tensor", "scalar default for an unsized int list", 11);
  ExpectError("f(int[2] x=[1, 2, 3]) -> Tensor", "has 3 elements", 12);
  ExpectError("f(str x='abc) -> Tensor", "unterminated string", 9);
  ExpectError("f(bool x=Maybe) -> Tensor", "unknown default value 'Maybe'", 10);
  ExpectError("f(float[] x) -> Tensor", "lists of 'float' are not supported", 3);
  ExpectError("f(int(a!) x) -> Tensor", "alias annotations are only allowed on Tensor", 3);
  ExpectError("f(Tensor[2] x) -> Tensor", "Tensor lists cannot have a fixed size", 3);
  ExpectError("f(int[0] x) -> Tensor", "list size must be positive", 7);
  ExpectError("f(Tensor x) -> Tensor?", "optional return", 16);
  ExpectError("f(Tensor x=3) -> Tensor", "numeric default for a non-numeric", 12);
  ExpectError("f(Tensor x", "expected ')' but the schema ended", 11);
}

TEST(SchemaTest, NullOutput) {
  Status st = parse_schema("f() -> Tensor", nullptr);
  EXPECT_EQ(st.code(), BP_STATUS_INVALID_ARGUMENT);
  Schema s;
  ASSERT_TRUE(parse_schema("f() -> Tensor", &s).ok());
  EXPECT_TRUE(s.arguments.empty());
}

// Every schema the generator emitted parses and prints back identically, and
// variants point at their functional entry.
TEST(SchemaTest, GeneratedOpTableParses) {
  ASSERT_GT(kOpTableSize, 0u);
  for (size_t i = 0; i < kOpTableSize; ++i) {
    const OpTableEntry& e = kOpTable[i];
    Schema s;
    Status st = parse_schema(e.schema, &s);
    ASSERT_TRUE(st.ok()) << st.message();
    // The table keeps ops.yaml's spelling ("int[2] stride=1", as PyTorch);
    // to_string is canonical and stable.
    Schema again;
    ASSERT_TRUE(parse_schema(s.to_string(), &again).ok()) << s.to_string();
    EXPECT_EQ(again.to_string(), s.to_string());
    EXPECT_EQ(again.full_name(), s.full_name());
    ASSERT_GE(e.functional_index, 0);
    ASSERT_LT(static_cast<size_t>(e.functional_index), kOpTableSize);
    const OpTableEntry& f = kOpTable[e.functional_index];
    EXPECT_EQ(f.variant, OpVariant::kFunctional);
    EXPECT_STREQ(f.meta, e.meta);
    if (e.variant == OpVariant::kInplace) {
      EXPECT_TRUE(s.arguments[0].is_mutable) << e.schema;
      EXPECT_EQ(s.name.back(), '_') << e.schema;
    }
    if (e.variant == OpVariant::kOut) {
      EXPECT_EQ(s.arguments.back().name, "out") << e.schema;
      EXPECT_TRUE(s.arguments.back().kwarg_only) << e.schema;
      EXPECT_TRUE(s.arguments.back().is_mutable) << e.schema;
      EXPECT_TRUE(s.overload == "out" || s.overload.size() > 4) << e.schema;
    }
    EXPECT_NE(e.dtype_mask, 0u) << e.schema;
  }
}

// The parsed data the generator emitted (what the core builds operators from,
// without parsing) is exactly what the parser makes of the entry's text.
TEST(SchemaTest, GeneratedArgumentsEqualTheParsedSchema) {
  for (size_t i = 0; i < kOpTableSize; ++i) {
    const OpTableEntry& e = kOpTable[i];
    Schema parsed;
    ASSERT_TRUE(parse_schema(e.schema, &parsed).ok()) << e.schema;
    const Schema data = SchemaFromTable(e);
    EXPECT_EQ(data.to_string(), parsed.to_string()) << e.schema;
    ASSERT_EQ(data.arguments.size(), parsed.arguments.size()) << e.schema;
    for (size_t k = 0; k < data.arguments.size(); ++k) {
      const Argument& a = data.arguments[k];
      const Argument& b = parsed.arguments[k];
      EXPECT_EQ(a.name, b.name) << e.schema;
      EXPECT_EQ(a.type, b.type) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.optional, b.optional) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.kwarg_only, b.kwarg_only) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.is_mutable, b.is_mutable) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.list_size, b.list_size) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.alias_set, b.alias_set) << e.schema << " argument " << b.name;
      ASSERT_EQ(a.default_value.has_value(), b.default_value.has_value()) << e.schema << " argument " << b.name;
      if (!a.default_value) continue;
      EXPECT_EQ(a.default_value->kind, b.default_value->kind) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.default_value->i, b.default_value->i) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.default_value->d, b.default_value->d) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.default_value->b, b.default_value->b) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.default_value->ints, b.default_value->ints) << e.schema << " argument " << b.name;
      EXPECT_EQ(a.default_value->str, b.default_value->str) << e.schema << " argument " << b.name;
    }
    ASSERT_EQ(data.returns.size(), parsed.returns.size()) << e.schema;
    for (size_t k = 0; k < data.returns.size(); ++k) {
      EXPECT_EQ(data.returns[k].type, parsed.returns[k].type) << e.schema;
      EXPECT_EQ(data.returns[k].alias_set, parsed.returns[k].alias_set) << e.schema;
      EXPECT_EQ(data.returns[k].is_mutable, parsed.returns[k].is_mutable) << e.schema;
    }
  }
}

TEST(SchemaTest, OutOverloadNames) {
  bool seen_sum = false, seen_div_mode = false, seen_add = false;
  for (size_t i = 0; i < kOpTableSize; ++i) {
    Schema s;
    ASSERT_TRUE(parse_schema(kOpTable[i].schema, &s).ok());
    if (s.full_name() == "sum.dim_IntList_out") seen_sum = true;
    if (s.full_name() == "div.Tensor_mode_out") seen_div_mode = true;
    if (s.full_name() == "add.out") seen_add = true;
  }
  EXPECT_TRUE(seen_sum);
  EXPECT_TRUE(seen_div_mode);
  EXPECT_TRUE(seen_add);
}

}  // namespace
}  // namespace bp::core
