#include "bponnx/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace bponnx {

namespace {

struct Descr {
  const char* text;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", DType::kFloat32}, {"<f8", DType::kFloat64}, {"<f2", DType::kFloat16},
                             {"|i1", DType::kInt8},    {"|u1", DType::kUInt8},   {"<i4", DType::kInt32},
                             {"<i8", DType::kInt64},   {"|b1", DType::kBool}};

// The value of 'key' in the header dict: the text up to the next ',' at depth 0 (or '}').
std::string dict_value(const std::string& h, const std::string& key) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t p = h.find(':', k);
  if (p == std::string::npos) return "";
  ++p;
  int depth = 0;
  size_t e = p;
  for (; e < h.size(); ++e) {
    if (h[e] == '(') ++depth;
    if (h[e] == ')') --depth;
    if ((h[e] == ',' && depth == 0) || h[e] == '}') break;
  }
  std::string v = h.substr(p, e - p);
  const size_t a = v.find_first_not_of(" '"), b = v.find_last_not_of(" '");
  return a == std::string::npos ? "" : v.substr(a, b - a + 1);
}

// The file's bytes, at most max_bytes of them: a FIFO or a device such as
// /dev/zero is refused before any read (its size says nothing), and the
// read stops one byte past the limit whatever st_size claimed.
bool read_bounded(const std::string& path, uint64_t max_bytes, std::string* bytes, std::string* err) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *err = path + ": cannot read the file: " + std::strerror(errno);
    return false;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    *err = path + ": not a regular file (a device, FIFO or directory has no size to check)";
    return false;
  }
  bytes->clear();
  char buf[1 << 16];
  for (;;) {
    const uint64_t room = max_bytes - std::min<uint64_t>(max_bytes, bytes->size());
    const size_t want = room >= sizeof buf ? sizeof buf : static_cast<size_t>(room) + 1;
    const ssize_t r = read(fd, buf, want);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *err = path + ": cannot read the file: " + std::strerror(errno);
      close(fd);
      return false;
    }
    if (r == 0) break;
    bytes->append(buf, static_cast<size_t>(r));
    if (bytes->size() > max_bytes) {
      close(fd);
      *err = path + ": the file has more than " + std::to_string(max_bytes) + " bytes, the memory limit";
      return false;
    }
  }
  close(fd);
  return true;
}

}  // namespace

bool npy_read(const std::string& path, RawTensor* out, std::string* err, uint64_t max_bytes) {
  *out = RawTensor{};
  std::string bytes;
  if (!read_bounded(path, max_bytes, &bytes, err)) return false;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    *err = path + ": not a .npy file (no \\x93NUMPY magic)";
    return false;
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen, off;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    off = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    hlen = 0;
    for (int b = 0; b < 4; ++b) hlen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + b])) << (8 * b);
    off = 12;
  } else {
    *err = path + ": unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (bytes.size() < off + hlen) {
    *err = path + ": truncated header";
    return false;
  }
  const std::string h = bytes.substr(off, hlen);
  const std::string descr = dict_value(h, "descr");
  if (dict_value(h, "fortran_order") != "False") {
    *err = path + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)";
    return false;
  }
  bool known = false;
  for (const Descr& d : kDescrs) {
    if (descr == d.text) {
      out->dtype = d.dtype;
      known = true;
    }
  }
  if (!known) {
    *err = path + ": dtype '" + descr + "' is not one Backplane reads (<f2 <f4 <f8 |i1 |u1 <i4 <i8 |b1)";
    return false;
  }
  std::string shape = dict_value(h, "shape");
  for (char& c : shape) {
    if (c == '(' || c == ')' || c == ',') c = ' ';
  }
  std::istringstream ss(shape);
  int64_t v;
  while (ss >> v) out->sizes.push_back(v);
  // The header's shape is checked against the data actually there, without
  // overflow: a hostile header can name negative or huge dimensions.
  const size_t have = bytes.size() - off - hlen;
  size_t want = dtype_itemsize(out->dtype);
  for (int64_t s : out->sizes) {
    if (s < 0 || (s > 0 && want > have / static_cast<size_t>(s))) {
      *err = path + ": shape " + sizes_str(out->sizes) + " does not fit the " + std::to_string(have) +
             " bytes of data in the file";
      return false;
    }
    want *= static_cast<size_t>(s);
  }
  if (have != want) {
    *err = path + ": data has " + std::to_string(bytes.size() - off - hlen) + " bytes, shape " +
           sizes_str(out->sizes) + " needs " + std::to_string(want);
    return false;
  }
  out->bytes = bytes.substr(off + hlen);
  return true;
}

bool npy_write(const std::string& path, const RawTensor& t, std::string* err) {
  const char* descr = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == t.dtype) descr = d.text;
  }
  if (descr == nullptr) {
    *err = path + ": NumPy has no " + dtype_name(t.dtype) + " dtype";
    return false;
  }
  std::string shape = "(";
  for (size_t k = 0; k < t.sizes.size(); ++k) shape += std::to_string(t.sizes[k]) + (t.sizes.size() == 1 || k + 1 < t.sizes.size() ? "," : "");
  shape += ")";
  std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::ofstream o(path, std::ios::binary);
  const char head[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(h.size() & 0xff),
                         static_cast<char>(h.size() >> 8)};
  o.write(head, 10);
  o << h;
  o.write(t.bytes.data(), static_cast<std::streamsize>(t.bytes.size()));
  if (!o) {
    *err = path + ": cannot write the file";
    return false;
  }
  return true;
}

}  // namespace bponnx
