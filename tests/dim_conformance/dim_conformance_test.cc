// Conformance of the dimension engine (cc/dim) against facts that JAX's and PyTorch's own test
// suites and documentation establish: the *.txt files beside this test (README.md gives their
// format). For every fact the test
//   - asks the engine (Scope::Compare or Scope::Bounds);
//   - checks the truth by brute force over a box of valuations filtered by the scope's
//     constraints, with its own evaluator of the fact text (not the engine's normal form);
//   - classifies the engine's answer against the peer's: agree, stronger (we decide where the
//     peer does not, or our bounds are tighter), weaker (the other way round), unsound (a
//     valuation refutes our answer).
// It fails on any unsound answer of ours, on any data error (a peer answer that a valuation
// refutes, a scope with no valuation in its box, a line it cannot read), and when the share
// of agree-or-stronger answers against a peer falls below that peer's floor (kFloors).
// Weaker answers do not fail it: they are listed, with their source, for the engine work.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace {

using I128 = __int128;

// The fact files, one per source. The peer is the part of the name before the first '_'.
const char* const kFiles[] = {
    "jax_shape_poly_test.txt",    "jax_shape_poly_doc.txt",        "torch_dynamic_shapes.txt",
    "torch_sympy_utils.txt",      "torch_export_dims.txt",         "project_nested_floors.txt",
    "project_maxmin_lattice.txt", "project_polynomial_bounds.txt", "project_congruence_chains.txt",
};
const char kDir[] = "tests/dim_conformance/";

// The lowest share of agree-or-stronger answers accepted per peer: the current rate minus a
// small margin, so a regression fails (README.md "Numbers" has the current rates).
struct Floor {
  const char* peer;
  double rate;
};
const Floor kFloors[] = {{"jax", 0.99}, {"torch", 0.99}};

// Values of the evaluator stay within +-2^62; beyond that a valuation is skipped (the boxes are
// small, so only deliberate powers get there).
constexpr I128 kLimit = static_cast<I128>(int64_t{1} << 62);

// ---- An evaluator of the fact text, independent of the engine ----

enum class Op { kNum, kVar, kAdd, kSub, kMul, kNeg, kFloorDiv, kMod, kMax, kMin, kPow };

struct Node {
  Op op = Op::kNum;
  int64_t value = 0;  // kNum: the constant; kVar: the variable's index; kPow: the exponent
  std::unique_ptr<Node> a, b;
};

// Recursive descent over the grammar of cc/dim/parse.h (expressions only). Throws
// std::runtime_error naming the text, the column and what it expected.
class TreeParser {
 public:
  TreeParser(const std::string& text, const std::vector<std::string>& names)
      : text_(text), names_(names) {}

  std::unique_ptr<Node> ParseAll() {
    std::unique_ptr<Node> n = Expr();
    Skip();
    if (pos_ != text_.size()) Fail("end of expression");
    return n;
  }

 private:
  [[noreturn]] void Fail(const std::string& expected) const {
    throw std::runtime_error("cannot read '" + text_ + "' at column " + std::to_string(pos_ + 1) +
                             ": expected " + expected);
  }
  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Eat(const std::string& s) {
    Skip();
    if (text_.compare(pos_, s.size(), s) == 0) {
      pos_ += s.size();
      return true;
    }
    return false;
  }
  static std::unique_ptr<Node> Make(Op op, std::unique_ptr<Node> a, std::unique_ptr<Node> b) {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  std::unique_ptr<Node> Expr() {
    std::unique_ptr<Node> n = Term();
    for (;;) {
      if (Eat("+")) {
        n = Make(Op::kAdd, std::move(n), Term());
      } else if (Eat("-")) {
        n = Make(Op::kSub, std::move(n), Term());
      } else {
        return n;
      }
    }
  }
  std::unique_ptr<Node> Term() {
    std::unique_ptr<Node> n = Unary();
    for (;;) {
      if (Eat("*")) {
        n = Make(Op::kMul, std::move(n), Unary());
      } else if (Eat("//")) {
        n = Make(Op::kFloorDiv, std::move(n), Unary());
      } else if (Eat("%")) {
        n = Make(Op::kMod, std::move(n), Unary());
      } else {
        return n;
      }
    }
  }
  std::unique_ptr<Node> Unary() {
    if (Eat("-")) return Make(Op::kNeg, Unary(), nullptr);
    return Power();
  }
  std::unique_ptr<Node> Power() {
    std::unique_ptr<Node> n = Primary();
    if (Eat("^")) {
      Skip();
      size_t start = pos_;
      while (pos_ < text_.size() && isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (start == pos_ || pos_ - start > 2) Fail("an exponent below 100");
      auto p = Make(Op::kPow, std::move(n), nullptr);
      p->value = std::stoll(text_.substr(start, pos_ - start));
      return p;
    }
    return n;
  }
  std::unique_ptr<Node> Primary() {
    Skip();
    if (pos_ >= text_.size()) Fail("a number, a name, a call or '('");
    char c = text_[pos_];
    if (isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ - start > 18) Fail("a constant below 10^18");
      auto n = std::make_unique<Node>();
      n->value = std::stoll(text_.substr(start, pos_ - start));
      return n;
    }
    if (Eat("(")) {
      std::unique_ptr<Node> n = Expr();
      if (!Eat(")")) Fail("')'");
      return n;
    }
    if (isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name = text_.substr(start, pos_ - start);
      static const std::map<std::string, Op> kCalls = {
          {"floordiv", Op::kFloorDiv}, {"mod", Op::kMod}, {"max", Op::kMax}, {"min", Op::kMin}};
      auto call = kCalls.find(name);
      if (call != kCalls.end()) {
        if (!Eat("(")) Fail("'(' after " + name);
        std::unique_ptr<Node> a = Expr();
        if (!Eat(",")) Fail("',' in " + name);
        std::unique_ptr<Node> b = Expr();
        if (!Eat(")")) Fail("')' closing " + name);
        return Make(call->second, std::move(a), std::move(b));
      }
      auto it = std::find(names_.begin(), names_.end(), name);
      if (it == names_.end()) Fail("a variable of the scope (found '" + name + "')");
      auto n = std::make_unique<Node>();
      n->op = Op::kVar;
      n->value = it - names_.begin();
      return n;
    }
    Fail("a number, a name, a call or '('");
  }

  const std::string& text_;
  const std::vector<std::string>& names_;
  size_t pos_ = 0;
};

I128 FloorDiv128(I128 a, I128 b) {
  I128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// The value of `n` at `vals`, with Python's floor semantics; nullopt where it is undefined (a
// zero divisor) or leaves +-2^62.
std::optional<I128> Eval(const Node& n, const std::vector<int64_t>& vals) {
  if (n.op == Op::kNum) return n.value;
  if (n.op == Op::kVar) return vals[n.value];
  std::optional<I128> a = Eval(*n.a, vals);
  if (!a) return std::nullopt;
  I128 r = 0;
  if (n.op == Op::kNeg) {
    r = -*a;
  } else if (n.op == Op::kPow) {
    r = 1;
    for (int64_t i = 0; i < n.value; ++i) {
      r *= *a;
      if (r > kLimit || r < -kLimit) return std::nullopt;
    }
  } else {
    std::optional<I128> b = Eval(*n.b, vals);
    if (!b) return std::nullopt;
    switch (n.op) {
      case Op::kAdd:
        r = *a + *b;
        break;
      case Op::kSub:
        r = *a - *b;
        break;
      case Op::kMul:
        r = *a * *b;
        break;
      case Op::kFloorDiv:
        if (*b == 0) return std::nullopt;
        r = FloorDiv128(*a, *b);
        break;
      case Op::kMod:
        if (*b == 0) return std::nullopt;
        r = *a - *b * FloorDiv128(*a, *b);
        break;
      case Op::kMax:
        r = std::max(*a, *b);
        break;
      case Op::kMin:
        r = std::min(*a, *b);
        break;
      default:
        return std::nullopt;
    }
  }
  if (r > kLimit || r < -kLimit) return std::nullopt;
  return r;
}

bool Holds(I128 a, Cmp op, I128 b) {
  switch (op) {
    case Cmp::kEq:
      return a == b;
    case Cmp::kNe:
      return a != b;
    case Cmp::kLt:
      return a < b;
    case Cmp::kLe:
      return a <= b;
    case Cmp::kGt:
      return a > b;
    case Cmp::kGe:
      return a >= b;
  }
  return false;
}

// ---- The fact files ----

struct Comparison {
  std::string lhs, rhs;
  Cmp op = Cmp::kEq;
};

// Splits "lhs OP rhs" at its comparison operator outside parentheses.
Comparison SplitComparison(const std::string& text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth != 0 || (c != '<' && c != '>' && c != '=' && c != '!')) continue;
    bool two = i + 1 < text.size() && text[i + 1] == '=';
    Comparison r;
    if (c == '=' || c == '!') {
      if (!two) break;
      r.op = c == '=' ? Cmp::kEq : Cmp::kNe;
    } else if (c == '<') {
      r.op = two ? Cmp::kLe : Cmp::kLt;
    } else {
      r.op = two ? Cmp::kGe : Cmp::kGt;
    }
    r.lhs = text.substr(0, i);
    r.rhs = text.substr(i + (two ? 2 : 1));
    return r;
  }
  throw std::runtime_error("no comparison operator (>=, <=, ==, !=, >, <) in '" + text + "'");
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == sep && depth == 0) {
      parts.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(Trim(cur));
  return parts;
}

int64_t ParseBound(const std::string& text) {
  std::string t = Trim(text);
  if (t == "-inf") return kNegInf;
  if (t == "inf" || t == "+inf") return kPosInf;
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != t.size()) {
    throw std::runtime_error("expected an integer, -inf or inf, found '" + t + "'");
  }
  return v;
}

// "name" or "name=lo..hi".
void ParseRange(const std::string& text, std::string* name, int64_t* lo, int64_t* hi) {
  size_t eq = text.find('=');
  *name = Trim(text.substr(0, eq));
  if (eq == std::string::npos) return;
  std::string range = text.substr(eq + 1);
  size_t dots = range.find("..");
  if (dots == std::string::npos) {
    throw std::runtime_error("expected name=lo..hi, found '" + text + "'");
  }
  *lo = ParseBound(range.substr(0, dots));
  *hi = ParseBound(range.substr(dots + 2));
  if (*lo > *hi) throw std::runtime_error("empty range in '" + text + "'");
}

struct ScopeSpec {
  std::vector<std::string> names;
  std::vector<int64_t> lo, hi;          // declared ranges (default [1, inf))
  std::vector<int64_t> box_lo, box_hi;  // the brute-force box
  std::vector<std::string> constraints;
  std::string where;  // file:line of its `scope` line
};

enum class Kind { kCmp, kBounds, kEqual };
enum class Verdict { kAgree, kStronger, kWeaker, kUnsound };

struct Fact {
  Kind kind = Kind::kCmp;
  std::string family, body, source, where, peer;
  size_t scope = 0;
  Comparison cmp;
  Truth peer_truth = Truth::kUnknown;
  int64_t peer_lo = kNegInf, peer_hi = kPosInf;
};

Truth ParseTruth(const std::string& text) {
  std::string t = Trim(text);
  if (t == "TRUE") return Truth::kTrue;
  if (t == "FALSE") return Truth::kFalse;
  if (t == "UNKNOWN") return Truth::kUnknown;
  throw std::runtime_error("expected TRUE, FALSE or UNKNOWN, found '" + t + "'");
}

// The default width of the box per variable, by the number of variables: about 20k
// valuations at most.
int64_t DefaultWidth(size_t n) {
  static const int64_t kWidths[] = {1, 41, 25, 13, 9, 7};
  return n < 6 ? kWidths[n] : 5;
}

void SetDefaultBox(ScopeSpec* s) {
  int64_t w = DefaultWidth(s->names.size());
  for (size_t i = 0; i < s->names.size(); ++i) {
    int64_t lo = s->lo[i], hi = s->hi[i];
    if (lo != kNegInf) {
      s->box_lo.push_back(lo);
      s->box_hi.push_back(hi == kPosInf || hi - lo >= w ? lo + w - 1 : hi);
    } else if (hi != kPosInf) {
      s->box_lo.push_back(hi - w + 1);
      s->box_hi.push_back(hi);
    } else {
      s->box_lo.push_back(-(w / 2));
      s->box_hi.push_back(w / 2);
    }
  }
}

// Reads one fact file into `scopes` and `facts`; errors name file:line.
void LoadFile(const std::string& file, std::vector<ScopeSpec>* scopes, std::vector<Fact>* facts,
              std::vector<std::string>* errors) {
  std::ifstream in(std::string(kDir) + file);
  if (!in) {
    errors->push_back(file + ": cannot open (is it in the test's data?)");
    return;
  }
  std::string peer = file.substr(0, file.find('_'));
  std::string line, source;
  bool have_scope = false;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string where = file + ":" + std::to_string(number);
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.find(' ');
    std::string word = line.substr(0, space);
    std::string rest = space == std::string::npos ? "" : Trim(line.substr(space + 1));
    try {
      if (word == "source") {
        source = rest;
      } else if (word == "scope") {
        std::vector<std::string> parts = Split(rest, ';');
        ScopeSpec s;
        s.where = where;
        for (const std::string& v : Split(parts[0], ',')) {
          std::string name;
          int64_t lo = 1, hi = kPosInf;
          ParseRange(v, &name, &lo, &hi);
          if (name.empty()) throw std::runtime_error("empty variable name");
          s.names.push_back(name);
          s.lo.push_back(lo);
          s.hi.push_back(hi);
        }
        s.constraints.assign(parts.begin() + 1, parts.end());
        SetDefaultBox(&s);
        scopes->push_back(s);
        have_scope = true;
      } else if (word == "box") {
        if (!have_scope) throw std::runtime_error("box before any scope");
        ScopeSpec& s = scopes->back();
        for (const std::string& v : Split(rest, ',')) {
          std::string name;
          int64_t lo = 0, hi = -1;
          ParseRange(v, &name, &lo, &hi);
          auto it = std::find(s.names.begin(), s.names.end(), name);
          if (it == s.names.end() || hi < lo || lo == kNegInf || hi == kPosInf) {
            throw std::runtime_error("box: expected finite name=lo..hi of a scope variable");
          }
          s.box_lo[it - s.names.begin()] = lo;
          s.box_hi[it - s.names.begin()] = hi;
        }
      } else if (word == "cmp" || word == "bounds" || word == "equal") {
        if (!have_scope) throw std::runtime_error("fact before any scope");
        if (source.empty()) throw std::runtime_error("fact before any source");
        size_t bar = rest.find('|');
        std::vector<std::string> parts =
            Split(rest.substr(bar == std::string::npos ? 0 : bar + 1), '|');
        if (bar == std::string::npos || parts.size() < 2) {
          throw std::runtime_error("expected '<kind> <family> | <fact> | <peer answer>'");
        }
        Fact f;
        f.family = Trim(rest.substr(0, bar));
        f.body = parts[0];
        f.source = source;
        f.where = where;
        f.peer = peer;
        f.scope = scopes->size() - 1;
        if (word == "bounds") {
          f.kind = Kind::kBounds;
          std::vector<std::string> b = Split(parts[1], ',');
          if (b.size() != 2) throw std::runtime_error("bounds: expected '<lo>, <hi>'");
          f.peer_lo = ParseBound(b[0]);
          f.peer_hi = ParseBound(b[1]);
        } else {
          f.kind = word == "cmp" ? Kind::kCmp : Kind::kEqual;
          f.cmp = SplitComparison(f.body);
          f.peer_truth = ParseTruth(parts[1]);
          if (f.kind == Kind::kEqual && f.cmp.op != Cmp::kEq) {
            throw std::runtime_error("equal: expected '<e1> == <e2>'");
          }
        }
        facts->push_back(f);
      } else {
        throw std::runtime_error("unknown line kind '" + word + "'");
      }
    } catch (const std::exception& e) {
      errors->push_back(where + ": " + e.what());
    }
  }
}

// ---- Brute force ----

// A constraint of a scope, read by the evaluator.
struct TreeFact {
  std::unique_ptr<Node> lhs, rhs;
  Cmp op;
};

std::vector<std::vector<int64_t>> Satisfying(const ScopeSpec& s) {
  std::vector<TreeFact> cs;
  for (const std::string& c : s.constraints) {
    Comparison cmp = SplitComparison(c);
    cs.push_back(
        {TreeParser(cmp.lhs, s.names).ParseAll(), TreeParser(cmp.rhs, s.names).ParseAll(), cmp.op});
  }
  I128 total = 1;
  for (size_t i = 0; i < s.names.size(); ++i) total *= s.box_hi[i] - s.box_lo[i] + 1;
  if (total > 2000000) throw std::runtime_error("box of more than 2M valuations");
  std::vector<std::vector<int64_t>> sat;
  std::vector<int64_t> v(s.box_lo);
  for (;;) {
    bool ok = true;
    for (const TreeFact& c : cs) {
      std::optional<I128> a = Eval(*c.lhs, v), b = Eval(*c.rhs, v);
      if (!a || !b || !Holds(*a, c.op, *b)) {
        ok = false;
        break;
      }
    }
    if (ok) sat.push_back(v);
    size_t i = 0;
    for (; i < v.size(); ++i) {
      if (v[i] < s.box_hi[i]) {
        ++v[i];
        break;
      }
      v[i] = s.box_lo[i];
    }
    if (i == v.size()) break;
  }
  return sat;
}

const char* TruthName(Truth t) {
  return t == Truth::kTrue ? "TRUE" : t == Truth::kFalse ? "FALSE" : "UNKNOWN";
}

std::string BoundText(int64_t v) {
  return v == kNegInf ? "-inf" : v == kPosInf ? "inf" : std::to_string(v);
}

std::string IntervalText(int64_t lo, int64_t hi) {
  return "[" + BoundText(lo) + ", " + BoundText(hi) + "]";
}

struct Tally {
  int n = 0, agree = 0, stronger = 0, weaker = 0, unsound = 0;
  void Add(Verdict v) {
    ++n;
    agree += v == Verdict::kAgree;
    stronger += v == Verdict::kStronger;
    weaker += v == Verdict::kWeaker;
    unsound += v == Verdict::kUnsound;
  }
  double Rate() const { return n == 0 ? 1.0 : static_cast<double>(agree + stronger) / n; }
  std::string Text() const {
    char buf[160];
    snprintf(buf, sizeof(buf),
             "%4d facts, %4d agree, %3d stronger, %3d weaker, %d unsound (%.1f%%)", n, agree,
             stronger, weaker, unsound, 100.0 * Rate());
    return buf;
  }
};

const char* KindName(Kind k) {
  return k == Kind::kCmp ? "cmp" : k == Kind::kBounds ? "bounds" : "equal";
}

TEST(DimConformance, AgainstJaxAndPyTorch) {
  auto start = std::chrono::steady_clock::now();
  std::vector<ScopeSpec> scopes;
  std::vector<Fact> facts;
  std::vector<std::string> errors;  // data errors: each fails the test
  for (const char* file : kFiles) {
    size_t before = facts.size();
    LoadFile(file, &scopes, &facts, &errors);
    if (facts.size() == before) errors.push_back(std::string(file) + ": no facts");
  }

  // The engine's scope and the satisfying valuations, per scope line.
  std::vector<std::unique_ptr<Scope>> engines(scopes.size());
  std::vector<std::vector<std::vector<int64_t>>> sats(scopes.size());
  std::vector<std::string> unsound_scopes;
  for (size_t i = 0; i < scopes.size(); ++i) {
    const ScopeSpec& s = scopes[i];
    try {
      sats[i] = Satisfying(s);
      if (sats[i].empty()) errors.push_back(s.where + ": no valuation of the box satisfies it");
    } catch (const std::exception& e) {
      errors.push_back(s.where + ": " + e.what());
    }
    std::vector<Scope::Declaration> decls;
    for (size_t v = 0; v < s.names.size(); ++v) {
      if (s.lo[v] != 1 || s.hi[v] != kPosInf) decls.push_back({s.names[v], s.lo[v], s.hi[v]});
    }
    try {
      engines[i] = Scope::Create(s.constraints, decls);
    } catch (const Error& e) {
      // Calling satisfiable constraints unsatisfiable is unsound; any other refusal is a
      // fact-file error (the scope must be one the engine takes).
      if (e.code() == Code::kUnsatisfiable && !sats[i].empty()) {
        std::string witness;
        for (size_t v = 0; v < s.names.size(); ++v) {
          witness += (v ? ", " : "") + s.names[v] + " = " + std::to_string(sats[i][0][v]);
        }
        unsound_scopes.push_back(s.where + ": the engine calls the scope unsatisfiable (" +
                                 e.message() + "), but " + witness + " satisfies it");
      } else {
        errors.push_back(s.where + ": the engine refuses the scope: " + e.message());
      }
    }
  }

  std::map<std::string, Tally> by_source, by_family, by_peer, by_kind;
  Tally total;
  // Facts we leave UNKNOWN although the box never refutes them: candidates for the engine
  // (evidence on the box only, not a proof).
  std::vector<std::string> weaker, stronger, unsound, undecided;
  int same_form = 0, equal_facts = 0;
  for (const Fact& f : facts) {
    const ScopeSpec& s = scopes[f.scope];
    Scope* scope = engines[f.scope].get();
    if (scope == nullptr || sats[f.scope].empty()) continue;
    std::string ours_text, peer_text, box_text;
    Verdict verdict = Verdict::kAgree;
    try {
      if (f.kind == Kind::kBounds) {
        std::unique_ptr<Node> tree = TreeParser(f.body, s.names).ParseAll();
        I128 lo = kLimit, hi = -kLimit;
        for (const auto& v : sats[f.scope]) {
          std::optional<I128> x = Eval(*tree, v);
          if (!x) continue;
          lo = std::min(lo, *x);
          hi = std::max(hi, *x);
        }
        if (lo > hi) throw std::runtime_error("undefined at every valuation of the box");
        int64_t our_lo = kNegInf, our_hi = kPosInf;
        try {
          Interval b = scope->Bounds(scope->Parse(f.body));
          our_lo = b.lo;
          our_hi = b.hi;
        } catch (const Error& e) {
          ours_text = "refused (" + e.message() + ") ";
        }
        ours_text += IntervalText(our_lo, our_hi);
        peer_text = IntervalText(f.peer_lo, f.peer_hi);
        box_text = IntervalText(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
        if (f.peer_lo > lo || f.peer_hi < hi) {
          errors.push_back(f.where + ": the peer's bounds " + peer_text + " of " + f.body +
                           " exclude values found in the box " + box_text);
          continue;
        }
        bool in_lo = our_lo >= f.peer_lo, in_hi = our_hi <= f.peer_hi;
        if (our_lo > lo || our_hi < hi) {
          verdict = Verdict::kUnsound;
        } else if (our_lo == f.peer_lo && our_hi == f.peer_hi) {
          verdict = Verdict::kAgree;
        } else if (in_lo && in_hi) {
          verdict = Verdict::kStronger;
        } else {
          verdict = Verdict::kWeaker;  // wider on a side (and maybe tighter on the other)
        }
      } else {
        std::unique_ptr<Node> l = TreeParser(f.cmp.lhs, s.names).ParseAll();
        std::unique_ptr<Node> r = TreeParser(f.cmp.rhs, s.names).ParseAll();
        long holds = 0, fails = 0;
        for (const auto& v : sats[f.scope]) {
          std::optional<I128> a = Eval(*l, v), b = Eval(*r, v);
          if (!a || !b) continue;
          (Holds(*a, f.cmp.op, *b) ? holds : fails) += 1;
        }
        if (holds + fails == 0) throw std::runtime_error("undefined at every valuation of the box");
        Truth ours = Truth::kUnknown;
        try {
          const Expr* a = scope->Parse(f.cmp.lhs);
          const Expr* b = scope->Parse(f.cmp.rhs);
          ours = scope->Compare(a, f.cmp.op, b);
          if (f.kind == Kind::kEqual) {
            ++equal_facts;
            same_form += a == b;
          }
        } catch (const Error& e) {
          ours_text = "refused (" + e.message() + ") ";
        }
        ours_text += TruthName(ours);
        peer_text = TruthName(f.peer_truth);
        box_text = fails == 0 ? "holds on the box" : holds == 0 ? "fails on the box" : "mixed";
        auto refuted = [&](Truth t) {
          return (t == Truth::kTrue && fails > 0) || (t == Truth::kFalse && holds > 0);
        };
        if (refuted(f.peer_truth)) {
          errors.push_back(f.where + ": the peer's " + peer_text + " for " + f.body +
                           " is refuted by brute force (" + std::to_string(holds) + " hold, " +
                           std::to_string(fails) + " fail)");
          continue;
        }
        if (refuted(ours)) {
          verdict = Verdict::kUnsound;
        } else if (ours == f.peer_truth) {
          verdict = Verdict::kAgree;
        } else if (f.peer_truth == Truth::kUnknown) {
          verdict = Verdict::kStronger;
        } else {
          verdict = Verdict::kWeaker;
        }
      }
    } catch (const std::exception& e) {
      errors.push_back(f.where + ": " + e.what());
      continue;
    }
    std::string detail = "[" + f.peer + "/" + f.family + "] " + KindName(f.kind) + " " + f.body +
                         ": peer " + peer_text + ", ours " + ours_text + ", box " + box_text +
                         "  (" + f.where + "; " + f.source + ")";
    if (verdict == Verdict::kWeaker) weaker.push_back(detail);
    bool ours_unknown =
        ours_text.size() >= 7 && ours_text.substr(ours_text.size() - 7) == "UNKNOWN";
    if (verdict != Verdict::kWeaker && ours_unknown && box_text != "mixed") {
      undecided.push_back(detail);
    }
    if (verdict == Verdict::kStronger) stronger.push_back(detail);
    if (verdict == Verdict::kUnsound) unsound.push_back(detail);
    std::string file = f.where.substr(0, f.where.find(':'));
    by_source[file].Add(verdict);
    by_family[f.peer + "/" + f.family].Add(verdict);
    by_peer[f.peer].Add(verdict);
    by_kind[KindName(f.kind)].Add(verdict);
    total.Add(verdict);
  }

  std::sort(weaker.begin(), weaker.end());
  std::sort(stronger.begin(), stronger.end());
  printf("per source:\n");
  for (const auto& [k, t] : by_source) printf("  %-28s %s\n", k.c_str(), t.Text().c_str());
  printf("per family:\n");
  for (const auto& [k, t] : by_family) printf("  %-28s %s\n", k.c_str(), t.Text().c_str());
  printf("per kind:\n");
  for (const auto& [k, t] : by_kind) printf("  %-28s %s\n", k.c_str(), t.Text().c_str());
  printf("per peer:\n");
  for (const auto& [k, t] : by_peer) printf("  %-28s %s\n", k.c_str(), t.Text().c_str());
  printf("equal facts with the same normal form on both sides: %d of %d\n", same_form, equal_facts);
  printf("stronger (%zu):\n", stronger.size());
  for (const std::string& s : stronger) printf("  %s\n", s.c_str());
  printf("weaker (%zu):\n", weaker.size());
  for (const std::string& s : weaker) printf("  %s\n", s.c_str());
  std::sort(undecided.begin(), undecided.end());
  printf("undecided by both, never refuted on the box (%zu):\n", undecided.size());
  for (const std::string& s : undecided) printf("  %s\n", s.c_str());
  printf("dim-conformance: %d facts, %d agree, %d stronger, %d weaker, %d unsound\n", total.n,
         total.agree, total.stronger, total.weaker, total.unsound);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  printf("dim-conformance: %zu scopes, %.0f ms\n", scopes.size(), ms);

  for (const std::string& s : unsound) ADD_FAILURE() << "UNSOUND answer of ours: " << s;
  for (const std::string& s : unsound_scopes) ADD_FAILURE() << "UNSOUND: " << s;
  for (const std::string& e : errors) ADD_FAILURE() << "fact file error: " << e;
  for (const Floor& fl : kFloors) {
    const Tally& t = by_peer[fl.peer];
    EXPECT_GT(t.n, 0) << "no facts from " << fl.peer;
    EXPECT_GE(t.Rate(), fl.rate) << "agree-or-stronger rate against " << fl.peer
                                 << " fell below its floor: " << t.Text();
  }
}

}  // namespace
}  // namespace dim
}  // namespace shp
