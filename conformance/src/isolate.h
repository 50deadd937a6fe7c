// Crash isolation, the runner side: each (backend, device, operator) group
// in its own child process (see child_process.h).
#pragma once

#include <string>
#include <vector>

#include "child_process.h"
#include "runner.h"

namespace bpc {

// Runs every selected operator of one backend device, each (backend, device,
// op) group in its own child: `worker_argv` is the command line that makes
// this executable a worker for the backend (the group's --op and device are
// appended). Cells of a group whose child crashed or timed out get those
// outcomes; the cases it finished before are kept.
DeviceReport run_device_isolated(Runner& runner, int32_t backend, int32_t device_index, const RunOptions& opt,
                                 const std::vector<std::string>& worker_argv, double timeout_s);

}  // namespace bpc
