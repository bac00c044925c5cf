// C thunks of control flow (shapepoly.h, "Control flow"): cond, while_loop, scan over programs,
// and the bodies bindings trace with functions (trace::CutBody).
#include <memory>
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "cc/ops/attrs.h"
#include "cc/program/subprogram.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
using shp::capi::TraceOf;
using shp::capi::Unwrap;
using shp::capi::Wrap;
namespace ops = shp::ops;
namespace program = shp::program;
namespace trace = shp::trace;

namespace {

std::vector<const trace::Tensor*> TensorList(const shp_tensor_t* const* v, size_t n,
                                             const char* name) {
  if (n > 0) SHP_REQUIRE_ARG(v, name);
  std::vector<const trace::Tensor*> out;
  for (size_t i = 0; i < n; ++i) {
    if (v[i] == nullptr) {
      throw Error(Code::kInvalidArgument,
                  std::string(name) + "[" + std::to_string(i) + "] is NULL");
    }
    out.push_back(Unwrap(v[i]));
  }
  return out;
}

std::shared_ptr<const ops::Subprogram> BodyArg(const shp_program_t* p, const char* name) {
  SHP_REQUIRE_ARG(p, name);
  try {
    return std::make_shared<program::ProgramBody>(p->program);
  } catch (const Error& e) {
    throw Error(e.code(), std::string(name) + ": " + e.message());
  }
}

// Records the op and writes its results (checking the count first, before anything).
void Record(shp_scope_t* scope, trace::OpKind op, const ops::ControlFlowAttrs& a,
            const std::vector<const trace::Tensor*>& operands, const shp_tensor_t** results_out,
            size_t num_results, size_t expected) {
  SHP_REQUIRE_ARG(results_out, "results_out");
  if (num_results != expected) {
    throw Error(Code::kInvalidArgument, std::string(trace::OpName(op)) + ": num_results is " +
                                            std::to_string(num_results) +
                                            " but the operation has " + std::to_string(expected) +
                                            " result" + (expected == 1 ? "" : "s"));
  }
  std::vector<const trace::Tensor*> r = TraceOf(scope)->ControlFlow(op, a, operands);
  for (size_t i = 0; i < r.size(); ++i) results_out[i] = Wrap(r[i]);
}

}  // namespace

size_t shp_scope_trace_mark(const shp_scope_t* scope) {
  return scope != nullptr && scope->trace ? scope->trace->tensors().size() : 0;
}

shp_error_t* shp_program_create_body(shp_scope_t* scope, size_t mark,
                                     const shp_tensor_t* const* inputs, size_t num_inputs,
                                     const shp_tensor_t* const* outputs, size_t num_outputs,
                                     const shp_tensor_t** captures, size_t captures_capacity,
                                     size_t* num_captures_inout, shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(num_captures_inout, "num_captures_inout");
  SHP_REQUIRE_ARG(program_out, "program_out");
  const auto ins = TensorList(inputs, num_inputs, "inputs");
  const auto outs = TensorList(outputs, num_outputs, "outputs");
  if (*num_captures_inout > captures_capacity) {
    throw Error(Code::kInvalidArgument,
                "create_body: *num_captures_inout is above captures_capacity");
  }
  const auto given = TensorList(captures, *num_captures_inout, "captures");
  trace::Body body = trace::CutBody(*TraceOf(scope), mark, ins, outs, given);
  if (body.captures.size() > captures_capacity) {
    throw Error(Code::kInvalidArgument,
                "create_body: the body captures " + std::to_string(body.captures.size()) +
                    " tensors but captures_capacity is " + std::to_string(captures_capacity));
  }
  if (!body.captures.empty()) SHP_REQUIRE_ARG(captures, "captures");
  std::vector<std::string> names;
  for (size_t i = 0; i < body.outputs.size(); ++i) names.push_back("out" + std::to_string(i));
  auto handle = std::make_unique<shp_program>();
  handle->program = program::Program::FromTrace(*body.trace, body.inputs, body.outputs, names);
  for (size_t i = 0; i < body.captures.size(); ++i) captures[i] = Wrap(body.captures[i]);
  *num_captures_inout = body.captures.size();
  *program_out = handle.release();
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_tensor_cond(shp_scope_t* scope, const shp_tensor_t* pred,
                             const shp_program_t* true_program, const shp_program_t* false_program,
                             const shp_tensor_t* const* operands, size_t num_operands,
                             const shp_tensor_t** results_out, size_t num_results) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(pred, "pred");
  ops::ControlFlowAttrs a;
  a.bodies = {BodyArg(true_program, "true_program"), BodyArg(false_program, "false_program")};
  std::vector<const trace::Tensor*> all{Unwrap(pred)};
  for (const trace::Tensor* t : TensorList(operands, num_operands, "operands")) all.push_back(t);
  Record(scope, trace::OpKind::kCond, a, all, results_out, num_results, a.bodies[0]->num_outputs());
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_tensor_while_loop(shp_scope_t* scope, const shp_program_t* cond_program,
                                   const shp_program_t* body_program,
                                   const shp_tensor_t* const* init, size_t num_init,
                                   const shp_tensor_t* const* consts, size_t num_consts,
                                   int64_t max_trips, const shp_tensor_t** results_out,
                                   size_t num_results) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  ops::ControlFlowAttrs a;
  a.bodies = {BodyArg(cond_program, "cond_program"), BodyArg(body_program, "body_program")};
  a.counts = {static_cast<int64_t>(num_init)};
  a.max_trips = max_trips;
  std::vector<const trace::Tensor*> all = TensorList(init, num_init, "init");
  for (const trace::Tensor* t : TensorList(consts, num_consts, "consts")) all.push_back(t);
  Record(scope, trace::OpKind::kWhileLoop, a, all, results_out, num_results, num_init);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_tensor_scan(shp_scope_t* scope, const shp_program_t* body_program,
                             const shp_tensor_t* const* init, size_t num_init,
                             const shp_tensor_t* const* xs, size_t num_xs,
                             const shp_tensor_t* const* consts, size_t num_consts, int64_t axis,
                             const shp_dim_t* length, bool reverse,
                             const shp_tensor_t** results_out, size_t num_results) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  ops::ControlFlowAttrs a;
  a.bodies = {BodyArg(body_program, "body_program")};
  a.counts = {static_cast<int64_t>(num_init), static_cast<int64_t>(num_xs)};
  a.axis = axis;
  a.reverse = reverse;
  a.length = length != nullptr ? Unwrap(length) : nullptr;
  std::vector<const trace::Tensor*> all = TensorList(init, num_init, "init");
  for (const trace::Tensor* t : TensorList(xs, num_xs, "xs")) all.push_back(t);
  for (const trace::Tensor* t : TensorList(consts, num_consts, "consts")) all.push_back(t);
  Record(scope, trace::OpKind::kScan, a, all, results_out, num_results, a.bodies[0]->num_outputs());
  return nullptr;
  SHP_API_END
}
