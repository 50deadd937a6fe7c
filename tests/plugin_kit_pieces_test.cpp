// The plugin kit's pieces (abi/include/backplane/plugin_kit/): dtype ids,
// argument access, formatted kernel errors and kernel tables, driven with
// hand-made structs and a stand-in host (no host library involved).
#include <backplane/op_args.h>
#include <backplane/plugin_kit.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

TEST(PluginKitDtype, IdsFollowTheCoreOrderAndDLPackCodes) {
  const struct {
    DLDataType dl;
    int32_t id;
    const char* name;
    size_t size;
  } cases[] = {{{BP_DTYPE_CODE_BOOL, 8, 1}, BP_KIT_DTYPE_BOOL, "bool", 1},
               {{kDLUInt, 8, 1}, BP_KIT_DTYPE_UINT8, "uint8", 1},
               {{kDLInt, 8, 1}, BP_KIT_DTYPE_INT8, "int8", 1},
               {{kDLInt, 32, 1}, BP_KIT_DTYPE_INT32, "int32", 4},
               {{kDLInt, 64, 1}, BP_KIT_DTYPE_INT64, "int64", 8},
               {{kDLFloat, 16, 1}, BP_KIT_DTYPE_FLOAT16, "float16", 2},
               {{kDLBfloat, 16, 1}, BP_KIT_DTYPE_BFLOAT16, "bfloat16", 2},
               {{kDLFloat, 32, 1}, BP_KIT_DTYPE_FLOAT32, "float32", 4},
               {{kDLFloat, 64, 1}, BP_KIT_DTYPE_FLOAT64, "float64", 8}};
  int32_t expected_id = 0;
  for (const auto& c : cases) {
    EXPECT_EQ(c.id, expected_id++) << c.name;  // dense, in the core's order
    EXPECT_EQ(bp_kit_dtype_of(c.dl), c.id) << c.name;
    EXPECT_STREQ(bp_kit_dtype_name(c.id), c.name);
    EXPECT_EQ(bp_kit_dtype_size(c.id), c.size) << c.name;
    EXPECT_EQ(bp_kit::DtypeOf(c.dl), static_cast<bp_kit::DType>(c.id)) << c.name;
  }
  EXPECT_EQ(expected_id, BP_KIT_DTYPE_COUNT);
  EXPECT_TRUE(bp_kit::IsFloating(bp_kit::DType::kBFloat16));
  EXPECT_FALSE(bp_kit_dtype_is_floating(BP_KIT_DTYPE_BOOL));
  EXPECT_TRUE(bp_kit_dtype_is_integral(BP_KIT_DTYPE_UINT8));
  EXPECT_FALSE(bp_kit_dtype_is_integral(BP_KIT_DTYPE_BOOL));
}

TEST(PluginKitDtype, UnknownEncodingsAreInvalid) {
  const DLDataType bad[] = {{kDLFloat, 8, 1},   {kDLInt, 16, 1},    {kDLUInt, 32, 1},
                            {kDLFloat, 32, 4},  {kDLBfloat, 32, 1}, {BP_DTYPE_CODE_BOOL, 1, 1},
                            {kDLComplex, 64, 1}};
  for (const DLDataType& t : bad) EXPECT_EQ(bp_kit_dtype_of(t), BP_KIT_DTYPE_INVALID);
  EXPECT_STREQ(bp_kit_dtype_name(BP_KIT_DTYPE_INVALID), "invalid");
  EXPECT_STREQ(bp_kit_dtype_name(BP_KIT_DTYPE_COUNT), "invalid");
  EXPECT_EQ(bp_kit_dtype_size(BP_KIT_DTYPE_INVALID), 0u);
  EXPECT_EQ(bp_kit::DtypeName(bp_kit::DType::kInvalid), std::string("invalid"));
}

bp_kernel_arg_t Cell(int32_t kind) {
  bp_kernel_arg_t a{};
  a.kind = kind;
  return a;
}

TEST(PluginKitArgs, ReadEachKindAndMissingTrailingArguments) {
  DLTensor t{};
  const int64_t dims[2] = {3, 4};
  std::vector<bp_kernel_arg_t> args(6);
  args[0] = Cell(BP_VALUE_TENSOR);
  args[0].u.tensor = &t;
  args[1] = Cell(BP_VALUE_DOUBLE);
  args[1].u.d = 2.5;
  args[2] = Cell(BP_VALUE_INT);
  args[2].u.i = -3;
  args[3] = Cell(BP_VALUE_BOOL);
  args[3].u.b = 1;
  args[4] = Cell(BP_VALUE_STRING);
  args[4].u.str = "tanh";
  args[5] = Cell(BP_VALUE_INT_LIST);
  args[5].u.int_list.data = dims;
  args[5].u.int_list.size = 2;
  bp_kernel_call_t call{};
  call.args = args.data();
  call.num_args = static_cast<int32_t>(args.size());

  EXPECT_EQ(bp_kit_tensor_arg(&call, 0), &t);
  EXPECT_EQ(bp_kit_tensor_arg(&call, 1), nullptr);
  EXPECT_EQ(bp_kit_double_arg(&call, 1, 0.0), 2.5);
  EXPECT_EQ(bp_kit_double_arg(&call, 2, 0.0), -3.0);
  EXPECT_EQ(bp_kit_int_arg(&call, 1, 0), 2);  // truncated
  EXPECT_EQ(bp_kit_int_arg(&call, 3, 0), 1);
  EXPECT_EQ(bp_kit_bool_arg(&call, 3, 0), 1);
  EXPECT_EQ(bp_kit_bool_arg(&call, 2, 0), 1);  // a nonzero INT
  EXPECT_STREQ(bp_kit_string_arg(&call, 4), "tanh");
  EXPECT_EQ(bp_kit_string_arg(&call, 0), nullptr);
  const int64_t* list = nullptr;
  EXPECT_EQ(bp_kit_int_list_arg(&call, 5, &list), 2);
  EXPECT_EQ(list, dims);
  EXPECT_EQ(bp_kit_int_list_arg(&call, 2, &list), 1);  // an INT is a list of one
  EXPECT_EQ(list[0], -3);
  // Past num_args (and negative): NONE, so the defaults.
  EXPECT_EQ(bp_kit_arg(&call, 6)->kind, BP_VALUE_NONE);
  EXPECT_EQ(bp_kit_arg(&call, -1)->kind, BP_VALUE_NONE);
  EXPECT_EQ(bp_kit_double_arg(&call, 9, 1.25), 1.25);
  EXPECT_EQ(bp_kit_int_arg(&call, 9, 7), 7);
  EXPECT_EQ(bp_kit_bool_arg(&call, 9, 1), 1);
  EXPECT_EQ(bp_kit_int_list_arg(&call, 9, &list), 0);
  EXPECT_EQ(list, nullptr);
}

std::string g_message;
bp_status_t RecordFail(const bp_kernel_call_t*, bp_status_t code, const char* message) {
  g_message = message;
  return code;
}

TEST(PluginKitErrors, FailfNamesBackendAndOperator) {
  bp_kernel_call_t call{};
  call.struct_size = sizeof(call);
  call.fail = RecordFail;
  call.op_name = "exp";
  EXPECT_EQ(bp_kit_failf(&call, nullptr, "mychip", BP_STATUS_UNIMPLEMENTED, "dtype %s", "int32"),
            BP_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(g_message, "mychip: exp: dtype int32");
  EXPECT_EQ(bp_kit_failf(&call, nullptr, nullptr, BP_STATUS_INVALID_ARGUMENT, "%d", 5), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(g_message, "exp: 5");
  const std::string long_what(2000, 'x');  // cut to BP_KIT_MESSAGE_MAX, still reported
  EXPECT_EQ(bp_kit_failf(&call, nullptr, "mychip", BP_STATUS_INTERNAL, "%s", long_what.c_str()), BP_STATUS_INTERNAL);
  EXPECT_EQ(g_message.size(), static_cast<size_t>(BP_KIT_MESSAGE_MAX - 1));
}

// A stand-in register_kernel that knows only add.Tensor and relu.
std::vector<std::string> g_registered;
std::vector<void*> g_data;
bp_status_t Register(bp_registrar_t*, const char* op, bp_kernel_fn, void* data, uint32_t) {
  const std::string name(op);
  if (name == "refused") return BP_STATUS_INVALID_ARGUMENT;
  if (name != BP_OP_ADD_TENSOR && name != BP_OP_RELU) return BP_STATUS_NOT_FOUND;
  g_registered.push_back(name);
  g_data.push_back(data);
  return BP_STATUS_OK;
}
bp_status_t Kernel(const bp_kernel_call_t*) { return BP_STATUS_OK; }

TEST(PluginKitKernelTable, UnknownOperatorIsSkippedOthersRegistered) {
  bp_host_api_t host{};
  host.struct_size = sizeof(host);
  host.register_kernel = Register;
  int state = 0, own = 0;
  auto* registrar = reinterpret_cast<bp_registrar_t*>(&state);
  const bp_kit_kernel_t table[] = {
      {BP_OP_ADD_TENSOR, Kernel, nullptr}, {"future_op.Tensor", Kernel, nullptr}, {BP_OP_RELU, Kernel, &own}};
  g_registered.clear();
  g_data.clear();
  EXPECT_EQ(bp_kit_register_kernels(&host, registrar, table, 3, &state), BP_STATUS_OK);
  EXPECT_EQ(g_registered, (std::vector<std::string>{"add.Tensor", "relu"}));
  EXPECT_EQ(g_data, (std::vector<void*>{&state, &own}));  // a row's own data wins
}

TEST(PluginKitKernelTable, OtherErrorsStopAndAreReturned) {
  bp_host_api_t host{};
  host.struct_size = sizeof(host);
  host.register_kernel = Register;
  int state = 0;
  auto* registrar = reinterpret_cast<bp_registrar_t*>(&state);
  const bp_kit_kernel_t table[] = {{"refused", Kernel, nullptr}, {BP_OP_RELU, Kernel, nullptr}};
  g_registered.clear();
  EXPECT_EQ(bp_kit_register_kernels(&host, registrar, table, 2, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(g_registered.empty());
  EXPECT_EQ(bp_kit_register_kernels(nullptr, registrar, table, 2, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_kit_register_kernels(&host, registrar, nullptr, 1, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_kit_register_kernels(&host, registrar, nullptr, 0, nullptr), BP_STATUS_OK);
}

// A stand-in register_kernel_dtypes: Register's policy, recording each mask.
std::vector<uint64_t> g_masks;
bp_status_t RegisterDtypes(bp_registrar_t* r, const char* op, bp_kernel_fn fn, void* data, uint32_t flags,
                           uint64_t mask) {
  const bp_status_t st = Register(r, op, fn, data, flags);
  if (st == BP_STATUS_OK) g_masks.push_back(mask);
  return st;
}

TEST(PluginKitKernelTable, DtypeTableRegistersEachRowsMaskOnA13Host) {
  bp_host_api_t host{};
  host.struct_size = sizeof(host);
  host.register_kernel = Register;
  host.register_kernel_dtypes = RegisterDtypes;
  int state = 0, own = 0;
  auto* registrar = reinterpret_cast<bp_registrar_t*>(&state);
  const bp_kit_kernel_dtypes_t table[] = {{BP_OP_ADD_TENSOR, Kernel, nullptr, BP_DTYPE_MASK_ALL},
                                          {"future_op.Tensor", Kernel, nullptr, BP_DTYPE_MASK_FLOAT32},
                                          {BP_OP_RELU, Kernel, &own, BP_DTYPE_MASK_FLOATING}};
  g_registered.clear();
  g_data.clear();
  g_masks.clear();
  EXPECT_EQ(bp_kit_register_kernels_dtypes(&host, registrar, table, 3, &state), BP_STATUS_OK);
  EXPECT_EQ(g_registered, (std::vector<std::string>{"add.Tensor", "relu"}));
  EXPECT_EQ(g_data, (std::vector<void*>{&state, &own}));
  EXPECT_EQ(g_masks, (std::vector<uint64_t>{BP_DTYPE_MASK_ALL, BP_DTYPE_MASK_FLOATING}));

  // A 1.2 host (no register_kernel_dtypes): register_kernel, without masks.
  host.struct_size = offsetof(bp_host_api_t, register_kernel_dtypes);
  g_registered.clear();
  g_masks.clear();
  EXPECT_EQ(bp_kit_register_kernels_dtypes(&host, registrar, table, 3, &state), BP_STATUS_OK);
  EXPECT_EQ(g_registered, (std::vector<std::string>{"add.Tensor", "relu"}));
  EXPECT_TRUE(g_masks.empty());

  const bp_kit_kernel_dtypes_t refused[] = {{"refused", Kernel, nullptr, BP_DTYPE_MASK_ALL}};
  EXPECT_EQ(bp_kit_register_kernels_dtypes(&host, registrar, refused, 1, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_kit_register_kernels_dtypes(&host, registrar, nullptr, 1, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_kit_register_kernels_dtypes(nullptr, registrar, table, 1, nullptr), BP_STATUS_INVALID_ARGUMENT);
}

}  // namespace
