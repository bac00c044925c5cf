#include "cc/ops/steps.h"

#include <cstring>
#include <string>

#include "cc/base/error.h"
#include "cc/kernels/transpose.h"

namespace shp {
namespace ops {

void CheckKernel(bool ok, const char* what) {
  if (!ok)
    throw Error(Code::kInternal,
                std::string("runtime: the ") + what + " kernel rejected its arguments");
}

void TransposeStep::Run(const RunContext& c) {
  CheckKernel(kernels::Transpose(In(c, 0), shape.data(), perm.data(),
                                 static_cast<int>(shape.size()), ElementSize(), Out(c), Pool(c)),
              "transpose");
}

void PlanTranspose(PlanBuilder& b, trace::DType dt, int32_t in, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& perm, int32_t out, bool threaded) {
  TransposeStep& t = b.AddStep<TransposeStep>(dt, {in}, out);
  t.shape = shape;
  t.perm = perm;
  t.threaded = threaded;
}

void CopyStep::Run(const RunContext& c) {
  if (bytes > 0) std::memcpy(Out(c), In(c, 0), static_cast<size_t>(bytes));
}

}  // namespace ops
}  // namespace shp
