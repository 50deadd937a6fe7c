// How each collective moves data through the simulated interconnect
// (shm_comm.h), once collectives.cpp has checked the call's arguments and
// resolved its tensors to arena addresses. Messages written here lack the
// "vendor_sim <kind>: " prefix, which collectives.cpp adds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backplane/collectives.h"
#include "reduce.h"
#include "shm_comm.h"

namespace vendor_sim {

// One communicator (bp_device_comm_t): this process's rank in a segment.
struct Comm {
  ShmComm shm;
  int32_t device = 0;
  bool wrong = false;  // BP_VENDOR_SIM_COLLECTIVES=wrong (test only)
  uint64_t calls = 0;  // all-rank calls so far (descriptor parity)
  // After a timeout every later call fails at once with this message.
  bool broken = false;
  char broken_message[BP_COMM_MAX_MESSAGE] = {};
};

// A checked call: element type, block size, and addresses in the arena
// (nullptr when the call has no such tensor or no elements).
struct Plan {
  int32_t kind = -1;
  Elem elem = Elem::kInvalid;
  size_t esize = 0;
  int64_t n = 0;  // elements of one rank's block (collectives.h)
  int32_t op = -1, peer = -1;
  const char* in = nullptr;
  char* out = nullptr;
  Descriptor desc;  // what the other ranks must agree with
};

// "all_reduce", ...; "collective" for an unknown kind.
const char* KindName(int32_t kind);
// "all_reduce sum of 1000 float32", "broadcast from rank 1 of 8 int32", "barrier".
void Describe(const Descriptor& d, char* out, size_t cap);

// The descriptor exchange every all-rank call starts with: posts `mine`,
// waits for every rank (a barrier), and checks that they all agree. OK;
// INVALID_ARGUMENT when a rank's descriptor differs from rank 0's (naming
// both) or a rank flagged its own arguments as invalid; DEADLINE_EXCEEDED.
// Every rank reaches the same verdict.
bp_status_t ExchangeDescriptors(Comm* c, const Descriptor& mine, const Deadline& d, char* what, size_t cap);

// The data phase of an all-rank kind (not SEND, RECV, BARRIER), after
// ExchangeDescriptors agreed: OK or DEADLINE_EXCEEDED.
bp_status_t MoveAllRanks(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap);

// SEND and RECV: only the two ranks take part (a handshake in their
// mailbox, then the chunks through the sender's slot); the call returns
// once the peer took everything. INVALID_ARGUMENT when the two disagree on
// dtype or count (both report it), DEADLINE_EXCEEDED.
bp_status_t Send(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap);
bp_status_t Recv(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap);

}  // namespace vendor_sim
