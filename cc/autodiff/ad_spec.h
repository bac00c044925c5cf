// Test support: each op's differentiability as the spec states it (cc/ops/ops.toml's `ad`,
// generated into op_list.h's SHP_OP_DIFFERENTIABILITY), for tests that derive their op lists
// from the spec instead of writing them by hand.
#ifndef SHAPEPOLY_CC_AUTODIFF_AD_SPEC_H_
#define SHAPEPOLY_CC_AUTODIFF_AD_SPEC_H_

#include <vector>

#include "cc/ops/op_kind.h"
#include "cc/ops/op_list.h"

namespace shp {
namespace autodiff {
namespace testing {

// kFloat: differentiable in its floating-point operands (rules in its OpDef); kZero: the
// derivative is zero wherever it is defined; kNone: never differentiated (logical ops).
enum class Ad { kFloat, kZero, kNone };

struct OpAd {
  ops::OpKind op;
  Ad ad;
};

// Every op with its differentiability, in the spec's order.
inline const std::vector<OpAd>& SpecDifferentiability() {
  static const std::vector<OpAd> rows = {
#define SHP_SPEC_AD_ROW(Name, ad) {ops::OpKind::k##Name, Ad::ad},
      SHP_OP_DIFFERENTIABILITY(SHP_SPEC_AD_ROW)
#undef SHP_SPEC_AD_ROW
  };
  return rows;
}

// The ops for which `in_family(op)` holds whose differentiability is one of `ads`.
inline std::vector<ops::OpKind> SpecOps(bool (*in_family)(ops::OpKind), std::vector<Ad> ads) {
  std::vector<ops::OpKind> out;
  for (const OpAd& r : SpecDifferentiability()) {
    if (!in_family(r.op)) continue;
    for (Ad a : ads) {
      if (a == r.ad) out.push_back(r.op);
    }
  }
  return out;
}

}  // namespace testing
}  // namespace autodiff
}  // namespace shp

#endif  // SHAPEPOLY_CC_AUTODIFF_AD_SPEC_H_
