// The collectives group (bp-conformance --group collectives): for each
// backend, W local processes (W = 2 and 4), one device each, join one
// communicator (bp_comm_*) through a file store and check every collective
// against a host reference: dtypes, sizes from 1 element to several MB,
// non-contiguous tensors, and failures (a missing rank, ranks that
// disagree, bad arguments) that must end in a clear status, not a hang.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "target.h"

namespace bpc {

// What the last rank prints before it kills itself in the failure cases.
constexpr const char* kKilledLine = "killing this rank (SIGKILL) to test the others";

struct CollectivesCli {
  std::vector<int> world_sizes = {2, 4};
  int64_t timeout_ms = 3000;  // each communicator's; the missing-rank case waits this long
  // Worker side (one rank): --collectives-rank, --collectives-world, --collectives-store.
  int rank = -1;
  int world = 0;
  std::string store_dir;
};
void add_collectives_options(CLI::App& app, CollectivesCli* cli);
bool is_collectives_worker(const CollectivesCli& cli);

// One rank's checks on device `device` of `backend_name`; prints one line
// per case ("ok NAME" or "FAIL NAME: why") and returns 0 when all passed.
int run_collectives_worker(bp_context_t* ctx, const std::string& backend_name, int32_t device,
                           const CollectivesCli& cli);

// The parent: per target and world size, starts the ranks (`base_argv`:
// this executable and the plugin files), merges their lines and prints a
// summary and a verdict line per target. Returns true when every case
// passed on every rank.
bool run_collectives_group(const std::vector<Target>& targets, const std::vector<std::string>& base_argv,
                           const CollectivesCli& cli, std::ostream& out);

}  // namespace bpc
