// C API of symbolic cost (shp_program_cost*) and of the program's picture (shp_program_to_dot):
// thin thunks over cc/runtime/cost.h and program::Program::ToDot.
#include <cstdint>
#include <string>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/program/program.h"
#include "cc/runtime/cost.h"
#include "shapepoly/shapepoly.h"

using shp::capi::CostKindValue;
using shp::capi::WriteString;
namespace rt = shp::runtime;

namespace {

const shp::program::Program& P(const shp_program_t* p) {
  SHP_REQUIRE_ARG(p, "program");
  return *p->program;
}

}  // namespace

shp_error_t* shp_program_cost(const shp_program_t* program, shp_cost_kind_t kind, char* buf,
                              size_t cap, size_t* len_out) {
  SHP_API_BEGIN
  const shp::program::Program& p = P(program);
  SHP_REQUIRE_ARG(len_out, "len_out");
  WriteString(rt::ProgramCost(p, static_cast<rt::CostKind>(CostKindValue(kind))).formula, buf, cap,
              len_out);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_cost_bounds(const shp_program_t* program, shp_cost_kind_t kind,
                                     int64_t* lo_out, int64_t* hi_out) {
  SHP_API_BEGIN
  const shp::program::Program& p = P(program);
  SHP_REQUIRE_ARG(lo_out, "lo_out");
  SHP_REQUIRE_ARG(hi_out, "hi_out");
  rt::Cost c = rt::ProgramCost(p, static_cast<rt::CostKind>(CostKindValue(kind)));
  *lo_out = c.bounds.lo;
  *hi_out = c.bounds.hi;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_cost_unbounded_reason(const shp_program_t* program, shp_cost_kind_t kind,
                                               char* buf, size_t cap, size_t* len_out) {
  SHP_API_BEGIN
  const shp::program::Program& p = P(program);
  SHP_REQUIRE_ARG(len_out, "len_out");
  WriteString(rt::ProgramCost(p, static_cast<rt::CostKind>(CostKindValue(kind))).unbounded_reason,
              buf, cap, len_out);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_to_dot(const shp_program_t* program, char* buf, size_t cap,
                                size_t* len_out) {
  SHP_API_BEGIN
  const shp::program::Program& p = P(program);
  SHP_REQUIRE_ARG(len_out, "len_out");
  WriteString(p.ToDot(), buf, cap, len_out);
  return nullptr;
  SHP_API_END
}
