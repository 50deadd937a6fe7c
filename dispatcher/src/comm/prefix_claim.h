// One job per key-value store prefix (prefix_claim.cpp).
#pragma once

#include <string>

#include "communicator.h"

namespace bp::core {

// Claims the prefix for this rank before the rendezvous: FAILED_PRECONDITION
// "prefix ... already used by another job" when the rank's claim exists (a
// second job, or a communicator made earlier with this store and prefix);
// else writes a token unique to this communicator into *out_token and the store.
Status ClaimPrefix(const CommSetup& setup, std::string* out_token);

// After the rendezvous: FAILED_PRECONDITION unless the rank's claim still
// holds `token` (a job that claimed at the same moment overwrote it).
Status CheckClaimKept(const CommSetup& setup, const std::string& token);

}  // namespace bp::core
