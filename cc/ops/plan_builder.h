// What an op's definition uses to plan itself for concrete shapes (OpDef::Plan), and the
// typed steps it emits. The runtime (cc/runtime/plan.cc) owns the PlanBuilder's data: it
// evaluates the shapes, calls each op's Plan, then assigns storage and runs the steps.
#ifndef SHAPEPOLY_CC_OPS_PLAN_BUILDER_H_
#define SHAPEPOLY_CC_OPS_PLAN_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cc/dim/expr.h"
#include "cc/ops/attrs.h"
#include "cc/ops/op_kind.h"
#include "cc/ir/dtype.h"

namespace shp {
namespace kernels {
class ThreadPool;
}  // namespace kernels

namespace ops {

class Prepared;

// One node of a program as the runtime sees it.
struct NodeView {
  OpKind op;
  const Attrs& attrs;
  const std::vector<int32_t>& operands;  // value ids
  int32_t value;                         // the value this node computes
  trace::DType dtype;                    // of that value
  const Prepared* prepared;              // what OpDef::Prepare returned (may be null)
};

// Where a slot's bytes are at run time.
struct SlotLoc {
  // kPrior: a value an earlier stage of a staged plan computed (the runtime keeps its pointer).
  enum Kind : uint8_t { kNone, kInput, kConst, kArena, kOutput, kAlias, kPrior };
  Kind kind = kNone;
  int64_t index = 0;  // kInput: program input; kArena: offset; kOutput: output; kAlias: slot
  const uint8_t* ptr = nullptr;  // kConst: the bytes (program buffer or plan scalar)
};

// Pointers of every slot for one run, and the runtime's thread pool.
struct RunContext {
  uint8_t* const* ptr = nullptr;
  kernels::ThreadPool* pool = nullptr;
};

// One step of a plan: reads slots `in`, writes slot `out`. Each op family defines its steps
// (typed: the fields a kernel call needs, nothing else).
class Step {
 public:
  virtual ~Step() = default;
  virtual void Run(const RunContext& c) = 0;

  std::vector<int32_t> in;
  int32_t out = -1;
  // Further slots the step writes (a control-flow operation's other results).
  std::vector<int32_t> more_out;
  trace::DType dtype = trace::DType::kF32;
  bool threaded = false;  // pass the runtime's pool to the kernel

 protected:
  const uint8_t* In(const RunContext& c, size_t k) const { return c.ptr[in[k]]; }
  uint8_t* Out(const RunContext& c) const { return c.ptr[out]; }
  kernels::ThreadPool* Pool(const RunContext& c) const { return threaded ? c.pool : nullptr; }
  int64_t ElementSize() const { return static_cast<int64_t>(trace::DTypeSize(dtype)); }
};

class PlanBuilder {
 public:
  // Steps smaller than this (in elements) run on one thread.
  static constexpr int64_t kThreadElements = 1 << 15;

  virtual ~PlanBuilder() = default;

  // The concrete shape of a value; the size in bytes of a value or temporary slot. References
  // stay valid while the plan is built (temporaries never add shapes).
  const std::vector<int64_t>& shape(int32_t value) const {
    return shapes[static_cast<size_t>(value)];
  }
  int64_t bytes(int32_t slot) const { return slot_bytes[static_cast<size_t>(slot)]; }
  virtual trace::DType dtype(int32_t value) const = 0;
  // The value of a dimension expression under this plan's variable values.
  virtual int64_t Eval(const dim::Expr* e) const = 0;
  // The bytes of program buffer `i`.
  virtual const std::string& buffer(int32_t i) const = 0;

  // A temporary arena slot as large as `value` (slots: the values, then temporaries). Sized
  // by a value, so the symbolic peak-memory cost (cc/runtime/cost.cc) knows its size.
  int32_t NewTempLike(int32_t value);
  // A step of type S reading `in` and writing `out`.
  template <class S>
  S& AddStep(trace::DType dt, std::vector<int32_t> in, int32_t out) {
    // Owned before the vector grows: a growth that throws std::bad_alloc must not leak it.
    std::unique_ptr<S> owned(new S());
    steps.push_back(std::move(owned));
    Step& s = *steps.back();
    s.dtype = dt;
    s.in = std::move(in);
    s.out = out;
    return static_cast<S&>(s);
  }
  // A control-flow node (cond, while_loop, scan; cc/ops/control_flow.cc): the runtime plans its
  // subprograms and the step that runs them (cc/runtime/control_flow.cc). Default: kUnsupported.
  virtual void PlanControlFlow(const NodeView& n);
  // `value` is stored elsewhere: constant bytes, another slot (a view), a plan scalar.
  void SetConstant(int32_t value, const void* bytes);
  void SetAlias(int32_t value, int32_t of);
  void SetScalar(int32_t value, int64_t x);

  // Overflow-checked sizes.
  static int64_t Mul(int64_t a, int64_t b);
  static int64_t Add(int64_t a, int64_t b);
  static int64_t Product(const std::vector<int64_t>& s, size_t begin, size_t end);
  static int64_t Product(const std::vector<int64_t>& s) { return Product(s, 0, s.size()); }
  // Row-major strides (in elements) of `s`.
  static std::vector<int64_t> Strides(const std::vector<int64_t>& s);
  // Strides that broadcast an operand of shape `in` over `out` (right-aligned, NumPy).
  static std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in,
                                               const std::vector<int64_t>& out);
  // Throws kUnsupported ("runtime: <what> supports rank <= <max>") when rank > max.
  static void CheckRank(size_t rank, int max, const char* what);

  std::vector<std::vector<int64_t>> shapes;  // per value
  std::vector<SlotLoc> loc;                  // per slot
  std::vector<int64_t> slot_bytes;           // per slot
  std::vector<int32_t> temp_like;            // per temporary: the value it is sized by
  std::vector<std::unique_ptr<Step>> steps;
  std::deque<int64_t> scalars;  // dim_value results (stable addresses)
};

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_PLAN_BUILDER_H_
