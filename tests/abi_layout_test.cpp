// Pins the layout of every struct that crosses the ABI (offsets frozen for
// ABI major 1) and checks that the public headers compile as strict C99
// (c_header_check.c, built with -std=c99 -pedantic -Werror).
// bp-test: public-api
#include <cstddef>
#include <string>
#include <thread>

#include "bp_test_util.h"

extern "C" int bp_c_header_check(void);

namespace {

// Fixed cells.
static_assert(sizeof(bp_value_t) == 24, "bp_value_t is frozen at 24 bytes");
static_assert(offsetof(bp_value_t, kind) == 0);
static_assert(offsetof(bp_value_t, u) == 8);
static_assert(sizeof(bp_kernel_arg_t) == 24, "bp_kernel_arg_t is frozen at 24 bytes");
static_assert(offsetof(bp_kernel_arg_t, u) == 8);
static_assert(sizeof(bp_device_t) == 8);

// Versioned structs: struct_size first, fields only appended.
static_assert(offsetof(bp_kernel_call_t, struct_size) == 0);
static_assert(offsetof(bp_kernel_call_t, op_name) == 8);
static_assert(offsetof(bp_kernel_call_t, args) == 16);
static_assert(offsetof(bp_kernel_call_t, num_args) == 24);
static_assert(offsetof(bp_kernel_call_t, num_outputs) == 28);
static_assert(offsetof(bp_kernel_call_t, outputs) == 32);
static_assert(offsetof(bp_kernel_call_t, stream) == 40);
static_assert(offsetof(bp_kernel_call_t, device_index) == 48);
static_assert(offsetof(bp_kernel_call_t, kernel_data) == 56);
static_assert(offsetof(bp_kernel_call_t, backend_data) == 64);
// ABI 1.2 appended the per-call error slot; a 1.0/1.1 call ends at 72 bytes.
static_assert(offsetof(bp_kernel_call_t, fail) == 72);
static_assert(offsetof(bp_kernel_call_t, error_state) == 80);
static_assert(sizeof(bp_kernel_call_t) == 88);

static_assert(offsetof(bp_tensor_spec_t, dtype) == 8);
static_assert(offsetof(bp_tensor_spec_t, ndim) == 12);
static_assert(offsetof(bp_tensor_spec_t, sizes) == 16);
static_assert(offsetof(bp_meta_call_t, out_specs) == 32);
static_assert(offsetof(bp_meta_call_t, meta_data) == 40);

static_assert(offsetof(bp_host_api_t, abi_version) == 8);
static_assert(offsetof(bp_host_api_t, set_error) == 16);
static_assert(offsetof(bp_host_api_t, log) == 24);
static_assert(offsetof(bp_host_api_t, register_kernel) == 32);
static_assert(offsetof(bp_host_api_t, register_fallback) == 40);
static_assert(offsetof(bp_host_api_t, define_op) == 48);

static_assert(offsetof(bp_device_properties_t, name) == 8);
static_assert(offsetof(bp_device_properties_t, vendor) == 264);
static_assert(offsetof(bp_device_properties_t, driver_version) == 392);
static_assert(offsetof(bp_device_properties_t, total_memory_bytes) == 520);
static_assert(offsetof(bp_device_properties_t, capabilities) == 528);
static_assert(offsetof(bp_device_properties_t, alignment_bytes) == 536);
static_assert(offsetof(bp_device_properties_t, compute_units) == 540);
static_assert(offsetof(bp_device_properties_t, extensions) == 544);

static_assert(offsetof(bp_backend_t, name) == 8);
static_assert(offsetof(bp_backend_t, version) == 16);
static_assert(offsetof(bp_backend_t, device_type) == 24);
static_assert(offsetof(bp_backend_t, backend_data) == 32);
static_assert(offsetof(bp_backend_t, no_device_reason) == 40);
static_assert(offsetof(bp_backend_t, device_count) == 48);
static_assert(offsetof(bp_backend_t, device_properties) == 56);
static_assert(offsetof(bp_backend_t, allocate) == 64);
static_assert(offsetof(bp_backend_t, deallocate) == 72);
static_assert(offsetof(bp_backend_t, copy_host_to_device) == 80);
static_assert(offsetof(bp_backend_t, copy_device_to_host) == 88);
static_assert(offsetof(bp_backend_t, copy_device_to_device) == 96);
static_assert(offsetof(bp_backend_t, stream_get_default) == 104);
static_assert(offsetof(bp_backend_t, stream_synchronize) == 112);
static_assert(offsetof(bp_backend_t, event_create) == 120);
static_assert(offsetof(bp_backend_t, event_destroy) == 152);
static_assert(offsetof(bp_backend_t, shutdown) == 160);
// ABI 1.4 appended seven slots after shutdown (a 1.3 plugin's struct ends at 168).
static_assert(offsetof(bp_backend_t, stream_create) == 168);
static_assert(offsetof(bp_backend_t, stream_destroy) == 176);
static_assert(offsetof(bp_backend_t, event_query) == 184);
static_assert(offsetof(bp_backend_t, event_elapsed_time) == 192);
static_assert(offsetof(bp_backend_t, host_allocate) == 200);
static_assert(offsetof(bp_backend_t, host_deallocate) == 208);
static_assert(offsetof(bp_backend_t, copy_device_to_host_async) == 216);
// ABI 1.6 appended the collectives table (a 1.5 plugin's struct ends at 224).
static_assert(offsetof(bp_backend_t, collectives) == 224);
static_assert(sizeof(bp_backend_t) == 232);

// ABI 1.6: the collectives extension (backplane/collectives.h) and the
// host's communicator options and store (backplane/comm.h).
static_assert(offsetof(bp_collective_args_t, kind) == 8);
static_assert(offsetof(bp_collective_args_t, peer) == 16);
static_assert(offsetof(bp_collective_args_t, input) == 24);
static_assert(offsetof(bp_collective_args_t, output) == 32);
static_assert(offsetof(bp_collective_args_t, stream) == 40);
static_assert(offsetof(bp_collective_args_t, timeout_ms) == 48);
static_assert(offsetof(bp_collective_args_t, message) == 56);
static_assert(sizeof(bp_collective_args_t) == 64);
static_assert(offsetof(bp_collectives_t, comm_bootstrap) == 8);
static_assert(offsetof(bp_collectives_t, collective) == 32);
static_assert(offsetof(bp_collectives_t, comm_async_error) == 40);
static_assert(sizeof(bp_collectives_t) == 48);
static_assert(offsetof(bp_kv_store_t, set) == 16);
static_assert(offsetof(bp_kv_store_t, get) == 24);
static_assert(offsetof(bp_comm_options_t, store) == 16);
static_assert(offsetof(bp_comm_options_t, prefix) == 24);
static_assert(offsetof(bp_comm_options_t, timeout_ms) == 32);
static_assert(offsetof(bp_comm_options_t, engine) == 40);
static_assert(offsetof(bp_comm_options_t, host) == 48);
static_assert(sizeof(bp_comm_options_t) == 56);
static_assert(offsetof(bp_comm_info_t, device) == 16);
static_assert(offsetof(bp_comm_info_t, engine) == 24);
static_assert(sizeof(bp_comm_info_t) == 40);

static_assert(offsetof(bp_plugin_init_args_t, abi_version) == 8);
static_assert(offsetof(bp_plugin_init_args_t, host) == 16);
static_assert(offsetof(bp_plugin_init_args_t, registrar) == 24);
static_assert(offsetof(bp_plugin_init_args_t, backend) == 32);
static_assert(offsetof(bp_plugin_entry_t, abi_version) == 8);
static_assert(offsetof(bp_plugin_entry_t, negotiate) == 16);
static_assert(offsetof(bp_plugin_entry_t, init) == 24);

static_assert(offsetof(bp_context_options_t, strict_fallback) == 8);
static_assert(offsetof(bp_context_options_t, discover_plugins) == 12);
static_assert(offsetof(bp_context_options_t, log_callback) == 16);
static_assert(offsetof(bp_context_options_t, log_user_data) == 24);
static_assert(offsetof(bp_context_options_t, min_log_level) == 32);
static_assert(offsetof(bp_backend_info_t, name) == 8);
static_assert(offsetof(bp_backend_info_t, abi_version) == 40);
static_assert(offsetof(bp_backend_info_t, loaded) == 56);
static_assert(offsetof(bp_allocator_stats_t, allocated_bytes) == 8);
static_assert(offsetof(bp_allocator_stats_t, cache_hits) == 40);
static_assert(offsetof(bp_op_info_t, name) == 8);
static_assert(offsetof(bp_op_info_t, num_arguments) == 40);
static_assert(offsetof(bp_transfer_stats_t, host_to_device_count) == 8);
static_assert(offsetof(bp_transfer_stats_t, device_to_device_bytes) == 48);
static_assert(offsetof(bp_transfer_stats_t, cast_count) == 56);  // ABI 1.3
static_assert(offsetof(bp_transfer_stats_t, cast_bytes) == 64);
static_assert(sizeof(bp_transfer_stats_t) == 72);

// DLPack 1.x's DLManagedTensorVersioned, declared by backplane/dlpack_versioned.h
// while dlpack.h is 0.6: DLPack 1.x's layout (a producer built against the
// real 1.x header hands us its struct).
static_assert(sizeof(DLPackVersion) == 8);
static_assert(offsetof(DLPackVersion, minor) == 4);
static_assert(offsetof(DLManagedTensorVersioned, version) == 0);
static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8);
static_assert(offsetof(DLManagedTensorVersioned, deleter) == 16);
static_assert(offsetof(DLManagedTensorVersioned, flags) == 24);
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32);
static_assert(sizeof(DLManagedTensorVersioned) == 80);
static_assert(DLPACK_FLAG_BITMASK_READ_ONLY == 1 && DLPACK_FLAG_BITMASK_IS_COPIED == 2);

TEST(AbiLayoutTest, HeadersCompileAsC99) { EXPECT_EQ(bp_c_header_check(), 48); }

TEST(AbiLayoutTest, VersionAndStatusNames) {
  EXPECT_EQ(bp_abi_version(), BP_ABI_VERSION);
  EXPECT_EQ(BP_ABI_VERSION_GET_MAJOR(bp_abi_version()), 1u);
  EXPECT_STRNE(bp_version_string(), "");
  EXPECT_STREQ(bp_status_name(BP_STATUS_OK), "OK");
  EXPECT_STREQ(bp_status_name(BP_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(bp_status_name(BP_STATUS_INCOMPATIBLE_VERSION), "INCOMPATIBLE_VERSION");
  EXPECT_STREQ(bp_status_name(999), "UNKNOWN_STATUS");
}

TEST(AbiLayoutTest, LastErrorIsThreadLocalAndSticky) {
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  bp_op_t* op = nullptr;
  EXPECT_EQ(bp_op_find(ctx, "nope", &op), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(bp_last_error_status(), BP_STATUS_NOT_FOUND);
  std::string other_thread;
  std::thread([&] { other_thread = bp_last_error_message(); }).join();
  EXPECT_EQ(other_thread, "");
  bp_context_options_t small{};
  small.struct_size = 4;
  bp_context_t* c2 = nullptr;
  EXPECT_EQ(bp_context_create(&small, &c2), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(c2, nullptr);
  bp_context_destroy(ctx);
  bp_context_destroy(nullptr);
  bp_tensor_release(nullptr);
}

}  // namespace
