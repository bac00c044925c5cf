// matmul's and dot_general's JVP and VJP rules against central finite differences (f64), at
// three sizes of the symbolic variable (size 1 included): 1-D operands, broadcast batch axes,
// general batch and contracting axes in any order, on traced and loaded programs.
#include <gtest/gtest.h>

#include "cc/autodiff/ad_check.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace autodiff {
namespace {

using testing::Case;
using testing::CheckCase;
using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Shapes = std::map<std::string, std::vector<int64_t>>;

const int64_t kSizes[] = {1, 2, 5};

// The shape `spec` ("n, 3") at n = `n`: "n" is replaced, other entries are integers.
std::vector<int64_t> Concrete(const std::string& spec, int64_t n) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < spec.size()) {
    size_t j = spec.find(',', i);
    if (j == std::string::npos) j = spec.size();
    std::string d = spec.substr(i, j - i);
    d.erase(0, d.find_first_not_of(' '));
    if (!d.empty()) out.push_back(d == "n" ? n : std::stoll(d));
    i = j + 1;
  }
  return out;
}

// f(a, b) for inputs a and b of shapes `sa` and `sb` (which may use the variable n).
Case TwoInputs(const std::string& name, const std::string& sa, const std::string& sb,
               std::function<const Tensor*(trace::Trace&, const Tensor*, const Tensor*)> f) {
  Case c;
  c.name = name + " " + sa + " / " + sb;
  c.build = [sa, sb, f](trace::Trace& t, std::vector<const Tensor*>* in,
                        std::vector<const Tensor*>* out) {
    const Tensor* a = t.Input("a", DType::kF64, sa);
    const Tensor* b = t.Input("b", DType::kF64, sb);
    *in = {a, b};
    const Tensor* y = f(t, a, b);
    out->push_back(t.Binary(OpKind::kMul, y, y));
  };
  c.shapes = [sa, sb](int k) {
    return Shapes{{"a", Concrete(sa, kSizes[k])}, {"b", Concrete(sb, kSizes[k])}};
  };
  return c;
}

TEST(LinalgAd, MatMul) {
  auto mm = [](trace::Trace& t, const Tensor* a, const Tensor* b) { return t.MatMul(a, b); };
  const std::pair<const char*, const char*> shapes[] = {
      {"n, 3", "3, 4"},              // matrices
      {"3", "3, n"},                 // 1-D on the left
      {"n, 3", "3"},                 // 1-D on the right
      {"n", "n"},                    // both 1-D: a scalar
      {"2, n, 3", "3, 4"},           // batch on the left only
      {"3", "2, 3, n"},              // 1-D with a batched right operand
      {"n, 2, 3", "3"},              // batched left, 1-D right
      {"2, 1, n, 3", "4, 3, 2"},     // broadcast batch axes (1 against 4, 2 against none)
      {"1, n, 3", "2, 3, n"},        // a batch axis of 1 broadcast
      {"n, 1, 2, 3", "1, 2, 3, 2"},  // batch axes broadcast both ways
  };
  for (const auto& [sa, sb] : shapes) CheckCase(TwoInputs("matmul", sa, sb, mm));
}

TEST(LinalgAd, DotGeneral) {
  struct D {
    const char* sa;
    const char* sb;
    ops::DotDims dims;
  };
  const D cases[] = {
      {"n, 3", "3, 4", {{}, {}, {1}, {0}}},  // a matrix product
      {"n, 3", "4, 3", {{}, {}, {1}, {1}}},  // rhs transposed
      {"n, 2", "3", {{}, {}, {}, {}}},       // an outer product
      // Batch 2 at different positions; contracting axes in swapped orders.
      {"2, n, 3, 4", "4, 2, 5, 3", {{0}, {1}, {2, 3}, {3, 0}}},
      {"3, 2, n", "n, 3, 2", {{1}, {2}, {0}, {1}}},
      // Negative axes, two batch axes, free axes on both sides.
      {"2, 3, n, 4", "4, 3, 2, 2", {{0, -3}, {-2, 1}, {-1}, {0}}},
      {"n, 3", "n, 3", {{0}, {0}, {1}, {1}}},  // a batched dot: rank-1 result
  };
  for (const D& d : cases) {
    ops::DotDims dims = d.dims;
    CheckCase(TwoInputs("dot_general", d.sa, d.sb,
                        [dims](trace::Trace& t, const Tensor* a, const Tensor* b) {
                          return t.DotGeneral(a, b, dims);
                        }));
  }
}

// Both operands the same tensor: the two contributions add up.
TEST(LinalgAd, SharedOperand) {
  Case c;
  c.name = "x @ x^T";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    in->push_back(x);
    out->push_back(t.MatMul(x, t.Transpose(x, {1, 0})));
    out->push_back(t.DotGeneral(x, x, ops::DotDims{{0}, {0}, {1}, {1}}));
  };
  c.shapes = [](int k) { return Shapes{{"x", {kSizes[k], 3}}}; };
  CheckCase(c);
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
