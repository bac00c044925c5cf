// Graph: the shape-independent analysis of a program, once per runtime: fusion of
// elementwise chains into register programs, the variables the plans need, and what each op
// prepares once (ops::OpDef::Prepare).
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>
#include <string>

#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/kernels/narrow.h"
#include "cc/runtime/plan.h"
#include "cc/runtime/runtime.h"

namespace shp {
namespace runtime {
namespace {

using trace::DType;

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

  // The register of value `v`: its group's members are emitted operands first (an explicit
  // stack, not recursion: a fused chain may be 100k ops long); other values become inputs.
  int Emit(int32_t root) {
    std::vector<std::pair<int32_t, size_t>> stack{{root, 0}};  // value, next operand to emit
    while (!stack.empty()) {
      const int32_t v = stack.back().first;
      if (regs_.count(v)) {
        stack.pop_back();
        continue;
      }
      if (!IsMember(v)) {
        regs_.emplace(v, EmitLeaf(v));
        stack.pop_back();
        continue;
      }
      const program::Node& n = g_.p.nodes()[static_cast<size_t>(v) - g_.num_inputs];
      size_t& next = stack.back().second;
      while (next < n.operands.size() && regs_.count(n.operands[next])) ++next;
      if (next < n.operands.size()) {
        stack.emplace_back(n.operands[next], 0);
        continue;
      }
      std::vector<int> r;
      r.reserve(n.operands.size());
      for (int32_t o : n.operands) r.push_back(regs_.at(o));
      regs_.emplace(v, ops::Def(n.op).EmitFused(&out_->prog, n.attrs, r));
      stack.pop_back();
    }
    return regs_.at(root);
  }

 private:
  bool IsMember(int32_t v) const {
    if (v == out_->root) return true;
    const size_t u = static_cast<size_t>(v);
    return u >= g_.num_inputs && g_.group_of[u] >= 0 &&
           &g_.groups[static_cast<size_t>(g_.group_of[u])] == out_ && !g_.is_root[u];
  }

  // A value computed outside the group: a scalar constant folded into the program, or an input.
  int EmitLeaf(int32_t v) {
    kernels::ElementwiseProgram& pr = out_->prog;
    const program::Program& p = g_.p;
    if (static_cast<size_t>(v) >= g_.num_inputs) {
      const program::Node& n = p.nodes()[static_cast<size_t>(v) - g_.num_inputs];
      if (n.op == trace::OpKind::kConstant && IsScalarShape(n.type.shape)) {
        const std::string& bytes =
            p.buffers()[static_cast<size_t>(std::get<ops::ConstantAttrs>(n.attrs).buffer)];
        switch (n.type.dtype) {
          case DType::kF32: {
            float x;
            std::memcpy(&x, bytes.data(), 4);
            return pr.Constant(DType::kF32, x);
          }
          case DType::kF64: {
            double x;
            std::memcpy(&x, bytes.data(), 8);
            return pr.Constant(DType::kF64, x);
          }
          case DType::kI32: {
            int32_t x;
            std::memcpy(&x, bytes.data(), 4);
            return pr.ConstantInt(DType::kI32, x);
          }
          case DType::kI64: {
            int64_t x;
            std::memcpy(&x, bytes.data(), 8);
            return pr.ConstantInt(DType::kI64, x);
          }
          case DType::kBool:
            return pr.ConstantInt(DType::kBool, bytes[0] != 0 ? 1 : 0);
          default: {  // narrow types: their exact value (floats), their bits (integers)
            const DType t = n.type.dtype;
            if (trace::IsNarrowFloat(t)) {
              double x = 0;
              kernels::ConvertElements(t, bytes.data(), DType::kF64, &x, 1);
              return pr.Constant(t, x);
            }
            int64_t x = 0;
            kernels::ConvertElements(t, bytes.data(), DType::kI64, &x, 1);
            return pr.ConstantInt(t, x);
          }
        }
      }
    }
    int idx = static_cast<int>(out_->inputs.size());
    out_->inputs.push_back(v);
    return pr.Input(idx, p.value_type(v).dtype);
  }

  const Graph& g_;
  EwGroup* out_;
  std::unordered_map<int32_t, int> regs_;
};

}  // namespace

// ---- Graph ----

Graph::~Graph() = default;

Graph::Graph(const program::Program& prog, bool prepare, bool fuse_matmul_epilogue,
             bool fuse_elementwise)
    : p(prog) {
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
  // Every kernel limit is checked here, when the runtime is created, not first at run time.
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    const ops::OpDef& def = ops::Def(n.op);
    if (def.fusable()) {
      if (n.type.shape.size() > static_cast<size_t>(kernels::kElementwiseMaxRank)) {
        throw Error(Code::kUnsupported, "runtime: elementwise operations support rank <= 32");
      }
      continue;
    }
    std::vector<size_t> ranks;
    for (int32_t o : n.operands) ranks.push_back(p.value_type(o).shape.size());
    ops::NodeView view{n.op,         n.attrs, n.operands, static_cast<int32_t>(num_inputs + i),
                       n.type.dtype, nullptr};
    def.CheckExecutable(view, ranks, n.type.shape.size());
  }
  // Stages: each node that first produces an unbacked variable begins one.
  stage_of_value.assign(num_values, 0);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    std::vector<int32_t> first;
    for (const dim::Expr* u : ops::Def(n.op).UnbackedSizes(n.attrs)) {
      if (p.UnbackedProducer(u->AsVar()) == static_cast<int32_t>(i)) first.push_back(u->AsVar());
    }
    if (!first.empty()) {
      stage_begin.push_back(static_cast<int32_t>(i));
      stage_vars.push_back(std::move(first));
    }
    stage_of_value[num_inputs + i] = static_cast<int32_t>(stage_begin.size()) - 1;
  }
  last_use_stage.assign(num_values, -1);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    for (int32_t o : p.nodes()[i].operands) {
      int32_t& l = last_use_stage[static_cast<size_t>(o)];
      l = std::max(l, stage_of_value[num_inputs + i]);
    }
  }
  for (const program::Output& o : p.outputs()) last_use_stage[static_cast<size_t>(o.value)] = kEnd;
  FindControlFlow();
  mm_fusion_of.assign(num_values, -1);
  if (fuse_matmul_epilogue) {
    FindMatmulFusions(is_output, prepare);
    FindTransposedOperands(is_output);
  }
  FindConvFusions(is_output, fuse_elementwise);
  narrow_fusion_of.assign(num_values, -1);
  if (fuse_elementwise) FindNarrowFusions(is_output);
  FindPoolFusions(is_output, fuse_elementwise);
  PrepareNodes(prepare);
  // Fusion: an elementwise node absorbs the groups of operands that are elementwise, used once
  // (by it), not outputs, and of the same symbolic shape (so no broadcast inside a group).
  // absorbed_by[o] is the node that absorbed o's group (always a later value), so the roots
  // are resolved in one backward pass: linear in the program, whatever the chains' lengths.
  std::vector<int32_t> root_of(num_values, -1), absorbed_by(num_values, -1);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    int32_t v = static_cast<int32_t>(num_inputs + i);
    if (!ops::Def(n.op).fusable() || mm_fusion_of[static_cast<size_t>(v)] >= 0 ||
        conv_fusion_of[static_cast<size_t>(v)] >= 0 ||
        narrow_fusion_of[static_cast<size_t>(v)] >= 0 ||
        pool_fusion_of[static_cast<size_t>(v)] >= 0) {
      continue;
    }
    root_of[static_cast<size_t>(v)] = v;
    for (int32_t o : n.operands) {
      if (!fuse_elementwise) break;
      size_t ou = static_cast<size_t>(o);
      if (ou < num_inputs || root_of[ou] != o || absorbed_by[ou] >= 0 || uses[ou] != 1 ||
          is_output[ou]) {
        continue;
      }
      if (p.value_type(o).shape != n.type.shape) continue;
      if (stage_of_value[ou] != stage_of_value[static_cast<size_t>(v)]) continue;
      absorbed_by[ou] = v;
    }
  }
  for (size_t w = num_values; w-- > num_inputs;) {
    if (absorbed_by[w] >= 0) root_of[w] = root_of[static_cast<size_t>(absorbed_by[w])];
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
  // The contract of a fused region, which the register program relies on (its inputs are read
  // at the root's shape with broadcast strides; its only output is the root): every member
  // but the root is a fusable op of the root's shape and stage, used once, by a member of the
  // same region, and is not a program output. Checked on every runtime (linear, once).
  for (size_t v = num_inputs; v < num_values; ++v) {
    if (group_of[v] < 0 || is_root[v]) continue;
    const int32_t root = root_of[v];
    const program::Node& n = p.nodes()[v - num_inputs];
    const size_t user = static_cast<size_t>(absorbed_by[v]);
    const bool ok = ops::Def(n.op).fusable() && uses[v] == 1 && !is_output[v] &&
                    absorbed_by[v] > static_cast<int32_t>(v) && root_of[user] == root &&
                    n.type.shape == p.value_type(root).shape &&
                    stage_of_value[v] == stage_of_value[static_cast<size_t>(root)];
    if (!ok) {
      throw Error(Code::kInternal, "runtime: fused region of value " + std::to_string(root) +
                                       " breaks its contract at value " + std::to_string(v));
    }
  }
  for (size_t v = num_inputs; v < num_values; ++v) {
    if (!is_root[v]) continue;
    EwGroup& gr = groups[static_cast<size_t>(group_of[v])];
    gr.root = static_cast<int32_t>(v);
    gr.prog.set_fusion(fuse_elementwise);
    GroupBuilder b(*this, &gr);
    gr.prog.AddOutput(b.Emit(static_cast<int32_t>(v)));
  }
}

const std::string* Graph::ConstantBytes(int32_t v) const {
  if (static_cast<size_t>(v) < num_inputs) return nullptr;
  const program::Node& c = p.nodes()[static_cast<size_t>(v) - num_inputs];
  if (c.op != trace::OpKind::kConstant) return nullptr;
  return &p.buffers()[static_cast<size_t>(std::get<ops::ConstantAttrs>(c.attrs).buffer)];
}

void Graph::PrepareNodes(bool prepare) {
  // What each op prepares once for every shape (e.g. a packed constant matrix).
  ops::PrepareContext pc;
  pc.type = [&](int32_t v) -> const trace::TensorType& { return p.value_type(v); };
  pc.constant_bytes = [this](int32_t v) { return ConstantBytes(v); };
  pc.default_bytes = [this](int32_t v) { return DefaultBytes(v); };
  prepared.resize(p.nodes().size());
  for (size_t i = 0; prepare && i < p.nodes().size(); ++i) {
    if (mm_fusion_of[num_inputs + i] >= 0) continue;  // packed by its fusion
    const program::Node& n = p.nodes()[i];
    ops::NodeView view{n.op,         n.attrs, n.operands, static_cast<int32_t>(num_inputs + i),
                       n.type.dtype, nullptr};
    prepared[i] = ops::Def(n.op).Prepare(pc, view);
  }
}

const std::string* Graph::DefaultBytes(int32_t v) const {
  if (v < 0 || static_cast<size_t>(v) >= num_inputs) return nullptr;
  const program::Input& in = p.inputs()[static_cast<size_t>(v)];
  if (in.default_buffer < 0) return nullptr;
  for (const dim::Expr* d : in.type.shape) {
    if (!d->IsConstant()) return nullptr;
  }
  return &p.buffers()[static_cast<size_t>(in.default_buffer)];
}

const program::Node* Graph::NodeOf(int32_t v) const {
  const size_t u = static_cast<size_t>(v);
  return u < num_inputs ? nullptr : &p.nodes()[u - num_inputs];
}

std::vector<int32_t> Graph::SoleUsers(const std::vector<bool>& is_output) const {
  std::vector<int32_t> user(num_values, -1);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    for (int32_t o : p.nodes()[i].operands) {
      const size_t u = static_cast<size_t>(o);
      user[u] = uses[u] == 1 && !is_output[u] ? static_cast<int32_t>(num_inputs + i) : -1;
    }
  }
  return user;
}

void Graph::FindMatmulFusions(const std::vector<bool>& is_output, bool pack) {
  using trace::OpKind;
  auto node = [&](int32_t v) { return NodeOf(v); };
  const std::vector<int32_t> sole = SoleUsers(is_output);
  auto only_user = [&](int32_t v) { return sole[static_cast<size_t>(v)]; };
  auto same_stage = [&](int32_t x, int32_t y) {
    return stage_of_value[static_cast<size_t>(x)] == stage_of_value[static_cast<size_t>(y)];
  };
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& mm = p.nodes()[i];
    const int32_t v = static_cast<int32_t>(num_inputs + i);
    if (mm.op != OpKind::kMatMul || mm.type.dtype != DType::kF32) continue;
    const int32_t a = mm.operands[0], b = mm.operands[1];
    const trace::TensorType& bt = p.value_type(b);
    // b a constant, or a parameter's stored default (packed for the runs that bind it to the
    // default: FusedMatmulStep checks the pointer).
    const std::string* b_bytes = ConstantBytes(b);
    const void* b_source = nullptr;
    if (b_bytes == nullptr) {
      b_bytes = DefaultBytes(b);
      b_source = b_bytes == nullptr ? nullptr : b_bytes->data();
    }
    if (p.value_type(a).shape.size() != 2 || b_bytes == nullptr || bt.shape.size() != 2 ||
        !bt.shape[0]->IsConstant() || !bt.shape[1]->IsConstant()) {
      continue;
    }
    const int64_t k = bt.shape[0]->ConstantTerm(), cols = bt.shape[1]->ConstantTerm();
    if (k <= 0 || cols <= 0 ||
        b_bytes->size() / sizeof(float) / static_cast<size_t>(k) < static_cast<size_t>(cols)) {
      continue;
    }
    const int32_t add = only_user(v);
    const program::Node* an = add < 0 ? nullptr : node(add);
    if (an == nullptr || an->op != OpKind::kAdd || an->operands[0] != v ||
        an->type.shape != mm.type.shape || !same_stage(v, add)) {
      continue;
    }
    const int32_t bias = an->operands[1];
    const trace::TensorType& biast = p.value_type(bias);
    // The bias exists when the fused step runs (at the matmul's place): defined before it.
    if (bias >= v || biast.dtype != DType::kF32 || biast.shape.size() != 1 ||
        !biast.shape[0]->IsConstant() || biast.shape[0]->ConstantTerm() != cols) {
      continue;
    }
    MatmulFusion f;
    f.matmul = v;
    f.add = f.root = add;
    f.a = a;
    f.b = b;
    f.bias = bias;
    const int32_t r = only_user(add);
    const program::Node* rn = r < 0 ? nullptr : node(r);
    if (rn != nullptr && rn->op == OpKind::kMax && rn->operands[0] == add &&
        rn->type.shape == an->type.shape && same_stage(add, r)) {
      // max(x, +0.0) exactly: the epilogue's relu (not -0.0, whose max with +-0 differs).
      const int32_t z = rn->operands[1];
      const std::string* zb = ConstantBytes(z);
      const float zero = 0.0f;
      if (zb != nullptr && p.value_type(z).dtype == DType::kF32 &&
          IsScalarShape(p.value_type(z).shape) && zb->size() >= 4 &&
          std::memcmp(zb->data(), &zero, 4) == 0) {
        f.relu = f.root = r;
      }
    }
    if (pack) {
      f.packed_source = b_source;
      f.packed.reset(new kernels::PackedMatrixF32(kernels::PackedMatrixF32::Pack(
          reinterpret_cast<const float*>(b_bytes->data()), k, cols, cols, 1)));
    }
    const int32_t index = static_cast<int32_t>(mm_fusions.size());
    for (int32_t w : {f.matmul, f.add, f.relu}) {
      if (w >= 0) mm_fusion_of[static_cast<size_t>(w)] = index;
    }
    mm_fusions.push_back(std::move(f));
  }
}

void Graph::FindTransposedOperands(const std::vector<bool>& is_output) {
  using trace::OpKind;
  const std::vector<int32_t> sole = SoleUsers(is_output);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& mm = p.nodes()[i];
    const int32_t v = static_cast<int32_t>(num_inputs + i);
    if (mm.op != OpKind::kMatMul || mm.type.dtype != DType::kF32 ||
        mm_fusion_of[static_cast<size_t>(v)] >= 0 || mm.type.shape.size() != 2 ||
        p.value_type(mm.operands[0]).shape.size() != 2 ||
        p.value_type(mm.operands[1]).shape.size() != 2) {
      continue;
    }
    // Operand k's transpose, if a [1, 0] transpose used only here (in this stage), else -1.
    auto transpose_of = [&](size_t k) -> int32_t {
      const int32_t t = mm.operands[k];
      const program::Node* tn = NodeOf(t);
      if (tn == nullptr || tn->op != OpKind::kTranspose || sole[static_cast<size_t>(t)] != v ||
          mm_fusion_of[static_cast<size_t>(t)] >= 0 ||
          stage_of_value[static_cast<size_t>(t)] != stage_of_value[static_cast<size_t>(v)] ||
          std::get<ops::TransposeAttrs>(tn->attrs).permutation != std::vector<int64_t>{1, 0}) {
        return -1;
      }
      return t;
    };
    MatmulFusion f;
    f.a_transpose = transpose_of(0);
    f.b_transpose = transpose_of(1);
    if (f.a_transpose < 0 && f.b_transpose < 0) continue;
    f.matmul = f.root = v;
    f.a = f.a_transpose >= 0 ? NodeOf(f.a_transpose)->operands[0] : mm.operands[0];
    f.b = f.b_transpose >= 0 ? NodeOf(f.b_transpose)->operands[0] : mm.operands[1];
    const int32_t index = static_cast<int32_t>(mm_fusions.size());
    for (int32_t w : {f.matmul, f.a_transpose, f.b_transpose}) {
      if (w >= 0) mm_fusion_of[static_cast<size_t>(w)] = index;
    }
    mm_fusions.push_back(std::move(f));
  }
}

void Graph::FindConvFusions(const std::vector<bool>& is_output, bool fuse) {
  using trace::OpKind;
  conv_fusion_of.assign(num_values, -1);
  if (!fuse) return;
  auto node = [&](int32_t v) { return NodeOf(v); };
  const std::vector<int32_t> user = SoleUsers(is_output);
  auto free_value = [&](int32_t v) {  // not claimed by another fusion
    return mm_fusion_of[static_cast<size_t>(v)] < 0 && conv_fusion_of[static_cast<size_t>(v)] < 0;
  };
  auto same_stage = [&](int32_t x, int32_t y) {
    return stage_of_value[static_cast<size_t>(x)] == stage_of_value[static_cast<size_t>(y)];
  };
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& cv = p.nodes()[i];
    const int32_t v = static_cast<int32_t>(num_inputs + i);
    // The kernel's epilogue is f32 only (kernels::ConvEpilogue).
    if (cv.op != OpKind::kConv || cv.type.dtype != DType::kF32 || cv.operands.size() != 2) {
      continue;
    }
    const std::vector<const dim::Expr*>& ys = cv.type.shape;  // [N, O, *spatial]
    const int32_t add = user[static_cast<size_t>(v)];
    const program::Node* an = add < 0 ? nullptr : node(add);
    if (an == nullptr || an->op != OpKind::kAdd || an->operands.size() != 2 ||
        an->operands[0] != v || an->type.shape != ys || !same_stage(v, add) || !free_value(v) ||
        !free_value(add)) {
      continue;
    }
    // One value per output channel, broadcast over the batch and spatial axes: right-aligned
    // against [N, O, *spatial], the bias's axis at O is O's dim and every other axis is 1.
    const int32_t bias = an->operands[1];
    const trace::TensorType& bt = p.value_type(bias);
    if (bias == v || bt.dtype != DType::kF32 || bt.shape.size() + 1 < ys.size() ||
        bt.shape.size() > ys.size()) {
      continue;
    }
    const size_t off = ys.size() - bt.shape.size();
    bool per_channel = true;
    for (size_t j = 0; j < bt.shape.size() && per_channel; ++j) {
      const dim::Expr* e = bt.shape[j];
      if (j + off == 1) {
        per_channel = e == ys[1] || (e->IsConstant() && ys[1]->IsConstant() &&
                                     e->ConstantTerm() == ys[1]->ConstantTerm());
      } else {
        per_channel = e->IsConstant() && e->ConstantTerm() == 1;
      }
    }
    if (!per_channel) continue;
    ConvFusion f;
    f.conv = v;
    f.add = f.root = add;
    f.bias = bias;
    // A residual add: (conv + bias) + residual, or residual + (conv + bias), of the same shape.
    const int32_t ra = user[static_cast<size_t>(add)];
    const program::Node* ran = ra < 0 ? nullptr : node(ra);
    if (ran != nullptr && ran->op == OpKind::kAdd && ran->operands.size() == 2 &&
        ran->type.shape == ys && same_stage(add, ra) && free_value(ra)) {
      const int32_t other = ran->operands[0] == add ? ran->operands[1] : ran->operands[0];
      const trace::TensorType& ot = p.value_type(other);
      if (other != add && ot.dtype == DType::kF32 && ot.shape == ys) {
        f.residual_add = f.root = ra;
        f.residual = other;
      }
    }
    const int32_t tail = f.root;
    const int32_t r = user[static_cast<size_t>(tail)];
    const program::Node* rn = r < 0 ? nullptr : node(r);
    if (rn != nullptr && rn->op == OpKind::kMax && rn->operands.size() == 2 &&
        rn->operands[0] == tail && rn->type.shape == ys && same_stage(tail, r) && free_value(r)) {
      // max(x, +0.0) exactly: the epilogue's relu (not -0.0, whose max with +-0 differs).
      const int32_t z = rn->operands[1];
      const std::string* zb = ConstantBytes(z);
      const float zero = 0.0f;
      if (zb != nullptr && p.value_type(z).dtype == DType::kF32 &&
          IsScalarShape(p.value_type(z).shape) && zb->size() >= 4 &&
          std::memcmp(zb->data(), &zero, 4) == 0) {
        f.relu = f.root = r;
        f.zero = z;
      }
    }
    const int32_t index = static_cast<int32_t>(conv_fusions.size());
    for (int32_t w : {f.conv, f.add, f.residual_add, f.relu}) {
      if (w >= 0) conv_fusion_of[static_cast<size_t>(w)] = index;
    }
    conv_fusions.push_back(f);
  }
}

void Graph::FindNarrowFusions(const std::vector<bool>& is_output) {
  using trace::OpKind;
  auto node = [&](int32_t v) { return NodeOf(v); };
  const std::vector<int32_t> user = SoleUsers(is_output);
  auto free_value = [&](int32_t v) {  // not claimed by another fusion
    return mm_fusion_of[static_cast<size_t>(v)] < 0 && conv_fusion_of[static_cast<size_t>(v)] < 0 &&
           narrow_fusion_of[static_cast<size_t>(v)] < 0;
  };
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    const int32_t v = static_cast<int32_t>(num_inputs + i);
    switch (n.op) {
      case OpKind::kSoftmax:
      case OpKind::kLayerNorm:
      case OpKind::kReduceSum:
      case OpKind::kReduceMean:
      case OpKind::kReduceMax:
      case OpKind::kReduceMin:
      case OpKind::kReduceProd:
        break;
      default:
        continue;
    }
    if (n.type.dtype != DType::kF32 || n.operands.size() != 1) continue;
    const int32_t c = n.operands[0];
    const program::Node* cn = node(c);
    if (cn == nullptr || cn->op != OpKind::kConvert || user[static_cast<size_t>(c)] != v) continue;
    const int32_t x = cn->operands[0];
    const DType t = p.value_type(x).dtype;
    if (t != DType::kF16 && t != DType::kBF16) continue;
    const int32_t d = user[static_cast<size_t>(v)];
    const program::Node* dn = d < 0 ? nullptr : node(d);
    if (dn == nullptr || dn->op != OpKind::kConvert || dn->type.dtype != t) continue;
    const int32_t s = stage_of_value[static_cast<size_t>(v)];
    if (stage_of_value[static_cast<size_t>(c)] != s ||
        stage_of_value[static_cast<size_t>(d)] != s || !free_value(c) || !free_value(v) ||
        !free_value(d)) {
      continue;
    }
    NarrowFusion f;
    f.convert_in = c;
    f.op = v;
    f.convert_out = d;
    f.x = x;
    const int32_t index = static_cast<int32_t>(narrow_fusions.size());
    for (int32_t w : {c, v, d}) narrow_fusion_of[static_cast<size_t>(w)] = index;
    narrow_fusions.push_back(f);
  }
}

}  // namespace runtime
}  // namespace shp
