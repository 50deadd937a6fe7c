// A private temporary directory for plugin-file tests, removed at the end.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace bptest {

// mkdtemp under `parent` (mode 0700); removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& parent = "/tmp") {
    std::string tmpl = parent + "/bp_test_XXXXXX";
    const char* d = mkdtemp(tmpl.data());
    path_ = d != nullptr ? d : "";
  }
  ~TempDir() {
    std::string cmd = "chmod -R u+rwx '" + path_ + "' 2>/dev/null; rm -rf '" + path_ + "'";
    if (!path_.empty() && std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path_.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Copies `src` to <dir>/<name> (mode 0755) and returns the new path.
  std::string Copy(const std::string& src, const std::string& name) const {
    std::ifstream in(src, std::ios::binary);
    std::string dst = path_ + "/" + name;
    std::ofstream out(dst, std::ios::binary);
    out << in.rdbuf();
    out.close();
    chmod(dst.c_str(), 0755);
    return dst;
  }

 private:
  std::string path_;
};

}  // namespace bptest
