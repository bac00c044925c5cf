// Our side of the dim-engine benchmark (Google Benchmark). The same workload
// (benchmarks/dim/workload.txt) runs through JAX's symbolic engine and sympy in
// benchmarks/dim/peers.py; benchmarks/dim/run_dim_bench.sh joins the figures and prints the
// ratios. One benchmark iteration is one unit of the scenario (see peers.py for the units
// and for the scope each scenario uses — they are identical here).
//
// Usage: dim_bench [--workload=PATH] [--profile-explain=N] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/dim/solve.h"

namespace dim = shp::dim;

namespace {

std::map<std::string, std::vector<std::string>> g_workload;

void LoadWorkload(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read workload %s\n", path.c_str());
    std::exit(2);
  }
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.front() == '[' && line.back() == ']') {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    g_workload[section].push_back(line);
  }
}

const std::vector<std::string>& W(const char* section) { return g_workload[section]; }

void BM_parse_spec10(benchmark::State& state) {
  auto scope = dim::Scope::Create(W("constraints"));
  const std::string& spec = W("spec")[0];
  for (auto _ : state) benchmark::DoNotOptimize(scope->ParseShape(spec, nullptr));
}

// The first 50 monomials of degree 1..3 in x0..x4, as peers.py enumerates them.
std::vector<std::vector<int>> Poly50Monomials() {
  std::vector<std::vector<int>> out;
  for (int deg = 1; deg <= 3 && out.size() < 50; ++deg) {
    std::vector<std::vector<int>> exps;
    std::vector<int> e(5, 0);
    // all exponent vectors with sum == deg
    std::function<void(int, int)> rec = [&](int i, int left) {
      if (i == 4) {
        e[4] = left;
        exps.push_back(e);
        return;
      }
      for (int x = 0; x <= left; ++x) {
        e[i] = x;
        rec(i + 1, left - x);
      }
    };
    rec(0, deg);
    std::sort(exps.rbegin(), exps.rend());  // descending lexicographic
    for (const auto& x : exps) {
      std::vector<int> factors;
      for (int v = 0; v < 5; ++v) {
        for (int k = 0; k < x[v]; ++k) factors.push_back(v);
      }
      out.push_back(factors);
      if (out.size() == 50) break;
    }
  }
  return out;
}

void BM_poly50(benchmark::State& state) {
  auto scope = dim::Scope::Create({});
  std::vector<const dim::Expr*> x;
  for (int i = 0; i < 5; ++i) x.push_back(scope->Var("x" + std::to_string(i)));
  std::vector<std::vector<int>> monos = Poly50Monomials();
  for (auto _ : state) {
    const dim::Expr* p = nullptr;
    for (size_t i = 0; i < monos.size(); ++i) {
      const dim::Expr* m = x[monos[i][0]];
      for (size_t k = 1; k < monos[i].size(); ++k) m = scope->Mul(m, x[monos[i][k]]);
      m = scope->Mul(m, scope->Constant(static_cast<int64_t>(i) + 1));
      p = p ? scope->Add(p, m) : m;
    }
    benchmark::DoNotOptimize(p);
  }
}

void BM_fold_maxmin(benchmark::State& state) {
  auto scope = dim::Scope::Create({});
  const dim::Expr* a = scope->Var("a");
  const dim::Expr* b = scope->Var("b");
  int not_folded = 0;
  for (auto _ : state) {
    for (int64_t k = 1; k <= 50; ++k) {
      const dim::Expr* ak = scope->Add(a, scope->Constant(k));
      if (scope->Max(ak, a) != ak) ++not_folded;
      if (scope->Min(scope->Add(scope->Scale(b, 2), scope->Constant(k)), b) != b) ++not_folded;
    }
  }
  state.counters["not_folded"] = not_folded;
}

void BM_scope10_create(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(dim::Scope::Create(W("constraints")));
}

void BM_bounds1000(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto scope = dim::Scope::Create(W("constraints"));
    std::vector<const dim::Expr*> exprs;
    for (const std::string& t : W("bounds")) exprs.push_back(scope->Parse(t));
    state.ResumeTiming();
    for (const dim::Expr* e : exprs) benchmark::DoNotOptimize(scope->Bounds(e));
    state.PauseTiming();
    const dim::DecideStats st = scope->decide_stats();
    state.counters["elim_per_query"] = static_cast<double>(st.eliminations) / exprs.size();
    state.counters["work_per_query"] = static_cast<double>(st.work) / exprs.size();
    scope.reset();
    state.ResumeTiming();
  }
}

void BM_compare1000(benchmark::State& state) {
  long counts[3] = {0, 0, 0};
  for (auto _ : state) {
    state.PauseTiming();
    auto scope = dim::Scope::Create(W("constraints"));
    std::vector<std::pair<const dim::Expr*, const dim::Expr*>> pairs;
    for (const std::string& t : W("compare")) {
      size_t i = t.find(">=");
      pairs.emplace_back(scope->Parse(t.substr(0, i)), scope->Parse(t.substr(i + 2)));
    }
    counts[0] = counts[1] = counts[2] = 0;
    state.ResumeTiming();
    for (const auto& p : pairs)
      ++counts[static_cast<int>(scope->Compare(p.first, dim::Cmp::kGe, p.second))];
    state.PauseTiming();
    scope.reset();
    state.ResumeTiming();
  }
  state.counters["true"] = counts[1];
  state.counters["false"] = counts[0];
  state.counters["unknown"] = counts[2];
}

void BM_solve5(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto scope = dim::Scope::Create(W("solve_constraints"));
    std::vector<dim::SolveArg> args;
    for (size_t i = 0; i < W("solve_specs").size(); ++i) {
      dim::SolveArg a;
      a.label = "args[" + std::to_string(i) + "]";
      a.dims = scope->ParseShape(W("solve_specs")[i], nullptr);
      std::stringstream ss(W("solve_shapes")[i]);
      std::string item;
      while (std::getline(ss, item, ',')) a.shape.push_back(std::stoll(item));
      args.push_back(std::move(a));
    }
    state.ResumeTiming();
    dim::Solution sol = dim::Solve(scope.get(), args, dim::SolveOptions());
    benchmark::DoNotOptimize(sol);
    state.PauseTiming();
    if (sol.values[scope->FindVar("h")] != 5) state.SkipWithError("wrong solution");
    scope.reset();
    state.ResumeTiming();
  }
}

// An INCONCLUSIVE answer that explains itself: shp_dim_guard without hints on the first
// [compare] line the engine leaves undecided under the 10 [constraints], which throws
// kInconclusive with two witnesses and the verified fixes (dim/explain.h). The scope is
// created once (the guard records nothing when it fails), so the time is the explanation's.
// The scope and the first undecided [compare] line of explain_inconclusive.
std::unique_ptr<dim::Scope> ExplainCase(const dim::Expr** l, const dim::Expr** r) {
  auto scope = dim::Scope::Create(W("constraints"));
  for (const std::string& t : W("compare")) {
    size_t i = t.find(">=");
    *l = scope->Parse(t.substr(0, i));
    *r = scope->Parse(t.substr(i + 2));
    if (scope->Compare(*l, dim::Cmp::kGe, *r) == dim::Truth::kUnknown) break;
  }
  return scope;
}

void BM_explain_inconclusive(benchmark::State& state) {
  const dim::Expr* l = nullptr;
  const dim::Expr* r = nullptr;
  auto scope = ExplainCase(&l, &r);
  size_t witnesses = 0, fixes = 0;
  for (auto _ : state) {
    try {
      scope->Guard(l, dim::Cmp::kGe, r, "", "");
      state.SkipWithError("the guard was decided");
      break;
    } catch (const shp::Error& e) {
      witnesses = e.detail() ? e.detail()->witnesses.size() : 0;
      fixes = e.detail() ? e.detail()->fixes.size() : 0;
    }
  }
  state.counters["witnesses"] = static_cast<double>(witnesses);
  state.counters["fixes"] = static_cast<double>(fixes);
}

// --profile-explain=N: N explanations of explain_inconclusive's case and nothing else (for
// callgrind: instructions per explanation = the total / N); prints the message once.
int ProfileExplain(int reps) {
  const dim::Expr* l = nullptr;
  const dim::Expr* r = nullptr;
  auto scope = ExplainCase(&l, &r);
  std::string message;
  for (int i = 0; i < reps; ++i) {
    try {
      scope->Guard(l, dim::Cmp::kGe, r, "", "");
      std::fprintf(stderr, "the guard was decided\n");
      return 1;
    } catch (const shp::Error& e) {
      if (i == 0) message = e.message();
    }
  }
  std::printf("%s\n", message.c_str());
  return 0;
}

// A scope of 30 variables and 100 constraints, drawn with a fixed seed around a hidden
// valuation (so they are satisfiable): linear inequalities between two or three variables,
// max/min bounds, congruences and a few products.
std::vector<std::string> Constraints30() {
  std::mt19937_64 rng(30100);
  std::vector<int64_t> v(30);
  for (int64_t& x : v) x = 8 + static_cast<int64_t>(rng() % 1000);
  auto var = [](size_t i) { return "x" + std::to_string(i); };
  auto plus = [](int64_t k) {
    return k < 0 ? " - " + std::to_string(-k) : " + " + std::to_string(k);
  };
  std::vector<std::string> out;
  while (out.size() < 100) {
    const size_t a = rng() % 30, b = rng() % 30, c = rng() % 30;
    if (a == b || b == c || a == c) continue;
    const int64_t slack = static_cast<int64_t>(rng() % 20);
    switch (rng() % 6) {
      case 0:
      case 1:
        out.push_back(var(a) + " >= " + var(b) + plus(v[a] - v[b] - slack));
        break;
      case 2:
        out.push_back(var(a) + " + " + var(b) + " <= 2*" + var(c) +
                      plus(v[a] + v[b] - 2 * v[c] + slack));
        break;
      case 3:
        out.push_back("max(" + var(a) + ", " + var(b) + ") <= " + var(c) +
                      plus(std::max(v[a], v[b]) - v[c] + slack));
        break;
      case 4:
        out.push_back("mod(" + var(a) + ", 4) == " + std::to_string(v[a] % 4));
        break;
      default:
        out.push_back(var(a) + "*" + var(b) + " >= " + var(c) + plus(v[a] * v[b] - v[c] - slack));
        break;
    }
  }
  return out;
}

void BM_scope30_create(benchmark::State& state) {
  const std::vector<std::string> constraints = Constraints30();
  for (auto _ : state) benchmark::DoNotOptimize(dim::Scope::Create(constraints));
}

// One bound query on a fresh scope: the first query pays for deriving every variable's
// bounds (Prepare), so this is the cost of the first answer.
void BM_scope30_bound(benchmark::State& state) {
  const std::vector<std::string> constraints = Constraints30();
  double width = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto scope = dim::Scope::Create(constraints);
    const dim::Expr* e = scope->Parse("x0 + 2*x1 - x2 + max(x3, x4)");
    state.ResumeTiming();
    dim::Interval iv = scope->Bounds(e);
    state.PauseTiming();
    width =
        iv.lo == dim::kNegInf || iv.hi == dim::kPosInf ? -1 : static_cast<double>(iv.hi - iv.lo);
    scope.reset();
    state.ResumeTiming();
  }
  state.counters["width"] = width;
}

}  // namespace

BENCHMARK(BM_parse_spec10);
BENCHMARK(BM_poly50);
BENCHMARK(BM_fold_maxmin);
BENCHMARK(BM_scope10_create);
BENCHMARK(BM_bounds1000);
BENCHMARK(BM_compare1000);
BENCHMARK(BM_solve5);
BENCHMARK(BM_explain_inconclusive);
BENCHMARK(BM_scope30_create)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_scope30_bound)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  std::string workload = "benchmarks/dim/workload.txt";
  std::vector<char*> rest;
  int profile_explain = 0;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--workload=", 0) == 0) {
      workload = a.substr(11);
    } else if (a.rfind("--profile-explain=", 0) == 0) {
      profile_explain = std::atoi(a.c_str() + 18);
    } else {
      rest.push_back(argv[i]);
    }
  }
  LoadWorkload(workload);
  if (profile_explain > 0) return ProfileExplain(profile_explain);
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
