// Export of expressions as a deduplicated DAG, the form flatbuffers/program.fbs stores
// (table Dim: op, value, operands). Importing goes through Rebuilder (rebuild.h) or the
// scope's operators, so a loaded expression is the loading scope's normal form.
#ifndef SHAPEPOLY_CC_DIM_DAG_H_
#define SHAPEPOLY_CC_DIM_DAG_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cc/dim/scope.h"

namespace shp {
namespace dim {

// The values are the schema's DimOp values (program.fbs), in the same order.
enum class DagOp : int8_t { kConst, kVar, kAdd, kMul, kFloorDiv, kMod, kMax, kMin, kPow };

// kConst: value = the constant; kVar: value = the variable index; kPow: value = the
// exponent, one operand; others: value 0. Operands are indices of earlier entries.
struct DagEntry {
  DagOp op;
  int64_t value;
  std::vector<uint32_t> operands;
};

// Appends entries for each expression it is given, sharing every entry already written
// (equal (op, value, operands) is written once). The shape of the entries is part of the
// program file format and must not change: a constant is one kConst; a term is its
// factors (an atom, or kPow of it when the exponent is > 1), their kMul when more than one,
// and kMul(kConst(coeff), that) when coeff != 1; a sum of several terms is one kAdd.
class DagWriter {
 public:
  explicit DagWriter(const Scope& s) : s_(s) {}
  uint32_t Expr(const dim::Expr* e);
  std::vector<uint32_t> Shape(const std::vector<const dim::Expr*>& v);
  const std::vector<DagEntry>& entries() const { return entries_; }

 private:
  uint32_t Add(DagOp op, int64_t value, const std::vector<uint32_t>& operands);
  struct Fold;  // the walk (cc/dim/detail/fold.h)

  const Scope& s_;  // the expressions' scope (they are only read)
  std::unordered_map<const dim::Expr*, uint32_t> memo_;
  std::map<std::tuple<DagOp, int64_t, std::vector<uint32_t>>, uint32_t> index_;
  std::vector<DagEntry> entries_;
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DAG_H_
