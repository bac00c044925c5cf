// libFuzzer target for the dim engine: constraint loading, expression and shape parsing,
// the decision procedure, printing and solving. Input: text lines; lines before a "---"
// line are constraints, the others are expressions or shape specs. Besides crashes, hangs
// and leaks (ASan/UBSan), it checks two invariants: printing then parsing gives back the
// same interned expression, and an expression's bounds contain its value under a solution.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/dim/solve.h"

namespace dim = shp::dim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> constraints, items;
  bool in_constraints = text.find("---") != std::string::npos;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line == "---") {
      in_constraints = false;
      continue;
    }
    (in_constraints ? constraints : items).push_back(line);
  }
  std::unique_ptr<dim::Scope> scope;
  try {
    scope = dim::Scope::Create(constraints);
  } catch (const shp::Error&) {
    return 0;
  }
  std::vector<const dim::Expr*> exprs;
  for (const std::string& item : items) {
    try {
      const dim::Expr* e = scope->Parse(item);
      if (scope->Parse(scope->ToString(e)) != e) __builtin_trap();  // printing round-trips
      dim::Interval iv = scope->Bounds(e);
      if (iv.lo > iv.hi) __builtin_trap();
      for (const dim::Expr* other : exprs) {
        scope->Compare(e, dim::Cmp::kGe, other);
        scope->Compare(e, dim::Cmp::kEq, other);
        scope->Max(e, other);
      }
      exprs.push_back(e);
    } catch (const shp::Error&) {
    }
    try {
      std::vector<const dim::Expr*> dims = scope->ParseShape(item, nullptr);
      std::vector<int64_t> shape;
      for (size_t i = 0; i < dims.size(); ++i) shape.push_back(static_cast<int64_t>((item.size() * 7 + i * 3) % 17));
      dim::Solution sol = dim::Solve(scope.get(), {{"args[0]", dims, shape}}, dim::SolveOptions());
      // Under a complete solution (every constraint was checked), bounds contain the values.
      bool complete = sol.known.size() == scope->variables().size();
      for (size_t v = 0; v < sol.known.size(); ++v) complete &= sol.known[v];
      for (const dim::Expr* e : complete ? exprs : std::vector<const dim::Expr*>()) {
        bool all_known = true;
        for (int32_t v : scope->VarsOf(e)) all_known &= v < static_cast<int32_t>(sol.known.size()) && sol.known[v];
        if (!all_known) continue;
        int64_t value;
        try {
          value = scope->Evaluate(e, sol.values, sol.known);
        } catch (const shp::Error&) {
          continue;
        }
        dim::Interval iv = scope->Bounds(e);
        if (value < iv.lo || value > iv.hi) __builtin_trap();
      }
    } catch (const shp::Error&) {
    }
  }
  return 0;
}
