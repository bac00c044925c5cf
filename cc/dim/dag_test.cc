// dim::DagWriter (export as a deduplicated DAG) and dim::Rebuilder (import into a scope).
#include "cc/dim/dag.h"

#include <gtest/gtest.h>

#include <set>

#include "cc/dim/rebuild.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

std::string Show(const std::vector<DagEntry>& entries) {
  static const char* kOps[] = {"const", "var", "add", "mul", "floordiv",
                               "mod",   "max", "min", "pow"};
  std::string out;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DagEntry& d = entries[i];
    out += std::to_string(i) + "=" + kOps[static_cast<int>(d.op)];
    if (d.op == DagOp::kConst || d.op == DagOp::kVar || d.op == DagOp::kPow)
      out += ":" + std::to_string(d.value);
    for (uint32_t o : d.operands) out += " " + std::to_string(o);
    out += "; ";
  }
  return out;
}

// Reads entry `i` back through the scope's operators.
const Expr* Import(Scope* s, const std::vector<DagEntry>& entries, uint32_t i) {
  const DagEntry& d = entries[i];
  auto arg = [&](size_t k) { return Import(s, entries, d.operands[k]); };
  switch (d.op) {
    case DagOp::kConst:
      return s->Constant(d.value);
    case DagOp::kVar:
      return s->Var(s->VarName(static_cast<int32_t>(d.value)));
    case DagOp::kAdd:
    case DagOp::kMul: {
      const Expr* r = arg(0);
      for (size_t k = 1; k < d.operands.size(); ++k)
        r = d.op == DagOp::kAdd ? s->Add(r, arg(k)) : s->Mul(r, arg(k));
      return r;
    }
    case DagOp::kFloorDiv:
      return s->FloorDiv(arg(0), arg(1));
    case DagOp::kMod:
      return s->Mod(arg(0), arg(1));
    case DagOp::kMax:
      return s->Max(arg(0), arg(1));
    case DagOp::kMin:
      return s->Min(arg(0), arg(1));
    case DagOp::kPow:
      return s->Pow(arg(0), d.value);
  }
  return nullptr;
}

TEST(DagWriter, EntryShapes) {
  auto s = Scope::Create({});
  s->Parse("a + b");
  DagWriter w(*s);
  EXPECT_EQ(w.Expr(s->Constant(7)), 0u);
  EXPECT_EQ(w.Expr(s->Parse("a")), 1u);
  // Terms in normal-form order (a^2*b, then 3*b, then the constant); an atom with exponent 1
  // is itself, coefficient 1 adds nothing, a constant term is a kConst.
  w.Expr(s->Parse("a^2*b + 3*b + 7"));
  EXPECT_EQ(
      Show(w.entries()),
      "0=const:7; 1=var:0; 2=pow:2 1; 3=var:1; 4=mul 2 3; 5=const:3; 6=mul 5 3; 7=add 4 6 0; ");
  // Shared: nothing new for an expression or a sub-entry seen before.
  EXPECT_EQ(w.Expr(s->Parse("a^2*b + 3*b + 7")), 7u);
  EXPECT_EQ(w.Shape({s->Parse("a"), s->Parse("3*b")}), (std::vector<uint32_t>{1, 6}));
  EXPECT_EQ(w.entries().size(), 8u);
  // Atoms write their operands left to right.
  w.Expr(s->Parse("floordiv(a, 2) + max(b, 9)"));
  EXPECT_EQ(Show(w.entries()).substr(Show(w.entries()).find("8=")),
            "8=const:2; 9=floordiv 1 8; 10=const:9; 11=max 3 10; 12=add 9 11; ");
}

TEST(DagWriter, RoundTripsRandomExpressions) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 200; ++round) {
    auto s = Scope::Create({});
    std::vector<const Expr*> es;
    for (int i = 0; i < 5; ++i) es.push_back(RandomExpr(s.get(), &rng, {"a", "b", "c"}, 4));
    DagWriter w(*s);
    std::vector<uint32_t> idx = w.Shape(es);
    const std::vector<DagEntry>& entries = w.entries();
    std::set<std::tuple<DagOp, int64_t, std::vector<uint32_t>>> seen;
    for (size_t i = 0; i < entries.size(); ++i) {
      const DagEntry& d = entries[i];
      ASSERT_TRUE(seen.insert(std::make_tuple(d.op, d.value, d.operands)).second)
          << "entry " << i << " repeated";
      for (uint32_t o : d.operands) {
        ASSERT_LT(o, i);  // operands come first
      }
      if (d.op != DagOp::kConst && d.op != DagOp::kVar && d.op != DagOp::kPow) {
        ASSERT_EQ(d.value, 0);
      }
    }
    for (size_t i = 0; i < es.size(); ++i) {
      ASSERT_EQ(Import(s.get(), entries, idx[i]), es[i]) << s->ToString(es[i]);
    }
  }
}

TEST(Rebuilder, SameNormalFormsInAnotherScope) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    auto src = Scope::Create({"a >= b + 2"});
    auto dst = Scope::Create({"a >= b + 2"});
    std::vector<const Expr*> es;
    for (int i = 0; i < 4; ++i) es.push_back(RandomExpr(src.get(), &rng, {"a", "b", "c"}, 4));
    Rebuilder r(dst.get());
    std::vector<const Expr*> out = r.Shape(es);
    ASSERT_EQ(out.size(), es.size());
    for (size_t i = 0; i < es.size(); ++i) {
      ASSERT_EQ(out[i]->scope, dst.get());
      ASSERT_EQ(dst->ToString(out[i]), src->ToString(es[i]));
      ASSERT_EQ(r.Expr(es[i]), out[i]);  // memoized
    }
  }
  auto s = Scope::Create({});
  Rebuilder r(s.get());
  EXPECT_EQ(r.Expr(nullptr), nullptr);
}

TEST(NumTermsAndDegree, OfNormalForms) {
  auto s = Scope::Create({});
  EXPECT_EQ(NumTerms(s->Constant(0)), 0u);
  EXPECT_EQ(Degree(s->Constant(0)), 0);
  EXPECT_EQ(NumTerms(s->Constant(5)), 1u);
  EXPECT_EQ(Degree(s->Constant(5)), 0);
  const Expr* e = s->Parse("(a + b)^3 + floordiv(a, 2) - 1");
  EXPECT_EQ(NumTerms(e), 6u);  // a^3, a^2 b, a b^2, b^3, floordiv, -1
  EXPECT_EQ(Degree(e), 3);
  EXPECT_EQ(Degree(s->Parse("a*b^4 + a^2")), 5);
}

}  // namespace
}  // namespace dim
}  // namespace shp
