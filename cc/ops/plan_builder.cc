#include "cc/ops/plan_builder.h"

#include <cstring>

#include "cc/base/error.h"

namespace shp {
namespace ops {

int32_t PlanBuilder::NewTempLike(int32_t value) {
  loc.push_back(SlotLoc{SlotLoc::kArena, 0, nullptr});
  slot_bytes.push_back(slot_bytes[static_cast<size_t>(value)]);
  temp_like.push_back(value);
  return static_cast<int32_t>(loc.size() - 1);
}

void PlanBuilder::SetConstant(int32_t value, const void* bytes) {
  loc[static_cast<size_t>(value)] = SlotLoc{SlotLoc::kConst, 0, static_cast<const uint8_t*>(bytes)};
}

void PlanBuilder::PlanControlFlow(const NodeView& n) {
  throw Error(Code::kUnsupported,
              std::string("runtime: cannot execute the operation ") + OpName(n.op));
}

void PlanBuilder::SetAlias(int32_t value, int32_t of) {
  loc[static_cast<size_t>(value)] = SlotLoc{SlotLoc::kAlias, of, nullptr};
}

void PlanBuilder::SetScalar(int32_t value, int64_t x) {
  scalars.push_back(x);
  SetConstant(value, &scalars.back());
}

int64_t PlanBuilder::Mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw Error(Code::kOverflow, "runtime: an array size overflows int64");
  }
  return r;
}

int64_t PlanBuilder::Add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    throw Error(Code::kOverflow, "runtime: an array size overflows int64");
  }
  return r;
}

int64_t PlanBuilder::Product(const std::vector<int64_t>& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p = Mul(p, s[i]);
  return p;
}

std::vector<int64_t> PlanBuilder::Strides(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> PlanBuilder::BroadcastStrides(const std::vector<int64_t>& in,
                                                   const std::vector<int64_t>& out) {
  std::vector<int64_t> st(out.size(), 0);
  std::vector<int64_t> own = Strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : own[i];
  return st;
}

void PlanBuilder::CheckRank(size_t rank, int max, const char* what) {
  if (rank > static_cast<size_t>(max)) {
    throw Error(Code::kUnsupported,
                std::string("runtime: ") + what + " supports rank <= " + std::to_string(max));
  }
}

}  // namespace ops
}  // namespace shp
