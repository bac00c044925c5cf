// Symbolic cost formulas (cost.h). FLOPs and bytes come from the program's types and each
// op's rule; peak memory replays the runtime's memory planner: the buffers, their lives and
// their regions do not depend on the shapes (only on the program), so one plan at a sample
// shape gives them, and each buffer's size is a dim expression of the value it holds.
#include "cc/runtime/cost.h"

#include <algorithm>
#include <map>
#include <memory>

#include "cc/base/error.h"
#include "cc/ops/op_def.h"
#include "cc/dim/rebuild.h"
#include "cc/program/subprogram.h"
#include "cc/runtime/plan.h"

namespace shp {
namespace runtime {
namespace {

using dim::Expr;
using dim::Scope;
using trace::TensorType;

const Expr* Numel(Scope& s, const TensorType& t) {
  const Expr* n = s.Constant(1);
  for (const Expr* d : t.shape) n = s.Mul(n, d);
  return n;
}

const Expr* Bytes(Scope& s, const TensorType& t) {
  return s.Scale(Numel(s, t), static_cast<int64_t>(trace::DTypeSize(t.dtype)));
}

// The arena's 64-byte rounding, left out where the engine bounds the size's remainder to 0.
// (Bounds, not Compare: an equality's Compare also runs an elimination that can only prove
// it FALSE, about a millisecond per buffer for polynomial sizes.)
const Expr* Aligned(Scope& s, const Expr* bytes) {
  const Expr* k = s.Constant(64);
  if (s.Bounds(s.Mod(bytes, k)).hi == 0) return bytes;
  return s.Scale(s.FloorDiv(s.Add(bytes, s.Constant(63)), k), 64);
}

// max(a, b), or the one that is provably larger (the engine leaves some maxes unsimplified).
const Expr* Larger(Scope& s, const Expr* a, const Expr* b) {
  if (a == b) return a;
  if (s.Compare(a, dim::Cmp::kGe, b) == dim::Truth::kTrue) return a;
  if (s.Compare(b, dim::Cmp::kGe, a) == dim::Truth::kTrue) return b;
  return s.Max(a, b);
}

// The nodes of one control-flow operation count once; a subprogram's cost is its own.
const Expr* Flops(const program::Program& p, Scope& s) { return program::ProgramFlops(p, s); }

const Expr* CostExpr(const program::Program& p, Scope& s, CostKind kind);

// Cost `kind` of subprogram `i` of a control-flow node, as an expression of the enclosing scope
// `s` (the subprogram's variables are the enclosing program's of the same names).
const Expr* BodyCost(const ops::ControlFlowAttrs& a, size_t i, Scope& s, CostKind kind) {
  const program::Program& b = program::BodyOf(*a.bodies[i]).program();
  return b.WithScope([&](Scope& own) {
    const Expr* e = CostExpr(b, own, kind);
    dim::Rebuilder r(&s);
    return r.Expr(e);
  });
}

// Calls f(node, attrs) for the first node of every control-flow operation of p (its other
// nodes are results of the same computation).
template <class F>
void ForEachControlFlow(const program::Program& p, F f) {
  const size_t ni = p.inputs().size();
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    if (!ops::IsControlFlow(n.op)) continue;
    const ops::NodeView a{n.op,         n.attrs, n.operands, static_cast<int32_t>(ni + i),
                          n.type.dtype, nullptr};
    bool repeated = false;
    for (size_t j = 0; j < i && !repeated; ++j) {
      const program::Node& m = p.nodes()[j];
      const ops::NodeView b{m.op,         m.attrs, m.operands, static_cast<int32_t>(ni + j),
                            m.type.dtype, nullptr};
      repeated = ops::SameOperation(a, b);
    }
    if (!repeated) f(n, std::get<ops::ControlFlowAttrs>(n.attrs));
  }
}

// The traffic of the subprograms' runs: a scan's body `length` times, a cond's larger branch,
// a while_loop's condition and body max_trips times and one more condition (kUnsupported
// without max_trips: unbounded).
const Expr* ControlFlowBytes(const program::Program& p, Scope& s) {
  const Expr* total = s.Constant(0);
  ForEachControlFlow(p, [&](const program::Node& n, const ops::ControlFlowAttrs& a) {
    const CostKind k = CostKind::kBytesAccessed;
    if (n.op == trace::OpKind::kScan) {
      total = s.Add(total, s.Mul(a.length, BodyCost(a, 0, s, k)));
    } else if (n.op == trace::OpKind::kCond) {
      total = s.Add(total, Larger(s, BodyCost(a, 0, s, k), BodyCost(a, 1, s, k)));
    } else {
      if (a.max_trips < 0) {
        throw Error(Code::kUnsupported,
                    "cost: while_loop has no trip bound, so its bytes accessed are unbounded "
                    "(give max_trips)");
      }
      const Expr* cond = BodyCost(a, 0, s, k);
      total = s.Add(total, s.Add(cond, s.Scale(s.Add(cond, BodyCost(a, 1, s, k)), a.max_trips)));
    }
  });
  return total;
}

// What the control-flow steps hold besides the arena: each subprogram's runtime's own peak
// (they live as long as the runtime), and the step's scratch, bounded by twice the carried
// values, every result, and one slice of each scanned operand (64 bytes more per buffer).
const Expr* ControlFlowPeak(const program::Program& p, Scope& s) {
  const Expr* total = s.Constant(0);
  ForEachControlFlow(p, [&](const program::Node& n, const ops::ControlFlowAttrs& a) {
    for (size_t i = 0; i < a.bodies.size(); ++i) {
      total = s.Add(total, BodyCost(a, i, s, CostKind::kPeakBytes));
    }
    const size_t nc = n.op == trace::OpKind::kCond ? 0 : static_cast<size_t>(a.counts[0]);
    const size_t nx = n.op == trace::OpKind::kScan ? static_cast<size_t>(a.counts[1]) : 0;
    size_t buffers = 2 * nc;
    for (size_t k = 0; k < nc; ++k) {
      total = s.Add(total, s.Scale(Bytes(s, p.value_type(n.operands[k])), 2));
    }
    for (size_t k = nc; k < nc + nx; ++k) {  // a slice of each scanned operand
      total = s.Add(total, Bytes(s, p.value_type(n.operands[k])));
      ++buffers;
    }
    // Every result (unused ones are scratch; a scan's y slices are smaller than the ys).
    const std::vector<trace::TensorType> out = a.bodies[0]->OutputTypes(&s, "the subprogram");
    for (size_t k = 0; k < out.size(); ++k) {
      trace::TensorType t = out[k];
      if (n.op == trace::OpKind::kScan && k >= nc) {
        t.shape.insert(t.shape.begin() + static_cast<std::ptrdiff_t>(a.axis), a.length);
      }
      total = s.Add(total, Bytes(s, t));
      ++buffers;
    }
    total = s.Add(total, s.Constant(static_cast<int64_t>(64 * buffers)));
  });
  return total;
}

bool HasControlFlow(const program::Program& p) {
  for (const program::Node& n : p.nodes()) {
    if (ops::IsControlFlow(n.op)) return true;
  }
  return false;
}

const Expr* BytesAccessed(const program::Program& p, Scope& s) {
  const Expr* total = ControlFlowBytes(p, s);
  for (const program::Node& n : p.nodes()) {
    if (n.op == trace::OpKind::kConstant) continue;
    total = s.Add(total, Bytes(s, n.type));
    for (int32_t v : n.operands) total = s.Add(total, Bytes(s, p.value_type(v)));
  }
  return total;
}

const Expr* ParameterBytes(const program::Program& p, Scope& s) {
  const Expr* total = s.Constant(0);
  for (const program::Input& in : p.inputs()) {
    if (in.role == trace::InputRole::kParameter) total = s.Add(total, Bytes(s, in.type));
  }
  for (const program::Node& n : p.nodes()) {
    if (n.op == trace::OpKind::kConstant) total = s.Add(total, Bytes(s, n.type));
  }
  // The constants of the subprograms (control flow).
  for (const auto& sub : p.subprograms()) {
    total = s.Add(
        total, s.Constant(static_cast<int64_t>(program::BodyOf(*sub).program().constant_bytes())));
  }
  return total;
}

// A plan at some shape the planner accepts: the buffers and regions are the same for every
// shape. Sample values that make a dimension negative or a size overflow are skipped.
std::unique_ptr<Plan> SamplePlan(const Graph& g, size_t num_vars) {
  for (int64_t x : {64, 8, 1, 2, 3, 5, 7, 100, 1000}) {
    try {
      std::unique_ptr<Plan> plan(new Plan(g, std::vector<int64_t>(num_vars, x)));
      bool ok = true;
      for (const std::vector<int64_t>& shape : plan->shapes) {
        for (int64_t d : shape) ok = ok && d >= 0;
      }
      if (ok) return plan;
    } catch (const Error&) {
    }
  }
  throw Error(Code::kUnsupported,
              "cost: the runtime could not plan the program at any sample shape, so its memory "
              "layout (peak bytes) is unknown");
}

// Calls f(region, value) for every arena buffer of the runtime's memory plan: the region it
// shares and the program value whose type sizes it (a temporary is sized like a value).
template <class F>
void ForEachArenaBuffer(const program::Program& p, Scope& s, F f) {
  const Graph g(p, /*prepare=*/false);
  std::unique_ptr<Plan> plan = SamplePlan(g, s.variables().size());
  for (size_t k = 0; k < plan->arena_buffers.size(); ++k) {
    size_t slot = static_cast<size_t>(plan->arena_buffers[k].slot);
    int32_t value =
        slot < g.num_values ? static_cast<int32_t>(slot) : plan->temp_like[slot - g.num_values];
    f(plan->arena_register[k], value);
  }
}

// The sizes a region must hold: the buffers' sizes that no other is proved to exceed (each
// new size is compared with these, never with a max expression, whose comparison goes by
// cases). Keeping a dominated size leaves the maximum exact, so past kMaxKept candidates
// sizes are kept without comparing: the formula grows but the work stays linear.
class RegionMaximum {
 public:
  void Add(Scope& s, const Expr* size) {
    if (kept_.size() >= kMaxKept) {
      if (std::find(kept_.begin(), kept_.end(), size) == kept_.end()) kept_.push_back(size);
      return;
    }
    for (const Expr* k : kept_) {
      if (k == size || s.Compare(k, dim::Cmp::kGe, size) == dim::Truth::kTrue) return;
    }
    kept_.erase(std::remove_if(kept_.begin(), kept_.end(),
                               [&](const Expr* k) {
                                 return s.Compare(size, dim::Cmp::kGe, k) == dim::Truth::kTrue;
                               }),
                kept_.end());
    kept_.push_back(size);
  }
  const Expr* Max(Scope& s) const {
    const Expr* m = kept_.front();
    for (size_t i = 1; i < kept_.size(); ++i) m = s.Max(m, kept_[i]);
    return m;
  }

 private:
  static constexpr size_t kMaxKept = 8;
  std::vector<const Expr*> kept_;
};

const Expr* PeakBytes(const program::Program& p, Scope& s) {
  // Each region is as large as its largest buffer, rounded up to 64 bytes (the rounding is
  // monotone, so it is applied once per region); the arena is their sum.
  std::map<int32_t, RegionMaximum> region;
  ForEachArenaBuffer(
      p, s, [&](int32_t r, int32_t value) { region[r].Add(s, Bytes(s, p.value_type(value))); });
  const Expr* total = ControlFlowPeak(p, s);
  for (const auto& r : region) total = s.Add(total, Aligned(s, r.second.Max(s)));
  for (const program::Output& o : p.outputs())
    total = s.Add(total, Bytes(s, p.value_type(o.value)));
  return total;
}

// The peak bytes at concrete variable values, without building the formula (its symbolic
// maxima cost a decision per region and buffer): the same plan, each buffer's size evaluated,
// the same 64-byte rounding, numeric maxima. Equal to evaluating PeakBytes's formula.
int64_t PeakBytesAt(const program::Program& p, Scope& s, const std::vector<int64_t>& vals,
                    const std::vector<bool>& known) {
  if (HasControlFlow(p)) {  // the formula (its subprograms' peaks are formulas too)
    const Expr* e = PeakBytes(p, s);
    for (int32_t v : s.VarsOf(e)) {
      if (!known[static_cast<size_t>(v)]) {
        throw Error(Code::kInvalidArgument, std::string("cost: no value for variable '") +
                                                s.VarName(v) + "' of the peak bytes formula");
      }
    }
    return s.Evaluate(e, vals, known);
  }
  auto bytes = [&](int32_t value) {
    const Expr* b = Bytes(s, p.value_type(value));
    for (int32_t v : s.VarsOf(b)) {
      if (!known[static_cast<size_t>(v)]) {
        throw Error(Code::kInvalidArgument, std::string("cost: no value for variable '") +
                                                s.VarName(v) + "' of the peak bytes formula");
      }
    }
    return s.Evaluate(b, vals, known);
  };
  auto add = [](int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
      throw Error(Code::kOverflow, "cost: the peak bytes overflow int64");
    }
    return r;
  };
  std::map<int32_t, int64_t> region;
  ForEachArenaBuffer(p, s, [&](int32_t r, int32_t value) {
    int64_t& largest = region[r];
    largest = std::max(largest, add(bytes(value), 63) / 64 * 64);
  });
  int64_t total = 0;
  for (const auto& r : region) total = add(total, r.second);
  for (const program::Output& o : p.outputs()) total = add(total, bytes(o.value));
  return total;
}

const Expr* CostExpr(const program::Program& p, Scope& s, CostKind kind) {
  switch (kind) {
    case CostKind::kFlops:
      return Flops(p, s);
    case CostKind::kBytesAccessed:
      return BytesAccessed(p, s);
    case CostKind::kPeakBytes:
      return PeakBytes(p, s);
    case CostKind::kParameterBytes:
      return ParameterBytes(p, s);
  }
  throw Error(Code::kInvalidArgument, "cost: unknown cost kind " +
                                          std::to_string(static_cast<int32_t>(kind)) +
                                          " (expected 0..3: flops, bytes accessed, peak bytes, "
                                          "parameter bytes)");
}

const program::Program& Variant(const program::Program& p, size_t variant) {
  if (variant >= p.num_variants()) {
    throw Error(Code::kInvalidArgument, "cost: variant " + std::to_string(variant) +
                                            " out of range (the program has " +
                                            std::to_string(p.num_variants()) + ")");
  }
  return p.variant(variant);
}

}  // namespace

const char* CostKindName(CostKind kind) {
  switch (kind) {
    case CostKind::kFlops:
      return "flops";
    case CostKind::kBytesAccessed:
      return "bytes accessed";
    case CostKind::kPeakBytes:
      return "peak bytes";
    case CostKind::kParameterBytes:
      return "parameter bytes";
  }
  return "unknown cost";
}

Cost ProgramCost(const program::Program& program, CostKind kind, size_t variant) {
  const program::Program& p = Variant(program, variant);
  return p.WithScope([&](Scope& s) {
    const Expr* e = CostExpr(p, s, kind);
    Cost c;
    c.formula = s.ToString(e);
    c.bounds = s.Bounds(e);
    if (c.bounds.hi == dim::kPosInf) {
      std::vector<std::string> open;
      for (int32_t v : s.VarsOf(e)) {
        if (s.variables()[static_cast<size_t>(v)].hi == dim::kPosInf &&
            s.Bounds(s.Var(s.VarName(v))).hi == dim::kPosInf)
          open.push_back(s.VarName(v));
      }
      std::string vars;
      for (const std::string& v : open) vars += (vars.empty() ? "" : ", ") + v;
      c.unbounded_reason =
          open.empty() ? "the engine found no upper bound"
                       : "no upper bound on " + vars +
                             "; declare a range (shp_scope_declare) or add a constraint such as " +
                             open.front() + " <= 4096 when tracing";
    }
    return c;
  });
}

// Evaluates the formula of `kind` with the values `fill(scope, &values, &known)` gives; a
// variable of the formula without a value is kInvalidArgument.
template <class Fill>
int64_t EvaluateCost(const program::Program& program, CostKind kind, size_t variant, Fill fill) {
  const program::Program& p = Variant(program, variant);
  return p.WithScope([&](Scope& s) {
    std::vector<int64_t> vals(s.variables().size(), 0);
    std::vector<bool> known(vals.size(), false);
    fill(s, &vals, &known);
    if (kind == CostKind::kPeakBytes) return PeakBytesAt(p, s, vals, known);
    const Expr* e = CostExpr(p, s, kind);
    for (int32_t v : s.VarsOf(e)) {
      if (!known[static_cast<size_t>(v)]) {
        throw Error(Code::kInvalidArgument, std::string("cost: no value for variable '") +
                                                s.VarName(v) + "' of the " + CostKindName(kind) +
                                                " formula");
      }
    }
    return s.Evaluate(e, vals, known);
  });
}

int64_t CostValue(const program::Program& program, CostKind kind, size_t variant,
                  const std::vector<std::string>& var_names, const std::vector<int64_t>& values) {
  return EvaluateCost(program, kind, variant,
                      [&](Scope& s, std::vector<int64_t>* vals, std::vector<bool>* known) {
                        for (size_t i = 0; i < var_names.size() && i < values.size(); ++i) {
                          int32_t v = s.FindVar(var_names[i]);
                          if (v < 0) continue;
                          (*vals)[static_cast<size_t>(v)] = values[i];
                          (*known)[static_cast<size_t>(v)] = true;
                        }
                      });
}

int64_t CostValueAt(const program::Program& program, CostKind kind, size_t variant,
                    const std::vector<int64_t>& scope_values) {
  return EvaluateCost(program, kind, variant,
                      [&](Scope&, std::vector<int64_t>* vals, std::vector<bool>* known) {
                        for (size_t i = 0; i < scope_values.size() && i < vals->size(); ++i) {
                          (*vals)[i] = scope_values[i];
                          (*known)[i] = true;
                        }
                      });
}

}  // namespace runtime
}  // namespace shp
