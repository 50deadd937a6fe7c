// Registers every shared GPU kernel with the host (during init).
#pragma once

#include <cstdint>

#include "backplane/backend.h"
#include "backplane/op_args.h"

namespace bp_gpu {

// Operators the table covers (for tests and logs).
int32_t NumRegisteredOps();

// Registers each kernel under its operator name. An operator the host does
// not know (NOT_FOUND) is skipped with a debug log; any other failure is
// returned (the host's set_error already holds the message).
bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar);

}  // namespace bp_gpu
