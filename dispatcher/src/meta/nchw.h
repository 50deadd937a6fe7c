// Helpers of the image-shaped meta functions ([N, C, H, W] inputs and int[2]
// window arguments): conv2d, conv_transpose2d, pooling, upsampling. Defined
// in conv_pool.cpp; internal to meta/.
#pragma once

#include <string>

#include "meta/common.h"

namespace bp::core::meta {

// Reads an int[2] argument into out[2]: length 1 repeats, an empty list
// takes `dflt` (nullptr: empty is an error), values beyond +-2^30 are
// OUT_OF_RANGE (keeps the size arithmetic far from int64 overflow).
Status Pair(const MetaCallInfo& info, const MetaArg* args, int i, const int64_t* dflt, int64_t* out);
// Pair, then INVALID_ARGUMENT "expected <what>, got [a, b]" unless both
// values are >= min.
Status PairAtLeast(const MetaCallInfo& info, const MetaArg* args, int i, const int64_t* dflt, int64_t min,
                   const char* what, int64_t* out);
// Hands the kernel argument `arg` as the two-element list v, kept in
// plan->int_storage slot `slot` (0..2 * BP_MAX_NDIM - 1).
void RewritePair(MetaPlan* plan, int arg, int slot, const int64_t* v);
// args[0] is [C, H, W] or [N, C, H, W] with non-zero C, H, W (any dtype, *d).
Status InputImage(const MetaCallInfo& info, const MetaArg* args, DType* d);
// InputImage, and a floating dtype.
Status Input3or4(const MetaCallInfo& info, const MetaArg* args, DType* d);
// The arguments conv2d and conv_transpose2d share: input (args[0], as
// Input3or4), a 4-D weight (args[1], `weight_layout` names its dims in the
// message) of the input's dtype, stride (3), padding (4), dilation
// (dilation_arg) and a positive groups (6, default 1).
struct ConvArgs {
  DType dtype;
  int64_t stride[2], padding[2], dilation[2], groups;
};
Status ReadConvArgs(const MetaCallInfo& info, const MetaArg* args, const char* weight_layout, int dilation_arg,
                    ConvArgs* c);
// The window arguments alone, at the positions `pos` names (conv_integer's
// differ from conv2d's): stride, padding, dilation and groups as above.
struct ConvPos {
  int stride, padding, dilation, groups;
};
Status ReadConvWindow(const MetaCallInfo& info, const MetaArg* args, const ConvPos& pos, ConvArgs* c);
// conv2d's output height and width (hw[2]) for input args[0] and weight
// args[1] [C_out, C_in / groups, kH, kW]: checks groups divide C_out, the
// input has C_in channels and the dilated kernel fits the padded input.
Status ConvOutputSize(const MetaCallInfo& info, const MetaArg* args, const ConvArgs& c, int64_t* hw);
// Their bias (args[2]): None, or [c_out] of dtype d.
Status ConvBias(const MetaCallInfo& info, const MetaArg* args, int64_t c_out, DType d);
// plan output 0: [N, c, hw[0], hw[1]] ([c, ...] when args[0] is unbatched).
Status SetOutput4(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan, DType d, int64_t c, const int64_t* hw);
// "(h x w)", for messages.
std::string HW(int64_t h, int64_t w);
// Unbatched [C, H, W] tensors are shown to the kernel as [1, C, H, W].
Geometry Batched(const Geometry& g);
// A prepare() handing args[0] and output 0 to the kernel batched (4-D).
Status NchwPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan, const Geometry* outputs,
                   KernelViews* views);

}  // namespace bp::core::meta
