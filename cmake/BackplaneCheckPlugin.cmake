# Checks that a built plugin exports exactly one dynamic symbol, the entry
# bp_plugin_entry (what cmake/plugin.map and hidden visibility promise).
#
#   cmake -DPLUGIN=path/to/libbackplane_x.so [-DNM=nm] -P BackplaneCheckPlugin.cmake
#
# backplane_add_plugin() runs it after every link (POST_BUILD), in the tree
# and in an installed SDK; a plugin built without CMake can run it the same
# way. Fails (FATAL_ERROR, exit status 1) naming what it found instead.
if(NOT PLUGIN)
  message(FATAL_ERROR "BackplaneCheckPlugin: give the plugin file with -DPLUGIN=<path>")
endif()
if(NOT NM)
  find_program(NM NAMES nm REQUIRED)
endif()
execute_process(COMMAND ${NM} -D --defined-only --format=posix ${PLUGIN}
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "BackplaneCheckPlugin: ${NM} -D failed on ${PLUGIN}: ${_err}")
endif()
# posix format: "name type value size"; keep global (upper-case type) symbols.
set(_exported "")
string(REPLACE "\n" ";" _lines "${_out}")
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^([^ ]+) [A-Z] ")
    list(APPEND _exported "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT _exported STREQUAL "bp_plugin_entry")
  list(LENGTH _exported _n)
  message(FATAL_ERROR "BackplaneCheckPlugin: ${PLUGIN} must export exactly one symbol, bp_plugin_entry; "
                      "it exports ${_n}: ${_exported}. Build it with hidden visibility "
                      "(-fvisibility=hidden) and the export map plugin.map "
                      "(-Wl,--version-script=plugin.map), and mark the entry BP_PLUGIN_EXPORT.")
endif()
