// Program::Loader, private to cc/program: the stages of Program::Load. The entry point, the
// scope and the dimension DAG are in program_load.cc; the inputs, nodes, derived facts, outputs
// and solve recipe in program_load_values.cc; the constants (declared sizes, inflation, bool
// bytes) in program_load_constants.cc.
#ifndef SHAPEPOLY_CC_PROGRAM_PROGRAM_LOAD_H_
#define SHAPEPOLY_CC_PROGRAM_PROGRAM_LOAD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <memory>
#include <vector>

#include "cc/program/program.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

namespace fb = ::shapepoly::fb;

namespace loading {

// Every refusal of a loaded file: kInvalidProgram, the message prefixed "invalid program: ".
[[noreturn]] void Bad(const std::string& msg);

// The length of an optional FlatBuffers vector (absent: 0).
template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// Text from the file, quoted for a message: NUL, control bytes and invalid UTF-8 become \xNN
// (messages are NUL-terminated UTF-8), and long text is cut.
std::string Quoted(const std::string& text);

// Names must survive the C API (NUL-terminated strings): the tracer can only make such names.
void CheckName(const std::string& name, const std::string& where);

}  // namespace loading

// Loads the sections of a verified buffer into a new Program, in dependency order: the scope
// (variables, constraints), the dimension DAG with the assertions, the constants, the inputs,
// the nodes, the outputs; then the solve recipe must be the one this library derives.
class Program::Loader {
 public:
  Loader(Program* p, const fb::Program* r, const LoadOptions& options)
      : p(p), r(r), options(options) {}

  // Everything that needs no inflation comes first; the constants are inflated last, once the
  // whole program is known to be valid and their declared sizes fit the cap.
  void Run() {
    CheckLimits();
    CheckBuffers();
    LoadScope();
    LoadDims();
    CheckFacts();
    LoadInputs();
    LoadSubprograms();
    LoadNodes();
    CheckDerived();
    LoadOutputs();
    CheckSolveRecipe();
    InflateBuffers();
    CheckBoolConstants();
  }

 private:
  // ---- program_load.cc ----
  // A feature of schema version `v` in a file that declares an older one.
  void RequireVersion(uint32_t v, const std::string& what) const;
  // Counts beyond the limits (cc/base/limits.h, kMaxNodes...).
  void CheckLimits();
  // Variables and constraints: the program's scope.
  void LoadScope();
  // The DAG, with the assertions added as soon as their expressions exist.
  void LoadDims();
  // The parsed constraint texts must be the expressions of the DAG.
  void CheckFacts();
  // Entries [0, built) of the DAG exist: adds the assertions whose sides are among them.
  void add_ready_assertions(size_t built);

  // ---- program_load_constants.cc ----
  // The constants' declared sizes, before anything is allocated or inflated: the format's
  // limits, the caller's cap (options.max_bytes) per buffer and in total, a stored size that
  // matches, and a zlib size the stream could produce at all.
  void CheckBuffers();
  // The constants, checked by CheckBuffers: time and memory linear in the declared sizes.
  void InflateBuffers();
  // Bool elements are one byte, 0 or 1, as tracing enforces: kernels compute and/or/not on the
  // bytes, so a 2 would make not(x) true and x true at once.
  void CheckBoolConstants();

  // ---- program_load_values.cc ----
  // Entry idx of the DAG (where: the entry of the file that refers to it, for messages).
  const dim::Expr* dim_at(uint32_t idx, const std::string& where) const;
  // A shape of DAG entries, at most kMaxRank of them.
  std::vector<const dim::Expr*> shape_of(const flatbuffers::Vector<uint32_t>* v,
                                         const std::string& where) const;
  // The integers of an option (an axis list), at most kMaxRank, read only when aligned.
  std::vector<int64_t> ints_of(const flatbuffers::Vector<int64_t>* v,
                               const std::string& where) const;
  // A dtype the library knows.
  trace::DType dtype_of(fb::DType t, const std::string& where) const;
  // Inputs: names, dtypes, shapes, roles.
  void LoadInputs();
  // The subprograms of control-flow nodes: each a whole program, loaded (and verified) by
  // Program::Load at the next depth, within what the load cap leaves.
  void LoadSubprograms();
  // Nodes: decoded with their op's definition, then every type re-inferred.
  void LoadNodes();
  // Derived facts are never checked at run time (they hold by construction of the
  // data-dependent ops), so the file is not trusted with them: each must be the bound that a
  // node producing its variable guarantees, re-derived here from the node's operands
  // (OpDef::UnbackedBound). An edited bound (u0 <= 1 for nonzero's u0 <= 4*n) would make
  // variable_bounds, cost_bounds and output_dim_bounds report too little.
  void CheckDerived();
  // Outputs: names and values.
  void LoadOutputs();
  // The stored solve recipe must be the one this library derives.
  void CheckSolveRecipe();

  Program* p;
  const fb::Program* r;
  const LoadOptions& options;
  std::vector<uint64_t> buffer_sizes;  // declared, checked by CheckBuffers
  dim::Scope* s = nullptr;
  std::vector<std::string> var_names;  // by index in the file
  std::vector<int32_t> var_map;        // file variable index -> scope variable
  size_t nd = 0;                       // DAG entries
  std::vector<const dim::Expr*> dims;  // the DAG
  std::vector<const fb::Fact*> asserts;
  size_t next_assert = 0;
  std::vector<const fb::Fact*> derived;  // the data-dependent ops' bounds
  size_t next_derived = 0;
  std::vector<std::pair<std::string, std::string>> unbacked;  // name, origin
  std::vector<std::shared_ptr<const ops::Subprogram>> subprograms;
};

}  // namespace program
}  // namespace shp

#endif  // SHAPEPOLY_CC_PROGRAM_PROGRAM_LOAD_H_
