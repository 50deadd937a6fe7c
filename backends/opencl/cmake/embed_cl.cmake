# cmake -DIN=<file.cl> -DOUT=<header.h> -DNAME=<identifier> -P embed_cl.cmake
# Turns one OpenCL C source into a C++ header holding it as a raw string, so
# the plugin carries its kernels and never reads files at run time.
file(READ "${IN}" content)
string(FIND "${content}" ")bpcl\"" bad)
if(NOT bad EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )bpcl\"")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by embed_cl.cmake. Do not edit.\n#pragma once\n"
  "namespace bpcl::src {\ninline constexpr const char ${NAME}[] = R\"bpcl(${content})bpcl\";\n}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
