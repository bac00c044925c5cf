#include "cc/runtime/plan.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "cc/base/error.h"
#include "cc/kernels/copy.h"
#include "cc/kernels/elementwise_scalar.h"
#include "cc/kernels/transpose.h"

namespace shp {
namespace runtime {
namespace {

using trace::DType;
using trace::OpKind;
using KDType = kernels::DType;

KDType K(DType t) { return static_cast<KDType>(static_cast<int32_t>(t)); }

int64_t Mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(Code::kOverflow, "runtime: an array size overflows int64");
  return r;
}

int64_t Product(const std::vector<int64_t>& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p = Mul(p, s[i]);
  return p;
}

int64_t Product(const std::vector<int64_t>& s) { return Product(s, 0, s.size()); }

// Row-major strides (in elements) of `s`.
std::vector<int64_t> Strides(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Strides that broadcast an operand of shape `in` over `out` (right-aligned, NumPy).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<int64_t> st(out.size(), 0);
  std::vector<int64_t> own = Strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : own[i];
  return st;
}

bool IsElementwise(OpKind k) {
  if (k == OpKind::kRem) return false;  // C remainder: a scalar step (exact for floats)
  return trace::IsUnary(k) || trace::IsBinary(k) || trace::IsCompare(k) || k == OpKind::kSelect ||
         k == OpKind::kConvert || k == OpKind::kBroadcastTo;
}

kernels::BinaryOp BinOp(OpKind k) {
  switch (k) {
    case OpKind::kAdd: return kernels::BinaryOp::kAdd;
    case OpKind::kSub: return kernels::BinaryOp::kSub;
    case OpKind::kMul: return kernels::BinaryOp::kMul;
    case OpKind::kDiv: return kernels::BinaryOp::kDiv;
    case OpKind::kPow: return kernels::BinaryOp::kPow;
    case OpKind::kMax: return kernels::BinaryOp::kMax;
    case OpKind::kMin: return kernels::BinaryOp::kMin;
    case OpKind::kAnd: return kernels::BinaryOp::kAnd;
    case OpKind::kOr: return kernels::BinaryOp::kOr;
    case OpKind::kXor: return kernels::BinaryOp::kXor;
    default: break;
  }
  throw Error(Code::kInternal, std::string("runtime: no elementwise kernel for ") + trace::OpName(k));
}

// True if the shape is all ones (a constant with exactly one element).
bool IsScalarShape(const std::vector<const dim::Expr*>& shape) {
  for (const dim::Expr* e : shape) {
    if (!e->IsConstant() || e->ConstantTerm() != 1) return false;
  }
  return true;
}

void CollectVars(const dim::Expr* e, std::map<int32_t, const char*>* vars) {
  if (e == nullptr) return;
  for (const dim::Term& t : e->terms) {
    for (const dim::Factor& f : t.mono->factors) {
      const dim::Atom* at = f.atom;
      if (at->kind == dim::AtomKind::kVar) {
        vars->emplace(at->var, at->name);
      } else {
        CollectVars(at->a, vars);
        CollectVars(at->b, vars);
      }
    }
  }
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
    bool member = v == out_->root || (static_cast<size_t>(v) >= g_.num_inputs && g_.group_of[v] >= 0 &&
                                      &g_.groups[static_cast<size_t>(g_.group_of[v])] == out_ && !g_.is_root[v]);
    if (static_cast<size_t>(v) >= g_.num_inputs) {
      const program::Node& n = p.nodes()[static_cast<size_t>(v) - g_.num_inputs];
      if (!member && n.op == OpKind::kConstant && IsScalarShape(n.type.shape)) {
        const std::string& bytes = p.buffers()[static_cast<size_t>(n.attrs.buffer)];
        switch (n.type.dtype) {
          case DType::kF32: { float x; std::memcpy(&x, bytes.data(), 4); return pr.Constant(KDType::kF32, x); }
          case DType::kF64: { double x; std::memcpy(&x, bytes.data(), 8); return pr.Constant(KDType::kF64, x); }
          case DType::kI32: { int32_t x; std::memcpy(&x, bytes.data(), 4); return pr.ConstantInt(KDType::kI32, x); }
          case DType::kI64: { int64_t x; std::memcpy(&x, bytes.data(), 8); return pr.ConstantInt(KDType::kI64, x); }
          case DType::kBool: return pr.ConstantInt(KDType::kBool, bytes[0] != 0 ? 1 : 0);
        }
      }
      if (member) {
        std::vector<int> r;
        for (int32_t o : n.operands) r.push_back(Emit(o));
        OpKind k = n.op;
        if (trace::IsUnary(k)) {
          return pr.Unary(static_cast<kernels::UnaryOp>(static_cast<int32_t>(k) - static_cast<int32_t>(OpKind::kNeg)),
                          r[0]);
        }
        if (trace::IsBinary(k)) return pr.Binary(BinOp(k), r[0], r[1]);
        if (trace::IsCompare(k)) {
          return pr.Compare(static_cast<kernels::CompareOp>(static_cast<int32_t>(k) - static_cast<int32_t>(OpKind::kEq)),
                            r[0], r[1]);
        }
        if (k == OpKind::kSelect) return pr.Select(r[0], r[1], r[2]);
        if (k == OpKind::kConvert) return pr.Convert(r[0], K(n.attrs.dtype));
        if (k == OpKind::kBroadcastTo) return r[0];
        throw Error(Code::kInternal, "runtime: bad fusion group");
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

int64_t EvalDim(const dim::Expr* e, const std::vector<int64_t>& vars) {
  int64_t sum = 0;
  for (const dim::Term& t : e->terms) {
    int64_t prod = t.coeff;
    for (const dim::Factor& f : t.mono->factors) {
      const dim::Atom* at = f.atom;
      int64_t v = 0;
      switch (at->kind) {
        case dim::AtomKind::kVar:
          v = vars[static_cast<size_t>(at->var)];
          break;
        case dim::AtomKind::kFloorDiv:
        case dim::AtomKind::kMod: {
          int64_t x = EvalDim(at->a, vars), y = EvalDim(at->b, vars);
          if (y == 0) throw Error(Code::kDivisionByZero, "runtime: a dimension divides by zero");
          v = at->kind == dim::AtomKind::kFloorDiv ? dim::FloorDivInt(x, y) : dim::ModInt(x, y);
          break;
        }
        case dim::AtomKind::kMax:
        case dim::AtomKind::kMin: {
          int64_t x = EvalDim(at->a, vars), y = EvalDim(at->b, vars);
          v = at->kind == dim::AtomKind::kMax ? std::max(x, y) : std::min(x, y);
          break;
        }
      }
      for (int32_t i = 0; i < f.exp; ++i) prod = Mul(prod, v);
    }
    if (__builtin_add_overflow(sum, prod, &sum)) throw Error(Code::kOverflow, "runtime: a dimension overflows int64");
  }
  return sum;
}

// ---- Graph ----

Graph::Graph(const program::Program& prog) : p(prog) {
  num_inputs = p.inputs().size();
  num_values = p.num_values();
  uses.assign(num_values, 0);
  group_of.assign(num_values, -1);
  is_root.assign(num_values, false);
  alias_of.assign(num_values, -1);
  std::vector<bool> is_output(num_values, false);
  for (const program::Output& o : p.outputs()) {
    ++uses[static_cast<size_t>(o.value)];
    is_output[static_cast<size_t>(o.value)] = true;
  }
  std::map<int32_t, const char*> vars;
  for (const program::Input& in : p.inputs()) {
    for (const dim::Expr* e : in.type.shape) CollectVars(e, &vars);
  }
  for (const program::Node& n : p.nodes()) {
    for (int32_t o : n.operands) ++uses[static_cast<size_t>(o)];
    for (const dim::Expr* e : n.type.shape) CollectVars(e, &vars);
    for (const dim::Expr* e : n.attrs.dims) CollectVars(e, &vars);
    for (const dim::Expr* e : n.attrs.dims2) CollectVars(e, &vars);
  }
  const std::vector<std::string>& names = p.variable_names();
  for (const auto& kv : vars) {
    auto it = std::find(names.begin(), names.end(), std::string(kv.second));
    if (it == names.end()) {
      throw Error(Code::kInternal, std::string("runtime: the variable '") + kv.second + "' is not solved by the program");
    }
    var_pos.emplace_back(kv.first, static_cast<int32_t>(it - names.begin()));
    max_var = std::max(max_var, kv.first);
  }
  // Constant right operands of f32 matmuls: packed once here, so runs skip packing B.
  packed_b.resize(p.nodes().size());
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    if (n.op != OpKind::kMatMul || n.type.dtype != DType::kF32) continue;
    const int32_t bv = n.operands[1];
    if (static_cast<size_t>(bv) < num_inputs) continue;
    const program::Node& bn = p.nodes()[static_cast<size_t>(bv) - num_inputs];
    if (bn.op != OpKind::kConstant || bn.type.shape.size() != 2 || !bn.type.shape[0]->IsConstant() ||
        !bn.type.shape[1]->IsConstant()) {
      continue;
    }
    const int64_t k = bn.type.shape[0]->ConstantTerm(), cols = bn.type.shape[1]->ConstantTerm();
    if (k <= 0 || cols <= 0) continue;
    const float* data = reinterpret_cast<const float*>(p.buffers()[static_cast<size_t>(bn.attrs.buffer)].data());
    packed_b[i].reset(new kernels::PackedMatrixF32(kernels::PackedMatrixF32::Pack(data, k, cols, cols, 1)));
  }
  // Fusion: an elementwise node absorbs the groups of operands that are elementwise, used once
  // (by it), not outputs, and of the same symbolic shape (so no broadcast inside a group).
  std::vector<int32_t> root_of(num_values, -1);
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const program::Node& n = p.nodes()[i];
    int32_t v = static_cast<int32_t>(num_inputs + i);
    if (n.op == OpKind::kReshape) alias_of[static_cast<size_t>(v)] = n.operands[0];
    if (!IsElementwise(n.op)) continue;
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

int32_t Plan::NewSlot(int64_t bytes, SlotLoc l) {
  loc.push_back(l);
  slot_bytes.push_back(bytes);
  return static_cast<int32_t>(loc.size() - 1);
}

Step& Plan::AddStep(StepKind kind, DType dtype, std::vector<int32_t> in, int32_t out) {
  steps.emplace_back();
  Step& s = steps.back();
  s.kind = kind;
  s.dtype = dtype;
  s.in = std::move(in);
  s.out = out;
  return s;
}

namespace {
constexpr int64_t kThreadElements = 1 << 15;  // steps smaller than this run on one thread
}  // namespace

Plan::Plan(const Graph& g, const std::vector<int64_t>& vars) : vars_(vars) {
  const program::Program& p = g.p;
  shapes.resize(g.num_values);
  loc.resize(g.num_values);
  slot_bytes.resize(g.num_values);
  for (size_t v = 0; v < g.num_values; ++v) {
    const trace::TensorType& t = p.value_type(static_cast<int32_t>(v));
    std::vector<int64_t>& s = shapes[v];
    s.reserve(t.shape.size());
    for (const dim::Expr* e : t.shape) s.push_back(EvalDim(e, vars));
    slot_bytes[v] = Mul(Product(s), static_cast<int64_t>(trace::DTypeSize(t.dtype)));
  }
  for (size_t i = 0; i < g.num_inputs; ++i) loc[i] = SlotLoc{SlotLoc::kInput, static_cast<int64_t>(i), nullptr};
  // dim_value results are plan scalars; reserve so that pointers into `scalars` stay valid.
  size_t num_scalars = 0;
  for (const program::Node& n : p.nodes()) num_scalars += n.op == OpKind::kDimValue;
  scalars.reserve(num_scalars);
  for (size_t i = 0; i < p.nodes().size(); ++i) BuildNode(g, i);
  AssignStorage(g);
}

void Plan::BuildNode(const Graph& g, size_t node) {
  const program::Program& p = g.p;
  const program::Node& n = p.nodes()[node];
  const int32_t v = static_cast<int32_t>(g.num_inputs + node);
  const size_t vu = static_cast<size_t>(v);
  const std::vector<int64_t>& out = shapes[vu];
  const DType dt = n.type.dtype;
  const int64_t elems = Product(out);
  auto in_shape = [&](size_t k) -> const std::vector<int64_t>& { return shapes[static_cast<size_t>(n.operands[k])]; };

  if (g.group_of[vu] >= 0) {
    if (!g.is_root[vu]) return;  // computed inside its group's root
    const EwGroup& gr = g.groups[static_cast<size_t>(g.group_of[vu])];
    if (out.size() > static_cast<size_t>(kernels::kElementwiseMaxRank)) {
      throw Error(Code::kUnsupported, "runtime: elementwise operations support rank <= 32");
    }
    Step& s = AddStep(StepKind::kElementwise, dt, gr.inputs, v);
    s.group = &gr;
    s.shape = out;
    for (int32_t in : gr.inputs) s.strides.push_back(BroadcastStrides(shapes[static_cast<size_t>(in)], out));
    s.ew.resize(gr.inputs.size());
    for (size_t k = 0; k < gr.inputs.size(); ++k) s.ew[k].strides = s.strides[k].data();
    s.threaded = elems >= kThreadElements;
    return;
  }
  switch (n.op) {
    case OpKind::kConstant:
      loc[vu] = SlotLoc{SlotLoc::kConst, 0,
                        reinterpret_cast<const uint8_t*>(p.buffers()[static_cast<size_t>(n.attrs.buffer)].data())};
      return;
    case OpKind::kDimValue:
      scalars.push_back(EvalDim(n.attrs.dims[0], vars_));
      loc[vu] = SlotLoc{SlotLoc::kConst, 0, reinterpret_cast<const uint8_t*>(&scalars.back())};
      return;
    case OpKind::kReshape:
      loc[vu] = SlotLoc{SlotLoc::kAlias, n.operands[0], nullptr};
      return;
    case OpKind::kRem: {
      Step& s = AddStep(StepKind::kRem, dt, {n.operands[0], n.operands[1]}, v);
      s.shape = out;
      s.strides = {BroadcastStrides(in_shape(0), out), BroadcastStrides(in_shape(1), out)};
      return;
    }
    case OpKind::kTranspose: {
      if (out.size() > static_cast<size_t>(kernels::kMaxTransposeRank)) {
        throw Error(Code::kUnsupported, "runtime: transpose supports rank <= 16");
      }
      Step& s = AddStep(StepKind::kTranspose, dt, {n.operands[0]}, v);
      s.shape = in_shape(0);
      s.v1 = n.attrs.ints;
      s.threaded = elems >= kThreadElements;
      return;
    }
    case OpKind::kSlice: {
      if (out.size() > static_cast<size_t>(kernels::kMaxCopyRank)) throw Error(Code::kUnsupported, "runtime: slice supports rank <= 16");
      Step& s = AddStep(StepKind::kSlice, dt, {n.operands[0]}, v);
      s.shape = in_shape(0);
      s.shape2 = out;
      for (const dim::Expr* e : n.attrs.dims) s.v1.push_back(EvalDim(e, vars_));
      s.v2 = n.attrs.ints;
      s.threaded = elems >= kThreadElements;
      return;
    }
    case OpKind::kPad: {
      if (out.size() > static_cast<size_t>(kernels::kMaxCopyRank)) throw Error(Code::kUnsupported, "runtime: pad supports rank <= 16");
      Step& s = AddStep(StepKind::kPad, dt, {n.operands[0]}, v);
      s.shape = in_shape(0);
      for (const dim::Expr* e : n.attrs.dims) s.v1.push_back(EvalDim(e, vars_));
      for (const dim::Expr* e : n.attrs.dims2) s.v2.push_back(EvalDim(e, vars_));
      double x = n.attrs.fvalue;
      switch (dt) {
        case DType::kF32: { float f = static_cast<float>(x); std::memcpy(&s.pad_bits, &f, 4); break; }
        case DType::kF64: std::memcpy(&s.pad_bits, &x, 8); break;
        // As the convert op does (saturating, NaN -> 0): a cast of an out-of-range value is UB.
        case DType::kI32: { int32_t i = kernels::ew_scalar::FloatToInt<int32_t>(x); std::memcpy(&s.pad_bits, &i, 4); break; }
        case DType::kI64: { int64_t i = kernels::ew_scalar::FloatToInt<int64_t>(x); std::memcpy(&s.pad_bits, &i, 8); break; }
        case DType::kBool: { uint8_t b = x != 0; std::memcpy(&s.pad_bits, &b, 1); break; }
      }
      s.threaded = elems >= kThreadElements;
      return;
    }
    case OpKind::kConcatenate: {
      if (out.size() > static_cast<size_t>(kernels::kMaxCopyRank)) throw Error(Code::kUnsupported, "runtime: concatenate supports rank <= 16");
      Step& s = AddStep(StepKind::kConcat, dt, n.operands, v);
      s.shape = out;
      s.a = n.attrs.axis;
      for (size_t k = 0; k < n.operands.size(); ++k) s.v1.push_back(in_shape(k)[static_cast<size_t>(n.attrs.axis)]);
      s.ptrs.resize(n.operands.size());
      s.threaded = elems >= kThreadElements;
      return;
    }
    case OpKind::kReduceSum: case OpKind::kReduceMean: case OpKind::kReduceMax: case OpKind::kReduceMin:
    case OpKind::kReduceProd: {
      if (in_shape(0).size() > 64) throw Error(Code::kUnsupported, "runtime: reductions support rank <= 64");
      Step& s = AddStep(StepKind::kReduce, dt, {n.operands[0]}, v);
      s.shape = in_shape(0);
      s.v1 = n.attrs.ints;
      s.a = static_cast<int64_t>(n.op) - static_cast<int64_t>(OpKind::kReduceSum);
      s.threaded = Product(in_shape(0)) >= kThreadElements;
      return;
    }
    case OpKind::kMatMul: {
      const std::vector<int64_t>& a = in_shape(0);
      const std::vector<int64_t>& b = in_shape(1);
      kernels::MatmulParams mm;
      bool a_vec = a.size() == 1, b_vec = b.size() == 1;
      mm.m = a_vec ? 1 : a[a.size() - 2];
      mm.k = a.back();
      mm.n = b_vec ? 1 : b.back();
      mm.a_row_stride = mm.k;
      mm.a_col_stride = 1;
      mm.b_row_stride = b_vec ? 1 : mm.n;
      mm.b_col_stride = 1;
      mm.c_row_stride = mm.n;
      size_t ab = a_vec ? 0 : a.size() - 2, bb = b_vec ? 0 : b.size() - 2;
      size_t batch = std::max(ab, bb);
      if (batch > static_cast<size_t>(kernels::kMaxMatmulBatchRank)) {
        throw Error(Code::kUnsupported, "runtime: matmul supports at most 8 batch axes");
      }
      std::vector<int64_t> bshape(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(batch));
      std::vector<int64_t> ash(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(ab));
      std::vector<int64_t> bsh(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(bb));
      std::vector<int64_t> as = BroadcastStrides(ash, bshape), bs = BroadcastStrides(bsh, bshape);
      std::vector<int64_t> cs = Strides(bshape);
      int64_t amat = Mul(mm.m, mm.k), bmat = Mul(mm.k, mm.n), cmat = Mul(mm.m, mm.n);
      for (size_t d = 0; d < batch; ++d) {
        kernels::AddMatmulBatchDim(&mm, bshape[d], as[d] * amat, bs[d] * bmat, cs[d] * cmat);
      }
      Step& s = AddStep(StepKind::kMatmul, dt, {n.operands[0], n.operands[1]}, v);
      s.mm = mm;
      if (!b_vec) s.packed = g.packed_b[node].get();  // B is a rank-2 constant: never batched
      s.threaded = Mul(elems, mm.k) >= kThreadElements;
      return;
    }
    case OpKind::kDotGeneral: {
      const std::vector<int64_t>& a = in_shape(0);
      const std::vector<int64_t>& b = in_shape(1);
      const trace::DotDims& d = n.attrs.dot;
      auto free_axes = [](size_t rank, const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
        std::vector<int64_t> f;
        for (size_t i = 0; i < rank; ++i) {
          int64_t ii = static_cast<int64_t>(i);
          if (std::find(x.begin(), x.end(), ii) == x.end() && std::find(y.begin(), y.end(), ii) == y.end()) f.push_back(ii);
        }
        return f;
      };
      std::vector<int64_t> af = free_axes(a.size(), d.lhs_batch, d.lhs_contracting);
      std::vector<int64_t> bf = free_axes(b.size(), d.rhs_batch, d.rhs_contracting);
      int64_t B = 1, M = 1, N = 1, Kc = 1;
      for (int64_t x : d.lhs_batch) B = Mul(B, a[static_cast<size_t>(x)]);
      for (int64_t x : af) M = Mul(M, a[static_cast<size_t>(x)]);
      for (int64_t x : bf) N = Mul(N, b[static_cast<size_t>(x)]);
      for (int64_t x : d.lhs_contracting) Kc = Mul(Kc, a[static_cast<size_t>(x)]);
      auto cat = [](std::vector<int64_t> x, const std::vector<int64_t>& y, const std::vector<int64_t>& z) {
        x.insert(x.end(), y.begin(), y.end());
        x.insert(x.end(), z.begin(), z.end());
        return x;
      };
      auto identity = [](const std::vector<int64_t>& perm) {
        for (size_t i = 0; i < perm.size(); ++i) {
          if (perm[i] != static_cast<int64_t>(i)) return false;
        }
        return true;
      };
      kernels::MatmulParams mm;
      mm.m = M;
      mm.n = N;
      mm.k = Kc;
      mm.c_row_stride = N;
      int32_t sa = n.operands[0], sb = n.operands[1];
      std::vector<int64_t> pa = cat(d.lhs_batch, af, d.lhs_contracting);
      if (identity(pa)) {
        mm.a_row_stride = Kc;
        mm.a_col_stride = 1;
      } else if (identity(cat(d.lhs_batch, d.lhs_contracting, af))) {
        mm.a_row_stride = 1;
        mm.a_col_stride = M;
      } else {
        if (a.size() > static_cast<size_t>(kernels::kMaxTransposeRank)) throw Error(Code::kUnsupported, "runtime: dot_general supports rank <= 16");
        sa = NewSlot(slot_bytes[static_cast<size_t>(n.operands[0])], SlotLoc{SlotLoc::kArena, 0, nullptr});
        Step& t = AddStep(StepKind::kTranspose, dt, {n.operands[0]}, sa);
        t.shape = a;
        t.v1 = pa;
        t.threaded = Product(a) >= kThreadElements;
        mm.a_row_stride = Kc;
        mm.a_col_stride = 1;
      }
      std::vector<int64_t> pb = cat(d.rhs_batch, d.rhs_contracting, bf);
      if (identity(pb)) {
        mm.b_row_stride = N;
        mm.b_col_stride = 1;
      } else if (identity(cat(d.rhs_batch, bf, d.rhs_contracting))) {
        mm.b_row_stride = 1;
        mm.b_col_stride = Kc;
      } else {
        if (b.size() > static_cast<size_t>(kernels::kMaxTransposeRank)) throw Error(Code::kUnsupported, "runtime: dot_general supports rank <= 16");
        sb = NewSlot(slot_bytes[static_cast<size_t>(n.operands[1])], SlotLoc{SlotLoc::kArena, 0, nullptr});
        Step& t = AddStep(StepKind::kTranspose, dt, {n.operands[1]}, sb);
        t.shape = b;
        t.v1 = pb;
        t.threaded = Product(b) >= kThreadElements;
        mm.b_row_stride = N;
        mm.b_col_stride = 1;
      }
      kernels::AddMatmulBatchDim(&mm, B, Mul(M, Kc), Mul(Kc, N), Mul(M, N));
      Step& s = AddStep(StepKind::kMatmul, dt, {sa, sb}, v);
      s.mm = mm;
      s.threaded = Mul(elems, Kc) >= kThreadElements;
      return;
    }
    case OpKind::kIota: {
      Step& s = AddStep(StepKind::kIota, dt, {}, v);
      size_t ax = static_cast<size_t>(n.attrs.axis);
      s.a = Product(out, 0, ax);
      s.b = out[ax];
      s.c = Product(out, ax + 1, out.size());
      return;
    }
    case OpKind::kSoftmax:
    case OpKind::kCumSum: {
      const std::vector<int64_t>& x = in_shape(0);
      size_t ax = static_cast<size_t>(n.attrs.axis);
      Step& s = AddStep(n.op == OpKind::kSoftmax ? StepKind::kSoftmax : StepKind::kCumSum, dt, {n.operands[0]}, v);
      s.a = Product(x, 0, ax);
      s.b = x[ax];
      s.c = Product(x, ax + 1, x.size());
      s.threaded = elems >= kThreadElements;
      return;
    }
    case OpKind::kLayerNorm: {
      const std::vector<int64_t>& x = in_shape(0);
      size_t ax = static_cast<size_t>(n.attrs.axis);
      bool threaded = elems >= kThreadElements;
      if (ax + 1 == x.size()) {
        Step& s = AddStep(StepKind::kLayerNorm, dt, {n.operands[0]}, v);
        s.a = Product(x, 0, ax);
        s.b = x[ax];
        s.f = n.attrs.fvalue;
        s.threaded = threaded;
        return;
      }
      // Another axis: move it last, normalize in place, move it back.
      if (x.size() > static_cast<size_t>(kernels::kMaxTransposeRank)) throw Error(Code::kUnsupported, "runtime: layer_norm supports rank <= 16");
      std::vector<int64_t> perm, back(x.size()), moved;
      for (size_t i = 0; i < x.size(); ++i) {
        if (i != ax) perm.push_back(static_cast<int64_t>(i));
      }
      perm.push_back(static_cast<int64_t>(ax));
      for (size_t i = 0; i < perm.size(); ++i) {
        back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
        moved.push_back(x[static_cast<size_t>(perm[i])]);
      }
      int32_t tmp = NewSlot(slot_bytes[vu], SlotLoc{SlotLoc::kArena, 0, nullptr});
      Step& t1 = AddStep(StepKind::kTranspose, dt, {n.operands[0]}, tmp);
      t1.shape = x;
      t1.v1 = perm;
      t1.threaded = threaded;
      Step& s = AddStep(StepKind::kLayerNorm, dt, {tmp}, tmp);
      s.a = Product(x) / std::max<int64_t>(1, x[ax]);
      s.b = x[ax];
      if (x[ax] == 0) s.a = 0;
      s.f = n.attrs.fvalue;
      s.threaded = threaded;
      Step& t2 = AddStep(StepKind::kTranspose, dt, {tmp}, v);
      t2.shape = moved;
      t2.v1 = back;
      t2.threaded = threaded;
      return;
    }
    case OpKind::kTake: {
      const std::vector<int64_t>& x = in_shape(0);
      size_t ax = static_cast<size_t>(n.attrs.axis);
      Step& s = AddStep(StepKind::kTake, dt, {n.operands[0], n.operands[1]}, v);
      s.a = Product(x, 0, ax);
      s.b = x[ax];
      s.c = Product(x, ax + 1, x.size());
      s.shape = {Product(in_shape(1))};
      s.f = p.value_type(n.operands[1]).dtype == DType::kI64 ? 1 : 0;
      s.threaded = elems >= kThreadElements;
      return;
    }
    default:
      break;
  }
  throw Error(Code::kUnsupported, std::string("runtime: cannot execute the operation ") + trace::OpName(n.op));
}

void Plan::AssignStorage(const Graph& g) {
  const program::Program& p = g.p;
  auto root = [&](int32_t s) {
    while (loc[static_cast<size_t>(s)].kind == SlotLoc::kAlias) s = static_cast<int32_t>(loc[static_cast<size_t>(s)].index);
    return s;
  };
  // Values written by a step get storage; an output's root is computed in place in the output.
  std::vector<bool> written(loc.size(), false);
  for (const Step& s : steps) written[static_cast<size_t>(s.out)] = true;
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
    int32_t dst = NewSlot(slot_bytes[static_cast<size_t>(v)], SlotLoc{SlotLoc::kOutput, static_cast<int64_t>(j), nullptr});
    Step& s = AddStep(StepKind::kCopy, p.value_type(v).dtype, {v}, dst);
    s.a = slot_bytes[static_cast<size_t>(v)];
  }
  // Liveness: first write and last read of each arena root.
  std::vector<int64_t> first(loc.size(), -1), last(loc.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    size_t o = static_cast<size_t>(root(steps[i].out));
    if (first[o] < 0) first[o] = static_cast<int64_t>(i);
    last[o] = std::max(last[o], static_cast<int64_t>(i));
    for (int32_t in : steps[i].in) {
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
    size_t o = static_cast<size_t>(root(steps[i].out));
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
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return last[l.slot] <= static_cast<int64_t>(i); }),
               live.end());
  }
  arena_bytes = static_cast<size_t>(top);
}

}  // namespace runtime
}  // namespace shp
