// The one table of limits on programs and their dimension expressions. What can be built can be
// serialized and loaded: the builders (scopes, the tracer, program creation), the writer and the
// loader all enforce these same numbers, so no program is created that cannot be loaded back.
// Builders refuse past a limit with kUnsupported (kInvalidArgument for the tensor-level ones
// that predate this table), the loader with kInvalidProgram; both messages name the limit.
// The runtime's own limits (OpDef::CheckExecutable) are checked when a runtime is created,
// never first at run time. The C header (c_api/include/shapepoly/shapepoly.h, "Limits")
// documents these values; tests/c_api/limits_test.cc builds a program at and past each one.
#ifndef SHAPEPOLY_CC_BASE_LIMITS_H_
#define SHAPEPOLY_CC_BASE_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace shp {
namespace limits {

// ---- Tensors and operations (cc/trace, cc/program) ----
constexpr size_t kMaxRank = 64;                                 // axes of any value
constexpr uint64_t kMaxConstantBytes = uint64_t{1} << 30;       // bytes of one constant
constexpr uint64_t kMaxTotalConstantBytes = uint64_t{1} << 32;  // bytes of all constants
constexpr size_t kMaxNodes = size_t{1} << 20;  // operations (and inputs, outputs) of a program
constexpr size_t kMaxOperands = 4096;          // operands of one operation
constexpr size_t kMaxVariants = 64;            // variants of a multi-variant program
// Metadata of a program (string key/value pairs, schema version 14).
constexpr size_t kMaxMetadataEntries = 1024;                // entries of one program
constexpr size_t kMaxMetadataKeyBytes = 256;                // bytes of one key (UTF-8)
constexpr size_t kMaxMetadataValueBytes = size_t{1} << 20;  // bytes of one value (UTF-8)

// ---- Dimension expressions and scopes (cc/dim) ----
// Dimension variables of a scope (and so of a program).
constexpr size_t kMaxVariables = 4096;
// Facts of a scope (and so of a program): constraints, assertions, guards and derived facts
// (the bounds of data-dependent sizes) together.
constexpr size_t kMaxFacts = 1024;
// Terms of one dimension expression in normal form (a sum of monomials).
constexpr size_t kMaxTerms = 1024;
// Distinct factors of one monomial (atoms, each with its exponent): one DAG entry's operands.
constexpr size_t kMaxFactors = 4096;
// The exponent of one factor of a monomial (n^64; a DAG POW entry's value).
constexpr int64_t kMaxPow = 64;
// Entries of a program's dimension DAG (every distinct constant, variable, atom, power,
// monomial, term and sum its shapes, attributes and facts use).
constexpr size_t kMaxDagEntries = size_t{1} << 16;
// floordiv/mod/max/min nest at most dim::kMaxNestingDepth (1000) deep and an expression has at
// most dim::kMaxExpandedSize (100000) atoms and terms written out (cc/dim/scope.h).

}  // namespace limits
}  // namespace shp

#endif  // SHAPEPOLY_CC_BASE_LIMITS_H_
