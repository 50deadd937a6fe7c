# Where this file lives: plugin.map sits beside it, whatever project() a
# subdirectory declares.
set(BACKPLANE_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# Warnings as errors for everything we compile.
set(BACKPLANE_WARNINGS -Wall -Wextra -Werror)

function(backplane_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:${BACKPLANE_WARNINGS}>)
endfunction()

# backplane_add_plugin(<target> SOURCES ...): a backend plugin. A MODULE library
# that sees only abi/ headers, exports only bp_plugin_entry (version script,
# checked after each link), and lands in the build tree's plugin directory.
# Installed to <libdir>/backplane/plugins with RUNPATH $ORIGIN/../.. (<libdir>),
# in the install component plugin_<name> (one Debian package per plugin:
# cmake/BackplanePackaging.cmake). The installed SDK's version of this
# function is in cmake/BackplaneConfig.cmake.in.
function(backplane_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  # libm: kernels call exp() and friends, and --no-undefined needs it named.
  target_link_libraries(${target} PRIVATE Backplane::abi m)
  backplane_warnings(${target})
  if(NOT ARG_OUTPUT_NAME)
    set(ARG_OUTPUT_NAME ${target})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME ${ARG_OUTPUT_NAME}
    LIBRARY_OUTPUT_DIRECTORY ${BACKPLANE_PLUGIN_OUTPUT_DIR}
    INSTALL_RPATH "$ORIGIN/../..")
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${BACKPLANE_CMAKE_DIR}/plugin.map" "LINKER:--no-undefined")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DPLUGIN=$<TARGET_FILE:${target}> -DNM=${CMAKE_NM}
            -P ${BACKPLANE_CMAKE_DIR}/BackplaneCheckPlugin.cmake
    COMMENT "Checking that ${ARG_OUTPUT_NAME} exports only bp_plugin_entry"
    VERBATIM)
  backplane_plugin_component(${ARG_OUTPUT_NAME} _component)
  install(TARGETS ${target} LIBRARY DESTINATION ${BACKPLANE_PLUGIN_INSTALL_DIR} COMPONENT ${_component})
endfunction()

# The install component of plugin file lib<output_name>.so: plugin_<name>
# with the backplane_ prefix dropped (libbackplane_cpu.so -> plugin_cpu).
function(backplane_plugin_component output_name out_var)
  string(REGEX REPLACE "^backplane_" "" _name "${output_name}")
  set(${out_var} plugin_${_name} PARENT_SCOPE)
endfunction()
