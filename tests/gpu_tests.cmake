# GPU helper's tests (included from tests/CMakeLists.txt).
#   gpu_indexing_test: the shared kernels' indexing and conversion logic as
#     plain C++ (no device, no GPU toolkit needed).
#   gpu_plugin_test: dlopens each GPU plugin this build made through a fake
#     host; without a device it checks the zero-device path and skips the rest.
find_package(GTest REQUIRED)
include(GoogleTest)
set(_bp_gpu_tests_dir ${CMAKE_CURRENT_LIST_DIR})
set(_bp_gpu_common_dir ${_bp_gpu_tests_dir}/../backends/gpu_common)

add_executable(gpu_indexing_test ${_bp_gpu_tests_dir}/gpu_indexing_test.cpp)
target_include_directories(gpu_indexing_test PRIVATE ${_bp_gpu_common_dir})
target_link_libraries(gpu_indexing_test PRIVATE Backplane::abi GTest::gtest_main)
backplane_warnings(gpu_indexing_test)
gtest_discover_tests(gpu_indexing_test DISCOVERY_MODE PRE_TEST)

set(_bp_gpu_plugins "")
if(TARGET backplane_cuda)
  list(APPEND _bp_gpu_plugins cuda)
endif()
if(TARGET backplane_hip)
  list(APPEND _bp_gpu_plugins hip)
endif()
if(_bp_gpu_plugins)
  add_executable(gpu_plugin_test ${_bp_gpu_tests_dir}/gpu_plugin_test.cpp)
  target_link_libraries(gpu_plugin_test PRIVATE bp_fake_host GTest::gtest_main)
  string(REPLACE ";" "," _bp_gpu_plugin_list "${_bp_gpu_plugins}")
  target_compile_definitions(gpu_plugin_test PRIVATE
    BP_GPU_PLUGIN_DIR="${BACKPLANE_PLUGIN_OUTPUT_DIR}"
    BP_GPU_PLUGINS="${_bp_gpu_plugin_list}")
  backplane_warnings(gpu_plugin_test)
  foreach(_p IN LISTS _bp_gpu_plugins)
    add_dependencies(gpu_plugin_test backplane_${_p})
  endforeach()
  gtest_discover_tests(gpu_plugin_test DISCOVERY_MODE PRE_TEST)
endif()

# The kernel sources themselves, run on host threads (backends/gpu_common/gpu_emulator.h).
find_package(Threads REQUIRED)
foreach(_t gpu_kernels_emulated_test gpu_image_kernels_emulated_test)
  add_executable(${_t} ${_bp_gpu_tests_dir}/${_t}.cpp)
  target_include_directories(${_t} PRIVATE ${_bp_gpu_common_dir} ${_bp_gpu_tests_dir})
  target_compile_definitions(${_t} PRIVATE BP_GPU_EMULATE=1)
  # g++ does not know the kernels' #pragma unroll.
  target_compile_options(${_t} PRIVATE -Wno-unknown-pragmas)
  target_link_libraries(${_t} PRIVATE bp_fake_host GTest::gtest_main Threads::Threads)
  backplane_warnings(${_t})
  gtest_discover_tests(${_t} DISCOVERY_MODE PRE_TEST)
endforeach()

# The plugin's stream, event and pinned-memory slots (device.cpp, stream.cpp, memory.cpp as they are)
# over the emulated runtime (backends/gpu_common/gpu_emulator_streams.h).
add_executable(gpu_streams_emulated_test ${_bp_gpu_tests_dir}/gpu_streams_emulated_test.cpp
  ${_bp_gpu_common_dir}/device.cpp ${_bp_gpu_common_dir}/stream.cpp ${_bp_gpu_common_dir}/memory.cpp)
target_include_directories(gpu_streams_emulated_test PRIVATE ${_bp_gpu_common_dir})
target_compile_definitions(gpu_streams_emulated_test PRIVATE BP_GPU_EMULATE=1)
target_link_libraries(gpu_streams_emulated_test PRIVATE Backplane::abi GTest::gtest_main Threads::Threads)
backplane_warnings(gpu_streams_emulated_test)
gtest_discover_tests(gpu_streams_emulated_test DISCOVERY_MODE PRE_TEST)
