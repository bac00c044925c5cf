// Large scopes through the dim engine (issue 17, finding 5): seeded random scopes of N
// variables and M linear constraints that hold at a hidden random valuation, and the time of
// each kind of query on them. Every answer is also checked against the hidden valuation (a
// bound must contain its value there, a TRUE/FALSE comparison must hold/fail there), so a
// fast but unsound engine fails the run.
//
// Per scenario (N, M) and seed, timed one call at a time:
//   create        Scope::Create with the declarations and the M constraints
//   first_bounds  the first Bounds of the scope (derives the variables' bounds)
//   bounds        Bounds of further random expressions (linear, products, floordiv, mod,
//                 max, min), one median per seed
//   compare       Compare(e1 >= e2) of random expressions
//   check         Check of a new fact that holds at the hidden valuation
//   after_check   the next Bounds after that Check
//   parse_maxmin  Parse of a max/min-heavy expression (the folds consult the procedure)
// Prints the median over seeds of each (milliseconds), the target (<= 50 ms per query) and
// met / MISSED; the last line counts them: `targets: N met, M MISSED, K not measured`.
// Exits 1 if an answer is unsound.
//
// Usage: large_scope_bench [--seeds=K] (default 3)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"

namespace dim = shp::dim;

namespace {

constexpr double kTargetMs = 50.0;

struct Scenario {
  int n, m;
};
const Scenario kScenarios[] = {{40, 150}, {70, 300}, {100, 600}};
const char* kKinds[] = {"create", "first_bounds", "bounds",      "compare",
                        "check",  "after_check",  "parse_maxmin"};
constexpr int kNumKinds = sizeof(kKinds) / sizeof(kKinds[0]);

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
}

// A random linear form over 2-5 distinct variables with coefficients in -5..5 (not 0), as
// text, and its value at the hidden valuation.
struct LinForm {
  std::string text;
  int64_t value = 0;
};

class Case {
 public:
  Case(int n, int m, uint32_t seed) : n_(n), rng_(seed) {
    for (int v = 0; v < n; ++v) {
      hidden_.push_back(Uniform(1, 1000));
      unbounded_.push_back(Uniform(0, 4) == 0);  // one in five has no upper bound
    }
    for (int i = 0; i < m; ++i) constraints_.push_back(Fact());
  }

  std::vector<std::string> constraints_;
  std::vector<dim::Scope::Declaration> Declarations() const {
    std::vector<dim::Scope::Declaration> out;
    for (int v = 0; v < n_; ++v) {
      out.push_back({Name(v), 1, unbounded_[v] ? dim::kPosInf : int64_t{1000}});
    }
    return out;
  }

  // A constraint (or an assertion's text) that holds at the hidden valuation: mostly
  // `form >= value - slack`, one in eight `form == value`.
  std::string Fact() {
    LinForm f = Form();
    if (Uniform(0, 7) == 0) return f.text + " == " + std::to_string(f.value);
    return f.text + " >= " + std::to_string(f.value - Uniform(0, 40));
  }

  LinForm Form() {
    int k = static_cast<int>(Uniform(2, 5));
    std::vector<int> vars;
    while (static_cast<int>(vars.size()) < k) {
      int v = static_cast<int>(Uniform(0, n_ - 1));
      if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
    }
    LinForm f;
    for (int v : vars) {
      int64_t c = Uniform(1, 5) * (Uniform(0, 1) ? 1 : -1);
      if (f.text.empty()) {
        f.text = (c == -1 ? "-" : c == 1 ? "" : std::to_string(c) + "*") + Name(v);
      } else {
        f.text += (c < 0 ? " - " : " + ") +
                  (std::abs(c) == 1 ? "" : std::to_string(std::abs(c)) + "*") + Name(v);
      }
      f.value += c * hidden_[v];
    }
    return f;
  }

  // A random query expression: linear, a product plus a linear part, floordiv, mod, max, min.
  std::string Query() {
    LinForm a = Form(), b = Form();
    switch (Uniform(0, 5)) {
      case 0:
        return a.text;
      case 1:
        return Name(static_cast<int>(Uniform(0, n_ - 1))) + "*" +
               Name(static_cast<int>(Uniform(0, n_ - 1))) + " + " + a.text;
      case 2:
        return "floordiv(" + a.text + ", " + std::to_string(Uniform(2, 9)) + ")";
      case 3:
        return "mod(" + a.text + ", " + std::to_string(Uniform(2, 9)) + ") + " + b.text;
      case 4:
        return "max(" + a.text + ", " + b.text + ")";
      default:
        return "min(" + a.text + ", " + b.text + ") + " +
               Name(static_cast<int>(Uniform(0, n_ - 1)));
    }
  }

  // Nested max/min of linear forms, 4 levels.
  std::string MaxMinHeavy() {
    std::string e = Form().text;
    for (int level = 0; level < 4; ++level) {
      e = std::string(level % 2 ? "min(" : "max(") + e + ", " + Form().text + ") + " +
          Name(static_cast<int>(Uniform(0, n_ - 1)));
    }
    return e;
  }

  static std::string Name(int v) { return "x" + std::to_string(v); }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  // The hidden valuation in the scope's variable order.
  void Valuation(const dim::Scope& s, std::vector<int64_t>* values, std::vector<bool>* known) {
    values->assign(s.variables().size(), 0);
    known->assign(s.variables().size(), true);
    for (int v = 0; v < n_; ++v) {
      int32_t i = s.FindVar(Name(v));
      if (i >= 0) (*values)[i] = hidden_[v];
    }
  }

 private:
  int n_;
  std::mt19937 rng_;
  std::vector<int64_t> hidden_;
  std::vector<bool> unbounded_;
};

long g_unsound = 0;

void CheckBounds(dim::Scope* s, Case* c, const dim::Expr* e, dim::Interval iv) {
  std::vector<int64_t> values;
  std::vector<bool> known;
  c->Valuation(*s, &values, &known);
  int64_t x = s->Evaluate(e, values, known);
  if (x < iv.lo || x > iv.hi) {
    ++g_unsound;
    std::fprintf(stderr, "UNSOUND bounds of %s: [%lld, %lld] but %lld at the valuation\n",
                 s->ToString(e).c_str(), static_cast<long long>(iv.lo),
                 static_cast<long long>(iv.hi), static_cast<long long>(x));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--seeds=", 0) == 0) {
      seeds = std::max(1, std::atoi(a.c_str() + 8));
    } else {
      std::fprintf(stderr, "usage: large_scope_bench [--seeds=K]\n");
      return 2;
    }
  }
  std::printf("%-14s%-14s%12s%10s  verdict\n", "scenario", "step", "median ms", "target");
  int met = 0, missed = 0;
  for (const Scenario& sc : kScenarios) {
    std::vector<double> times[kNumKinds];
    for (int seed = 1; seed <= seeds; ++seed) {
      Case c(sc.n, sc.m, static_cast<uint32_t>(seed * 1000003 + sc.n * 31 + sc.m));
      double t0 = NowMs();
      std::unique_ptr<dim::Scope> s = dim::Scope::Create(c.constraints_, c.Declarations());
      times[0].push_back(NowMs() - t0);
      std::vector<std::string> texts;
      for (int i = 0; i < 9; ++i) texts.push_back(c.Query());
      auto bounds = [&](const std::string& text, std::vector<double>* out) {
        // Parsing is not timed here (parse_maxmin times it).
        const dim::Expr* e = s->Parse(text);
        double t = NowMs();
        dim::Interval iv = s->Bounds(e);
        out->push_back(NowMs() - t);
        CheckBounds(s.get(), &c, e, iv);
      };
      // The first query is linear: parsing it folds nothing, so Bounds pays for deriving
      // the variables' bounds.
      bounds(c.Form().text, &times[1]);
      std::vector<double> rest;
      for (const std::string& t : texts) bounds(t, &rest);
      times[2].push_back(Median(rest));
      {
        const dim::Expr* a = s->Parse(c.Query());
        const dim::Expr* b = s->Parse(c.Query());
        double t = NowMs();
        dim::Truth r = s->Compare(a, dim::Cmp::kGe, b);
        times[3].push_back(NowMs() - t);
        std::vector<int64_t> values;
        std::vector<bool> known;
        c.Valuation(*s, &values, &known);
        bool holds = s->Evaluate(a, values, known) >= s->Evaluate(b, values, known);
        if ((r == dim::Truth::kTrue && !holds) || (r == dim::Truth::kFalse && holds)) {
          ++g_unsound;
          std::fprintf(stderr, "UNSOUND compare %s >= %s\n", s->ToString(a).c_str(),
                       s->ToString(b).c_str());
        }
      }
      {
        std::string fact = c.Fact();
        size_t at = fact.find(fact.find(">=") != std::string::npos ? ">=" : "==");
        bool eq = fact[at] == '=';
        const dim::Expr* l = s->Parse(fact.substr(0, at));
        const dim::Expr* r = s->Parse(fact.substr(at + 2));
        double t = NowMs();
        s->Check(l, eq ? dim::Cmp::kEq : dim::Cmp::kGe, r, "bench");
        times[4].push_back(NowMs() - t);
        bounds(c.Form().text, &times[5]);
      }
      {
        std::string text = c.MaxMinHeavy();
        double t = NowMs();
        const dim::Expr* e = s->Parse(text);
        times[6].push_back(NowMs() - t);
        CheckBounds(s.get(), &c, e, s->Bounds(e));
      }
    }
    char name[32];
    std::snprintf(name, sizeof(name), "n%d_m%d", sc.n, sc.m);
    for (int k = 0; k < kNumKinds; ++k) {
      double ms = Median(times[k]);
      bool ok = ms <= kTargetMs;
      met += ok;
      missed += !ok;
      std::printf("%-14s%-14s%12.2f%7s%.0f  %s\n", name, kKinds[k], ms, "<=", kTargetMs,
                  ok ? "met" : "MISSED");
      std::fflush(stdout);
    }
  }
  if (g_unsound) std::printf("UNSOUND answers: %ld\n", g_unsound);
  std::printf("targets: %d met, %d MISSED, 0 not measured\n", met, missed);
  return g_unsound ? 1 : 0;
}
