// The subprograms of control-flow ops (cc/ops/subprogram.h) are programs: ProgramBody wraps an
// immutable Program, so the runtime can run it and the writer serialize it.
#ifndef SHAPEPOLY_CC_PROGRAM_SUBPROGRAM_H_
#define SHAPEPOLY_CC_PROGRAM_SUBPROGRAM_H_

#include <memory>
#include <string>
#include <vector>

#include "cc/ops/subprogram.h"
#include "cc/program/program.h"

namespace shp {
namespace program {

class ProgramBody final : public ops::Subprogram {
 public:
  // Throws kInvalidArgument for a program that cannot be a subprogram: several variants,
  // guards, parameters or inputs with a default (positions cannot leave them out). A program
  // with data-dependent sizes is accepted (its runtime plans in stages); its outputs' dims
  // over its own unbacked variables are nullptr in OutputTypes.
  explicit ProgramBody(std::shared_ptr<const Program> p);
  const Program& program() const { return *p_; }
  const std::shared_ptr<const Program>& shared() const { return p_; }

  size_t num_inputs() const override { return p_->inputs().size(); }
  size_t num_outputs() const override { return p_->outputs().size(); }
  std::vector<trace::TensorType> InputTypes(dim::Scope* scope,
                                            const std::string& what) const override;
  std::vector<trace::TensorType> OutputTypes(dim::Scope* scope,
                                             const std::string& what) const override;
  std::pair<int64_t, int64_t> OutputDimBounds(size_t k, size_t d) const override;
  bool has_data_dependent_sizes() const override { return p_->has_unbacked(); }
  const dim::Expr* Flops(dim::Scope* scope) const override;
  const std::string& Text() const override { return p_->text(); }

 private:
  std::vector<trace::TensorType> Rebuilt(dim::Scope* scope, const std::string& what,
                                         bool inputs) const;
  std::shared_ptr<const Program> p_;
};

// The subprogram of `op` as a program (every subprogram is a ProgramBody).
const ProgramBody& BodyOf(const ops::Subprogram& op);

// The floating-point operations of one run of `p` as a dim expression of its own scope
// (its nodes' cost rules; the nodes of one control-flow operation counted once). The caller
// holds p's scope (Program::WithScope).
const dim::Expr* ProgramFlops(const Program& p, dim::Scope& s);

}  // namespace program
}  // namespace shp

#endif  // SHAPEPOLY_CC_PROGRAM_SUBPROGRAM_H_
