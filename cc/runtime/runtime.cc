#include "cc/runtime/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/kernels/narrow.h"
#include "cc/kernels/simd_target.h"
#include "cc/runtime/plan.h"

namespace shp {
namespace runtime {

static_assert(kMaxNumThreads == kernels::kMaxThreads, "one thread cap");

bool FusionFromEnv() {
  const char* v = std::getenv(kFusionEnv);
  if (v == nullptr || *v == 0) return true;
  const std::string s(v);
  if (s == "off" || s == "0" || s == "false") return false;
  if (s != "on" && s != "1" && s != "true") {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      std::fprintf(stderr, "libshapepoly: %s=%s ignored: expected off, 0, false, on, 1 or true\n",
                   kFusionEnv, v);
    }
  }
  return true;
}

struct Runtime::PoolHolder {
  std::unique_ptr<kernels::ThreadPool> pool;  // nullptr: one thread
};

Runtime::Runtime(std::shared_ptr<const program::Program> program, const Options& options)
    : program_(std::move(program)), pool_(new PoolHolder) {
  if (!program_) throw Error(Code::kInvalidArgument, "runtime: no program");
  if (options.num_threads < 0 || options.num_threads > kMaxNumThreads) {
    throw Error(Code::kInvalidArgument,
                "runtime: num_threads must be in [0, " + std::to_string(kMaxNumThreads) +
                    "] (0: every hardware thread), got " + std::to_string(options.num_threads));
  }
  const bool fuse = FusionFromEnv();
  for (size_t v = 0; v < program_->num_variants(); ++v) {
    graphs_.emplace_back(new Graph(program_->variant(v), true, fuse && options.fuse_matmul_epilogue,
                                   fuse && options.fuse_elementwise));
  }
  MakeControlFlowRuntimes(options);
  variant_stats_.resize(program_->num_variants());
  num_threads_ = options.num_threads == 0
                     ? std::min(kernels::ThreadPool::HardwareConcurrency(), kMaxNumThreads)
                     : options.num_threads;
  // Threads the system refuses throw kOutOfMemory from the pool, which has joined its workers.
  if (num_threads_ > 1) pool_->pool.reset(new kernels::ThreadPool(num_threads_));
  capacity_ = options.plan_cache_capacity;
  bound_allocation_bytes_ = options.bound_allocation_bytes;
  const std::vector<program::Input>& decl = program_->inputs();
  order_.resize(decl.size());
  bound_.resize(decl.size());
  out_ptr_.resize(program_->outputs().size());
  for (const program::Input& in : decl) {
    in_facts_.push_back(
        InputFact{in.name.c_str(), in.type.dtype, in.role == program::InputRole::kDim});
  }
  for (const program::Output& out : program_->outputs())
    out_dtypes_.push_back(program_->value_type(out.value).dtype);
  // Default values (parameters, grad's cotangent): views of the program's bytes.
  defaults_.resize(decl.size());
  default_shapes_.resize(decl.size());
  // Positional binding only for plain programs: a transformation's inputs (x and x.tangent,
  // both f64 scalars) or a default could silently take each other's place.
  for (const program::Input& in : decl) {
    if (in.role == program::InputRole::kParameter || in.role == program::InputRole::kTangent ||
        in.role == program::InputRole::kCotangent || in.has_default())
      by_name_only_ = true;
  }
  for (const program::Output& out : program_->outputs()) {
    if (out.role != program::OutputRole::kPrimal) by_name_only_ = true;
  }
  is_fill_.assign(decl.size(), false);
  absent_.assign(decl.size(), false);
  fill_element_.resize(decl.size());
  fill_data_.resize(decl.size());
  for (size_t i = 0; i < decl.size(); ++i) {
    if (!decl[i].has_fill) continue;
    is_fill_[i] = true;
    fill_element_[i].fill(0);
    kernels::StoreScalar(decl[i].type.dtype, decl[i].fill, fill_element_[i].data());
    defaults_[i] = ArrayView{decl[i].type.dtype, nullptr, 0, nullptr};
  }
  for (size_t i = 0; i < decl.size(); ++i) {
    if (decl[i].default_buffer < 0) continue;
    for (const dim::Expr* d : decl[i].type.shape) default_shapes_[i].push_back(d->ConstantTerm());
    const std::string& bytes = program_->buffers()[static_cast<size_t>(decl[i].default_buffer)];
    defaults_[i] = ArrayView{decl[i].type.dtype, default_shapes_[i].data(),
                             default_shapes_[i].size(), bytes.data()};
  }
}

Runtime::~Runtime() = default;

const char* Runtime::SimdTarget() { return kernels::SimdTargetName(); }

namespace {

// " (the tangent of 'x')" for a derived input named "x.tangent"; "" otherwise.
std::string RoleNote(const program::Input& in) {
  const char* what = in.role == program::InputRole::kTangent     ? "tangent"
                     : in.role == program::InputRole::kCotangent ? "cotangent"
                                                                 : nullptr;
  size_t dot = in.name.rfind(trace::kDerivedNameMark);
  if (what == nullptr || dot == std::string::npos) return "";
  return std::string(" (the ") + what + " of '" + in.name.substr(0, dot) + "')";
}

}  // namespace

namespace {
// strcmp(name.c_str(), c) == 0, inline: names are short, and this runs for every input of
// every call.
inline bool SameName(const char* a, const char* c) {
  for (size_t i = 0;; ++i) {
    if (a[i] != c[i]) return false;
    if (a[i] == '\0') return true;
  }
}

// The plan-cache key holds one part per input in declared order: -1 then the value for a dim
// input, the rank then the dims for an array, kAbsentKey alone for a fill default left out.
// AppendKeyPart writes input `a`'s part;
// KeyPartMatches compares it with the part at key[*p] and moves *p past it.
constexpr int64_t kAbsentKey = -3;

void AppendKeyPart(bool is_dim, const ArrayView& a, std::vector<int64_t>* key) {
  if (is_dim) {
    int64_t v;
    std::memcpy(&v, a.data, sizeof v);
    key->push_back(-1);
    key->push_back(v);
  } else {
    key->push_back(static_cast<int64_t>(a.rank));
    key->insert(key->end(), a.shape, a.shape + a.rank);
  }
}

inline bool KeyPartMatches(const int64_t* key, size_t key_size, bool is_dim, const ArrayView& a,
                           size_t* p) {
  const size_t at = *p;
  if (is_dim) {
    int64_t v;
    std::memcpy(&v, a.data, sizeof v);
    if (at + 2 > key_size || key[at] != -1 || key[at + 1] != v) return false;
    *p = at + 2;
    return true;
  }
  const size_t r = a.rank;
  if (at + 1 + r > key_size || key[at] != static_cast<int64_t>(r)) return false;
  for (size_t j = 0; j < r; ++j) {
    if (key[at + 1 + j] != a.shape[j]) return false;
  }
  *p = at + 1 + r;
  return true;
}
}  // namespace

void Runtime::BindByName(const char* const* names, const ArrayView* inputs, size_t n) {
  const std::vector<program::Input>& decl = program_->inputs();
  if (names == nullptr && by_name_only_) {
    std::string with;
    for (const program::Input& in : decl) {
      if (in.has_default() ||
          (in.role != program::InputRole::kData && in.role != program::InputRole::kDim))
        with += (with.empty() ? "'" : ", '") + in.name + "'";
    }
    throw Error(Code::kInvalidArgument,
                std::string(with.empty() ? "the program was made by a transformation (jvp, vjp "
                                           "or grad)"
                                         : "the program has inputs with default values or "
                                           "derived roles (" +
                                               with + ")") +
                    ": bind every input by name, so that no value silently takes the place of "
                    "another");
  }
  if (names == nullptr) {
    if (n != decl.size()) {
      // Name what is missing (or how many are extra), whatever the caller meant.
      std::string list;
      for (size_t i = n; i < decl.size(); ++i)
        list += (list.empty() ? "'" : ", '") + decl[i].name + "'" + RoleNote(decl[i]);
      std::string all;
      for (const program::Input& in : decl) all += (all.empty() ? "'" : ", '") + in.name + "'";
      throw Error(
          Code::kInvalidArgument,
          (n < decl.size() ? std::string(decl.size() - n > 1 ? "inputs " : "input ") + list +
                                 (decl.size() - n > 1 ? " are" : " is") + " missing: "
                           : std::string()) +
              "the program has " + std::to_string(decl.size()) + " input" +
              (decl.size() == 1 ? "" : "s") + " (" + (all.empty() ? "none" : all) + ") but " +
              std::to_string(n) + (n == 1 ? " was" : " were") +
              " given without names (then every input is given, in this order)");
    }
    for (size_t k = 0; k < n; ++k) order_[k] = static_cast<int32_t>(k);
  } else {
    for (int32_t& o : order_) o = -1;
    std::string repeated;
    for (size_t k = 0; k < n; ++k) {
      if (names[k] == nullptr)
        throw Error(Code::kInvalidArgument, "input name " + std::to_string(k) + " is NULL");
      // Names usually come in declared order: try input k first.
      size_t found = k < decl.size() && SameName(decl[k].name.c_str(), names[k]) ? k : decl.size();
      for (size_t i = 0; found == decl.size() && i < decl.size(); ++i) {
        if (SameName(decl[i].name.c_str(), names[k])) {
          found = i;
          break;
        }
      }
      if (found == decl.size()) {
        std::string all;
        for (const program::Input& in : decl) all += (all.empty() ? "'" : ", '") + in.name + "'";
        throw Error(Code::kNotFound, std::string("the program has no input named '") + names[k] +
                                         "' (its inputs: " + (all.empty() ? "none" : all) + ")");
      }
      if (order_[found] >= 0) {
        if (repeated.find("'" + decl[found].name + "'") == std::string::npos) {
          repeated += (repeated.empty() ? "'" : ", '") + decl[found].name + "'";
        }
        continue;
      }
      order_[found] = static_cast<int32_t>(k);
    }
    if (!repeated.empty())
      throw Error(Code::kInvalidArgument, "input " + repeated + " given more than once");
    std::string missing;
    int count = 0;
    for (size_t i = 0; i < decl.size(); ++i) {
      if (order_[i] < 0 && !decl[i].has_default()) {
        missing += (missing.empty() ? "'" : ", '") + decl[i].name + "'" + RoleNote(decl[i]);
        ++count;
      }
    }
    if (count) {
      throw Error(Code::kInvalidArgument, std::string(count > 1 ? "inputs " : "input ") + missing +
                                              (count > 1 ? " are" : " is") + " missing");
    }
  }
  any_absent_ = false;
  for (size_t i = 0; i < decl.size(); ++i) {
    bound_[i] = order_[i] >= 0 ? &inputs[order_[i]] : &defaults_[i];
    absent_[i] = order_[i] < 0 && is_fill_[i];
    any_absent_ = any_absent_ || absent_[i];
  }
}

void Runtime::ThrowBadInput(size_t i) const {
  const ArrayView& a = *bound_[i];
  const program::Input& d = program_->inputs()[i];
  if (a.dtype != d.type.dtype) {
    throw Error(Code::kDtypeMismatch, "input '" + d.name + "' has dtype " +
                                          trace::DTypeName(a.dtype) + " but the program requires " +
                                          trace::DTypeName(d.type.dtype));
  }
  if (a.rank != 0) {
    throw Error(Code::kShapeMismatch,
                "input '" + d.name +
                    "' gives a dimension variable: it must be a scalar (rank 0), got rank " +
                    std::to_string(a.rank));
  }
  throw Error(Code::kInvalidArgument, "input '" + d.name + "' has no data");
}

void Runtime::Bind(const char* const* names, const ArrayView* inputs, size_t n) {
  const size_t m = in_facts_.size();
  // Every input given in declared order (by name, or by position without defaults): one pass.
  bool in_order = n == m && (names != nullptr || !by_name_only_);
  if (in_order && names != nullptr) {
    for (size_t k = 0; k < n; ++k) {
      if (names[k] == nullptr || !SameName(in_facts_[k].name, names[k])) {
        in_order = false;
        break;
      }
    }
  }
  if (in_order) {
    for (size_t k = 0; k < n; ++k) bound_[k] = &inputs[k];
    if (any_absent_) {
      absent_.assign(m, false);
      any_absent_ = false;
    }
  } else {
    BindByName(names, inputs, n);
  }
  for (size_t i = 0; i < m; ++i) {
    const ArrayView& a = *bound_[i];
    const InputFact& f = in_facts_[i];
    if (a.dtype != f.dtype || (f.is_dim && (a.rank != 0 || a.data == nullptr))) ThrowBadInput(i);
  }
}

bool Runtime::BoundKeyIs(const std::vector<int64_t>& key) const {
  size_t p = 0;
  for (size_t i = 0; i < in_facts_.size(); ++i) {
    if (absent_[i]) {  // a fill default left out: its shape follows from the others
      if (p >= key.size() || key[p] != kAbsentKey) return false;
      ++p;
      continue;
    }
    if (!KeyPartMatches(key.data(), key.size(), in_facts_[i].is_dim, *bound_[i], &p)) return false;
  }
  return p == key.size();
}

Plan* Runtime::PrepareLast(const char* const* names, const ArrayView* inputs, size_t n) {
  if (last_entry_ >= cache_.size() || n != in_facts_.size() || (names == nullptr && by_name_only_))
    return nullptr;
  Entry& e = cache_[last_entry_];
  const int64_t* key = e.key.data();
  const size_t key_size = e.key.size();
  size_t p = 0;
  for (size_t k = 0; k < n; ++k) {
    const InputFact& f = in_facts_[k];
    const ArrayView& a = inputs[k];
    if (names != nullptr && (names[k] == nullptr || !SameName(f.name, names[k]))) return nullptr;
    if (a.dtype != f.dtype || (f.is_dim && (a.rank != 0 || a.data == nullptr))) return nullptr;
    if (!KeyPartMatches(key, key_size, f.is_dim, a, &p)) return nullptr;
  }
  if (p != key_size) return nullptr;
  for (size_t k = 0; k < n; ++k) bound_[k] = &inputs[k];
  if (any_absent_) {
    absent_.assign(n, false);
    any_absent_ = false;
  }
  e.last_used = ++tick_;
  ++stats_.cache_hits;
  ++variant_stats_[static_cast<size_t>(e.variant)].cache_hits;
  variant_ = e.variant;
  return e.plan.get();
}

Plan* Runtime::Prepare(const char* const* names, const ArrayView* inputs, size_t n) {
  if (Plan* plan = PrepareLast(names, inputs, n)) return plan;
  Bind(names, inputs, n);
  const std::vector<program::Input>& decl = program_->inputs();
  // The shapes of the last call again: compared in place, without building the key.
  if (last_entry_ < cache_.size() && BoundKeyIs(cache_[last_entry_].key)) {
    Entry& e = cache_[last_entry_];
    e.last_used = ++tick_;
    ++stats_.cache_hits;
    ++variant_stats_[static_cast<size_t>(e.variant)].cache_hits;
    variant_ = e.variant;
    return e.plan.get();
  }
  // (A staged program's later stages are cached under longer keys: never equal to these.)
  BuildKey();
  ++tick_;
  for (Entry& e : cache_) {
    if (e.key == key_) {
      last_entry_ = static_cast<size_t>(&e - cache_.data());
      e.last_used = tick_;
      ++stats_.cache_hits;
      ++variant_stats_[static_cast<size_t>(e.variant)].cache_hits;
      variant_ = e.variant;
      return e.plan.get();
    }
  }
  auto start = std::chrono::steady_clock::now();
  // Accepted shapes of most programs are checked without the program's lock; refused ones and
  // programs that need the general solver go through CheckShapes, which words the error.
  check_shapes_.resize(decl.size());
  check_ranks_.resize(decl.size());
  dim_values_.resize(decl.size());
  for (size_t i = 0; i < decl.size(); ++i) {
    const ArrayView& a = *bound_[i];
    if (absent_[i]) {
      check_shapes_[i] = nullptr;
      check_ranks_[i] = program::Program::kAbsentRank;
    } else if (decl[i].role == program::InputRole::kDim) {
      std::memcpy(&dim_values_[i], a.data, sizeof(int64_t));
      check_shapes_[i] = &dim_values_[i];
      check_ranks_[i] = 1;
    } else {
      check_shapes_[i] = a.shape;
      check_ranks_[i] = a.rank;
    }
  }
  int32_t variant =
      program_->TryCheckShapesLockFree(check_shapes_.data(), check_ranks_.data(), &var_values_);
  if (variant < 0) variant = CheckShapesLocked(&var_values_);
  const Graph& graph = *graphs_[static_cast<size_t>(variant)];
  std::shared_ptr<Plan> plan =
      std::make_shared<Plan>(graph, var_values_, graph.num_stages() > 1 ? 0 : -1);
  CountBuilt(variant, start);
  variant_ = variant;
  return InsertPlan(key_, std::move(plan), variant).get();
}

void Runtime::CountBuilt(int32_t variant, std::chrono::steady_clock::time_point start) {
  stats_.last_plan_build_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  ++stats_.plans_built;
  Stats& vs = variant_stats_[static_cast<size_t>(variant)];
  vs.last_plan_build_ns = stats_.last_plan_build_ns;
  ++vs.plans_built;
}

std::shared_ptr<Plan> Runtime::FindPlan(const std::vector<int64_t>& key, int32_t variant) {
  for (Entry& e : cache_) {
    if (e.key != key) continue;
    e.last_used = ++tick_;
    ++stats_.cache_hits;
    ++variant_stats_[static_cast<size_t>(variant)].cache_hits;
    return e.plan;
  }
  return nullptr;
}

std::shared_ptr<Plan> Runtime::InsertPlan(const std::vector<int64_t>& key,
                                          std::shared_ptr<Plan> plan, int32_t variant) {
  if (capacity_ == 0) {
    uncached_ = plan;
    return plan;
  }
  if (cache_.size() >= capacity_) {
    size_t lru = 0;
    for (size_t i = 1; i < cache_.size(); ++i) {
      if (cache_[i].last_used < cache_[lru].last_used) lru = i;
    }
    cache_.erase(cache_.begin() + static_cast<std::ptrdiff_t>(lru));
  }
  cache_.push_back(Entry{key, plan, ++tick_, variant});  // (the key copied only when cached)
  last_entry_ = cache_.size() - 1;
  return plan;
}

int32_t Runtime::CheckShapesLocked(std::vector<int64_t>* values) {
  const std::vector<program::Input>& decl = program_->inputs();
  std::vector<std::string> check_names;
  std::vector<std::vector<int64_t>> check_shapes;
  for (size_t i = 0; i < decl.size(); ++i) {
    const ArrayView& a = *bound_[i];
    if (absent_[i]) continue;  // a fill default: its shape follows from the others
    check_names.push_back(decl[i].name);
    if (decl[i].role == program::InputRole::kDim) {
      int64_t v;
      std::memcpy(&v, a.data, sizeof v);
      check_shapes.push_back({v});
    } else {
      check_shapes.emplace_back(a.shape, a.shape + a.rank);
    }
  }
  // Picks the variant (the first whose guards hold) and checks the shapes against it.
  program::ShapeCheck check = program_->CheckShapes(check_names, check_shapes);
  const Graph& graph = *graphs_[static_cast<size_t>(check.variant)];
  values->assign(static_cast<size_t>(graph.max_var + 1), 0);
  for (const auto& vp : graph.var_pos)
    (*values)[static_cast<size_t>(vp.first)] = check.var_values[static_cast<size_t>(vp.second)];
  return check.variant;
}

int64_t Runtime::Cost(CostKind kind, const char* const* names, const ArrayView* inputs, size_t n) {
  const Plan* plan = Prepare(names, inputs, n);
  if (graphs_[static_cast<size_t>(variant_)]->num_stages() > 1) {
    throw Error(Code::kUnsupported,
                "runtime cost: the program has data-dependent sizes (nonzero, boolean_mask or "
                "size_from_value), so its cost depends on the data, not only on the input "
                "shapes: use the symbolic formula of shp_program_cost, whose data-dependent "
                "variables are bounded by shp_program_variable_bounds");
  }
  return CostValueAt(*program_, kind, static_cast<size_t>(variant_), plan->vars());
}

void Runtime::ComputeBounds(const Plan& plan) {
  const Graph& g = *graphs_[static_cast<size_t>(variant_)];
  const program::Program& p = g.p;
  // Every variable's range at these inputs: the solved ones exact; an unbacked one its
  // declared range narrowed by the bounds its op guarantees, in the order of their producers.
  const std::vector<int64_t>& vars = plan.vars();
  std::vector<std::pair<int64_t, int64_t>> iv(vars.size());
  for (size_t v = 0; v < vars.size(); ++v) iv[v] = {vars[v], vars[v]};
  for (size_t k = 1; k < g.num_stages(); ++k) {
    for (int32_t u : g.stage_vars[k]) iv[static_cast<size_t>(u)] = p.UnbackedInterval(u, iv);
  }
  bounds_.assign(p.outputs().size(), {});
  for (size_t j = 0; j < p.outputs().size(); ++j) {
    for (const dim::Expr* e : p.value_type(p.outputs()[j].value).shape) {
      DimBounds b;
      std::vector<dim::VarRef> refs;
      dim::CollectVars(e, &refs);
      for (const dim::VarRef& r : refs) b.data_dependent |= p.UnbackedProducer(r.index) >= 0;
      if (b.data_dependent) {
        std::pair<int64_t, int64_t> r = dim::EvaluateBounds(e, iv);
        b.min = std::max<int64_t>(0, r.first);  // a size
        b.max = r.second;
      } else {
        b.min = b.max = dim::Evaluate(e, vars);
      }
      bounds_[j].push_back(b);
    }
  }
}

std::vector<std::vector<int64_t>> Runtime::OutputShapes(const char* const* names,
                                                        const ArrayView* inputs, size_t n) {
  Plan* plan = Prepare(names, inputs, n);
  std::vector<std::vector<int64_t>> out;
  if (graphs_[static_cast<size_t>(variant_)]->num_stages() > 1) {
    ComputeBounds(*plan);
    for (const std::vector<DimBounds>& o : bounds_) {
      std::vector<int64_t> sh;
      for (const DimBounds& b : o) sh.push_back(b.data_dependent ? -1 : b.min);
      out.push_back(std::move(sh));
    }
    return out;
  }
  for (size_t v : plan->output_values) out.push_back(plan->shapes[v]);
  bounds_.assign(out.size(), {});
  for (size_t j = 0; j < out.size(); ++j) {
    for (int64_t d : out[j]) bounds_[j].push_back(DimBounds{false, d, d});
  }
  return out;
}

void Runtime::RunSteps(const Plan& plan, uint8_t* base) {
  const size_t slots = plan.loc.size();
  slot_ptr_.resize(slots);
  for (size_t s = 0; s < slots; ++s) {
    const SlotLoc& l = plan.loc[s];
    switch (l.kind) {
      case SlotLoc::kNone:
        slot_ptr_[s] = nullptr;
        break;
      case SlotLoc::kInput:
        slot_ptr_[s] =
            static_cast<uint8_t*>(const_cast<void*>(bound_[static_cast<size_t>(l.index)]->data));
        break;
      case SlotLoc::kConst:
        slot_ptr_[s] = const_cast<uint8_t*>(l.ptr);
        break;
      case SlotLoc::kArena:
        slot_ptr_[s] = base + l.index;
        break;
      case SlotLoc::kOutput:
        slot_ptr_[s] = static_cast<uint8_t*>(out_ptr_[static_cast<size_t>(l.index)]);
        break;
      case SlotLoc::kAlias:
        slot_ptr_[s] = slot_ptr_[static_cast<size_t>(l.index)];
        break;
      case SlotLoc::kPrior:
        slot_ptr_[s] = value_ptr_[static_cast<size_t>(l.index)];
        break;
    }
  }
  ops::RunContext ctx{slot_ptr_.data(), pool_->pool.get()};
  for (const auto& step : plan.steps) step->Run(ctx);
}

void Runtime::FillAbsent(const Plan& plan) {
  for (size_t i = 0; i < absent_.size(); ++i) {
    if (!absent_[i]) continue;
    const std::vector<int64_t>& sh = plan.shapes[i];
    ArrayView& view = defaults_[i];
    if (view.data != nullptr && default_shapes_[i] == sh) continue;  // filled for this shape
    // The plan's sizes are checked: the byte size fits (the bytes of one value of the plan).
    const size_t size = trace::DTypeSize(in_facts_[i].dtype);
    size_t count = 1;
    for (int64_t d : sh) count *= static_cast<size_t>(d);
    std::vector<uint8_t>& buf = fill_data_[i];
    view.data = nullptr;  // (until filled: an allocation failure leaves no stale view)
    buf.assign(std::max<size_t>(count * size, 1), 0);
    const uint8_t* e = fill_element_[i].data();
    if (count > 0) {
      std::memcpy(buf.data(), e, size);
      // Doubling copies: log2(count) memcpy calls.
      for (size_t done = 1; done < count;) {
        const size_t k = std::min(done, count - done);
        std::memcpy(buf.data() + done * size, buf.data(), k * size);
        done += k;
      }
    }
    default_shapes_[i] = sh;
    view.shape = default_shapes_[i].data();
    view.rank = default_shapes_[i].size();
    view.data = buf.data();
  }
}

void Runtime::Run(const char* const* names, const ArrayView* inputs, size_t n, OutputSink* sink) {
  Plan* plan = Prepare(names, inputs, n);
  if (any_absent_) FillAbsent(*plan);
  if (plan->stage() >= 0) {
    // The cache holds the plan; keep it alive while the later stages are cached.
    std::shared_ptr<Plan> first = FindCurrent(plan);
    RunStaged(std::move(first), sink);
    last_variant_ = variant_;
    return;
  }
  for (size_t j = 0; j < out_dtypes_.size(); ++j) {
    const std::vector<int64_t>& sh = plan->shapes[plan->output_values[j]];
    out_ptr_[j] = sink->Output(j, out_dtypes_[j], sh.data(), sh.size());
  }
  RunSteps(*plan, arena_.Reserve(plan->arena_bytes));
  last_variant_ = variant_;
}

std::shared_ptr<Plan> Runtime::FindCurrent(const Plan* plan) const {
  if (uncached_.get() == plan) return uncached_;
  for (const Entry& e : cache_) {
    if (e.plan.get() == plan) return e.plan;
  }
  throw Error(Code::kInternal, "runtime: the prepared plan is not cached");
}

void Runtime::BuildKey() {
  const std::vector<program::Input>& decl = program_->inputs();
  key_.clear();
  for (size_t i = 0; i < decl.size(); ++i) {
    if (absent_[i]) {
      key_.push_back(kAbsentKey);
      continue;
    }
    AppendKeyPart(decl[i].role == program::InputRole::kDim, *bound_[i], &key_);
  }
}

void Runtime::RunStaged(std::shared_ptr<Plan> first, OutputSink* sink) {
  const Graph& g = *graphs_[static_cast<size_t>(variant_)];
  const program::Program& p = g.p;
  const size_t stages = g.num_stages();
  value_ptr_.assign(g.num_values, nullptr);
  stage_plans_.assign(stages, nullptr);
  stage_plans_[0] = std::move(first);
  // The next call on these shapes finds stage 0 without a search (Prepare's fast path).
  const size_t first_entry = last_entry_;
  while (stage_arenas_.size() + 1 < stages) stage_arenas_.emplace_back(new Arena());
  BuildKey();
  stage_key_ = key_;
  stage_key_.push_back(-2);  // the unbacked values follow
  std::vector<int64_t> vars = stage_plans_[0]->vars();
  for (size_t k = 0; k < stages; ++k) {
    if (k > 0) {
      // The value of stage k's unbacked variable, read from the data the earlier stages
      // computed; then its checks; then stage k's plan for it.
      const Plan& prev = *stage_plans_[k - 1];
      const size_t node = static_cast<size_t>(g.stage_begin[k]);
      const program::Node& nd = p.nodes()[node];
      std::vector<ops::OpDef::OperandData> data;
      for (int32_t o : nd.operands) {
        const size_t ou = static_cast<size_t>(o);
        data.push_back(
            ops::OpDef::OperandData{value_ptr_[ou], &prev.shapes[ou], p.value_type(o).dtype});
      }
      ops::NodeView view{nd.op,         nd.attrs,
                         nd.operands,   static_cast<int32_t>(g.num_inputs + node),
                         nd.type.dtype, g.prepared[node].get()};
      if (nd.op == ops::OpKind::kScan) {
        RunScanForSizes(g, node, data, &vars);  // runs the first iteration, sets the sizes
      } else if (ops::IsControlFlow(nd.op)) {
        RunCondForSizes(g, node, data, &vars);  // runs the taken branch, sets its sizes
      } else {
        const int32_t u = g.stage_vars[k].at(0);
        vars[static_cast<size_t>(u)] = ops::Def(nd.op).UnbackedValue(view, data, pool_->pool.get());
      }
      for (int32_t u : g.stage_vars[k]) {
        p.CheckUnbacked(u, vars);
        stage_key_.push_back(vars[static_cast<size_t>(u)]);
      }
      std::shared_ptr<Plan> plan = FindPlan(stage_key_, variant_);
      if (plan == nullptr) {
        auto start = std::chrono::steady_clock::now();
        plan = std::make_shared<Plan>(g, vars, static_cast<int>(k));
        if (bound_allocation_bytes_ > 0) ReserveForBound(g, vars, k, *plan);
        CountBuilt(variant_, start);
        plan = InsertPlan(stage_key_, std::move(plan), variant_);
      }
      stage_plans_[k] = std::move(plan);
    }
    const Plan& plan = *stage_plans_[k];
    if (k + 1 == stages) {
      // Every size is known: the outputs.
      const std::vector<program::Output>& outs = p.outputs();
      for (size_t j = 0; j < outs.size(); ++j) {
        const std::vector<int64_t>& sh = plan.shapes[plan.output_values[j]];
        out_ptr_[j] = sink->Output(j, p.value_type(outs[j].value).dtype, sh.data(), sh.size());
      }
    }
    if (k > 0) {
      // (An eviction may have moved the entry: a search of pointers then.)
      last_entry_ = first_entry;
      if (last_entry_ >= cache_.size() || cache_[last_entry_].plan != stage_plans_[0]) {
        last_entry_ = SIZE_MAX;
        for (size_t e = 0; e < cache_.size(); ++e) {
          if (cache_[e].plan == stage_plans_[0]) last_entry_ = e;
        }
      }
    }
    Arena& arena = k == 0 ? arena_ : *stage_arenas_[k - 1];
    RunSteps(plan, arena.Reserve(plan.arena_bytes));
    const size_t end = g.num_inputs + g.stage_end(k);
    for (size_t v = 0; v < end; ++v) {
      if (v >= g.num_inputs + static_cast<size_t>(g.stage_begin[k]) || v < g.num_inputs)
        value_ptr_[v] = slot_ptr_[v];
    }
  }
}

void Runtime::ReserveForBound(const Graph& g, std::vector<int64_t> vars, size_t k,
                              const Plan& actual) {
  const program::Program& p = g.p;
  std::vector<std::pair<int64_t, int64_t>> iv(vars.size());
  for (size_t v = 0; v < vars.size(); ++v) iv[v] = {vars[v], vars[v]};
  bool larger = false;
  for (int32_t u : g.stage_vars[k]) {
    const int64_t hi = p.UnbackedInterval(u, iv).second;
    if (hi == dim::kPosInf) return;
    larger = larger || hi > vars[static_cast<size_t>(u)];
    vars[static_cast<size_t>(u)] = std::max(hi, vars[static_cast<size_t>(u)]);
  }
  if (!larger) return;
  try {
    Plan at_bound(g, vars, static_cast<int>(k));
    const size_t bytes = std::max(at_bound.arena_bytes, actual.arena_bytes);
    if (bytes <= bound_allocation_bytes_) stage_arenas_[k - 1]->Reserve(bytes);
  } catch (const Error&) {
    // The bound's sizes overflow: allocate for the actual sizes.
  }
}

}  // namespace runtime
}  // namespace shp
