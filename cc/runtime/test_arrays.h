// Test support for the runtime's tests: owned concrete arrays, an output sink that keeps every
// output, and a run by input names.
#ifndef SHAPEPOLY_CC_RUNTIME_TEST_ARRAYS_H_
#define SHAPEPOLY_CC_RUNTIME_TEST_ARRAYS_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cc/runtime/runtime.h"

namespace shp {
namespace runtime {
namespace testing {

// An owned concrete array.
struct Arr {
  trace::DType dtype = trace::DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  ArrayView view() const { return ArrayView{dtype, shape.data(), shape.size(), bytes.data()}; }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// Keeps every output as an Arr (zero-filled before the runtime writes it).
class VectorSink : public OutputSink {
 public:
  void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) override {
    if (outs.size() <= i) outs.resize(i + 1);
    Arr& a = outs[i];
    a.dtype = dtype;
    a.shape.assign(shape, shape + rank);
    a.bytes.assign(static_cast<size_t>(a.size()) * trace::DTypeSize(dtype), 0);
    return a.bytes.data();
  }
  std::vector<Arr> outs;
};

// An f32 or f64 array of random values in [-1, 1] (a few exact zeros, so sums of +-0 occur).
inline Arr Random(trace::DType t, std::vector<int64_t> shape, std::mt19937* rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Arr a;
  a.dtype = t;
  a.shape = std::move(shape);
  a.bytes.resize(static_cast<size_t>(a.size()) * trace::DTypeSize(t));
  for (int64_t i = 0; i < a.size(); ++i) {
    const double v = (*rng)() % 17 == 0 ? 0.0 : u(*rng);
    if (t == trace::DType::kF32) {
      const float f = static_cast<float>(v);
      std::memcpy(a.bytes.data() + i * 4, &f, 4);
    } else {
      std::memcpy(a.bytes.data() + i * 8, &v, 8);
    }
  }
  return a;
}

// "2, 3, 4": a concrete shape as a dims specification.
inline std::string Dims(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t d : v) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

// Runs `rt` on `in`, bound by `names` (empty: by position); the outputs.
inline std::vector<Arr> RunAll(Runtime& rt, const std::vector<std::string>& names,
                               const std::vector<Arr>& in) {
  std::vector<const char*> n;
  std::vector<ArrayView> v;
  for (const std::string& s : names) n.push_back(s.c_str());
  for (const Arr& a : in) v.push_back(a.view());
  VectorSink sink;
  rt.Run(names.empty() ? nullptr : n.data(), v.data(), v.size(), &sink);
  return sink.outs;
}

}  // namespace testing
}  // namespace runtime
}  // namespace shp

#endif  // SHAPEPOLY_CC_RUNTIME_TEST_ARRAYS_H_
