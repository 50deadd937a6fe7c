// One job per store prefix (issue 42 item 18). Two jobs that share a
// key-value store and a prefix would otherwise read each other's keys and
// pair up silently, exchanging data across jobs. Each rank claims
// "<prefix>/claim/rank<r>" with a token unique to this communicator before
// the engine's rendezvous, refusing a prefix whose claim exists, and checks
// after the rendezvous that its claim was not overwritten by a job that
// claimed at the same moment.
#include "prefix_claim.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>

namespace bp::core {
namespace {

std::string ClaimKey(const CommSetup& setup) { return "claim/rank" + std::to_string(setup.comm->rank); }

// The claim's value now, or false when there is none (no wait).
bool ReadClaimNow(const CommSetup& setup, std::string* out) {
  const std::string full = setup.prefix + "/" + ClaimKey(setup);
  char buf[256];
  size_t n = 0;
  // timeout 0: one look. An absent key is the usual case, not an error.
  const bp_status_t rc = setup.store->get(setup.store->user_data, full.c_str(), buf, sizeof buf, &n, 0);
  if (rc != BP_STATUS_OK) return false;
  out->assign(buf, n < sizeof buf ? n : sizeof buf);
  return true;
}

Status Refuse(const CommSetup& setup, const std::string& holder, const char* how) {
  return Error(BP_STATUS_FAILED_PRECONDITION,
               "bp_comm_create: prefix \"" + setup.prefix + "\" of the key-value store is already used by another " +
                   "job: rank " + std::to_string(setup.comm->rank) + " " + how + " (" + holder +
                   "); two jobs (or two communicators) sharing a store and a prefix would exchange data; give each "
                   "its own prefix, or a fresh store directory");
}

}  // namespace

Status ClaimPrefix(const CommSetup& setup, std::string* out_token) {
  std::string holder;
  if (ReadClaimNow(setup, &holder)) return Refuse(setup, holder, "was already claimed");
  static std::atomic<uint64_t> serial{0};
  std::random_device rd;
  const uint64_t nonce = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  *out_token = "pid " + std::to_string(static_cast<long>(getpid())) + " communicator " +
               std::to_string(serial.fetch_add(1, std::memory_order_relaxed)) + " nonce " + std::to_string(nonce) +
               " world_size " + std::to_string(setup.comm->world_size);
  return StoreSet(setup, ClaimKey(setup), out_token->data(), out_token->size());
}

Status CheckClaimKept(const CommSetup& setup, const std::string& token) {
  std::string holder;
  if (!ReadClaimNow(setup, &holder)) return Refuse(setup, "its claim vanished", "lost its claim");
  if (holder != token) return Refuse(setup, holder, "had its claim overwritten by another job");
  return Status::Ok();
}

}  // namespace bp::core
