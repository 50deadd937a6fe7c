// A cache-tiled copy for the layout a transposed view gives: used by
// CopyTensor (copy_, contiguous(), cat and oneDNN staging).
#pragma once

#include "backplane/types.h"

namespace bp_cpu {

// Copies src into dst (same sizes and dtype) in square tiles when, after
// merging dims, the copy is 2-D with dst contiguous along one dim and src
// contiguous along the other (a transpose). Returns false, having written
// nothing, for any other layout.
bool TryTiledTransposeCopy(const DLTensor& dst, const DLTensor& src);

}  // namespace bp_cpu
