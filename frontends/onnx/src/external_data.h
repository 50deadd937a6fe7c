// External tensor data of an ONNX model, read from a file the model names
// relative to its own directory. The model is untrusted input: the file must
// be a regular file reached without any symbolic link (every path component
// opened with O_NOFOLLOW under the model's directory), is opened without
// blocking (a FIFO never hangs the loader), and its size is checked before
// anything is allocated.
#pragma once

#include <cstdint>
#include <string>

namespace bponnx {

/// Reads `length` bytes at `offset` (length < 0: to the end of the file) of
/// `location` under `base_dir` ("" = the current directory) into *bytes.
/// `want` is the byte count the tensor's dims and dtype need; a length or
/// file size that disagrees with it is refused before allocation. False with
/// *err naming the file and what is wrong (absolute or '..' location, a
/// symbolic link, not a regular file, runs past the end, wrong size).
bool read_external_file(const std::string& base_dir, const std::string& location, int64_t offset, int64_t length,
                        uint64_t want, std::string* bytes, std::string* err);

}  // namespace bponnx
