// Top-k kernel (see top_k.h).
#include "cc/kernels/top_k.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {
namespace {

// Work (elements read) below which one thread runs everything, and the least of one chunk.
constexpr int64_t kParallelWork = int64_t{1} << 15;
constexpr int64_t kGrainWork = int64_t{1} << 12;

template <typename T>
inline bool IsNan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Whether row element a comes before b: a strict total order (the index breaks every tie).
template <typename T>
struct Before {
  const T* row;
  bool largest;
  bool operator()(int64_t a, int64_t b) const {
    const T va = row[a], vb = row[b];
    const bool na = IsNan(va), nb = IsNan(vb);
    if (na || nb) {
      if (na && nb) return a < b;
      return na == largest;  // NaN is the greatest value
    }
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
  }
};

template <typename T>
void Typed(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest, T* values,
           int64_t* indices, ThreadPool* pool) {
  const int64_t rows = outer * inner;
  ThreadPool* p = rows > 1 && rows * n >= kParallelWork ? pool : nullptr;
  ParallelFor(p, rows, std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, n)),
              [&](int64_t begin, int64_t end) {
                std::vector<T> row(static_cast<size_t>(n));
                std::vector<int64_t> idx(static_cast<size_t>(n));
                for (int64_t r = begin; r < end; ++r) {
                  const int64_t o = r / inner, i = r % inner;
                  const T* src = x + o * n * inner + i;
                  for (int64_t j = 0; j < n; ++j) {
                    row[static_cast<size_t>(j)] = src[j * inner];
                    idx[static_cast<size_t>(j)] = j;
                  }
                  const Before<T> before{row.data(), largest};
                  if (k == n) {
                    std::sort(idx.begin(), idx.end(), before);
                  } else {
                    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), before);
                  }
                  const int64_t dst = o * k * inner + i;
                  for (int64_t j = 0; j < k; ++j) {
                    const int64_t at = idx[static_cast<size_t>(j)];
                    if (values != nullptr) values[dst + j * inner] = row[static_cast<size_t>(at)];
                    if (indices != nullptr) indices[dst + j * inner] = at;
                  }
                }
              });
}

}  // namespace

bool TopK(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner, int64_t k,
          bool largest, void* values, int64_t* indices, ThreadPool* pool) {
  if (outer < 0 || n < 0 || inner < 0 || k < 0 || k > n) return false;
  if (outer == 0 || inner == 0 || k == 0) return true;
  switch (dtype) {
    case DType::kF32:
      Typed(static_cast<const float*>(x), outer, n, inner, k, largest, static_cast<float*>(values),
            indices, pool);
      return true;
    case DType::kF64:
      Typed(static_cast<const double*>(x), outer, n, inner, k, largest,
            static_cast<double*>(values), indices, pool);
      return true;
    case DType::kI32:
      Typed(static_cast<const int32_t*>(x), outer, n, inner, k, largest,
            static_cast<int32_t*>(values), indices, pool);
      return true;
    case DType::kI64:
      Typed(static_cast<const int64_t*>(x), outer, n, inner, k, largest,
            static_cast<int64_t*>(values), indices, pool);
      return true;
    default:
      return false;
  }
}

}  // namespace kernels
}  // namespace shp
