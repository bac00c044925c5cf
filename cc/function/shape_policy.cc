#include "cc/function/shape_policy.h"

#include <utility>

#include "cc/base/error.h"

namespace shp {
namespace function {

namespace {

std::string Axis(const InputSpec& in, size_t axis) {
  return "input '" + in.name + "' axis " + std::to_string(axis);
}

}  // namespace

ShapePolicy::ShapePolicy(std::vector<InputSpec> inputs, PolicyOptions options)
    : inputs_(std::move(inputs)), options_(options) {
  for (const InputSpec& in : inputs_) marks_.emplace_back(in.rank);
}

size_t ShapePolicy::Find(const std::string& input, const char* what) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].name == input) return i;
  }
  std::string all;
  for (const InputSpec& in : inputs_) all += (all.empty() ? "'" : ", '") + in.name + "'";
  throw Error(Code::kNotFound, std::string(what) + ": the function has no input named '" + input +
                                   "' (its inputs: " + (all.empty() ? "none" : all) + ")");
}

size_t ShapePolicy::FindAxis(const std::string& input, int64_t axis, const char* what) const {
  const size_t i = Find(input, what);
  if (axis < 0 || static_cast<size_t>(axis) >= inputs_[i].rank) {
    throw Error(Code::kInvalidArgument, std::string(what) + ": axis " + std::to_string(axis) +
                                            " is out of range for input '" + input + "' of rank " +
                                            std::to_string(inputs_[i].rank));
  }
  return i;
}

void ShapePolicy::MarkDynamic(const std::string& input, int64_t axis, int64_t min, int64_t max) {
  const size_t i = FindAxis(input, axis, "mark_dynamic");
  if (min < 0 || min > max) {
    throw Error(Code::kInvalidArgument, "mark_dynamic: the range [" + std::to_string(min) + ", " +
                                            std::to_string(max) + "] of " +
                                            Axis(inputs_[i], static_cast<size_t>(axis)) +
                                            " is not a range of sizes (0 <= min <= max)");
  }
  AxisMark& m = marks_[i][static_cast<size_t>(axis)];
  m.kind = AxisMark::kDynamic;
  m.min = min;
  m.max = max;
}

void ShapePolicy::MarkStatic(const std::string& input, int64_t axis) {
  const size_t i = FindAxis(input, axis, "mark_static");
  marks_[i][static_cast<size_t>(axis)] = AxisMark{AxisMark::kStatic, 0, dim::kPosInf};
}

void ShapePolicy::MarkUnbacked(const std::string& input, int64_t axis) {
  const size_t i = FindAxis(input, axis, "mark_unbacked");
  marks_[i][static_cast<size_t>(axis)] = AxisMark{AxisMark::kUnbacked, 0, dim::kPosInf};
}

void ShapePolicy::MaybeMarkDynamic(const std::string& input, int64_t axis) {
  const size_t i = FindAxis(input, axis, "maybe_mark_dynamic");
  marks_[i][static_cast<size_t>(axis)] = AxisMark{AxisMark::kMaybeDynamic, 0, dim::kPosInf};
}

std::string ShapePolicy::VarName(size_t i, size_t axis) const {
  size_t k = axis;
  for (size_t j = 0; j < i; ++j) k += inputs_[j].rank;
  return "s" + std::to_string(k);
}

bool ShapePolicy::Dynamic(size_t i, size_t axis, const std::vector<std::vector<int64_t>>& shapes,
                          std::string* why_static) const {
  const AxisMark& m = marks_[i][axis];
  if (m.kind == AxisMark::kStatic) {
    *why_static = "marked static";
    return false;
  }
  if (m.kind == AxisMark::kDynamic || m.kind == AxisMark::kUnbacked ||
      m.kind == AxisMark::kMaybeDynamic) {
    return true;
  }
  switch (options_.dynamic) {
    case DynamicMode::kAll:
      return true;
    case DynamicMode::kNone:
      *why_static = "the dynamic mode is NONE";
      return false;
    case DynamicMode::kAuto:
      break;
  }
  for (const auto& seen : history_) {
    if (seen[i][axis] != shapes[i][axis]) return true;
  }
  *why_static = "only one size seen";
  return false;
}

TracePlan ShapePolicy::Plan(const std::vector<std::vector<int64_t>>& shapes,
                            bool fully_dynamic) const {
  TracePlan p;
  p.fully_dynamic = fully_dynamic;
  struct DynAxis {
    size_t input, axis;
    std::string var;
  };
  std::vector<DynAxis> dynamic;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    std::string spec = "(";
    for (size_t a = 0; a < inputs_[i].rank; ++a) {
      const std::string var = VarName(i, a);
      spec += (a ? ", " : "") + var;
      const int64_t size = shapes[i][a];
      const AxisMark& m = marks_[i][a];
      if (m.kind != AxisMark::kUnbacked) p.hints.emplace_back(var, size);  // unbacked: no hint
      std::string why;
      const bool dyn = fully_dynamic || Dynamic(i, a, shapes, &why);
      if (dyn && m.kind == AxisMark::kDynamic) {
        p.ranges.push_back({var, m.min, m.max});
      } else {
        p.ranges.push_back({var, 0, dim::kPosInf});
      }
      if (dyn && m.kind != AxisMark::kUnbacked) {  // unbacked axes are never duck-sized
        dynamic.push_back({i, a, var});
      } else if (!dyn) {
        const std::string what = Axis(inputs_[i], a) + ": static (" + why + ")";
        p.static_reasons.push_back(what);
        p.assumptions.push_back({var, "", size, what});
      }
    }
    p.specs.push_back(spec + (inputs_[i].rank == 1 ? ",)" : ")"));
  }
  // Duck sizing: dynamic axes whose sizes were equal in this call and in every traced one
  // share their size, through a guard. Sizes 0 and 1 coincide too often to mean anything.
  if (options_.duck_sizing && !fully_dynamic) {
    std::vector<bool> taken(dynamic.size(), false);
    for (size_t x = 0; x < dynamic.size(); ++x) {
      if (taken[x]) continue;
      const int64_t size = shapes[dynamic[x].input][dynamic[x].axis];
      if (size <= 1) continue;
      for (size_t y = x + 1; y < dynamic.size(); ++y) {
        if (taken[y] || shapes[dynamic[y].input][dynamic[y].axis] != size) continue;
        bool always = true;
        for (const auto& seen : history_) {
          always &=
              seen[dynamic[x].input][dynamic[x].axis] == seen[dynamic[y].input][dynamic[y].axis];
        }
        if (!always) continue;
        taken[y] = true;
        p.assumptions.push_back(
            {dynamic[y].var, dynamic[x].var, 0,
             "duck sizing: " + Axis(inputs_[dynamic[y].input], dynamic[y].axis) +
                 " had the size of " + Axis(inputs_[dynamic[x].input], dynamic[x].axis) + " (" +
                 std::to_string(size) + ") in every call traced so far"});
      }
    }
  }
  return p;
}

void ShapePolicy::Record(const std::vector<std::vector<int64_t>>& shapes, const TracePlan& plan) {
  history_.push_back(shapes);
  plans_.push_back(plan);
}

std::vector<std::string> ShapePolicy::Explain(const std::vector<std::vector<int64_t>>& shapes,
                                              const TracePlan& next) const {
  // The variable's input and axis, and its size in this call.
  auto locate = [&](const std::string& var, size_t* input, size_t* axis) {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      for (size_t a = 0; a < inputs_[i].rank; ++a) {
        if (VarName(i, a) == var) {
          *input = i;
          *axis = a;
          return true;
        }
      }
    }
    return false;
  };
  auto static_in_next = [&](const std::string& var, std::string* why) {
    for (const Assumption& a : next.assumptions) {
      if (a.var == var && a.other_var.empty()) {
        *why = a.message;
        return true;
      }
    }
    return false;
  };
  std::vector<std::string> out;
  for (size_t t = 0; t < plans_.size(); ++t) {
    for (const Assumption& a : plans_[t].assumptions) {
      size_t i, ax, j, bx;
      if (!locate(a.var, &i, &ax)) continue;
      const int64_t size = shapes[i][ax];
      std::string line;
      if (a.other_var.empty()) {
        if (size == a.value) continue;
        std::string why;
        line = Axis(inputs_[i], ax) + ": size " + std::to_string(size) + " failed guard " + a.var +
               " == " + std::to_string(a.value) + " (" +
               (static_in_next(a.var, &why) ? "still " + why.substr(why.find("static"))
                                            : std::string("marked dynamic now")) +
               ")";
      } else {
        if (!locate(a.other_var, &j, &bx) || size == shapes[j][bx]) continue;
        line = Axis(inputs_[i], ax) + ": size " + std::to_string(size) + " failed guard " + a.var +
               " == " + a.other_var + " (duck sizing; " + Axis(inputs_[j], bx) + " is " +
               std::to_string(shapes[j][bx]) + "; separate sizes now)";
      }
      out.push_back("variant " + std::to_string(t) + ": " + line);
      break;  // the first failure of each variant, as the runtime reports it
    }
  }
  return out;
}

}  // namespace function
}  // namespace shp
