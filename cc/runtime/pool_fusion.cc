// PoolFusion (plan.h): average pooling that excludes the padding, found in the graph and planned
// as one kernels::ReduceWindowMean step instead of two window sums and a division.
#include <cstring>
#include <string>
#include <vector>

#include "cc/kernels/reduce_window.h"
#include "cc/ops/steps.h"
#include "cc/runtime/plan.h"

namespace shp {
namespace runtime {

namespace {

using trace::DType;
using trace::OpKind;

// Whether a constant's bytes are the scalar 1 of `dtype` (f32 or f64).
bool IsOne(const std::string* bytes, DType dtype) {
  if (bytes == nullptr) return false;
  if (dtype == DType::kF32) {
    const float one = 1.0f;
    return bytes->size() == 4 && std::memcmp(bytes->data(), &one, 4) == 0;
  }
  const double one = 1.0;
  return bytes->size() == 8 && std::memcmp(bytes->data(), &one, 8) == 0;
}

bool IsZero(const dim::Expr* e) { return e->IsConstant() && e->ConstantTerm() == 0; }

// The window of the sum: N and C (axes 0, 1) untouched (window, stride and dilations 1, no
// pads), no base dilation (ReduceWindowMean's domain).
bool PoolsSpatialAxes(const ops::WindowAttrs& a) {
  if (a.window.size() < 3) return false;
  for (size_t i = 0; i < a.window.size(); ++i) {
    if (a.base_dilation[i] != 1) return false;
    if (i < 2 && (a.window[i] != 1 || a.strides[i] != 1 || a.window_dilation[i] != 1 ||
                  !IsZero(a.pad_low[i]) || !IsZero(a.pad_high[i]))) {
      return false;
    }
  }
  return true;
}

bool SameWindow(const ops::WindowAttrs& a, const ops::WindowAttrs& b) {
  return a.reduction == b.reduction && a.window == b.window && a.strides == b.strides &&
         a.window_dilation == b.window_dilation && a.base_dilation == b.base_dilation &&
         a.pad_low == b.pad_low && a.pad_high == b.pad_high;
}

struct PoolMeanStep final : ops::Step {
  std::vector<kernels::WindowDim> dims;
  void Run(const ops::RunContext& c) override {
    ops::CheckKernel(kernels::ReduceWindowMean(dtype, In(c, 0), static_cast<int>(dims.size()),
                                               dims.data(), nullptr, nullptr, Out(c), Pool(c)),
                     "avg_pool");
  }
};

}  // namespace

void Graph::FindPoolFusions(const std::vector<bool>& is_output, bool fuse) {
  pool_fusion_of.assign(num_values, -1);
  if (!fuse) return;
  const std::vector<int32_t> user = SoleUsers(is_output);
  auto free_value = [&](int32_t v) {
    const size_t u = static_cast<size_t>(v);
    return mm_fusion_of[u] < 0 && conv_fusion_of[u] < 0 && narrow_fusion_of[u] < 0 &&
           pool_fusion_of[u] < 0;
  };
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& dn = p.nodes()[i];
    const int32_t div = static_cast<int32_t>(num_inputs + i);
    if (dn.op != OpKind::kDiv || (dn.type.dtype != DType::kF32 && dn.type.dtype != DType::kF64) ||
        dn.operands.size() != 2 || !free_value(div)) {
      continue;
    }
    const int32_t sum = dn.operands[0], count = dn.operands[1];
    const program::Node* sn = NodeOf(sum);
    const program::Node* cn = NodeOf(count);
    if (sn == nullptr || cn == nullptr || sn->op != OpKind::kReduceWindow ||
        cn->op != OpKind::kReduceWindow || sum == count || user[static_cast<size_t>(sum)] != div ||
        user[static_cast<size_t>(count)] != div || !free_value(sum) || !free_value(count) ||
        sn->type.shape != dn.type.shape) {
      continue;
    }
    const auto& sa = std::get<ops::WindowAttrs>(sn->attrs);
    const auto& ca = std::get<ops::WindowAttrs>(cn->attrs);
    if (sa.reduction != OpKind::kReduceSum || !PoolsSpatialAxes(sa) || !SameWindow(sa, ca)) {
      continue;
    }
    // The counted ones: broadcast_to(1, [1, 1, *x's spatial dims]), so the count of a window is
    // the number of its positions inside the input (the pads sum zeros).
    const int32_t x = sn->operands[0];
    const program::Node* on = NodeOf(cn->operands[0]);
    const std::vector<const dim::Expr*>& xs = p.value_type(x).shape;
    if (on == nullptr || on->op != OpKind::kBroadcastTo || on->operands.size() != 1 ||
        p.value_type(on->operands[0]).dtype != dn.type.dtype ||
        !p.value_type(on->operands[0]).shape.empty() ||
        !IsOne(ConstantBytes(on->operands[0]), dn.type.dtype) ||
        on->type.shape.size() != xs.size()) {
      continue;
    }
    bool ones_shape = true;
    for (size_t a = 0; a < xs.size() && ones_shape; ++a) {
      const dim::Expr* e = on->type.shape[a];
      ones_shape = a < 2 ? e->IsConstant() && e->ConstantTerm() == 1 : e == xs[a];
    }
    if (!ones_shape ||
        stage_of_value[static_cast<size_t>(sum)] != stage_of_value[static_cast<size_t>(div)]) {
      continue;
    }
    PoolFusion f;
    f.sum = sum;
    f.count = count;
    f.div = div;
    f.x = x;
    const int32_t index = static_cast<int32_t>(pool_fusions.size());
    for (int32_t w : {sum, count, div}) pool_fusion_of[static_cast<size_t>(w)] = index;
    pool_fusions.push_back(f);
  }
}

void Plan::PlanPoolFusion(const PoolFusion& f) {
  const program::Node& sn = g_.p.nodes()[static_cast<size_t>(f.sum) - g_.num_inputs];
  const auto& a = std::get<ops::WindowAttrs>(sn.attrs);
  const std::vector<int64_t>& x = shapes[static_cast<size_t>(f.x)];
  const std::vector<int64_t>& y = shapes[static_cast<size_t>(f.div)];
  CheckRank(x.size(), kernels::kMaxWindowRank, "reduce_window");
  PoolMeanStep& s = AddStep<PoolMeanStep>(g_.p.value_type(f.div).dtype, {f.x}, f.div);
  s.dims = ops::PlanWindowDims(*this, a, x, y);  // the sum's own window, checked the same way
  s.threaded = Product(y) >= kThreadElements / 4;
}

}  // namespace runtime
}  // namespace shp
