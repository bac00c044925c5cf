// Control flow at run time (cond, while_loop, scan; cc/ops/control_flow.cc): the nodes of one
// operation's results run as one step, which runs the subprograms with their own runtimes.
// A subprogram's runtime plans each shape signature once (its plan cache), so an iteration
// binds pointers and runs the cached plan: no allocation and no planning per iteration. The
// step's scratch (the carried values, twice; strided slices) is allocated when the plan is
// built.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/program/subprogram.h"
#include "cc/runtime/plan.h"
#include "cc/runtime/runtime.h"

namespace shp {
namespace runtime {
namespace {

using PB = ops::PlanBuilder;
using trace::OpKind;

std::string ShapeStr(const int64_t* shape, size_t rank) {
  std::string t = "(";
  for (size_t d = 0; d < rank; ++d) t += (d ? ", " : "") + std::to_string(shape[d]);
  return t + (rank == 1 ? ",)" : ")");
}

// The outputs of a subprogram's run go where `ptrs` say; shapes are checked against the plan.
class PointerSink final : public OutputSink {
 public:
  std::vector<void*> ptrs;
  const std::vector<std::vector<int64_t>>* shapes = nullptr;
  // Unused results of a cond with result sizes, whose shapes the plan does not know: kept in
  // buffers grown as needed (such a cond's program is staged: it allocates per new size).
  std::vector<bool> any_shape;
  std::vector<std::vector<uint8_t>> any_buf;
  const char* what = "cond";  // the op, and the loop's iteration (-1: none), for errors
  int64_t iteration = -1;
  void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) override {
    if (i < any_shape.size() && any_shape[i]) {
      const int64_t bytes = PB::Mul(PB::Product(std::vector<int64_t>(shape, shape + rank)),
                                    static_cast<int64_t>(trace::DTypeSize(dtype)));
      if (any_buf[i].size() < static_cast<size_t>(bytes))
        any_buf[i].resize(static_cast<size_t>(bytes));
      return any_buf[i].empty() ? nullptr : any_buf[i].data();
    }
    const std::vector<int64_t>& want = (*shapes)[i];
    if (rank != want.size() || !std::equal(want.begin(), want.end(), shape)) {
      // A size the subprogram computes from data: a loop's carried value that changes size,
      // or a cond whose sizes another cond set, given a branch that computes other sizes.
      throw Error(Code::kShapeMismatch,
                  std::string(what) + ": result " + std::to_string(i) + " of " +
                      (iteration >= 0 ? "iteration " + std::to_string(iteration) + " of " : "") +
                      "the " + (iteration >= 0 ? "body" : "branch") + " has the shape " +
                      ShapeStr(shape, rank) + ", not " + ShapeStr(want.data(), want.size()) +
                      (iteration >= 0 ? " (the body computes it from data; a carried value keeps "
                                        "its shape, a scan's ys keep the first iteration's)"
                                      : " (the sizes its cond's results have)"));
    }
    return ptrs[i];
  }
};

// A value's layout in a step: its shape and dtype, bytes.
struct Layout {
  std::vector<int64_t> shape;
  trace::DType dtype = trace::DType::kF32;
  int64_t bytes = 0;
};

struct ControlFlowStep final : Step {
  OpKind op = OpKind::kCond;
  const ControlFlowOp* cf = nullptr;
  const ops::ControlFlowAttrs* attrs = nullptr;
  std::vector<Layout> operands;      // the node's operands, as planned
  std::vector<Layout> results;       // every result of the operation
  std::vector<int32_t> result_slot;  // per result: its slot, or -1 (unused: scratch)
  size_t nc = 0, nx = 0;             // carried values, scanned operands
  int64_t length = 0;                // scan
  // scan: each scanned operand as [outer, length, inner bytes], each y likewise.
  std::vector<std::pair<int64_t, int64_t>> x_split, y_split;
  // Scratch: carries (a, b), unused results, slices of xs and ys along an inner axis.
  std::vector<std::vector<uint8_t>> carry_a, carry_b, unused, x_tmp, y_tmp;
  std::vector<uint8_t> flag;
  // The arguments of the subprograms' runs (data pointers set per run).
  std::vector<ArrayView> views;
  std::vector<ArrayView> cond_views;  // while_loop's condition
  // The subprograms' input names (bound by name: a transformed body's tangents bind so).
  std::vector<std::vector<const char*>> names;
  PointerSink sink, cond_sink;
  std::vector<std::vector<int64_t>> sink_shapes, cond_shapes;
  std::vector<std::vector<int64_t>> slice_shapes;  // scan: each scanned operand's slice

  Runtime& Body(size_t i) const {
    if (cf->runtimes.empty() || cf->runtimes[i] == nullptr) {
      throw Error(Code::kInternal, "control flow: planned without runtimes");
    }
    return *cf->runtimes[i];
  }
  // Runs subprogram `i` on `v` (names[i]), its outputs into `out`; counts the run.
  void RunBody(size_t i, const std::vector<ArrayView>& v, PointerSink* out) const {
    if (cf->runs != nullptr) ++*cf->runs;
    Body(i).Run(names[i].data(), v.data(), v.size(), out);
  }
  uint8_t* ResultPtr(const ops::RunContext& c, size_t k) {
    return result_slot[k] >= 0 ? c.ptr[result_slot[k]] : unused[k].data();
  }
  void Run(const ops::RunContext& c) override {
    switch (op) {
      case OpKind::kCond:
        RunCond(c);
        break;
      case OpKind::kWhileLoop:
        RunWhile(c);
        break;
      default:
        RunScan(c);
        break;
    }
  }

  void RunCond(const ops::RunContext& c) {
    if (cf->sized) {
      // The taken branch ran before this stage was planned (Runtime::RunCondForSizes): its
      // results are in the stash, where the used results' slots point (kPrior; no copy).
      for (size_t k = 0; k < results.size(); ++k) {
        if (result_slot[k] < 0) continue;
        if (cf->stash.size() != results.size() || cf->stash_shapes[k] != results[k].shape ||
            ResultPtr(c, k) != cf->stash[k].data()) {
          throw Error(Code::kInternal, "control flow: a cond's branch results were not kept");
        }
      }
      return;
    }
    const bool pred = *In(c, 0) != 0;
    for (size_t i = 1; i < in.size(); ++i) views[i - 1].data = In(c, i);
    for (size_t k = 0; k < results.size(); ++k) sink.ptrs[k] = ResultPtr(c, k);
    RunBody(pred ? 0 : 1, views, &sink);
  }

  // Copies the carried values from the operands into carry_a.
  void InitCarry(const ops::RunContext& c) {
    for (size_t k = 0; k < nc; ++k) {
      if (operands[k].bytes > 0) std::memcpy(carry_a[k].data(), In(c, k), operands[k].bytes);
    }
  }
  void FinishCarry(const ops::RunContext& c) {
    for (size_t k = 0; k < nc; ++k) {
      if (results[k].bytes > 0) std::memcpy(ResultPtr(c, k), carry_a[k].data(), results[k].bytes);
    }
  }

  // Refuses iteration `trips` (0-based) beyond Options::max_loop_iterations.
  void CheckIterations(int64_t trips) const {
    if (cf->max_iterations >= 0 && trips >= cf->max_iterations) {
      throw Error(Code::kConstraintViolation,
                  std::string(op == OpKind::kScan ? "scan" : "while_loop") +
                      ": more than max_loop_iterations = " + std::to_string(cf->max_iterations) +
                      " iterations (a runtime option)");
    }
  }

  void RunWhile(const ops::RunContext& c) {
    InitCarry(c);
    for (size_t i = nc; i < in.size(); ++i) {
      views[i].data = In(c, i);
      cond_views[i].data = In(c, i);
    }
    cond_sink.ptrs[0] = flag.data();
    for (int64_t trips = 0;; ++trips) {
      for (size_t k = 0; k < nc; ++k) cond_views[k].data = carry_a[k].data();
      RunBody(0, cond_views, &cond_sink);
      if (flag[0] == 0) break;
      CheckIterations(trips);
      if (attrs->max_trips >= 0 && trips >= attrs->max_trips) {
        throw Error(Code::kConstraintViolation,
                    "while_loop: the condition still holds after max_trips = " +
                        std::to_string(attrs->max_trips) + " iterations");
      }
      for (size_t k = 0; k < nc; ++k) {
        views[k].data = carry_a[k].data();
        sink.ptrs[k] = carry_b[k].data();
      }
      sink.iteration = trips;
      RunBody(1, views, &sink);
      std::swap(carry_a, carry_b);
    }
    FinishCarry(c);
  }

  // A sized scan's first iteration, which Runtime::RunScanForSizes ran into the stash: its
  // results go where the body's would (the sink checks their shapes, as for a run).
  void FirstFromStash() {
    if (cf->stash.size() != results.size()) {
      throw Error(Code::kInternal, "control flow: a scan's first iteration was not kept");
    }
    for (size_t k = 0; k < results.size(); ++k) {
      if (k < sink.any_shape.size() && sink.any_shape[k]) continue;  // unused, not stacked
      const std::vector<int64_t>& sh = cf->stash_shapes[k];
      void* dst = sink.Output(k, results[k].dtype, sh.data(), sh.size());
      const int64_t bytes =
          PB::Mul(PB::Product(sh), static_cast<int64_t>(trace::DTypeSize(results[k].dtype)));
      if (bytes > 0) std::memcpy(dst, cf->stash[k].data(), static_cast<size_t>(bytes));
    }
  }

  void RunScan(const ops::RunContext& c) {
    if (length > 0) CheckIterations(length - 1);
    InitCarry(c);
    for (size_t i = nc + nx; i < in.size(); ++i) views[i].data = In(c, i);
    for (int64_t t = 0; t < length; ++t) {
      const int64_t i = attrs->reverse ? length - 1 - t : t;
      for (size_t k = 0; k < nc; ++k) {
        views[k].data = carry_a[k].data();
        sink.ptrs[k] = carry_b[k].data();
      }
      for (size_t j = 0; j < nx; ++j) {
        const uint8_t* x = In(c, nc + j);
        const auto [outer, inner] = x_split[j];
        if (outer == 1) {
          views[nc + j].data = x + i * inner;
        } else {
          uint8_t* tmp = x_tmp[j].data();
          for (int64_t o = 0; o < outer; ++o) {
            std::memcpy(tmp + o * inner, x + (o * length + i) * inner, static_cast<size_t>(inner));
          }
          views[nc + j].data = tmp;
        }
      }
      for (size_t k = nc; k < results.size(); ++k) {
        const auto [outer, inner] = y_split[k - nc];
        sink.ptrs[k] = outer == 1 ? ResultPtr(c, k) + i * inner : y_tmp[k - nc].data();
      }
      sink.iteration = i;
      if (t == 0 && cf->sized) {
        FirstFromStash();  // the iteration ran to give the sizes (RunScanForSizes)
      } else {
        RunBody(0, views, &sink);
      }
      for (size_t k = nc; k < results.size(); ++k) {
        const auto [outer, inner] = y_split[k - nc];
        if (outer == 1) continue;
        uint8_t* y = ResultPtr(c, k);
        const uint8_t* tmp = y_tmp[k - nc].data();
        for (int64_t o = 0; o < outer; ++o) {
          std::memcpy(y + (o * length + i) * inner, tmp + o * inner, static_cast<size_t>(inner));
        }
      }
      std::swap(carry_a, carry_b);
    }
    FinishCarry(c);
  }
};

std::vector<uint8_t> Scratch(int64_t bytes) {
  return std::vector<uint8_t>(static_cast<size_t>(std::max<int64_t>(bytes, 1)));
}

ArrayView ViewOf(const Layout& l) {
  ArrayView v;
  v.dtype = l.dtype;
  v.shape = l.shape.data();
  v.rank = l.shape.size();
  return v;
}

}  // namespace

void Graph::FindControlFlow() {
  control_flow_of.assign(num_values, -1);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    if (!ops::IsControlFlow(n.op)) continue;
    const int32_t v = static_cast<int32_t>(num_inputs + i);
    const ops::NodeView view{n.op, n.attrs, n.operands, v, n.type.dtype, nullptr};
    const auto& a = std::get<ops::ControlFlowAttrs>(n.attrs);
    int32_t found = -1;
    for (size_t k = 0; k < control_flow.size() && found < 0; ++k) {
      const program::Node& m = p.nodes()[static_cast<size_t>(control_flow[k].leader) - num_inputs];
      const ops::NodeView lv{m.op,         m.attrs, m.operands, control_flow[k].leader,
                             m.type.dtype, nullptr};
      if (ops::SameOperation(lv, view)) found = static_cast<int32_t>(k);
    }
    if (found < 0) {
      ControlFlowOp op;
      op.leader = v;
      const size_t count = n.op == OpKind::kWhileLoop ? static_cast<size_t>(a.counts[0])
                                                      : a.bodies[0]->num_outputs();
      op.results.assign(count, -1);
      for (const auto& b : a.bodies) op.bodies.push_back(&program::BodyOf(*b).program());
      // A cond that first produces its sizes runs its branch before its stage is planned;
      // one whose sizes another cond produced (a jvp's) runs as any other, its sizes known.
      for (const dim::Expr* u : ops::Def(n.op).UnbackedSizes(n.attrs)) {
        op.sized = op.sized || p.UnbackedProducer(u->AsVar()) == static_cast<int32_t>(i);
      }
      found = static_cast<int32_t>(control_flow.size());
      control_flow.push_back(std::move(op));
    }
    ControlFlowOp& op = control_flow[static_cast<size_t>(found)];
    const size_t r = static_cast<size_t>(a.result);
    if (op.results[r] < 0) op.results[r] = v;
    control_flow_of[static_cast<size_t>(v)] = found;
    if (stage_of_value.size() == num_values &&
        stage_of_value[static_cast<size_t>(v)] != stage_of_value[static_cast<size_t>(op.leader)]) {
      throw Error(Code::kUnsupported,
                  std::string("runtime: the results of one ") + ops::OpName(n.op) +
                      " are computed in different stages of a data-dependent program");
    }
  }
}

namespace {

// Keeps a branch's outputs, whatever their shapes.
class StashSink final : public OutputSink {
 public:
  explicit StashSink(const ControlFlowOp& op) : op_(op) {}
  void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) override {
    op_.stash_shapes[i].assign(shape, shape + rank);
    const int64_t bytes =
        PB::Mul(PB::Product(op_.stash_shapes[i]), static_cast<int64_t>(trace::DTypeSize(dtype)));
    op_.stash[i].resize(static_cast<size_t>(std::max<int64_t>(bytes, 1)));
    return op_.stash[i].data();
  }

 private:
  const ControlFlowOp& op_;
};

// The control-flow op of `node` (a `kind` with result sizes, which begins a data-dependent
// stage) and its attributes; kInternal otherwise.
std::pair<const ControlFlowOp*, const ops::ControlFlowAttrs*> SizedOp(const Graph& g, size_t node,
                                                                      OpKind kind,
                                                                      const char* what) {
  const int32_t at = g.control_flow_of[g.num_inputs + node];
  const program::Node& n = g.p.nodes()[node];
  const auto& a = std::get<ops::ControlFlowAttrs>(n.attrs);
  if (at < 0 || n.op != kind || a.sizes.empty()) {
    throw Error(Code::kInternal,
                std::string("runtime: a data-dependent stage begins at a control-flow node "
                            "that is not a ") +
                    what + " with result sizes");
  }
  return {&g.control_flow[static_cast<size_t>(at)], &a};
}

}  // namespace

void Runtime::RunCondForSizes(const Graph& g, size_t node,
                              const std::vector<ops::OpDef::OperandData>& data,
                              std::vector<int64_t>* vars) {
  const auto sized = SizedOp(g, node, OpKind::kCond, "cond");
  const ControlFlowOp& op = *sized.first;
  const ops::ControlFlowAttrs& a = *sized.second;
  const bool pred = *data.at(0).data != 0;
  const size_t b = pred ? 0 : 1;
  const program::Program& body = *op.bodies[b];
  std::vector<ArrayView> views;
  std::vector<const char*> names;
  for (size_t i = 1; i < data.size(); ++i) {
    ArrayView v;
    v.dtype = data[i].dtype;
    v.shape = data[i].shape->data();
    v.rank = data[i].shape->size();
    v.data = data[i].data;
    views.push_back(v);
    names.push_back(body.inputs()[i - 1].name.c_str());
  }
  const size_t nr = body.outputs().size();
  op.stash.resize(nr);
  op.stash_shapes.resize(nr);
  StashSink sink(op);
  if (op.runtimes.size() <= b || op.runtimes[b] == nullptr) {
    throw Error(Code::kInternal, "control flow: planned without runtimes");
  }
  if (op.runs != nullptr) ++*op.runs;
  op.runtimes[b]->Run(names.data(), views.data(), views.size(), &sink);
  size_t j = 0;
  for (size_t k = 0; k < nr; ++k) {
    for (size_t d = 0; d < op.stash_shapes[k].size(); ++d, ++j) {
      const dim::Expr* u = j < a.sizes.size() ? a.sizes[j] : nullptr;
      if (u != nullptr) (*vars)[static_cast<size_t>(u->AsVar())] = op.stash_shapes[k][d];
    }
    // The stage's plan reads the used results in place (kPrior slots; PlanControlFlow).
    const int32_t v = k < op.results.size() ? op.results[k] : -1;
    if (v >= 0) value_ptr_.at(static_cast<size_t>(v)) = op.stash[k].data();
  }
  if (j != a.sizes.size()) {
    throw Error(Code::kInternal, "control flow: a cond's branch returned results of other ranks");
  }
}

void Runtime::RunScanForSizes(const Graph& g, size_t node,
                              const std::vector<ops::OpDef::OperandData>& data,
                              std::vector<int64_t>* vars) {
  const auto sized = SizedOp(g, node, OpKind::kScan, "scan");
  const ControlFlowOp& op = *sized.first;
  const ops::ControlFlowAttrs& a = *sized.second;
  const int64_t length = dim::Evaluate(a.length, *vars);
  if (length == 0) {
    // No iteration gives the sizes: the ys are empty whatever they are; the lowest allowed.
    for (const dim::Expr* u : a.sizes) {
      if (u != nullptr) {
        (*vars)[static_cast<size_t>(u->AsVar())] = g.p.UnbackedRange(u->AsVar()).first;
      }
    }
    return;
  }
  // The first iteration (the last slice when reversed) on the initial carry.
  const size_t nc = static_cast<size_t>(a.counts[0]), nx = static_cast<size_t>(a.counts[1]);
  const size_t ax = static_cast<size_t>(a.axis);
  const int64_t i = a.reverse ? length - 1 : 0;
  const program::Program& body = *op.bodies[0];
  std::vector<std::vector<int64_t>> shapes(data.size());
  std::vector<std::vector<uint8_t>> copies(data.size());
  std::vector<ArrayView> views;
  std::vector<const char*> names;
  for (size_t j = 0; j < data.size(); ++j) {
    ArrayView v;
    v.dtype = data[j].dtype;
    shapes[j] = *data[j].shape;
    v.data = data[j].data;
    if (j >= nc && j < nc + nx) {
      const int64_t outer = PB::Product(shapes[j], 0, ax);
      const int64_t inner = PB::Mul(PB::Product(shapes[j], ax + 1, shapes[j].size()),
                                    static_cast<int64_t>(trace::DTypeSize(v.dtype)));
      const uint8_t* x = data[j].data;
      if (outer == 1) {
        v.data = x + i * inner;
      } else {
        copies[j].resize(static_cast<size_t>(PB::Mul(outer, inner)));
        for (int64_t o = 0; o < outer; ++o) {
          std::memcpy(copies[j].data() + o * inner, x + (o * length + i) * inner,
                      static_cast<size_t>(inner));
        }
        v.data = copies[j].data();
      }
      shapes[j].erase(shapes[j].begin() + static_cast<std::ptrdiff_t>(ax));
    }
    v.shape = shapes[j].data();
    v.rank = shapes[j].size();
    views.push_back(v);
    names.push_back(body.inputs()[j].name.c_str());
  }
  const size_t nr = body.outputs().size();
  op.stash.resize(nr);
  op.stash_shapes.resize(nr);
  StashSink sink(op);
  if (op.runtimes.empty() || op.runtimes[0] == nullptr) {
    throw Error(Code::kInternal, "control flow: planned without runtimes");
  }
  if (op.runs != nullptr) ++*op.runs;
  op.runtimes[0]->Run(names.data(), views.data(), views.size(), &sink);
  size_t j = 0;
  for (size_t k = 0; k < nr; ++k) {
    for (size_t d = 0; d < op.stash_shapes[k].size(); ++d, ++j) {
      const dim::Expr* u = j < a.sizes.size() ? a.sizes[j] : nullptr;
      if (u != nullptr) (*vars)[static_cast<size_t>(u->AsVar())] = op.stash_shapes[k][d];
    }
  }
  if (j != a.sizes.size()) {
    throw Error(Code::kInternal, "control flow: a scan's body returned results of other ranks");
  }
}

void Runtime::MakeControlFlowRuntimes(const Options& options) {
  for (auto& g : graphs_) {
    for (ControlFlowOp& op : g->control_flow) {
      op.max_iterations = options.max_loop_iterations;
      op.runs = &stats_.subprogram_runs;
      for (const program::Program* body : op.bodies) {
        // The subprogram's Program is shared by the op's attributes, which the program keeps.
        std::shared_ptr<const program::Program> keep(program_, body);
        op.runtimes.emplace_back(new Runtime(keep, options));
      }
    }
  }
}

void Plan::PlanControlFlow(const ops::NodeView& n) {
  const ControlFlowOp& cf =
      g_.control_flow[static_cast<size_t>(g_.control_flow_of[static_cast<size_t>(n.value)])];
  if (cf.leader != n.value) {
    // Another result of an operation planned at its first node; a repeated result aliases.
    const auto& a = std::get<ops::ControlFlowAttrs>(n.attrs);
    const int32_t first = cf.results[static_cast<size_t>(a.result)];
    if (first != n.value) SetAlias(n.value, first);
    return;
  }
  const auto& a = std::get<ops::ControlFlowAttrs>(n.attrs);
  ControlFlowStep& s = AddStep<ControlFlowStep>(n.dtype, n.operands, n.value);
  s.op = n.op;
  s.cf = &cf;
  s.attrs = &a;
  for (const program::Program* body : cf.bodies) {
    s.names.emplace_back();
    for (const program::Input& in : body->inputs()) s.names.back().push_back(in.name.c_str());
  }
  for (int32_t o : n.operands) {
    Layout l{shapes[static_cast<size_t>(o)], dtype(o), slot_bytes[static_cast<size_t>(o)]};
    s.operands.push_back(std::move(l));
  }
  // Every result's layout: from its node when the program has one, else from the subprogram's
  // planned types (the operands' for carried values).
  const size_t nr = cf.results.size();
  s.nc = n.op == OpKind::kCond ? 0 : static_cast<size_t>(a.counts[0]);
  s.nx = n.op == OpKind::kScan ? static_cast<size_t>(a.counts[1]) : 0;
  s.result_slot.assign(nr, -1);
  s.results.resize(nr);
  s.unused.resize(nr);
  const size_t first_x = s.nc;
  s.length = n.op == OpKind::kScan ? Eval(a.length) : 0;
  for (size_t k = 0; k < nr; ++k) {
    const int32_t v = cf.results[k];
    if (v >= 0) {
      s.result_slot[k] = v;
      if (v != n.value) s.more_out.push_back(v);
      // A cond that produces its sizes: the branch ran into the stash before this stage was
      // planned; the result is read there (the runtime points value_ptr_[v] at it).
      if (cf.sized && n.op == OpKind::kCond) {
        loc[static_cast<size_t>(v)] = SlotLoc{SlotLoc::kPrior, v, nullptr};
      }
      s.results[k] =
          Layout{shapes[static_cast<size_t>(v)], dtype(v), slot_bytes[static_cast<size_t>(v)]};
    } else if (k < s.nc) {
      s.results[k] = s.operands[k];
    } else if (!a.sizes.empty()) {
      // An unused result of a cond or scan with result sizes: its shape is the subprogram's
      // (any_shape; a scan's unused y is not stacked).
      s.results[k].dtype = cf.bodies[0]->value_type(cf.bodies[0]->outputs()[k].value).dtype;
      s.sink.any_shape.resize(nr, false);
      s.sink.any_buf.resize(nr);
      s.sink.any_shape[k] = true;
      continue;
    } else {
      // An unused result: sized by the subprogram's output type under this plan's variables.
      const program::Program& body = *cf.bodies[0];  // cond's true branch, scan's body
      const trace::TensorType& t = body.value_type(body.outputs()[k].value);
      Layout l;
      l.dtype = t.dtype;
      std::vector<std::string> names;
      std::vector<int64_t> values;
      for (const auto& vp : g_.var_pos) {
        names.push_back(g_.p.variable_names()[static_cast<size_t>(vp.second)]);
        values.push_back(vars_[static_cast<size_t>(vp.first)]);
      }
      l.shape = body.OutputShape(k, names, values);
      if (n.op == OpKind::kScan) {
        l.shape.insert(l.shape.begin() + static_cast<std::ptrdiff_t>(a.axis), s.length);
      }
      l.bytes = PB::Mul(PB::Product(l.shape), static_cast<int64_t>(trace::DTypeSize(l.dtype)));
      s.results[k] = std::move(l);
    }
    if (v < 0) s.unused[k] = Scratch(s.results[k].bytes);
  }
  // The subprograms' arguments: every operand after the predicate (cond), or the carried
  // values, the slices of the scanned operands, the constants. Views point into the step's
  // layouts (slice_shapes is sized first: its entries never move).
  const size_t first_arg = n.op == OpKind::kCond ? 1 : 0;
  s.slice_shapes.resize(s.nx);
  const size_t ax = static_cast<size_t>(a.axis);
  for (size_t i = first_arg; i < s.operands.size(); ++i) {
    const Layout& l = s.operands[i];
    ArrayView v = ViewOf(l);
    if (i >= first_x && i < first_x + s.nx) {
      const int64_t outer = PB::Product(l.shape, 0, ax);
      const int64_t inner = PB::Mul(PB::Product(l.shape, ax + 1, l.shape.size()),
                                    static_cast<int64_t>(trace::DTypeSize(l.dtype)));
      s.x_split.emplace_back(outer, inner);
      s.x_tmp.push_back(outer == 1 ? std::vector<uint8_t>() : Scratch(PB::Mul(outer, inner)));
      std::vector<int64_t>& slice = s.slice_shapes[i - first_x];
      slice = l.shape;
      slice.erase(slice.begin() + static_cast<std::ptrdiff_t>(ax));
      v.shape = slice.data();
      v.rank = slice.size();
    }
    s.views.push_back(v);
  }
  // Where each run's outputs go: the carried values (scratch, swapped per iteration), the
  // results (cond), the slices of the ys.
  const size_t body_outputs = n.op == OpKind::kWhileLoop ? s.nc : nr;
  s.sink_shapes.resize(body_outputs);
  for (size_t k = 0; k < body_outputs; ++k) {
    s.sink_shapes[k] = s.results[k].shape;
    if (n.op == OpKind::kScan && k >= s.nc && k < s.sink.any_shape.size() && s.sink.any_shape[k]) {
      s.y_split.emplace_back(1, 0);
      s.y_tmp.emplace_back();
    } else if (n.op == OpKind::kScan && k >= s.nc) {
      std::vector<int64_t>& y = s.sink_shapes[k];
      y.erase(y.begin() + static_cast<std::ptrdiff_t>(ax));
      const int64_t outer = PB::Product(y, 0, ax);
      const int64_t inner = PB::Mul(PB::Product(y, ax, y.size()),
                                    static_cast<int64_t>(trace::DTypeSize(s.results[k].dtype)));
      s.y_split.emplace_back(outer, inner);
      s.y_tmp.push_back(outer == 1 ? std::vector<uint8_t>() : Scratch(PB::Mul(outer, inner)));
    }
  }
  s.sink.ptrs.assign(body_outputs, nullptr);
  s.sink.shapes = &s.sink_shapes;
  s.sink.what = ops::OpName(n.op);
  for (size_t k = 0; k < s.nc; ++k) {
    s.carry_a.push_back(Scratch(s.operands[k].bytes));
    s.carry_b.push_back(Scratch(s.operands[k].bytes));
  }
  if (n.op == OpKind::kWhileLoop) {
    s.cond_views = s.views;
    s.cond_shapes.assign(1, std::vector<int64_t>());
    s.cond_sink.ptrs.assign(1, nullptr);
    s.cond_sink.shapes = &s.cond_shapes;
    s.flag.assign(1, 0);
  }
}

}  // namespace runtime
}  // namespace shp
