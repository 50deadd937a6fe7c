// --dump-inputs DIR: the inputs of every failing operator sample as .npy
// files, so a vendor can feed them to their kernel outside the suite. The
// samples are made again here from (operator, dtype, sample, seed): the
// generator is deterministic, so this works also for a sample whose child
// crashed or hung.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "result.h"
#include "runner.h"

namespace bpc {

// Writes DIR/<device>_<op>_<dtype>_sample<N>/arg<k>.npy for each tensor
// argument k (schema position; a tensor list's items as arg<k>_<j>.npy) of
// each failing ops-group case of `reports`, values in logical row-major
// order (the sample's layout, strides or offset, is not kept). bfloat16 has
// no NumPy dtype: written as float32 values (exact). Prints one line per case
// written and one per case that could not be; returns the count written.
int dump_failing_inputs(const Runner& runner, const std::vector<DeviceReport>& reports, const std::string& dir,
                        std::ostream& os);

}  // namespace bpc
