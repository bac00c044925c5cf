#include "cc/runtime/plan.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/ops/steps.h"

namespace shp {
namespace runtime {
namespace {

using trace::DType;
using KDType = kernels::DType;
using PB = ops::PlanBuilder;

KDType K(DType t) { return static_cast<KDType>(static_cast<int32_t>(t)); }

// True if the shape is all ones (a constant with exactly one element).
bool IsScalarShape(const std::vector<const dim::Expr*>& shape) {
  for (const dim::Expr* e : shape) {
    if (!e->IsConstant() || e->ConstantTerm() != 1) return false;
  }
  return true;
}

// Emits the register program of one fusion group (see Graph).
class GroupBuilder {
 public:
  GroupBuilder(const Graph& g, EwGroup* out) : g_(g), out_(out) {}

  int Emit(int32_t v) {
    auto it = regs_.find(v);
    if (it != regs_.end()) return it->second;
    int reg = EmitNew(v);
    regs_.emplace(v, reg);
    return reg;
  }

 private:
  int EmitNew(int32_t v) {
    kernels::ElementwiseProgram& pr = out_->prog;
    const program::Program& p = g_.p;
    bool member = v == out_->root ||
                  (static_cast<size_t>(v) >= g_.num_inputs && g_.group_of[v] >= 0 &&
                   &g_.groups[static_cast<size_t>(g_.group_of[v])] == out_ && !g_.is_root[v]);
    if (static_cast<size_t>(v) >= g_.num_inputs) {
      const program::Node& n = p.nodes()[static_cast<size_t>(v) - g_.num_inputs];
      if (!member && n.op == trace::OpKind::kConstant && IsScalarShape(n.type.shape)) {
        const std::string& bytes =
            p.buffers()[static_cast<size_t>(std::get<ops::ConstantAttrs>(n.attrs).buffer)];
        switch (n.type.dtype) {
          case DType::kF32: {
            float x;
            std::memcpy(&x, bytes.data(), 4);
            return pr.Constant(KDType::kF32, x);
          }
          case DType::kF64: {
            double x;
            std::memcpy(&x, bytes.data(), 8);
            return pr.Constant(KDType::kF64, x);
          }
          case DType::kI32: {
            int32_t x;
            std::memcpy(&x, bytes.data(), 4);
            return pr.ConstantInt(KDType::kI32, x);
          }
          case DType::kI64: {
            int64_t x;
            std::memcpy(&x, bytes.data(), 8);
            return pr.ConstantInt(KDType::kI64, x);
          }
          case DType::kBool:
            return pr.ConstantInt(KDType::kBool, bytes[0] != 0 ? 1 : 0);
        }
      }
      if (member) {
        std::vector<int> r;
        for (int32_t o : n.operands) r.push_back(Emit(o));
        return ops::Def(n.op).EmitFused(&pr, n.attrs, r);
      }
    }
    int idx = static_cast<int>(out_->inputs.size());
    out_->inputs.push_back(v);
    return pr.Input(idx, K(p.value_type(v).dtype));
  }

  const Graph& g_;
  EwGroup* out_;
  std::map<int32_t, int> regs_;
};

}  // namespace

// ---- Graph ----

Graph::Graph(const program::Program& prog) : p(prog) {
  num_inputs = p.inputs().size();
  num_values = p.num_values();
  uses.assign(num_values, 0);
  group_of.assign(num_values, -1);
  is_root.assign(num_values, false);
  std::vector<bool> is_output(num_values, false);
  for (const program::Output& o : p.outputs()) {
    ++uses[static_cast<size_t>(o.value)];
    is_output[static_cast<size_t>(o.value)] = true;
  }
  std::vector<dim::VarRef> refs;
  for (const program::Input& in : p.inputs()) {
    for (const dim::Expr* e : in.type.shape) dim::CollectVars(e, &refs);
  }
  for (const program::Node& n : p.nodes()) {
    for (int32_t o : n.operands) ++uses[static_cast<size_t>(o)];
    for (const dim::Expr* e : n.type.shape) dim::CollectVars(e, &refs);
    ops::ForEachDim(n.attrs, [&](const dim::Expr* e) { dim::CollectVars(e, &refs); });
  }
  std::map<int32_t, const char*> vars;  // by variable index
  for (const dim::VarRef& r : refs) vars.emplace(r.index, r.name);
  const std::vector<std::string>& names = p.variable_names();
  for (const auto& kv : vars) {
    auto it = std::find(names.begin(), names.end(), std::string(kv.second));
    if (it == names.end()) {
      throw Error(Code::kInternal, std::string("runtime: the variable '") + kv.second +
                                       "' is not solved by the program");
    }
    var_pos.emplace_back(kv.first, static_cast<int32_t>(it - names.begin()));
    max_var = std::max(max_var, kv.first);
  }
  // What each op prepares once for every shape (e.g. a packed constant matrix).
  ops::PrepareContext pc;
  pc.type = [&](int32_t v) -> const trace::TensorType& { return p.value_type(v); };
  pc.constant_bytes = [&](int32_t v) -> const std::string* {
    if (static_cast<size_t>(v) < num_inputs) return nullptr;
    const program::Node& c = p.nodes()[static_cast<size_t>(v) - num_inputs];
    if (c.op != trace::OpKind::kConstant) return nullptr;
    return &p.buffers()[static_cast<size_t>(std::get<ops::ConstantAttrs>(c.attrs).buffer)];
  };
  prepared.resize(p.nodes().size());
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    ops::NodeView view{n.op,         n.attrs, n.operands, static_cast<int32_t>(num_inputs + i),
                       n.type.dtype, nullptr};
    prepared[i] = ops::Def(n.op).Prepare(pc, view);
  }
  // Fusion: an elementwise node absorbs the groups of operands that are elementwise, used once
  // (by it), not outputs, and of the same symbolic shape (so no broadcast inside a group).
  std::vector<int32_t> root_of(num_values, -1);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    int32_t v = static_cast<int32_t>(num_inputs + i);
    if (!ops::Def(n.op).fusable()) continue;
    root_of[static_cast<size_t>(v)] = v;
    for (int32_t o : n.operands) {
      size_t ou = static_cast<size_t>(o);
      if (ou < num_inputs || root_of[ou] != o || uses[ou] != 1 || is_output[ou]) continue;
      if (p.value_type(o).shape != n.type.shape) continue;
      for (size_t w = 0; w < num_values; ++w) {
        if (root_of[w] == o) root_of[w] = v;
      }
    }
  }
  for (size_t v = num_inputs; v < num_values; ++v) {
    if (root_of[v] != static_cast<int32_t>(v)) continue;
    is_root[v] = true;
    group_of[v] = static_cast<int32_t>(groups.size());
    groups.emplace_back();
  }
  for (size_t v = num_inputs; v < num_values; ++v) {
    if (root_of[v] >= 0) group_of[v] = group_of[static_cast<size_t>(root_of[v])];
  }
  for (size_t v = num_inputs; v < num_values; ++v) {
    if (!is_root[v]) continue;
    EwGroup& gr = groups[static_cast<size_t>(group_of[v])];
    gr.root = static_cast<int32_t>(v);
    GroupBuilder b(*this, &gr);
    gr.prog.AddOutput(b.Emit(static_cast<int32_t>(v)));
  }
}

// ---- Plan ----

void ElementwiseStep::Run(const ops::RunContext& c) {
  for (size_t k = 0; k < ew.size(); ++k) ew[k].data = In(c, k);
  void* outs[1] = {Out(c)};
  kernels::EvalElementwise(group->prog, static_cast<int>(shape.size()), shape.data(), ew.data(),
                           static_cast<int>(ew.size()), outs, 1, Pool(c));
}

trace::DType Plan::dtype(int32_t value) const { return g_.p.value_type(value).dtype; }
int64_t Plan::Eval(const dim::Expr* e) const { return dim::Evaluate(e, vars_); }
const std::string& Plan::buffer(int32_t i) const { return g_.p.buffers()[static_cast<size_t>(i)]; }

Plan::Plan(const Graph& g, const std::vector<int64_t>& vars) : g_(g), vars_(vars) {
  const program::Program& p = g.p;
  shapes.resize(g.num_values);
  loc.resize(g.num_values);
  slot_bytes.resize(g.num_values);
  for (size_t v = 0; v < g.num_values; ++v) {
    const trace::TensorType& t = p.value_type(static_cast<int32_t>(v));
    std::vector<int64_t>& s = shapes[v];
    s.reserve(t.shape.size());
    for (const dim::Expr* e : t.shape) s.push_back(dim::Evaluate(e, vars));
    slot_bytes[v] = PB::Mul(PB::Product(s), static_cast<int64_t>(trace::DTypeSize(t.dtype)));
  }
  for (size_t i = 0; i < g.num_inputs; ++i)
    loc[i] = SlotLoc{SlotLoc::kInput, static_cast<int64_t>(i), nullptr};
  for (size_t i = 0; i < p.nodes().size(); ++i) BuildNode(i);
  AssignStorage();
}

void Plan::BuildNode(size_t node) {
  const program::Node& n = g_.p.nodes()[node];
  const int32_t v = static_cast<int32_t>(g_.num_inputs + node);
  const size_t vu = static_cast<size_t>(v);
  if (g_.group_of[vu] < 0) {
    ops::NodeView view{n.op, n.attrs, n.operands, v, n.type.dtype, g_.prepared[node].get()};
    ops::Def(n.op).Plan(*this, view);
    return;
  }
  if (!g_.is_root[vu]) return;  // computed inside its group's root
  const EwGroup& gr = g_.groups[static_cast<size_t>(g_.group_of[vu])];
  const std::vector<int64_t>& out = shapes[vu];
  if (out.size() > static_cast<size_t>(kernels::kElementwiseMaxRank)) {
    throw Error(Code::kUnsupported, "runtime: elementwise operations support rank <= 32");
  }
  ElementwiseStep& s = AddStep<ElementwiseStep>(n.type.dtype, gr.inputs, v);
  s.group = &gr;
  s.shape = out;
  for (int32_t in : gr.inputs)
    s.strides.push_back(PB::BroadcastStrides(shapes[static_cast<size_t>(in)], out));
  s.ew.resize(gr.inputs.size());
  for (size_t k = 0; k < gr.inputs.size(); ++k) s.ew[k].strides = s.strides[k].data();
  s.threaded = PB::Product(out) >= kThreadElements;
}

void Plan::AssignStorage() {
  const Graph& g = g_;
  const program::Program& p = g.p;
  auto root = [&](int32_t s) {
    while (loc[static_cast<size_t>(s)].kind == SlotLoc::kAlias)
      s = static_cast<int32_t>(loc[static_cast<size_t>(s)].index);
    return s;
  };
  // Values written by a step get storage; an output's root is computed in place in the output.
  std::vector<bool> written(loc.size(), false);
  for (const auto& s : steps) written[static_cast<size_t>(s->out)] = true;
  for (size_t v = g.num_inputs; v < g.num_values; ++v) {
    if (written[v] && loc[v].kind == SlotLoc::kNone) loc[v].kind = SlotLoc::kArena;
  }
  std::vector<bool> taken(loc.size(), false);
  for (size_t j = 0; j < p.outputs().size(); ++j) {
    int32_t v = p.outputs()[j].value;
    output_values.push_back(static_cast<size_t>(v));
    int32_t r = root(v);
    size_t ru = static_cast<size_t>(r);
    if (loc[ru].kind == SlotLoc::kArena && static_cast<size_t>(r) < g.num_values && !taken[ru]) {
      taken[ru] = true;
      loc[ru] = SlotLoc{SlotLoc::kOutput, static_cast<int64_t>(j), nullptr};
      continue;
    }
    int32_t dst = NewTemp(slot_bytes[static_cast<size_t>(v)]);
    loc[static_cast<size_t>(dst)] = SlotLoc{SlotLoc::kOutput, static_cast<int64_t>(j), nullptr};
    ops::CopyStep& s = AddStep<ops::CopyStep>(p.value_type(v).dtype, {v}, dst);
    s.bytes = slot_bytes[static_cast<size_t>(v)];
  }
  // Liveness: first write and last read of each arena root.
  std::vector<int64_t> first(loc.size(), -1), last(loc.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    size_t o = static_cast<size_t>(root(steps[i]->out));
    if (first[o] < 0) first[o] = static_cast<int64_t>(i);
    last[o] = std::max(last[o], static_cast<int64_t>(i));
    for (int32_t in : steps[i]->in) {
      size_t r = static_cast<size_t>(root(in));
      last[r] = std::max(last[r], static_cast<int64_t>(i));
    }
  }
  // Greedy first-fit offsets (64-byte aligned) over the live buffers, in step order.
  struct Live {
    int64_t off, size;
    size_t slot;
  };
  std::vector<Live> live;  // sorted by offset
  int64_t top = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    size_t o = static_cast<size_t>(root(steps[i]->out));
    if (loc[o].kind == SlotLoc::kArena && first[o] == static_cast<int64_t>(i)) {
      int64_t size = (slot_bytes[o] + 63) / 64 * 64;
      int64_t off = 0;
      size_t pos = 0;
      for (; pos < live.size(); ++pos) {
        if (live[pos].off - off >= size) break;
        off = live[pos].off + live[pos].size;
      }
      live.insert(live.begin() + static_cast<std::ptrdiff_t>(pos), Live{off, size, o});
      loc[o].index = off;
      top = std::max(top, off + size);
    }
    live.erase(
        std::remove_if(live.begin(), live.end(),
                       [&](const Live& l) { return last[l.slot] <= static_cast<int64_t>(i); }),
        live.end());
  }
  arena_bytes = static_cast<size_t>(top);
}

}  // namespace runtime
}  // namespace shp
