#include "cc/dim/expr.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

size_t NumTerms(const Expr* e) { return e->terms.size(); }

int32_t Degree(const Expr* e) {
  // Terms are sorted by CompareMonos, highest degree first.
  return e->terms.empty() ? 0 : e->terms[0].mono->degree;
}

}  // namespace dim
}  // namespace shp
