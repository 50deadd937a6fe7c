// ONNX NonMaxSuppression-10/11 on the host. Its result's size depends on the
// values (how many boxes survive), and Backplane has no operator for it, so
// the mapping reads the boxes and scores back, runs the greedy selection
// here and uploads the selected indices. Reading back makes a session run
// the graph node by node rather than replay a plan (tape.h), which is right
// for a data-dependent result; detection models run it once, at the end.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

// A box as its corners, whatever the input's format.
struct Box {
  double y1, x1, y2, x2;
};

Box box_at(const std::vector<double>& v, size_t at, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const double xc = v[at], yc = v[at + 1], w = v[at + 2], h = v[at + 3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  // [y1, x1, y2, x2]: any diagonal pair of corners.
  return {std::min(v[at], v[at + 2]), std::min(v[at + 1], v[at + 3]), std::max(v[at], v[at + 2]),
          std::max(v[at + 1], v[at + 3])};
}

double iou(const Box& a, const Box& b) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0;
  const double inter = ih * iw;
  const double uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni > 0 ? inter / uni : 0;
}

// A scalar input's value, or `dflt` when it is left out.
double scalar_or(const Ins& in, size_t k, double dflt) {
  if (in.size() <= k || !in[k].present()) return dflt;
  const HostTensor& h = host_of(in[k]);  // the host copy when there is one, else read back
  return h.values.empty() ? dflt : h.values[0];
}

// Inputs: boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class
// (default 0: none), iou_threshold (default 0), score_threshold (default:
// none). Output: selected_indices [K, 3] int64, rows (batch, class, box) by
// batch, then class, then descending score (ties: the lower box index).
Outs non_max_suppression(Exec& ex, const OnnxNode& n, const Ins& in) {
  const std::vector<int64_t> bs = sizes_of(in[0].t), ss = sizes_of(in[1].t);
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
    throw CallFailed{n.op_type + ": INVALID_ARGUMENT: expected boxes [batches, boxes, 4] and scores [batches, " +
                     "classes, boxes] but got boxes " + sizes_str(bs) + " and scores " + sizes_str(ss)};
  }
  const int64_t center = n.get_int("center_point_box", 0);
  if (center != 0 && center != 1) unsupported_attr(n.op_type, "center_point_box", std::to_string(center));
  const double max_out = scalar_or(in, 2, 0);
  const double iou_threshold = scalar_or(in, 3, 0);
  const bool has_score_threshold = in.size() > 4 && in[4].present();
  const double score_threshold = scalar_or(in, 4, 0);
  const HostTensor boxes = ex.to_host(in[0].t), scores = ex.to_host(in[1].t);
  const int64_t batches = bs[0], count = bs[1], classes = ss[1];
  std::vector<double> selected;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<Box> box(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      box[static_cast<size_t>(i)] = box_at(boxes.values, static_cast<size_t>((b * count + i) * 4), center == 1);
    for (int64_t c = 0; c < classes; ++c) {
      const double* s = scores.values.data() + (b * classes + c) * count;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < count; ++i) {
        if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [s](int64_t x, int64_t y) { return s[x] > s[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<double>(kept.size()) >= max_out) break;
        bool suppressed = false;
        for (int64_t k : kept) {
          if (iou(box[static_cast<size_t>(i)], box[static_cast<size_t>(k)]) > iou_threshold) {
            suppressed = true;
            break;
          }
        }
        if (suppressed) continue;
        kept.push_back(i);
        selected.insert(selected.end(), {static_cast<double>(b), static_cast<double>(c), static_cast<double>(i)});
      }
    }
  }
  HostTensor out;
  out.dtype = DType::kInt64;
  out.sizes = {static_cast<int64_t>(selected.size() / 3), 3};
  out.values = std::move(selected);
  return {ex.upload(out)};
}

}  // namespace

void register_detection(MapTable* t) { (*t)["NonMaxSuppression"] = non_max_suppression; }

}  // namespace bponnx
