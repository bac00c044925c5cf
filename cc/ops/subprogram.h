// A program inside an operation: the branches of cond, the condition and body of while_loop,
// the body of scan (cc/ops/control_flow.cc). cc/ops sees only this interface; a subprogram is
// an immutable program::Program (cc/program/subprogram.cc implements it), shared by every node
// that refers to it and independent of any scope. Its variables are the enclosing program's
// variables of the same names: its types are rebuilt into the enclosing scope by name.
#ifndef SHAPEPOLY_CC_OPS_SUBPROGRAM_H_
#define SHAPEPOLY_CC_OPS_SUBPROGRAM_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cc/dim/scope.h"
#include "cc/ir/tensor_type.h"

namespace shp {
namespace ops {

class Subprogram {
 public:
  virtual ~Subprogram() = default;
  virtual size_t num_inputs() const = 0;
  virtual size_t num_outputs() const = 0;
  // The input and output types with their dims rebuilt in `scope`. Throws kInvalidArgument
  // (naming `what`) when the subprogram uses a variable that `scope` does not have.
  virtual std::vector<trace::TensorType> InputTypes(dim::Scope* scope,
                                                    const std::string& what) const = 0;
  // An output dim that the subprogram computes from data (one of its own unbacked variables:
  // nonzero, boolean_mask, size_from_value or a cond inside it) is nullptr in OutputTypes: it
  // has no expression in `scope`; OutputDimBounds gives its bounds (in the subprogram's scope).
  virtual std::vector<trace::TensorType> OutputTypes(dim::Scope* scope,
                                                     const std::string& what) const = 0;
  virtual std::pair<int64_t, int64_t> OutputDimBounds(size_t k, size_t d) const = 0;
  // Whether the subprogram computes data-dependent sizes (its runtime plans in stages).
  virtual bool has_data_dependent_sizes() const = 0;
  // The floating-point operations of one run, as a dim expression of `scope` (its cost rule).
  virtual const dim::Expr* Flops(dim::Scope* scope) const = 0;
  // The listing of the program (deterministic: equal programs list equal).
  virtual const std::string& Text() const = 0;
};

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_SUBPROGRAM_H_
