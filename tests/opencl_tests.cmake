# The OpenCL plugin's unit tests: one executable driving the plugin through a
# fake host (tests/opencl_fake_host.*, over the shared tests/fake_host.*). It links the plugin's object
# library to reach internal hooks (program build counter, broken sources),
# and dlopens the built plugin once. Included from tests/CMakeLists.txt.
if(NOT TARGET backplane_opencl_impl)
  return()  # OpenCL backend not built (BACKPLANE_OPENCL=OFF or no OpenCL found)
endif()
add_executable(opencl_plugin_test
  ${CMAKE_CURRENT_LIST_DIR}/opencl_plugin_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/opencl_ops_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/opencl_reduce_linalg_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/opencl_streams_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/opencl_fake_host.cpp)
target_link_libraries(opencl_plugin_test PRIVATE backplane_opencl_impl bp_fake_host GTest::gtest_main)
target_include_directories(opencl_plugin_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(opencl_plugin_test PRIVATE BPCL_PLUGIN_PATH="$<TARGET_FILE:backplane_opencl>")
add_dependencies(opencl_plugin_test backplane_opencl)
backplane_warnings(opencl_plugin_test)
# A private program cache, so tests never depend on the user's cache.
gtest_discover_tests(opencl_plugin_test DISCOVERY_MODE PRE_TEST
  PROPERTIES ENVIRONMENT "BACKPLANE_OPENCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/opencl_test_cache"
             TIMEOUT 300)
# The same binary with no ICD visible: the plugin loads with zero devices.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/opencl_no_icd)
add_test(NAME OpenclNoPlatform.ZeroDevicesWithReason.no_icd
         COMMAND opencl_plugin_test --gtest_filter=OpenclNoPlatform.*)
set_tests_properties(OpenclNoPlatform.ZeroDevicesWithReason.no_icd PROPERTIES
  ENVIRONMENT "OCL_ICD_VENDORS=${CMAKE_CURRENT_BINARY_DIR}/opencl_no_icd;BPCL_TEST_EXPECT_NO_PLATFORM=1")

# End to end through libbackplane's public API (CPU + OpenCL plugins), and
# the OpenCL kernels' dtype masks as the dispatcher routes by them.
if(TARGET backplane_cpu)
  add_executable(opencl_e2e_test ${CMAKE_CURRENT_LIST_DIR}/opencl_e2e_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/opencl_dtype_mask_test.cpp ${CMAKE_CURRENT_LIST_DIR}/opencl_streams_e2e_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/opencl_fork_test.cpp)
  target_link_libraries(opencl_e2e_test PRIVATE Backplane::backplane GTest::gtest_main GTest::gmock Threads::Threads)
  target_include_directories(opencl_e2e_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_compile_definitions(opencl_e2e_test PRIVATE BP_TEST_PLUGIN_DIR="${BP_TEST_PLUGIN_DIR}"
    BPCL_PLUGIN_PATH="$<TARGET_FILE:backplane_opencl>" BPCL_CPU_PLUGIN_PATH="$<TARGET_FILE:backplane_cpu>")
  add_dependencies(opencl_e2e_test backplane_opencl backplane_cpu)
  backplane_warnings(opencl_e2e_test)
  gtest_discover_tests(opencl_e2e_test DISCOVERY_MODE PRE_TEST
    PROPERTIES ENVIRONMENT "BACKPLANE_OPENCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/opencl_test_cache" TIMEOUT 300)
endif()
# No ICD visible while BACKPLANE_EXPECT_BACKENDS names opencl (as CI sets it):
# a test that needs a device fails instead of skipping.
add_test(NAME OpenclDevice.Properties.no_icd_expected COMMAND opencl_plugin_test --gtest_filter=OpenclDevice.Properties)
set_tests_properties(OpenclDevice.Properties.no_icd_expected PROPERTIES
  ENVIRONMENT "OCL_ICD_VENDORS=${CMAKE_CURRENT_BINARY_DIR}/opencl_no_icd;BACKPLANE_EXPECT_BACKENDS=cpu,opencl"
  PASS_REGULAR_EXPRESSION "no OpenCL device: .*BACKPLANE_EXPECT_BACKENDS names opencl, so this fails.*\\[  FAILED  \\] OpenclDevice.Properties")
