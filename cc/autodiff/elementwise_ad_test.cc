// The elementwise ops' JVP and VJP rules against central finite differences (f64), at three
// sizes of the symbolic variable (size 1 included), with broadcasting operands, on traced and
// loaded programs.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "cc/autodiff/ad_check.h"
#include "cc/autodiff/ad_spec.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace autodiff {
namespace {

using testing::Ad;
using testing::Case;
using testing::CheckCase;
using testing::Domain;
using testing::SpecOps;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

const int64_t kSizes[] = {1, 2, 5};

Case UnaryCase(OpKind op, Domain d) {
  Case c;
  c.name = ops::OpName(op);
  c.build = [op](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    in->push_back(x);
    out->push_back(t.Unary(op, x));
  };
  c.shapes = [](int k) {
    return std::map<std::string, std::vector<int64_t>>{{"x", {kSizes[k], 3}}};
  };
  c.domains["x"] = d;
  return c;
}

// Every unary op with derivatives (ad = "float" or "zero" in cc/ops/ops.toml: all but the
// logical not), from the generated list; the ops whose domain is not [-2, 2] are listed here.
TEST(ElementwiseAd, UnaryOpsMatchFiniteDifferences) {
  const std::map<OpKind, Domain> domains = {
      {OpKind::kLog, {0.3, 3}},     {OpKind::kLog1p, {-0.5, 2}},   {OpKind::kSqrt, {0.3, 3}},
      {OpKind::kRsqrt, {0.3, 3}},   {OpKind::kTan, {-1.2, 1.2}},   {OpKind::kAsin, {-0.8, 0.8}},
      {OpKind::kAcos, {-0.8, 0.8}}, {OpKind::kAtanh, {-0.8, 0.8}}, {OpKind::kAcosh, {1.2, 3}},
  };
  const std::vector<OpKind> list = SpecOps(ops::IsUnary, {Ad::kFloat, Ad::kZero});
  ASSERT_FALSE(list.empty());
  for (OpKind op : list) CheckCase(UnaryCase(op, domains.count(op) ? domains.at(op) : Domain{}));
}

// a op b with b broadcast along the symbolic axis (b has shape (1, 3)) and, for a second
// program, a broadcast along it (a of shape (3,)).
Case BinaryCase(OpKind op, Domain da, Domain db, bool lhs_broadcast) {
  Case c;
  c.name = std::string(ops::OpName(op)) + (lhs_broadcast ? " (lhs broadcast)" : "");
  c.build = [op, lhs_broadcast](trace::Trace& t, std::vector<const Tensor*>* in,
                                std::vector<const Tensor*>* out) {
    const Tensor* a = t.Input("a", DType::kF64, lhs_broadcast ? "3" : "n, 3");
    const Tensor* b = t.Input("b", DType::kF64, lhs_broadcast ? "n, 3" : "1, 3");
    *in = {a, b};
    out->push_back(t.Binary(op, a, b));
  };
  c.shapes = [lhs_broadcast](int k) {
    std::map<std::string, std::vector<int64_t>> s;
    s["a"] = lhs_broadcast ? std::vector<int64_t>{3} : std::vector<int64_t>{kSizes[k], 3};
    s["b"] = lhs_broadcast ? std::vector<int64_t>{kSizes[k], 3} : std::vector<int64_t>{1, 3};
    return s;
  };
  c.domains["a"] = da;
  c.domains["b"] = db;
  return c;
}

TEST(ElementwiseAd, BinaryOpsMatchFiniteDifferencesWithBroadcasting) {
  // The binary ops with derivatives (all but the logical and, or, xor), from the generated
  // list; the operands whose domain is not [-2, 2] are listed here.
  const std::map<OpKind, std::pair<Domain, Domain>> domains = {
      {OpKind::kDiv, {{}, {0.5, 2}}},
      {OpKind::kPow, {{0.5, 2}, {}}},
      {OpKind::kRem, {{-5, 5}, {1, 2}}},
  };
  const std::vector<OpKind> list = SpecOps(ops::IsBinary, {Ad::kFloat, Ad::kZero});
  ASSERT_FALSE(list.empty());
  for (OpKind op : list) {
    const std::pair<Domain, Domain> d =
        domains.count(op) ? domains.at(op) : std::pair<Domain, Domain>{};
    CheckCase(BinaryCase(op, d.first, d.second, false));
    CheckCase(BinaryCase(op, d.first, d.second, true));
  }
}

TEST(ElementwiseAd, SelectConvertAndBroadcastToMatchFiniteDifferences) {
  Case c;
  c.name = "select/convert/broadcast_to";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* a = t.Input("a", DType::kF64, "n, 3");
    const Tensor* b = t.Input("b", DType::kF64, "3");
    *in = {a, b};
    const Tensor* pred = t.Binary(OpKind::kGt, a, b);
    const Tensor* two = t.Binary(OpKind::kMul, a, a);
    out->push_back(t.Select(pred, two, b));  // b broadcast through select
    // Through an integer: zero derivative on that path.
    const Tensor* i = t.Convert(t.Unary(OpKind::kFloor, a), DType::kI32);
    out->push_back(t.Binary(OpKind::kMul, a, t.Convert(i, DType::kF64)));
    out->push_back(t.BroadcastTo(b, {t.dims()->Var("n"), t.dims()->Constant(3)}));
    out->push_back(t.Convert(a, DType::kF64));
  };
  c.shapes = [](int k) {
    return std::map<std::string, std::vector<int64_t>>{{"a", {kSizes[k], 3}}, {"b", {3}}};
  };
  CheckCase(c);
}

TEST(ElementwiseAd, IntegerAndBoolOutputsHaveNoTangents) {
  Case c;
  c.name = "mixed outputs";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* a = t.Input("a", DType::kF64, "n");
    const Tensor* k = t.Input("k", DType::kI32, "n");
    *in = {a, k};
    out->push_back(t.Binary(OpKind::kLt, a, t.Convert(k, DType::kF64)));
    out->push_back(t.Binary(OpKind::kAdd, k, k));
    out->push_back(t.Unary(OpKind::kExp, a));
  };
  c.shapes = [](int k) {
    return std::map<std::string, std::vector<int64_t>>{{"a", {kSizes[k]}}, {"k", {kSizes[k]}}};
  };
  c.int_bounds["k"] = 3;
  CheckCase(c);
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
