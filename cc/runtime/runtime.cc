#include "cc/runtime/runtime.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cc/base/error.h"
#include "cc/kernels/copy.h"
#include "cc/kernels/cumsum.h"
#include "cc/kernels/gather.h"
#include "cc/kernels/layernorm.h"
#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/reduce.h"
#include "cc/kernels/softmax.h"
#include "cc/kernels/sum.h"
#include "cc/kernels/transpose.h"
#include "cc/runtime/plan.h"

namespace shp {
namespace runtime {
namespace {

using trace::DType;
using KDType = kernels::DType;

KDType K(DType t) { return static_cast<KDType>(static_cast<int32_t>(t)); }

void Check(bool ok, const char* what) {
  if (!ok) throw Error(Code::kInternal, std::string("runtime: the ") + what + " kernel rejected its arguments");
}

// C remainder (sign of the dividend) with broadcasting: floats use std::fmod (exact); for
// integers x rem 0 == 0 and INT_MIN rem -1 == 0.
template <typename T>
T Rem(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::fmod(a, b);
  } else {
    if (b == 0 || b == -1) return 0;
    return a % b;
  }
}

template <typename T>
void RemLoop(const Step& s, const uint8_t* pa, const uint8_t* pb, uint8_t* po) {
  const T* a = reinterpret_cast<const T*>(pa);
  const T* b = reinterpret_cast<const T*>(pb);
  T* out = reinterpret_cast<T*>(po);
  const size_t rank = s.shape.size();
  int64_t total = 1;
  for (int64_t d : s.shape) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t ia = 0, ib = 0;
  const std::vector<int64_t>& sa = s.strides[0];
  const std::vector<int64_t>& sb = s.strides[1];
  for (int64_t i = 0; i < total; ++i) {
    out[i] = Rem<T>(a[ia], b[ib]);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < s.shape[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (s.shape[d] - 1);
      ib -= sb[d] * (s.shape[d] - 1);
      idx[d] = 0;
    }
  }
}

template <typename T>
void IotaLoop(const Step& s, uint8_t* po) {
  T* out = reinterpret_cast<T*>(po);
  for (int64_t o = 0; o < s.a; ++o) {
    for (int64_t j = 0; j < s.b; ++j) {
      T* row = out + (o * s.b + j) * s.c;
      for (int64_t i = 0; i < s.c; ++i) row[i] = static_cast<T>(j);
    }
  }
}

template <typename I>
void CheckIndices(const void* data, int64_t count, int64_t n) {
  const I* idx = static_cast<const I*>(data);
  for (int64_t i = 0; i < count; ++i) {
    if (idx[i] < 0 || static_cast<int64_t>(idx[i]) >= n) {
      throw Error(Code::kInvalidArgument, "take: index " + std::to_string(static_cast<int64_t>(idx[i])) +
                                              " (position " + std::to_string(i) + " of the indices) is outside [0, " +
                                              std::to_string(n) + ")");
    }
  }
}

void Execute(Step& s, uint8_t* const* ptr, kernels::ThreadPool* pool_all) {
  kernels::ThreadPool* pool = s.threaded ? pool_all : nullptr;
  uint8_t* out = ptr[s.out];
  const int64_t es = static_cast<int64_t>(trace::DTypeSize(s.dtype));
  auto in = [&](size_t k) -> const uint8_t* { return ptr[s.in[k]]; };
  switch (s.kind) {
    case StepKind::kElementwise: {
      for (size_t k = 0; k < s.ew.size(); ++k) s.ew[k].data = in(k);
      void* outs[1] = {out};
      kernels::EvalElementwise(s.group->prog, static_cast<int>(s.shape.size()), s.shape.data(), s.ew.data(),
                               static_cast<int>(s.ew.size()), outs, 1, pool);
      return;
    }
    case StepKind::kRem:
      switch (s.dtype) {
        case DType::kF32: RemLoop<float>(s, in(0), in(1), out); return;
        case DType::kF64: RemLoop<double>(s, in(0), in(1), out); return;
        case DType::kI32: RemLoop<int32_t>(s, in(0), in(1), out); return;
        case DType::kI64: RemLoop<int64_t>(s, in(0), in(1), out); return;
        case DType::kBool: break;
      }
      throw Error(Code::kInternal, "runtime: rem on bool");
    case StepKind::kCopy:
      if (s.a > 0) std::memcpy(out, in(0), static_cast<size_t>(s.a));
      return;
    case StepKind::kTranspose:
      Check(kernels::Transpose(in(0), s.shape.data(), s.v1.data(), static_cast<int>(s.shape.size()), es, out, pool),
            "transpose");
      return;
    case StepKind::kSlice:
      Check(kernels::Slice(in(0), s.shape.data(), static_cast<int>(s.shape.size()), s.v1.data(), s.v2.data(),
                           s.shape2.data(), es, out, pool),
            "slice");
      return;
    case StepKind::kPad:
      Check(kernels::Pad(in(0), s.shape.data(), static_cast<int>(s.shape.size()), s.v1.data(), s.v2.data(), &s.pad_bits,
                         es, out, pool),
            "pad");
      return;
    case StepKind::kConcat:
      for (size_t k = 0; k < s.in.size(); ++k) s.ptrs[k] = in(k);
      Check(kernels::Concatenate(s.ptrs.data(), s.v1.data(), static_cast<int>(s.ptrs.size()), s.shape.data(),
                                 static_cast<int>(s.shape.size()), static_cast<int>(s.a), es, out, pool),
            "concatenate");
      return;
    case StepKind::kReduce: {
      bool axes[64] = {};
      for (int64_t a : s.v1) axes[a] = true;
      kernels::ReduceAxes(static_cast<kernels::ReduceOp>(s.a), K(s.dtype), in(0), static_cast<int>(s.shape.size()),
                          s.shape.data(), axes, out, pool);
      return;
    }
    case StepKind::kMatmul: {
      bool ok = false;
      switch (s.dtype) {
        case DType::kF32:
          // A pre-packed constant B; false only if it was packed for another SIMD target.
          if (s.packed != nullptr &&
              kernels::MatmulF32Prepacked(s.mm, reinterpret_cast<const float*>(in(0)), *s.packed,
                                          reinterpret_cast<float*>(out), pool)) {
            ok = true;
            break;
          }
          ok = kernels::MatmulF32(s.mm, reinterpret_cast<const float*>(in(0)), reinterpret_cast<const float*>(in(1)),
                                  reinterpret_cast<float*>(out), pool);
          break;
        case DType::kF64:
          ok = kernels::MatmulF64(s.mm, reinterpret_cast<const double*>(in(0)), reinterpret_cast<const double*>(in(1)),
                                  reinterpret_cast<double*>(out), pool);
          break;
        case DType::kI32:
          ok = kernels::MatmulI32(s.mm, reinterpret_cast<const int32_t*>(in(0)),
                                  reinterpret_cast<const int32_t*>(in(1)), reinterpret_cast<int32_t*>(out), pool);
          break;
        case DType::kI64:
          ok = kernels::MatmulI64(s.mm, reinterpret_cast<const int64_t*>(in(0)),
                                  reinterpret_cast<const int64_t*>(in(1)), reinterpret_cast<int64_t*>(out), pool);
          break;
        case DType::kBool:
          break;
      }
      Check(ok, "matmul");
      return;
    }
    case StepKind::kIota:
      switch (s.dtype) {
        case DType::kF32: IotaLoop<float>(s, out); return;
        case DType::kF64: IotaLoop<double>(s, out); return;
        case DType::kI32: IotaLoop<int32_t>(s, out); return;
        case DType::kI64: IotaLoop<int64_t>(s, out); return;
        case DType::kBool: break;
      }
      throw Error(Code::kInternal, "runtime: iota on bool");
    case StepKind::kSoftmax:
      kernels::Softmax(K(s.dtype), in(0), s.a, s.b, s.c, out, pool);
      return;
    case StepKind::kCumSum:
      kernels::CumSum(K(s.dtype), in(0), s.a, s.b, s.c, out, pool);
      return;
    case StepKind::kLayerNorm:
      if (s.b > 0) kernels::LayerNorm(K(s.dtype), in(0), s.a, s.b, nullptr, nullptr, s.f, out, pool);
      return;
    case StepKind::kTake: {
      const bool i64 = s.f != 0;
      if (i64) {
        CheckIndices<int64_t>(in(1), s.shape[0], s.b);
      } else {
        CheckIndices<int32_t>(in(1), s.shape[0], s.b);
      }
      kernels::GatherStatus st = kernels::Take(in(0), s.a, s.b, s.c, in(1),
                                               i64 ? kernels::IndexType::kI64 : kernels::IndexType::kI32, s.shape[0],
                                               es, out, pool);
      Check(st.code == kernels::GatherCode::kOk, "take");
      return;
    }
  }
}

}  // namespace

struct Runtime::PoolHolder {
  std::unique_ptr<kernels::ThreadPool> pool;  // nullptr: one thread
};

void Runtime::AlignedFree::operator()(uint8_t* p) const { std::free(p); }

Runtime::Runtime(std::shared_ptr<const program::Program> program, const Options& options)
    : program_(std::move(program)), pool_(new PoolHolder) {
  if (!program_) throw Error(Code::kInvalidArgument, "runtime: no program");
  if (options.num_threads < 0) {
    throw Error(Code::kInvalidArgument, "runtime: num_threads must be >= 0 (0: every hardware thread), got " +
                                            std::to_string(options.num_threads));
  }
  graph_.reset(new Graph(*program_));
  num_threads_ = options.num_threads == 0 ? kernels::ThreadPool::HardwareConcurrency() : options.num_threads;
  if (num_threads_ > 1) pool_->pool.reset(new kernels::ThreadPool(num_threads_));
  capacity_ = options.plan_cache_capacity;
  order_.resize(program_->inputs().size());
  out_ptr_.resize(program_->outputs().size());
}

Runtime::~Runtime() = default;

const char* Runtime::SimdTarget() { return kernels::SimdTargetName(); }

void Runtime::Bind(const char* const* names, const ArrayView* inputs, size_t n) {
  const std::vector<program::Input>& decl = program_->inputs();
  if (names == nullptr) {
    if (n != decl.size()) {
      throw Error(Code::kInvalidArgument, "the program has " + std::to_string(decl.size()) + " input" +
                                              (decl.size() == 1 ? "" : "s") + " but " + std::to_string(n) +
                                              " were given (without names, every input must be given in the "
                                              "declared order)");
    }
    for (size_t k = 0; k < n; ++k) order_[k] = static_cast<int32_t>(k);
  } else {
    for (int32_t& o : order_) o = -1;
    std::string repeated;
    for (size_t k = 0; k < n; ++k) {
      if (names[k] == nullptr) throw Error(Code::kInvalidArgument, "input name " + std::to_string(k) + " is NULL");
      size_t found = decl.size();
      for (size_t i = 0; i < decl.size(); ++i) {
        if (std::strcmp(decl[i].name.c_str(), names[k]) == 0) {
          found = i;
          break;
        }
      }
      if (found == decl.size()) {
        std::string all;
        for (const program::Input& in : decl) all += (all.empty() ? "'" : ", '") + in.name + "'";
        throw Error(Code::kNotFound, std::string("the program has no input named '") + names[k] + "' (its inputs: " +
                                         (all.empty() ? "none" : all) + ")");
      }
      if (order_[found] >= 0) {
        if (repeated.find("'" + decl[found].name + "'") == std::string::npos) {
          repeated += (repeated.empty() ? "'" : ", '") + decl[found].name + "'";
        }
        continue;
      }
      order_[found] = static_cast<int32_t>(k);
    }
    if (!repeated.empty()) throw Error(Code::kInvalidArgument, "input " + repeated + " given more than once");
    std::string missing;
    int count = 0;
    for (size_t i = 0; i < decl.size(); ++i) {
      if (order_[i] < 0) {
        missing += (missing.empty() ? "'" : ", '") + decl[i].name + "'";
        ++count;
      }
    }
    if (count) {
      throw Error(Code::kInvalidArgument, std::string(count > 1 ? "inputs " : "input ") + missing +
                                              (count > 1 ? " are" : " is") + " missing");
    }
  }
  for (size_t i = 0; i < decl.size(); ++i) {
    const ArrayView& a = inputs[order_[i]];
    const program::Input& d = decl[i];
    if (a.dtype != d.type.dtype) {
      throw Error(Code::kDtypeMismatch, "input '" + d.name + "' has dtype " + trace::DTypeName(a.dtype) +
                                            " but the program requires " + trace::DTypeName(d.type.dtype));
    }
    if (d.role == program::InputRole::kDim) {
      if (a.rank != 0) {
        throw Error(Code::kShapeMismatch, "input '" + d.name +
                                              "' gives a dimension variable: it must be a scalar (rank 0), got rank " +
                                              std::to_string(a.rank));
      }
      if (a.data == nullptr) throw Error(Code::kInvalidArgument, "input '" + d.name + "' has no data");
    }
  }
}

Plan* Runtime::Prepare(const char* const* names, const ArrayView* inputs, size_t n) {
  Bind(names, inputs, n);
  const std::vector<program::Input>& decl = program_->inputs();
  key_.clear();
  for (size_t i = 0; i < decl.size(); ++i) {
    const ArrayView& a = inputs[order_[i]];
    if (decl[i].role == program::InputRole::kDim) {
      int64_t v;
      std::memcpy(&v, a.data, sizeof v);
      key_.push_back(-1);
      key_.push_back(v);
    } else {
      key_.push_back(static_cast<int64_t>(a.rank));
      key_.insert(key_.end(), a.shape, a.shape + a.rank);
    }
  }
  ++tick_;
  for (Entry& e : cache_) {
    if (e.key == key_) {
      e.last_used = tick_;
      ++stats_.cache_hits;
      return e.plan.get();
    }
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> check_names;
  std::vector<std::vector<int64_t>> check_shapes;
  for (size_t i = 0; i < decl.size(); ++i) {
    const ArrayView& a = inputs[order_[i]];
    check_names.push_back(decl[i].name);
    if (decl[i].role == program::InputRole::kDim) {
      int64_t v;
      std::memcpy(&v, a.data, sizeof v);
      check_shapes.push_back({v});
    } else {
      check_shapes.emplace_back(a.shape, a.shape + a.rank);
    }
  }
  program::ShapeCheck check = program_->CheckShapes(check_names, check_shapes);
  std::vector<int64_t> vars(static_cast<size_t>(graph_->max_var + 1), 0);
  for (const auto& vp : graph_->var_pos) vars[static_cast<size_t>(vp.first)] = check.var_values[static_cast<size_t>(vp.second)];
  std::unique_ptr<Plan> plan(new Plan(*graph_, vars));
  stats_.last_plan_build_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  ++stats_.plans_built;
  if (capacity_ == 0) {
    uncached_ = std::move(plan);
    return uncached_.get();
  }
  if (cache_.size() >= capacity_) {
    size_t lru = 0;
    for (size_t i = 1; i < cache_.size(); ++i) {
      if (cache_[i].last_used < cache_[lru].last_used) lru = i;
    }
    cache_.erase(cache_.begin() + static_cast<std::ptrdiff_t>(lru));
  }
  cache_.push_back(Entry{key_, std::move(plan), tick_});
  return cache_.back().plan.get();
}

std::vector<std::vector<int64_t>> Runtime::OutputShapes(const char* const* names, const ArrayView* inputs, size_t n) {
  Plan* plan = Prepare(names, inputs, n);
  std::vector<std::vector<int64_t>> out;
  for (size_t v : plan->output_values) out.push_back(plan->shapes[v]);
  return out;
}

void Runtime::Run(const char* const* names, const ArrayView* inputs, size_t n, OutputSink* sink) {
  Plan* plan = Prepare(names, inputs, n);
  const std::vector<program::Output>& outs = program_->outputs();
  for (size_t j = 0; j < outs.size(); ++j) {
    const std::vector<int64_t>& sh = plan->shapes[plan->output_values[j]];
    out_ptr_[j] = sink->Output(j, program_->value_type(outs[j].value).dtype, sh.data(), sh.size());
  }
  if (plan->arena_bytes > arena_size_ || !arena_) {
    size_t size = std::max<size_t>(64, (plan->arena_bytes + 63) / 64 * 64);
    void* mem = std::aligned_alloc(64, size);
    if (mem == nullptr) throw std::bad_alloc();
    arena_.reset(static_cast<uint8_t*>(mem));
    arena_size_ = size;
  }
  const size_t slots = plan->loc.size();
  slot_ptr_.resize(slots);
  uint8_t* base = arena_.get();
  for (size_t s = 0; s < slots; ++s) {
    const SlotLoc& l = plan->loc[s];
    switch (l.kind) {
      case SlotLoc::kNone: slot_ptr_[s] = nullptr; break;
      case SlotLoc::kInput:
        slot_ptr_[s] = static_cast<uint8_t*>(const_cast<void*>(inputs[order_[static_cast<size_t>(l.index)]].data));
        break;
      case SlotLoc::kConst: slot_ptr_[s] = const_cast<uint8_t*>(l.ptr); break;
      case SlotLoc::kArena: slot_ptr_[s] = base + l.index; break;
      case SlotLoc::kOutput: slot_ptr_[s] = static_cast<uint8_t*>(out_ptr_[static_cast<size_t>(l.index)]); break;
      case SlotLoc::kAlias: slot_ptr_[s] = slot_ptr_[static_cast<size_t>(l.index)]; break;
    }
  }
  kernels::ThreadPool* pool = pool_->pool.get();
  for (Step& s : plan->steps) Execute(s, slot_ptr_.data(), pool);
}

}  // namespace runtime
}  // namespace shp
