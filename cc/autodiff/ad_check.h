// Test support for differentiation rules: runs programs on f64 arrays, and checks a
// program's JVP against central finite differences and its VJP against the JVP
// (<vjp(ct), t> == <ct, jvp(t)>), on traced programs and on programs loaded back from bytes.
#ifndef SHAPEPOLY_CC_AUTODIFF_AD_CHECK_H_
#define SHAPEPOLY_CC_AUTODIFF_AD_CHECK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/program/program.h"
#include "cc/trace/trace.h"

namespace shp {
namespace autodiff {
namespace testing {

struct Array {
  trace::DType dtype = trace::DType::kF64;
  std::vector<int64_t> shape;
  std::vector<double> data;  // converted from/to the dtype (f64, f32, i32, i64, bool)
};
using Arrays = std::map<std::string, Array>;

// Runs `p` (inputs by name) and returns its outputs by name.
Arrays Run(std::shared_ptr<const program::Program> p, const Arrays& inputs);

// How a case draws its inputs: the values of each float input come from `sample` (e.g. away
// from a kink or a pole); integer inputs from `sample_int`.
struct Domain {
  double lo = -2.0, hi = 2.0;
};

// A program built by tracing, with concrete shapes for its inputs given per variable values.
struct Case {
  std::string name;
  // Traces the program in `t` and returns (inputs, outputs).
  std::function<void(trace::Trace& t, std::vector<const trace::Tensor*>* inputs,
                     std::vector<const trace::Tensor*>* outputs)>
      build;
  // The input shapes (by input name) for one valuation index k = 0, 1, 2 (include size 1).
  std::function<std::map<std::string, std::vector<int64_t>>(int k)> shapes;
  std::map<std::string, Domain> domains;  // per input; default [-2, 2]
  // Inputs whose values are fixed integers (indices): generated in [0, bound).
  std::map<std::string, int64_t> int_bounds;
  // Only forward mode (while_loop): the vjp must be refused with kUnsupported.
  bool forward_only = false;
  // The constraints of the scope the program is traced in (e.g. "n >= 2").
  std::vector<std::string> constraints;
};

// c's program traced (in a scope with c.constraints), with the trace and its inputs kept alive.
struct TracedCase {
  std::unique_ptr<dim::Scope> scope;
  std::unique_ptr<trace::Trace> trace;
  std::vector<const trace::Tensor*> inputs;
  std::shared_ptr<const program::Program> program;  // outputs out0, out1, ...
};
TracedCase TraceCase(const Case& c);

// Checks `c`'s JVP against finite differences and its VJP against its JVP, for every
// valuation, on the traced program and on it loaded back; reports gtest failures.
void CheckCase(const Case& c, uint32_t seed = 1);

// The same checks for any program (a derived one, say) at the inputs `x`: every
// floating-point input is differentiated with random tangents, every floating-point output
// gets a random cotangent; on `p` and on `p` loaded back from its bytes.
void CheckProgram(std::shared_ptr<const program::Program> p, const Arrays& x, uint32_t seed = 1);

}  // namespace testing
}  // namespace autodiff
}  // namespace shp

#endif  // SHAPEPOLY_CC_AUTODIFF_AD_CHECK_H_
