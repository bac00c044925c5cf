// Control flow: cond, while_loop and scan, ops whose attributes hold subprograms
// (subprogram.h). A node has one result, so an operation with several results is several
// nodes with the same operands and attributes except `result`; the runtime computes them once
// (SameOperation) and the cost counts them once.
//
// Operands (every subprogram reads all of its operation's operands after the predicate):
//   cond(pred, operands...)          bodies [true, false]: each takes the operands and
//                                    returns the results (same types in both branches)
//   while_loop(carry..., consts...)  bodies [cond, body], counts [num_carry]: cond takes
//                                    carry + consts and returns a bool scalar; body takes carry +
//                                    consts and returns the next carry (the same types)
//   scan(carry..., xs..., consts...) bodies [body], counts [num_carry, num_xs]: body takes carry,
//                                    one slice of each xs along `axis`, consts; returns the next
//                                    carry, then the ys, stacked along `axis` in the results
// The runtime (cc/runtime/control_flow.cc) plans each subprogram once per shape signature.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cc/ops/op_def.h"
#include "cc/ops/subprogram.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using dim::Truth;
using trace::DType;
using trace::TensorType;

std::string Plural(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// `got` must have `want`'s dtype and a provably equal shape (an UNKNOWN dim is refused too: the
// subprogram would run on shapes it was not traced for).
void RequireSameType(InferContext& c, const TensorType& want, const TensorType& got,
                     const std::string& what_want, const std::string& what_got) {
  if (want.dtype != got.dtype) {
    c.Fail(Code::kDtypeMismatch, what_got + " has dtype " + trace::DTypeName(got.dtype) + ", " +
                                     what_want + " " + trace::DTypeName(want.dtype));
  }
  bool same = want.shape.size() == got.shape.size();
  for (size_t d = 0; same && d < want.shape.size(); ++d) {
    same = want.shape[d] == got.shape[d] ||
           c.scope()->Compare(want.shape[d], Cmp::kEq, got.shape[d]) == Truth::kTrue;
  }
  if (!same) {
    c.Mismatch(what_got + " has shape " + c.Str(got.shape) + ", " + what_want + " " +
               c.Str(want.shape) + " (they must be provably equal)");
  }
}

std::string Ordinal(size_t i) { return std::to_string(i); }

// A shape whose dims may be nullptr (computed from data inside a subprogram): "?" for those.
std::string ShapeText(InferContext& c, const std::vector<const Expr*>& sh) {
  std::string t = "(";
  for (size_t d = 0; d < sh.size(); ++d) {
    t += (d ? ", " : "") + (sh[d] == nullptr ? std::string("?") : c.Str(sh[d]));
  }
  return t + (sh.size() == 1 ? ",)" : ")");
}

// Loops: a carried value whose size the body computes from data (a dim of its result that is
// nullptr) must keep the carried value's size: the runtime checks it each iteration
// (SHP_SHAPE_MISMATCH naming the iteration). `out` takes the carried values' dims there.
void RuntimeChecked(const std::vector<TensorType>& carry, std::vector<TensorType>* out, size_t nc) {
  for (size_t k = 0; k < nc && k < out->size() && k < carry.size(); ++k) {
    std::vector<const Expr*>& sh = (*out)[k].shape;
    if (sh.size() != carry[k].shape.size()) continue;
    for (size_t d = 0; d < sh.size(); ++d) {
      if (sh[d] == nullptr) sh[d] = carry[k].shape[d];
    }
  }
}

// Scan's ys: a y whose size the body computes from data, in a scan that has no result size
// for it (a loaded file that left it out); refused naming it.
void RequireStatic(InferContext& c, const std::vector<TensorType>& out, size_t begin, size_t end,
                   const char* op) {
  for (size_t k = begin; k < end; ++k) {
    for (const Expr* d : out[k].shape) {
      if (d != nullptr) continue;
      c.Fail(Code::kUnsupported,
             std::string(op) + ": result " + Ordinal(k) + " of the body has the shape " +
                 ShapeText(c, out[k].shape) +
                 ", whose '?' is a data-dependent size the body computes (nonzero, "
                 "boolean_mask, size_from_value, a cond of differently shaped branches); the "
                 "ys a scan stacks need sizes known from its operands (reduce or pad it to a "
                 "size the body's inputs give)");
    }
  }
}

class ControlFlowDef final : public TypedOpDef<ControlFlowAttrs> {
 public:
  explicit ControlFlowDef(OpKind kind) : TypedOpDef(kind, -1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::ControlFlowOptions; }
  // A cond's result dims that differ between its branches (set by the branch that runs).
  std::vector<const Expr*> UnbackedSizes(const Attrs& attrs) const override {
    std::vector<const Expr*> v;
    for (const Expr* e : std::get<ControlFlowAttrs>(attrs).sizes) {
      if (e != nullptr) v.push_back(e);
    }
    return v;
  }

  const Expr* Flops(const CostContext& c) const override {
    const ControlFlowAttrs& a = std::get<ControlFlowAttrs>(*c.attrs);
    dim::Scope* s = c.scope;
    if (c.repeated) return s->Constant(0);  // counted at the operation's first node
    if (kind() == OpKind::kCond) {
      return s->Max(a.bodies[0]->Flops(s), a.bodies[1]->Flops(s));
    }
    if (kind() == OpKind::kScan) return s->Mul(a.length, a.bodies[0]->Flops(s));
    if (a.max_trips < 0) {
      throw Error(Code::kUnsupported,
                  "cost: while_loop has no trip bound, so its worst case is unbounded (give "
                  "max_trips)");
    }
    const Expr* one = s->Add(a.bodies[0]->Flops(s), a.bodies[1]->Flops(s));
    return s->Add(s->Scale(one, a.max_trips), a.bodies[0]->Flops(s));
  }
  const char* flops_rule() const override {
    switch (kind()) {
      case OpKind::kCond:
        return "the larger of the branches'";
      case OpKind::kScan:
        return "length times the body's";
      default:
        return "max_trips times the condition's and the body's, plus one condition "
               "(unbounded without max_trips)";
    }
  }

 protected:
  TensorType InferTyped(InferContext& c, ControlFlowAttrs& a) const override {
    for (const auto& b : a.bodies) {
      if (b == nullptr) c.Invalid("has a missing subprogram");
    }
    if (a.result < 0) c.Invalid("has a negative result index");
    switch (kind()) {
      case OpKind::kCond:
        return InferCond(c, a);
      case OpKind::kWhileLoop:
        return InferWhile(c, a);
      default:
        return InferScan(c, a);
    }
  }

  flatbuffers::Offset<void> Write(const OptionsWriter& w,
                                  const ControlFlowAttrs& a) const override {
    std::vector<uint32_t> bodies;
    for (const auto& b : a.bodies) bodies.push_back(w.subprogram(b));
    auto bv = w.b->CreateVector(bodies);
    auto cv = w.b->CreateVector(a.counts);
    const uint32_t length = a.length == nullptr ? UINT32_MAX : w.dim(a.length);
    flatbuffers::Offset<flatbuffers::Vector<uint32_t>> sv = 0;
    if (!a.sizes.empty()) {
      std::vector<uint32_t> sizes;
      for (const Expr* e : a.sizes) sizes.push_back(e == nullptr ? UINT32_MAX : w.dim(e));
      sv = w.b->CreateVector(sizes);
    }
    return fb::CreateControlFlowOptions(*w.b, bv, cv, a.result, a.axis, a.reverse, length,
                                        a.max_trips, sv)
        .Union();
  }
  void Read(const OptionsReader& r, const void* opt, ControlFlowAttrs* a) const override {
    const auto* o = static_cast<const fb::ControlFlowOptions*>(opt);
    if (o->bodies() == nullptr) r.Bad("has no subprograms");
    for (uint32_t i : *o->bodies()) a->bodies.push_back(r.subprogram(i));
    a->counts = r.ints(o->counts());
    a->result = o->result();
    a->axis = o->axis();
    a->reverse = o->reverse();
    a->length = o->length() == UINT32_MAX ? nullptr : r.dim(o->length());
    a->max_trips = o->max_trips();
    if (o->sizes() != nullptr) {
      for (uint32_t i : *o->sizes()) a->sizes.push_back(i == UINT32_MAX ? nullptr : r.dim(i));
    }
  }
  std::string Text(const AttrPrinter& p, const ControlFlowAttrs& a) const override {
    std::string t = " result=" + std::to_string(a.result) + " bodies=[";
    for (size_t i = 0; i < a.bodies.size(); ++i) {
      t += (i ? ", " : "") + p.Subprogram(*a.bodies[i]);
    }
    t += "]";
    if (!a.counts.empty()) t += " counts=" + AttrPrinter::Ints(a.counts);
    if (kind() == OpKind::kScan) {
      t += " axis=" + std::to_string(a.axis) + " reverse=" + (a.reverse ? "true" : "false") +
           " length=" + p.dim(a.length);
    }
    if (kind() == OpKind::kWhileLoop) t += " max_trips=" + std::to_string(a.max_trips);
    if (!a.sizes.empty()) {
      t += " sizes=[";
      for (size_t i = 0; i < a.sizes.size(); ++i) {
        t += (i ? ", " : "") + (a.sizes[i] == nullptr ? std::string("_") : p.dim(a.sizes[i]));
      }
      t += "]";
    }
    return t;
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const ControlFlowAttrs&) const override {
    b.PlanControlFlow(n);
  }

 private:
  // The inputs of subprogram `body` must be the types of `operands` (in order).
  // A cond's branch (`branch`) may take an operand whose dim is a data-dependent size where its
  // input has another size (a cotangent of a cond's result, whose size is the branch's when it
  // runs): the branch's runtime checks that input's shape each time it runs.
  static void CheckInputs(InferContext& c, const Subprogram& body, const std::string& name,
                          const std::vector<TensorType>& operands, bool branch = false) {
    std::vector<TensorType> in = body.InputTypes(c.scope(), name);
    if (in.size() != operands.size()) {
      c.Invalid(name + " takes " + Plural(in.size(), "input") + " but is given " +
                Plural(operands.size(), "operand"));
    }
    for (size_t i = 0; i < in.size(); ++i) {
      TensorType want = operands[i];
      if (branch && want.shape.size() == in[i].shape.size()) {
        for (size_t d = 0; d < want.shape.size(); ++d) {
          const int32_t v = want.shape[d]->AsVar();
          if (v >= 0 && c.scope()->IsUnbacked(v)) want.shape[d] = in[i].shape[d];
        }
      }
      RequireSameType(c, want, in[i], "its operand", "input " + Ordinal(i) + " of " + name);
    }
  }
  static std::vector<TensorType> Operands(InferContext& c, size_t begin, size_t end) {
    std::vector<TensorType> v;
    for (size_t i = begin; i < end; ++i) v.push_back(c.in(i));
    return v;
  }
  void CheckResult(InferContext& c, int64_t result, size_t count) const {
    if (static_cast<uint64_t>(result) >= count) {
      c.Invalid("has result index " + std::to_string(result) + " but only " +
                Plural(count, "result"));
    }
  }

  TensorType InferCond(InferContext& c, ControlFlowAttrs& a) const {
    if (a.bodies.size() != 2) c.Invalid("needs 2 branches (true, false)");
    if (!a.counts.empty()) c.Invalid("takes no operand counts");
    if (c.num_in() < 1) c.Invalid("needs a predicate");
    const TensorType& pred = c.in(0);
    if (pred.dtype != DType::kBool || !pred.shape.empty()) {
      c.Fail(Code::kDtypeMismatch, "needs a bool scalar predicate, got " +
                                       std::string(trace::DTypeName(pred.dtype)) + " " +
                                       c.Str(pred.shape));
    }
    const std::vector<TensorType> ops = Operands(c, 1, c.num_in());
    CheckInputs(c, *a.bodies[0], "the true branch", ops, true);
    CheckInputs(c, *a.bodies[1], "the false branch", ops, true);
    std::vector<TensorType> t = a.bodies[0]->OutputTypes(c.scope(), "the true branch");
    std::vector<TensorType> f = a.bodies[1]->OutputTypes(c.scope(), "the false branch");
    if (t.size() != f.size()) {
      c.Invalid("branches return different numbers of results: " + std::to_string(t.size()) +
                " (true) and " + std::to_string(f.size()) + " (false)");
    }
    CheckResult(c, a.result, t.size());
    a.axis = 0;
    a.reverse = false;
    a.length = nullptr;
    a.max_trips = -1;
    return CondResult(c, a, t, f);
  }

  // The result types of a cond. Dtypes and ranks must agree. A dim that is provably equal in
  // both branches stays; another is a new unbacked (data-dependent) variable of the scope,
  // with the hull of both dims' bounds as its declared range, set at run time by the branch
  // that runs (a.sizes, one entry per dim of every result; made here when tracing, checked
  // otherwise).
  TensorType CondResult(InferContext& c, ControlFlowAttrs& a, const std::vector<TensorType>& t,
                        const std::vector<TensorType>& f) const {
    dim::Scope* s = c.scope();
    size_t total = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      const std::string both = "result " + Ordinal(k) + " of the true branch is " +
                               trace::DTypeName(t[k].dtype) + " " + ShapeText(c, t[k].shape) +
                               ", of the false branch " + trace::DTypeName(f[k].dtype) + " " +
                               ShapeText(c, f[k].shape);
      if (t[k].dtype != f[k].dtype) {
        c.Fail(Code::kDtypeMismatch, both + ": a cond's branches must return equal dtypes");
      }
      if (t[k].shape.size() != f[k].shape.size()) {
        c.Mismatch(both +
                   ": a cond's branches must return equal ranks (a dim whose sizes "
                   "differ becomes a data-dependent size; a rank cannot)");
      }
      total += t[k].shape.size();
    }
    if (!a.sizes.empty() && a.sizes.size() != total) {
      c.Invalid("has " + Plural(a.sizes.size(), "result size") + " but its results have " +
                Plural(total, "dim"));
    }
    const bool make = a.sizes.empty() && c.mode() == InferMode::kTrace;
    std::vector<const Expr*> sizes(total, nullptr);
    std::vector<TensorType> out = t;
    size_t j = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      for (size_t d = 0; d < t[k].shape.size(); ++d, ++j) {
        const Expr* x = t[k].shape[d];
        const Expr* y = f[k].shape[d];
        const Expr* given = a.sizes.empty() ? nullptr : a.sizes[j];
        if (given != nullptr) {
          if (given->AsVar() < 0 || !s->IsUnbacked(given->AsVar())) {
            c.Invalid("its result size " + c.Str(given) +
                      " must be an unbacked (data-dependent) variable");
          }
          sizes[j] = given;
          out[k].shape[d] = given;
          continue;
        }
        if (x != nullptr && y != nullptr &&
            (x == y || s->Compare(x, Cmp::kEq, y) == Truth::kTrue)) {
          continue;
        }
        if (!make) {
          c.Mismatch("dim " + Ordinal(d) + " of result " + Ordinal(k) + " is " +
                     (x ? c.Str(x) : std::string("data-dependent")) + " in the true branch and " +
                     (y ? c.Str(y) : std::string("data-dependent")) +
                     " in the false branch, not provably equal, and the cond has no "
                     "data-dependent size for it");
        }
        const std::pair<int64_t, int64_t> bt = Bounds(s, *a.bodies[0], x, k, d);
        const std::pair<int64_t, int64_t> bf = Bounds(s, *a.bodies[1], y, k, d);
        const int64_t lo = std::max<int64_t>(0, std::min(bt.first, bf.first));
        const int64_t hi = std::max(bt.second, bf.second);
        const std::string origin =
            "cond: dim " + Ordinal(d) + " of result " + Ordinal(k) + ", " +
            (x ? c.Str(x) : std::string("data-dependent")) + " (true branch) or " +
            (y ? c.Str(y) : std::string("data-dependent")) + " (false branch)";
        sizes[j] = s->NewUnbacked("", lo, hi, nullptr, origin);
        out[k].shape[d] = sizes[j];
      }
    }
    bool any = false;
    for (const Expr* e : sizes) any = any || e != nullptr;
    a.sizes = any ? sizes : std::vector<const Expr*>();
    return out[static_cast<size_t>(a.result)];
  }

  // The bounds of a branch's result dim: of `e` in the scope, or (a size the branch computes
  // from data) in the branch's scope.
  static std::pair<int64_t, int64_t> Bounds(dim::Scope* s, const Subprogram& body, const Expr* e,
                                            size_t k, size_t d) {
    if (e == nullptr) return body.OutputDimBounds(k, d);
    const dim::Interval b = s->Bounds(e);
    return {b.lo, b.hi};
  }

  TensorType InferWhile(InferContext& c, ControlFlowAttrs& a) const {
    if (a.bodies.size() != 2) c.Invalid("needs 2 subprograms (cond, body)");
    if (a.counts.size() != 1 || a.counts[0] < 0 ||
        static_cast<uint64_t>(a.counts[0]) > c.num_in()) {
      c.Invalid("needs counts [num_carry] with num_carry <= the operand count");
    }
    if (a.max_trips < -1) c.Invalid("has max_trips " + std::to_string(a.max_trips) + " < -1");
    if (!a.sizes.empty()) c.Invalid("takes no result sizes (only cond has them)");
    const size_t nc = static_cast<size_t>(a.counts[0]);
    const std::vector<TensorType> ops = Operands(c, 0, c.num_in());
    CheckInputs(c, *a.bodies[0], "the condition", ops);
    CheckInputs(c, *a.bodies[1], "the body", ops);
    std::vector<TensorType> p = a.bodies[0]->OutputTypes(c.scope(), "the condition");
    if (p.size() != 1 || p[0].dtype != DType::kBool || !p[0].shape.empty()) {
      c.Fail(Code::kDtypeMismatch, "needs a condition that returns one bool scalar");
    }
    std::vector<TensorType> next = a.bodies[1]->OutputTypes(c.scope(), "the body");
    if (next.size() != nc) {
      c.Invalid("has " + Plural(nc, "carried value") + " but the body returns " +
                Plural(next.size(), "result"));
    }
    RuntimeChecked(ops, &next, nc);
    for (size_t k = 0; k < nc; ++k) {
      RequireSameType(c, ops[k], next[k], "the carried value (operand " + Ordinal(k) + ")",
                      "result " + Ordinal(k) + " of the body");
    }
    CheckResult(c, a.result, nc);
    a.axis = 0;
    a.reverse = false;
    a.length = nullptr;
    return ops[static_cast<size_t>(a.result)];
  }

  // Scan's ys whose sizes the body computes from data (nullptr dims of `out`): each such dim
  // is a new unbacked variable of the scope (a.sizes: one entry per dim of every body result,
  // the ys' without the stacked axis; made when tracing, checked otherwise), set by the first
  // iteration; every other iteration must give the same size (checked when it runs).
  static void YSizes(InferContext& c, ControlFlowAttrs& a, std::vector<TensorType>* out,
                     size_t nc) {
    dim::Scope* s = c.scope();
    size_t total = 0;
    for (const TensorType& t : *out) total += t.shape.size();
    if (!a.sizes.empty() && a.sizes.size() != total) {
      c.Invalid("has " + Plural(a.sizes.size(), "result size") + " but its body's results have " +
                Plural(total, "dim"));
    }
    const bool make = a.sizes.empty() && c.mode() == InferMode::kTrace;
    std::vector<const Expr*> sizes(total, nullptr);
    size_t j = 0;
    for (size_t k = 0; k < out->size(); ++k) {
      std::vector<const Expr*>& sh = (*out)[k].shape;
      for (size_t d = 0; d < sh.size(); ++d, ++j) {
        const Expr* given = a.sizes.empty() ? nullptr : a.sizes[j];
        if (given != nullptr) {
          if (k < nc || given->AsVar() < 0 || !s->IsUnbacked(given->AsVar())) {
            c.Invalid("its result size " + c.Str(given) +
                      " must be an unbacked (data-dependent) variable of a y");
          }
          sizes[j] = sh[d] = given;
          continue;
        }
        if (sh[d] != nullptr) continue;
        if (!make) RequireStatic(c, *out, k, k + 1, "scan");
        const std::pair<int64_t, int64_t> b = a.bodies[0]->OutputDimBounds(k, d);
        sizes[j] = sh[d] = s->NewUnbacked(
            "", b.first, b.second, nullptr,
            "scan: dim " + Ordinal(d) + " of y " + Ordinal(k - nc) +
                " (computed from data by the body; every iteration must give the same)");
      }
    }
    bool any = false;
    for (const Expr* e : sizes) any = any || e != nullptr;
    a.sizes = any ? sizes : std::vector<const Expr*>();
  }

  TensorType InferScan(InferContext& c, ControlFlowAttrs& a) const {
    if (a.bodies.size() != 1) c.Invalid("needs 1 body");
    if (a.counts.size() != 2 || a.counts[0] < 0 || a.counts[1] < 0 ||
        static_cast<uint64_t>(a.counts[0]) + static_cast<uint64_t>(a.counts[1]) > c.num_in()) {
      c.Invalid("needs counts [num_carry, num_xs] within the operand count");
    }
    if (a.axis < 0) c.Invalid("needs axis >= 0, got " + std::to_string(a.axis));
    if (a.max_trips != -1) c.Invalid("takes no max_trips");
    const size_t nc = static_cast<size_t>(a.counts[0]), nx = static_cast<size_t>(a.counts[1]);
    const size_t axis = static_cast<size_t>(a.axis);
    dim::Scope* s = c.scope();
    std::vector<TensorType> ops = Operands(c, 0, c.num_in());
    for (size_t j = nc; j < nc + nx; ++j) {
      TensorType& x = ops[j];
      if (x.shape.size() <= axis) {
        c.Invalid("scans operand " + Ordinal(j) + " of shape " + c.Str(x.shape) + " along axis " +
                  std::to_string(a.axis));
      }
      const Expr* len = x.shape[axis];
      if (a.length == nullptr) {
        a.length = len;
      } else if (len != a.length && s->Compare(len, Cmp::kEq, a.length) != Truth::kTrue) {
        c.Mismatch("scans operand " + Ordinal(j) + " of length " + c.Str(len) + " along axis " +
                   std::to_string(a.axis) + ", expected " + c.Str(a.length) +
                   " (they must be provably equal)");
      }
      x.shape.erase(x.shape.begin() + static_cast<std::ptrdiff_t>(axis));
    }
    if (a.length == nullptr) c.Invalid("needs a length when it scans no operand");
    c.CheckSize(a.length, "length");
    CheckInputs(c, *a.bodies[0], "the body", ops);
    std::vector<TensorType> out = a.bodies[0]->OutputTypes(s, "the body");
    if (out.size() < nc) {
      c.Invalid("has " + Plural(nc, "carried value") + " but the body returns " +
                Plural(out.size(), "result"));
    }
    RuntimeChecked(ops, &out, nc);
    YSizes(c, a, &out, nc);
    for (size_t k = 0; k < nc; ++k) {
      RequireSameType(c, ops[k], out[k], "the carried value (operand " + Ordinal(k) + ")",
                      "result " + Ordinal(k) + " of the body");
    }
    for (size_t k = nc; k < out.size(); ++k) {
      if (out[k].shape.size() < axis) {
        c.Invalid("stacks result " + Ordinal(k) + " of the body, of rank " +
                  std::to_string(out[k].shape.size()) + ", along axis " + std::to_string(a.axis));
      }
      out[k].shape.insert(out[k].shape.begin() + static_cast<std::ptrdiff_t>(axis), a.length);
    }
    CheckResult(c, a.result, out.size());
    return out[static_cast<size_t>(a.result)];
  }
};

}  // namespace

bool SameOperation(const NodeView& a, const NodeView& b) {
  if (a.op != b.op || a.operands != b.operands) return false;
  const auto* x = std::get_if<ControlFlowAttrs>(&a.attrs);
  const auto* y = std::get_if<ControlFlowAttrs>(&b.attrs);
  if (x == nullptr || y == nullptr) return false;
  return x->bodies == y->bodies && x->counts == y->counts && x->axis == y->axis &&
         x->reverse == y->reverse && x->length == y->length && x->max_trips == y->max_trips &&
         x->sizes == y->sizes;
}

bool IsControlFlow(OpKind op) {
  return op == OpKind::kCond || op == OpKind::kWhileLoop || op == OpKind::kScan;
}

const OpDef& DefCond() {
  static const ControlFlowDef d(OpKind::kCond);
  return d;
}
const OpDef& DefWhileLoop() {
  static const ControlFlowDef d(OpKind::kWhileLoop);
  return d;
}
const OpDef& DefScan() {
  static const ControlFlowDef d(OpKind::kScan);
  return d;
}

}  // namespace ops
}  // namespace shp
