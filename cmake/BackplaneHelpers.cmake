# Where this file lives: plugin.map sits beside it, whatever project() a
# subdirectory declares.
set(BACKPLANE_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# Warnings as errors for everything we compile.
set(BACKPLANE_WARNINGS -Wall -Wextra -Werror)

function(backplane_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:${BACKPLANE_WARNINGS}>)
endfunction()

# backplane_add_plugin(<target> SOURCES ...): a backend plugin. A MODULE library
# that sees only abi/ headers, exports only bp_plugin_entry (version script),
# and lands in the build tree's plugin directory.
function(backplane_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Backplane::abi)
  backplane_warnings(${target})
  if(NOT ARG_OUTPUT_NAME)
    set(ARG_OUTPUT_NAME ${target})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME ${ARG_OUTPUT_NAME}
    LIBRARY_OUTPUT_DIRECTORY ${BACKPLANE_PLUGIN_OUTPUT_DIR})
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${BACKPLANE_CMAKE_DIR}/plugin.map" "LINKER:--no-undefined")
  install(TARGETS ${target} LIBRARY DESTINATION ${BACKPLANE_PLUGIN_INSTALL_DIR})
endfunction()
