# Debian packages with CPack: `cd build/default && cpack -G DEB`.
#   backplane                 libbackplane.so.1, bp-info, bp-conformance and its expectation files,
#                             bp-run, bp-export-models;
#                             Provides: backplane-abi-<major> (= <major>.<minor>)
#   backplane-dev             headers, CMake package, pkg-config files, docs, ops.yaml, bp-plugin-new,
#                             the samples the plugin guide copies
#   python3-backplane         the Python package (import backplane), when built
#   backplane-plugin-<name>   one per plugin built (cpu, opencl, cuda, hip, vendor-sim), so a
#                             machine without OpenCL does not pull PoCL's loader, and so on
# One package per install component (runtime, dev, plugin_<name>). Depends are
# computed by dpkg-shlibdeps from the ELF files, plus backplane (= version) for
# -dev and every plugin, and libdlpack-dev for -dev (the headers include it).
set(CPACK_PACKAGE_NAME backplane)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Backplane")
set(CPACK_PACKAGE_CONTACT "Backplane maintainers <backplane@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Backplane: a tensor runtime whose devices are plugins behind a stable C ABI")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# Debug info records the build directory; a package carries none of it.
set(CPACK_STRIP_FILES ON)

get_cmake_property(_bp_components COMPONENTS)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME backplane)
# What an out-of-tree plugin's package depends on (backplane_package_plugin()).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_PROVIDES "${BACKPLANE_ABI_PACKAGE} (= ${BACKPLANE_ABI_MAJOR}.${BACKPLANE_ABI_MINOR})")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Backplane runtime: libbackplane and the bp-info, bp-conformance, bp-run and bp-export-models tools")
# bp-export-models runs on torch and torchvision.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "python3-torch, python3-torchvision, python3-numpy")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME backplane-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS libdlpack-dev)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
# The ONNX frontend (Backplane::onnx, static) links libonnx and protobuf:
# recommended, since only host apps running .onnx models need them.
if(TARGET backplane_onnx)
  set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "libonnx-dev, libprotobuf-dev")
endif()
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "Backplane SDK: C ABI and C++ headers, the ONNX frontend library, CMake package, pkg-config files, docs, ops.yaml, bp-plugin-new, samples")
if("python" IN_LIST _bp_components)
  list(APPEND CPACK_COMPONENTS_ALL python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-backplane)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  set(CPACK_COMPONENT_PYTHON_DEPENDS runtime)
  # dpkg-shlibdeps cannot see libbackplane in the runtime package's tree;
  # the component dependency (backplane = version) covers it and what it needs.
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.11), python3 (<< 3.12)")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-numpy")
  set(CPACK_COMPONENT_PYTHON_DESCRIPTION
      "Backplane for Python: devices, tensors with DLPack exchange, every operator (import backplane)")
endif()
# The torch bridge (backplane.torch) is not a Debian package: it builds
# against the torch of a Python environment (pip install ., pyproject.toml),
# as Debian's torch 1.13 is older than the bridge supports.
foreach(_comp IN LISTS _bp_components)
  if(_comp MATCHES "^plugin_(.+)$")
    set(_name ${CMAKE_MATCH_1})
    string(TOUPPER ${_comp} _up)
    string(REPLACE "_" "-" _deb_name "backplane-plugin-${_name}")
    list(APPEND CPACK_COMPONENTS_ALL ${_comp})
    set(CPACK_DEBIAN_${_up}_PACKAGE_NAME ${_deb_name})
    set(CPACK_COMPONENT_${_up}_DEPENDS runtime)
    set(CPACK_COMPONENT_${_up}_DESCRIPTION "Backplane backend plugin '${_name}'")
  endif()
endforeach()
include(CPack)
