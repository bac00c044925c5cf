// shp_program_vmap: batching as a program transformation (cc/vmap).
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "cc/vmap/vmap.h"

using shp::Code;
using shp::Error;

shp_error_t* shp_program_vmap(const shp_program_t* program, const int64_t* in_axes,
                              size_t num_inputs, const int64_t* out_axes, size_t num_outputs,
                              const char* batch_dim_name, shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(program, "program");
  SHP_REQUIRE_ARG(program_out, "program_out");
  if (num_inputs > 0) SHP_REQUIRE_ARG(in_axes, "in_axes");
  if (num_outputs > 0) SHP_REQUIRE_ARG(out_axes, "out_axes");
  if (batch_dim_name != nullptr && batch_dim_name[0] == '\0') {
    throw Error(Code::kInvalidArgument,
                "argument 'batch_dim_name' is empty (NULL gives the default name)");
  }
  std::vector<int64_t> in(in_axes, in_axes + num_inputs);
  std::vector<int64_t> out(out_axes, out_axes + num_outputs);
  std::unique_ptr<shp_program_t> h(new shp_program_t);
  h->program =
      shp::vmap::Vmap(*program->program, in, out, batch_dim_name != nullptr ? batch_dim_name : "");
  *program_out = h.release();
  return nullptr;
  SHP_API_END
}
