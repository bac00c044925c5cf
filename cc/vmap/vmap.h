// Batching as a program transformation (issue 44): vmap takes a program for one example and
// returns the program for a batch of them, with the batch size a new dim variable. Like grad
// and jvp it works on any program, traced or loaded, and its result is an ordinary program
// (serializable, transformable again: vmap of a vmap adds two axes).
//
// Each input is batched along one of its axes or not at all (the same value for every batch
// element); each output gets the batch axis where out_axes says. The program's inputs keep
// their names, roles and fill defaults; constraints, assertions, guards and variants carry
// over (a multi-variant program is batched variant by variant). The batch variable ranges
// over [0, inf). Ops are batched by their rules (cc/ops/batch.h); an op that cannot be
// batched (nonzero, boolean_mask, size_from_value: their sizes differ per element) is
// refused with kUnsupported naming it.
#ifndef SHAPEPOLY_CC_VMAP_VMAP_H_
#define SHAPEPOLY_CC_VMAP_VMAP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cc/program/program.h"

namespace shp {
namespace vmap {

// The default name of the batch variable: "vmap0", or "vmap1", ... when taken.
std::string DefaultBatchName(const program::Program& p);

// `in_axes`: one per input, the axis of the batched input that is the batch (0..rank of the
// input as the program has it), or -1 (not batched); at least one input must be batched, and
// dimension inputs and inputs with a default value of a fixed shape cannot be.
// `out_axes`: empty (every output's batch axis first) or one per output: where its batch
// axis goes (0..rank), or -1 for an output that must not depend on a batched input (it
// keeps its shape). `batch_name`: the new variable ("" : DefaultBatchName), not a variable
// the program has. Throws kInvalidArgument (naming the input, output or axis) or
// kUnsupported (naming the op).
std::unique_ptr<program::Program> Vmap(const program::Program& p,
                                       const std::vector<int64_t>& in_axes,
                                       const std::vector<int64_t>& out_axes,
                                       const std::string& batch_name);

}  // namespace vmap
}  // namespace shp

#endif  // SHAPEPOLY_CC_VMAP_VMAP_H_
