# The install tree beyond the targets' own install() rules: the CMake package
# (find_package(Backplane)), pkg-config files, the docs and ops.yaml. Every
# path is relative to the prefix, so `cmake --install --prefix ANY` works.
# Install components: runtime (libbackplane, tools), dev (everything here and
# the headers), plugin_<name> (one per plugin); see BackplanePackaging.cmake.
include(CMakePackageConfigHelpers)

# --- find_package(Backplane): the package version is the ABI version ---
# types.h is the one place the ABI version is written.
file(STRINGS ${PROJECT_SOURCE_DIR}/abi/include/backplane/types.h _bp_abi_lines
     REGEX "^#define BP_ABI_VERSION_(MAJOR|MINOR) [0-9]+")
string(REGEX REPLACE ".*BP_ABI_VERSION_MAJOR ([0-9]+).*" "\\1" BACKPLANE_ABI_MAJOR "${_bp_abi_lines}")
string(REGEX REPLACE ".*BP_ABI_VERSION_MINOR ([0-9]+).*" "\\1" BACKPLANE_ABI_MINOR "${_bp_abi_lines}")
# The virtual package the runtime .deb provides and a plugin .deb depends on:
# one name per ABI major (a minor only adds), versioned by major.minor.
set(BACKPLANE_ABI_PACKAGE backplane-abi-${BACKPLANE_ABI_MAJOR})
set(BACKPLANE_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Backplane)
set(BACKPLANE_OPS_YAML_INSTALL ${CMAKE_INSTALL_DATADIR}/backplane/ops.yaml)
set(BACKPLANE_BIN_INSTALL_DIR ${CMAKE_INSTALL_BINDIR})
configure_package_config_file(cmake/BackplaneConfig.cmake.in
  ${CMAKE_BINARY_DIR}/BackplaneConfig.cmake
  INSTALL_DESTINATION ${BACKPLANE_CMAKE_INSTALL_DIR}
  PATH_VARS BACKPLANE_PLUGIN_INSTALL_DIR BACKPLANE_OPS_YAML_INSTALL BACKPLANE_BIN_INSTALL_DIR)
# SameMajorVersion: what the ABI promises (a minor only adds; a major breaks).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/BackplaneConfigVersion.cmake
  VERSION ${BACKPLANE_ABI_MAJOR}.${BACKPLANE_ABI_MINOR}
  COMPATIBILITY SameMajorVersion)
install(EXPORT BackplaneTargets NAMESPACE Backplane:: DESTINATION ${BACKPLANE_CMAKE_INSTALL_DIR}
        COMPONENT dev)
install(FILES ${CMAKE_BINARY_DIR}/BackplaneConfig.cmake ${CMAKE_BINARY_DIR}/BackplaneConfigVersion.cmake
              cmake/plugin.map cmake/BackplaneCheckPlugin.cmake cmake/BackplanePackagePlugin.cmake
        DESTINATION ${BACKPLANE_CMAKE_INSTALL_DIR} COMPONENT dev)

# --- pkg-config: backplane (host applications) and backplane-plugin (plugins) ---
# Relocatable: prefix is found from the .pc file's own directory.
file(RELATIVE_PATH BACKPLANE_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" BACKPLANE_PC_TO_PREFIX "${BACKPLANE_PC_TO_PREFIX}")
# dlpack has no .pc file (Debian's libdlpack-dev ships only a CMake package):
# its include directory goes into Cflags unless it is the compiler's own.
get_target_property(_bp_dlpack_inc dlpack::dlpack INTERFACE_INCLUDE_DIRECTORIES)
set(BACKPLANE_PC_DLPACK_CFLAGS "")
foreach(_dir IN LISTS _bp_dlpack_inc)
  if(_dir AND NOT _dir IN_LIST CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES)
    string(APPEND BACKPLANE_PC_DLPACK_CFLAGS " -I${_dir}")
  endif()
endforeach()
foreach(_pc IN ITEMS backplane backplane-plugin)
  configure_file(cmake/${_pc}.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/${_pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/pkgconfig/${_pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
          COMPONENT dev)
endforeach()

# --- what a vendor reads: the docs and the operator list with its kernel contract ---
# Every page, subdirectories included (docs/plugin/*.md): the installed docs
# link only among themselves (.ci/check_doc_links.py checks it).
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dev FILES_MATCHING PATTERN "*.md")
install(FILES abi/ops.yaml DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane COMPONENT dev)

# `cmake --install --strip` (and CPack, CPACK_STRIP_FILES) strips executables
# and shared libraries; the static archives' debug info, which records the
# build directory, goes too.
install(CODE "if(CMAKE_INSTALL_DO_STRIP)
  file(GLOB _bp_archives \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libbackplane*.a\")
  foreach(_bp_a IN LISTS _bp_archives)
    execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${_bp_a}\")
  endforeach()
endif()" COMPONENT dev)

# --- what the plugin guide copies: the samples, and the model exporter ---
install(DIRECTORY samples/vendor_plugin samples/host_app DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane/samples
        COMPONENT dev)
install(FILES samples/one_file_plugin.c DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane/samples COMPONENT dev)
# bp-export-models OUT [--only NAME ...]: the networks of bp-conformance's
# models group and bp-run's examples, with torch's outputs (Debian's
# python3-torch and python3-torchvision; nothing is downloaded).
install(PROGRAMS frontends/onnx/tests/export_models.py DESTINATION ${CMAKE_INSTALL_BINDIR}
        RENAME bp-export-models COMPONENT runtime)

# The build tree has the install tree's layout for what the tools read
# (bin/../share/backplane/...), so a tool finds its data relative to its own
# file in both, and no build-tree path is compiled into an installed binary.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/backplane/conformance ${CMAKE_BINARY_DIR}/bin)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/conformance/expectations
     ${CMAKE_BINARY_DIR}/share/backplane/conformance/expectations SYMBOLIC)
if(NOT BACKPLANE_MODELS_DIR)
  set(BACKPLANE_MODELS_DIR ${CMAKE_BINARY_DIR}/models)
endif()
file(CREATE_LINK ${BACKPLANE_MODELS_DIR} ${CMAKE_BINARY_DIR}/share/backplane/models SYMBOLIC)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/frontends/onnx/tests/export_models.py
     ${CMAKE_BINARY_DIR}/bin/bp-export-models SYMBOLIC)

# Generated ABI headers (the plugin kit's backplane/op_args.h), when the tree
# generates them into a directory of their own.
if(BP_GEN_ABI_INCLUDE_DIR)
  install(DIRECTORY ${BP_GEN_ABI_INCLUDE_DIR}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
endif()

# The plugin scaffold: bp-plugin-new NAME [DIR] copies the templates from
# share/backplane/plugin-template (found relative to the script's own bin/),
# with the ABI version find_package() of the new project asks for.
file(WRITE ${CMAKE_BINARY_DIR}/plugin-template/ABI_VERSION "${BACKPLANE_ABI_MAJOR}.${BACKPLANE_ABI_MINOR}\n")
install(PROGRAMS scaffold/bp-plugin-new DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
install(DIRECTORY scaffold/template/ DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane/plugin-template
        USE_SOURCE_PERMISSIONS COMPONENT dev)
install(FILES ${CMAKE_BINARY_DIR}/plugin-template/ABI_VERSION
        DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane/plugin-template COMPONENT dev)
