// A test's hold on vendor_sim's kernels (BP_VENDOR_SIM_HOLD_KERNELS, test
// only; samples/vendor_plugin/faults.h). With BP_VENDOR_SIM_ASYNC=1 and the
// variable naming path() at the plugin's init, each kernel, once run, keeps
// its stream's device thread busy while the file path() exists. Hold()
// creates it, Release() removes it: the test, not the clock, decides when a
// kernel ends, so "the host was not blocked", "the two kernels overlapped"
// and "only that stream was waited for" are things it observes (an event
// after a held kernel is not complete) instead of durations it measures.
// A device that wrongly waits for a held kernel hangs the test; ctest's
// timeout reports it.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace bptest {

class KernelHold {
 public:
  // A private directory (mkdtemp under $TMPDIR, else /tmp) for the file, so
  // concurrent test processes never share a hold.
  KernelHold() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/bp_hold_XXXXXX";
    if (const char* d = mkdtemp(&tmpl[0])) {
      dir_ = d;
      path_ = dir_ + "/hold";
    }
  }
  // Released first: a plugin shut down after this drains its streams.
  ~KernelHold() {
    Release();
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  KernelHold(const KernelHold&) = delete;
  KernelHold& operator=(const KernelHold&) = delete;

  // What BP_VENDOR_SIM_HOLD_KERNELS names (empty if no directory was made).
  const std::string& path() const { return path_; }
  // Kernels that run from now on stay busy until Release(). False if the
  // file cannot be created.
  bool Hold() {
    if (path_.empty()) return false;
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) return false;
    std::fclose(f);
    return true;
  }
  // Every held kernel ends (within the plugin's millisecond poll). Idempotent.
  void Release() {
    if (!path_.empty()) std::remove(path_.c_str());
  }

 private:
  std::string dir_, path_;
};

}  // namespace bptest
