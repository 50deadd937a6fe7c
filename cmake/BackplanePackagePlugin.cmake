# backplane_package_plugin(<target> [VERSION v] [CONTACT "Name <mail>"]
#                          [DESCRIPTION text]): a Debian package of a plugin
# made with backplane_add_plugin(), built by `cpack -G DEB` in the build
# directory (or `cmake --build build --target package`). The package
#   - is named backplane-plugin-<name> (lib<output>.so without backplane_,
#     '_' as '-'), version VERSION (default: the project's, else 0.1.0);
#   - holds the plugin alone, in /usr/<the SDK's plugin directory>, where
#     discovery finds it beside the packaged libbackplane;
#   - depends on backplane-abi-<major> (>= <major>.<minor>), the virtual
#     package the SDK's runtime package provides, rather than on one SDK
#     package version, so any later SDK of the same ABI major satisfies it.
# Call it once per project, after backplane_add_plugin(); it includes CPack.
function(backplane_package_plugin target)
  cmake_parse_arguments(ARG "" "VERSION;CONTACT;DESCRIPTION" "" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "backplane_package_plugin: '${target}' is not a target; "
                        "call backplane_add_plugin(${target} SOURCES ...) first")
  endif()
  get_target_property(_out ${target} OUTPUT_NAME)
  string(REGEX REPLACE "^backplane_" "" _name "${_out}")
  string(REPLACE "_" "-" _name "${_name}")
  if(NOT ARG_VERSION)
    set(ARG_VERSION "${PROJECT_VERSION}")
  endif()
  if(NOT ARG_VERSION)
    set(ARG_VERSION 0.1.0)
  endif()
  if(NOT ARG_CONTACT)
    message(FATAL_ERROR "backplane_package_plugin: give CONTACT \"Name <mail>\" (the package's Maintainer)")
  endif()
  if(NOT ARG_DESCRIPTION)
    set(ARG_DESCRIPTION "Backplane backend plugin '${_out}'")
  endif()
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME backplane-plugin-${_name})
  set(CPACK_PACKAGE_VERSION ${ARG_VERSION})
  set(CPACK_PACKAGE_CONTACT "${ARG_CONTACT}")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${ARG_DESCRIPTION}")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_BACKPLANE_ABI_PACKAGE} (>= ${_BACKPLANE_ABI_VERSION})")
  # libc6 and the like, when dpkg-shlibdeps (dpkg-dev) is there to compute them.
  find_program(_BACKPLANE_SHLIBDEPS dpkg-shlibdeps)
  if(_BACKPLANE_SHLIBDEPS)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  endif()
  include(CPack)
endfunction()
