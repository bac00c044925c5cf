// The shape policy of a compiled function (shp_function_t): which axes of a new trace are
// static and which symbolic, which dynamic axes share a size (duck sizing), what each trace
// assumes (its guards), and why a call traced again. Pure bookkeeping: tracing and running are
// CompiledFunction's (compiled_function.h).
//
// Every axis of every input gets its own variable (s0, s1, ... in input and axis order), in
// every trace, so guards read alike across variants. A static axis is a variable with the
// guard `sK == size` (not a constant in the shape): a call with another size fails that guard,
// which is what makes the function trace again. Dynamic variables range over [0, inf) unless
// marked with other bounds, so sizes 0 and 1 are never specialized.
#ifndef SHAPEPOLY_CC_FUNCTION_SHAPE_POLICY_H_
#define SHAPEPOLY_CC_FUNCTION_SHAPE_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cc/dim/scope.h"
#include "cc/ir/dtype.h"

namespace shp {
namespace function {

// Values of shp_dynamic_mode_t and shp_stance_t (fixed).
enum class DynamicMode : int32_t { kAuto = 0, kAll = 1, kNone = 2 };
enum class Stance : int32_t {
  kDefault = 0,
  kFailOnRecompile = 1,
  kDynamicOnLimit = 2,
  kForceTrace = 3,  // every call traces (the variants are neither used nor changed)
};

struct InputSpec {
  std::string name;
  trace::DType dtype = trace::DType::kF32;
  size_t rank = 0;
};

struct PolicyOptions {
  DynamicMode dynamic = DynamicMode::kAuto;
  bool duck_sizing = true;
  int32_t recompile_limit = 8;  // the most variants (traces) a function keeps
  Stance stance = Stance::kDefault;
};

// One assumption of a trace: variable `var` == `value`, or == variable `other_var` (>= 0).
struct Assumption {
  std::string var;
  std::string other_var;  // empty: compare with `value`
  int64_t value = 0;
  std::string message;
};

// What a new trace looks like.
struct TracePlan {
  std::vector<std::string> specs;                      // per input: "(s0, s1)"
  std::vector<dim::Scope::Declaration> ranges;         // of the dynamic variables
  std::vector<std::pair<std::string, int64_t>> hints;  // every variable: the call's size
  std::vector<Assumption> assumptions;                 // static sizes, then duck sizing
  std::vector<std::string> static_reasons;  // "input 'x' axis 1: static (only one size seen)"
  bool fully_dynamic = false;
};

class ShapePolicy {
 public:
  ShapePolicy(std::vector<InputSpec> inputs, PolicyOptions options);

  const std::vector<InputSpec>& inputs() const { return inputs_; }
  const PolicyOptions& options() const { return options_; }
  void set_stance(Stance s) { options_.stance = s; }

  // Marks (kInvalidArgument for an unknown input, an axis out of range, min > max, min < 0).
  void MarkDynamic(const std::string& input, int64_t axis, int64_t min, int64_t max);
  void MarkStatic(const std::string& input, int64_t axis);
  // torch._dynamo.mark_unbacked: the axis is symbolic in every later trace, in [0, inf), with
  // no hint (a comparison the engine cannot decide is an error naming it, never a guard from
  // the call's size) and no duck sizing (never assumed equal to another axis).
  void MarkUnbacked(const std::string& input, int64_t axis);
  // torch._dynamo.maybe_mark_dynamic: the axis is symbolic in every later trace, but a trace
  // that specializes it is not an error (unlike MarkDynamic).
  void MaybeMarkDynamic(const std::string& input, int64_t axis);

  // Whether axis `axis` of input `i` was marked dynamic (a trace may not specialize it).
  bool MarkedDynamic(size_t i, size_t axis) const {
    return marks_[i][axis].kind == AxisMark::kDynamic ||
           marks_[i][axis].kind == AxisMark::kUnbacked;
  }
  // The variable of axis `axis` of input `i`.
  std::string VarName(size_t i, size_t axis) const;

  // The plan of a trace for a call with these shapes (by input, in declared order), given the
  // shapes of the calls traced before (history()). `fully_dynamic`: every axis symbolic, no
  // duck sizing (the DYNAMIC_ON_LIMIT stance).
  TracePlan Plan(const std::vector<std::vector<int64_t>>& shapes, bool fully_dynamic) const;
  // Records a successful trace: its shapes and its plan (for Explain).
  void Record(const std::vector<std::vector<int64_t>>& shapes, const TracePlan& plan);
  size_t num_traces() const { return history_.size(); }

  // Why shapes that no variant covers failed the assumptions of each earlier trace, and what
  // the next plan changes: "input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic
  // now)". Empty when only guards recorded by the trace function itself failed.
  std::vector<std::string> Explain(const std::vector<std::vector<int64_t>>& shapes,
                                   const TracePlan& next) const;

 private:
  struct AxisMark {
    enum Kind { kNone, kDynamic, kStatic, kUnbacked, kMaybeDynamic } kind = kNone;
    int64_t min = 0, max = dim::kPosInf;
  };
  size_t Find(const std::string& input, const char* what) const;
  // Find, then kInvalidArgument unless `axis` is an axis of that input.
  size_t FindAxis(const std::string& input, int64_t axis, const char* what) const;
  // Whether an axis is dynamic in the next trace, and if not, why.
  bool Dynamic(size_t i, size_t axis, const std::vector<std::vector<int64_t>>& shapes,
               std::string* why_static) const;

  std::vector<InputSpec> inputs_;
  PolicyOptions options_;
  std::vector<std::vector<AxisMark>> marks_;                // [input][axis]
  std::vector<std::vector<std::vector<int64_t>>> history_;  // shapes of each traced call
  std::vector<TracePlan> plans_;                            // the plan of each trace
};

}  // namespace function
}  // namespace shp

#endif  // SHAPEPOLY_CC_FUNCTION_SHAPE_POLICY_H_
