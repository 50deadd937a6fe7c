// NumPy .npy files (format versions 1-3, little-endian, C order) as the
// frontend's RawTensor. Only dtypes Backplane has: <f2 <f4 <f8 |i1 |u1 <i4
// <i8 |b1 (bfloat16 has no NumPy dtype). Reentrant: no shared state.
#pragma once

#include <cstdint>
#include <string>

#include "bponnx/dtype.h"

namespace bponnx {

/// Reads `path` into *out (sizes from the header's shape, 0-dim for "()").
/// False with *err naming the file and what is wrong (unreadable, not a
/// regular file, larger than max_bytes, not .npy, Fortran order, big-endian
/// or unsupported dtype, short data). At most max_bytes + 1 bytes are read,
/// whatever the file's size claims (a FIFO, /proc, a file still growing).
bool npy_read(const std::string& path, RawTensor* out, std::string* err,
              uint64_t max_bytes = UINT64_MAX);
/// Writes `t` (t.bytes as stored, C order) as a version 1.0 .npy file,
/// replacing `path`. False with *err on an I/O error or a dtype NumPy lacks
/// (bfloat16).
bool npy_write(const std::string& path, const RawTensor& t, std::string* err);

}  // namespace bponnx
