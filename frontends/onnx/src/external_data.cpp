#include "external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace bponnx {

namespace {

// Closes a descriptor at scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

bool read_external_file(const std::string& base_dir, const std::string& location, int64_t offset, int64_t length,
                        uint64_t want, std::string* bytes, std::string* err) {
  const std::string shown = "external data file '" + location + "'";
  std::vector<std::string> parts;
  bool up = false;
  for (size_t start = 0; start <= location.size();) {
    size_t slash = location.find('/', start);
    if (slash == std::string::npos) slash = location.size();
    const std::string part = location.substr(start, slash - start);
    up = up || part == "..";
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  if (location.empty() || location[0] == '/' || parts.empty() || up) {
    *err = shown + ": the location must be a relative path inside the model's directory (no '..', not absolute)";
    return false;
  }
  // One component at a time under the model's directory, none of them a
  // symbolic link: a link placed beside the model cannot point outside it.
  Fd dir;
  dir.fd = open(base_dir.empty() ? "." : base_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir.fd < 0) {
    *err = shown + ": cannot open the model's directory: " + std::strerror(errno);
    return false;
  }
  Fd file;
  for (size_t k = 0; k < parts.size(); ++k) {
    const bool last = k + 1 == parts.size();
    const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK | O_NOCTTY : O_DIRECTORY);
    const int fd = openat(dir.fd, parts[k].c_str(), flags);
    if (fd < 0) {
      const int e = errno;
      // O_NOFOLLOW says ELOOP for a link, O_DIRECTORY ENOTDIR for a link to a directory.
      struct stat ls;
      const bool link = fstatat(dir.fd, parts[k].c_str(), &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode);
      *err = shown + ": '" + parts[k] + "' " +
             (link ? std::string("is a symbolic link (refused: external data must be a regular file inside the "
                                 "model's directory)")
              : e == ENOTDIR ? std::string("is not a directory")
                             : std::string("cannot be opened: ") + std::strerror(e));
      return false;
    }
    if (last) {
      file.fd = fd;
    } else {
      close(dir.fd);
      dir.fd = fd;
    }
  }
  struct stat st;
  if (fstat(file.fd, &st) != 0) {
    *err = shown + ": cannot stat: " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = shown + " is " + kind_of(st.st_mode) + ", not a regular file";
    return false;
  }
  const int64_t size = static_cast<int64_t>(st.st_size);
  if (offset < 0 || offset > size || (length >= 0 && length > size - offset)) {
    *err = shown + " has " + std::to_string(size) + " bytes; offset " + std::to_string(offset) + " length " +
           std::to_string(length) + " runs past it";
    return false;
  }
  if (length < 0) length = size - offset;
  if (static_cast<uint64_t>(length) != want) {
    *err = shown + ": " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
           ", the tensor's dims and dtype need " + std::to_string(want);
    return false;
  }
  bytes->resize(static_cast<size_t>(length));
  size_t done = 0;
  while (done < bytes->size()) {
    const ssize_t n = pread(file.fd, &(*bytes)[done], bytes->size() - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = shown + ": read failed after " + std::to_string(done) + " bytes" +
             (n < 0 ? std::string(": ") + std::strerror(errno) : std::string(" (the file shrank)"));
      bytes->clear();
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace bponnx
