// Automatic differentiation as program transformations (issue 10). Each function takes a
// program (traced or loaded) and returns a new program; the original is untouched. The new
// program keeps the original's inputs, outputs, variables, constraints and assertions, so the
// transformations compose to any order and their results serialize like any program.
//
// Derived names: `x.tangent`, `y.cotangent`, `y.tangent`, `x.grad`; when such a name is already
// taken (a transformed program transformed again), the suffix repeats ("x.grad.grad"). The
// grad of an output that is a derivative of x is named by its order (of "x.grad.grad":
// "x.grad.grad.grad"), so a name never means two orders.
//
// Only floating-point values carry derivatives. Tangents and cotangents that are zero are
// symbolic: no operation is recorded for them (an output whose derivative is zero is the one
// place zeros are materialized). An op without a rule is kUnsupported, naming the op.
#ifndef SHAPEPOLY_CC_AUTODIFF_AUTODIFF_H_
#define SHAPEPOLY_CC_AUTODIFF_AUTODIFF_H_

#include <memory>
#include <string>
#include <vector>

#include "cc/program/program.h"

namespace shp {
namespace autodiff {

// Forward mode. Inputs: the original inputs, then `x.tangent` (same dtype and symbolic shape)
// for each input x named in `wrt` (floating-point data inputs). Outputs: the original outputs,
// then `y.tangent` for every floating-point output y. `default_fill` is empty (tangents without
// defaults) or one value per `wrt` entry: the fill default of that tangent (schema version 11),
// so a run that leaves `x.tangent` out uses that value in every element of x's shape (1: the
// derivative along all ones). kInvalidArgument for a count other than wrt's or a value that is
// not finite in x's dtype.
std::unique_ptr<program::Program> Jvp(const program::Program& p,
                                      const std::vector<std::string>& wrt,
                                      const std::vector<double>& default_fill = {});

// Reverse mode. Inputs: the original inputs, then `y.cotangent` for each output y named in
// `of` (floating-point outputs). Outputs: the original outputs, then `x.grad` for each input x
// named in `wrt`.
std::unique_ptr<program::Program> Vjp(const program::Program& p, const std::vector<std::string>& of,
                                      const std::vector<std::string>& wrt);

// The gradient of the scalar floating-point output `of`. Inputs: the original inputs, then
// `of.cotangent` (a cotangent input whose default is 1, so a plain run computes the gradient
// and a run that names it scales it). Outputs: `of`, then `x.grad` for each x in `wrt`.
std::unique_ptr<program::Program> Grad(const program::Program& p, const std::string& of,
                                       const std::vector<std::string>& wrt);

}  // namespace autodiff
}  // namespace shp

#endif  // SHAPEPOLY_CC_AUTODIFF_AUTODIFF_H_
