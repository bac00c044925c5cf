// Rebuilds dimension expressions of one scope in another, through the destination's
// operators (so the results are the destination's normal forms; rebuilding a normal form
// under the same facts gives the same expression). Memoized by source pointer.
#ifndef SHAPEPOLY_CC_DIM_REBUILD_H_
#define SHAPEPOLY_CC_DIM_REBUILD_H_

#include <unordered_map>
#include <vector>

#include "cc/dim/scope.h"

namespace shp {
namespace dim {

class Rebuilder {
 public:
  explicit Rebuilder(Scope* dst) : dst_(dst) {}
  const dim::Expr* Expr(const dim::Expr* e);  // nullptr stays nullptr
  std::vector<const dim::Expr*> Shape(const std::vector<const dim::Expr*>& v);

 private:
  struct Fold;  // the walk (cc/dim/detail/fold.h)
  Scope* dst_;
  std::unordered_map<const dim::Expr*, const dim::Expr*> exprs_;
  std::unordered_map<const dim::Atom*, const dim::Expr*> atoms_;
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_REBUILD_H_
