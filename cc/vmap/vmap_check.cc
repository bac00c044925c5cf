#include "cc/vmap/vmap_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/dim/scope.h"
#include "cc/vmap/vmap.h"

namespace shp {
namespace vmap {
namespace testing {
namespace {

int64_t Count(const std::vector<int64_t>& shape, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t i = from; i < shape.size() && i < to; ++i) n *= shape[i];
  return n;
}

// Whether batched and per-element results agree: exactly for integers and bool, to a few
// rounding errors for floats (a batched matmul may block its sums differently).
bool Close(trace::DType dtype, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (!trace::IsAnyFloat(dtype)) return a == b;
  if (a == b) return true;
  const double tol = dtype == trace::DType::kF64 ? 1e-12 : 1e-5;
  return std::fabs(a - b) <= tol * (1 + std::fabs(a) + std::fabs(b));
}

Array Random(trace::DType dtype, const std::vector<int64_t>& shape, const Case& c,
             const std::string& name, std::mt19937_64& rng) {
  Array a;
  a.dtype = dtype;
  a.shape = shape;
  a.data.resize(static_cast<size_t>(Count(shape)));
  if (trace::IsAnyFloat(dtype)) {
    autodiff::testing::Domain d;
    if (c.domains.count(name)) d = c.domains.at(name);
    std::uniform_real_distribution<double> u(d.lo, d.hi);
    for (double& v : a.data) v = u(rng);
  } else {
    const int64_t bound = c.int_bounds.count(name) ? c.int_bounds.at(name) : 2;
    std::uniform_int_distribution<int64_t> u(0, bound - 1);
    for (double& v : a.data) v = static_cast<double>(u(rng));
  }
  return a;
}

void CheckPattern(const Case& c, const std::shared_ptr<const program::Program>& p,
                  const std::map<std::string, std::vector<int64_t>>& shapes,
                  const std::vector<int64_t>& in_axes, const std::vector<int64_t>& out_axes,
                  std::mt19937_64& rng) {
  std::shared_ptr<const program::Program> vp = Vmap(*p, in_axes, out_axes, "");
  std::shared_ptr<const program::Program> loaded = [&] {
    const std::string bytes = vp->Serialize();
    return std::shared_ptr<const program::Program>(
        program::Program::Load(bytes.data(), bytes.size()));
  }();
  for (int64_t size : BatchSizes()) {
    SCOPED_TRACE("batch " + std::to_string(size));
    // Per-element inputs: batched ones drawn per element, the others shared.
    std::vector<Arrays> elements(static_cast<size_t>(size));
    Arrays batched_inputs;
    for (size_t i = 0; i < p->inputs().size(); ++i) {
      const program::Input& in = p->inputs()[i];
      const std::vector<int64_t>& shape = shapes.at(in.name);
      if (in_axes[i] < 0) {
        Array a = Random(in.type.dtype, shape, c, in.name, rng);
        for (Arrays& e : elements) e[in.name] = a;
        batched_inputs[in.name] = a;
        continue;
      }
      std::vector<Array> per;
      for (Arrays& e : elements) {
        e[in.name] = Random(in.type.dtype, shape, c, in.name, rng);
        per.push_back(e[in.name]);
      }
      Array a = Stack(per, static_cast<size_t>(in_axes[i]), shape);
      a.dtype = in.type.dtype;
      batched_inputs[in.name] = a;
    }
    std::vector<Arrays> want;
    for (const Arrays& e : elements) want.push_back(autodiff::testing::Run(p, e));
    for (const auto& prog : {vp, loaded}) {
      SCOPED_TRACE(prog == vp ? "vmapped" : "vmapped, loaded");
      Arrays got = autodiff::testing::Run(prog, batched_inputs);
      for (size_t o = 0; o < p->outputs().size(); ++o) {
        const std::string& name = p->outputs()[o].name;
        const Array& g = got.at(name);
        const int64_t axis = out_axes.empty() ? 0 : out_axes[o];
        ASSERT_EQ(g.shape.size(), p->value_type(p->outputs()[o].value).shape.size() + 1) << name;
        ASSERT_EQ(g.shape[static_cast<size_t>(axis)], size) << name;
        for (int64_t e = 0; e < size; ++e) {
          const Array ge = Unstack(g, static_cast<size_t>(axis), e);
          const Array& w = want[static_cast<size_t>(e)].at(name);
          ASSERT_EQ(ge.shape, w.shape) << name << " element " << e;
          for (size_t k = 0; k < w.data.size(); ++k) {
            ASSERT_TRUE(Close(w.dtype, ge.data[k], w.data[k]))
                << name << " element " << e << " index " << k << ": batched " << ge.data[k]
                << ", alone " << w.data[k];
          }
        }
      }
    }
  }
}

}  // namespace

Array Stack(const std::vector<Array>& elements, size_t axis, const std::vector<int64_t>& shape) {
  Array out;
  out.shape = shape;
  out.shape.insert(out.shape.begin() + static_cast<std::ptrdiff_t>(axis),
                   static_cast<int64_t>(elements.size()));
  if (!elements.empty()) out.dtype = elements[0].dtype;
  const int64_t outer = Count(shape, 0, axis), inner = Count(shape, axis);
  const int64_t n = static_cast<int64_t>(elements.size());
  out.data.resize(static_cast<size_t>(outer * n * inner));
  for (int64_t e = 0; e < n; ++e) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        out.data[static_cast<size_t>((o * n + e) * inner + i)] =
            elements[static_cast<size_t>(e)].data[static_cast<size_t>(o * inner + i)];
      }
    }
  }
  return out;
}

Array Unstack(const Array& a, size_t axis, int64_t e) {
  Array out;
  out.dtype = a.dtype;
  out.shape = a.shape;
  out.shape.erase(out.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  const int64_t outer = Count(a.shape, 0, axis), n = a.shape[axis],
                inner = Count(a.shape, axis + 1);
  out.data.resize(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      out.data[static_cast<size_t>(o * inner + i)] =
          a.data[static_cast<size_t>((o * n + e) * inner + i)];
    }
  }
  return out;
}

void CheckVmapCase(const Case& c, const std::set<std::string>& never_batched, uint32_t seed) {
  std::mt19937_64 rng(seed);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(c.name + ", valuation " + std::to_string(k));
    const std::shared_ptr<const program::Program> p = autodiff::testing::TraceCase(c).program;
    const auto shapes = c.shapes(k);
    const size_t n = p->inputs().size();
    auto batchable = [&](size_t i) {
      const program::Input& in = p->inputs()[i];
      return in.role != program::InputRole::kDim && never_batched.count(in.name) == 0;
    };
    std::vector<std::vector<int64_t>> patterns;
    std::vector<int64_t> first(n, -1), last(n, -1);
    for (size_t i = 0; i < n; ++i) {
      if (!batchable(i)) continue;
      first[i] = 0;
      last[i] = static_cast<int64_t>(p->inputs()[i].type.shape.size());
    }
    patterns.push_back(first);
    for (size_t i = 0; i < n; ++i) {
      std::vector<int64_t> one(n, -1);
      one[i] = 0;
      if (batchable(i) && one != first) patterns.push_back(one);
    }
    patterns.push_back(last);
    for (size_t q = 0; q < patterns.size(); ++q) {
      std::string text;
      for (int64_t a : patterns[q]) text += std::to_string(a) + " ";
      SCOPED_TRACE("in_axes " + text);
      std::vector<int64_t> out_axes;
      if (q + 1 == patterns.size()) {  // the last pattern puts the outputs' batch axes last
        for (const program::Output& o : p->outputs())
          out_axes.push_back(static_cast<int64_t>(p->value_type(o.value).shape.size()));
      }
      CheckPattern(c, p, shapes, patterns[q], out_axes, rng);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace testing
}  // namespace vmap
}  // namespace shp
