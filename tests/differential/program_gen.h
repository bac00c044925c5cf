// Random programs as users write them, built through the public C API (shapepoly.h), for the
// differential tests (fused against unfused runtimes, tests/differential/differential.h).
//
// A Program is a small IR of its own: variables (with their lower bounds), one node per traced
// tensor (inputs, scalar-filled constants, every elementwise op, reduce, matmul, softmax,
// layer_norm, concatenate, slice, reshape, transpose, take, broadcast_to, cumsum, reverse,
// trilu), the outputs, the valuations to run it at and how to draw input values. Every node carries
// its type (dtype and shape, whose dims are affine `mul*var + add`), which the generator infers
// itself so that it only builds what the library accepts (an illegal combination is a generator
// bug).
//
// The text form, one line per node, is printed and parsed back (minimized failures, the corpus):
//   # comment
//   vars b n:0                 variables; `:0` declares the range [0, inf), `:2` adds n >= 2
//   sizes b=1,37,1000 n=3,3,3  one valuation per column
//   values seed=7 special=1 extremes=0
//   v0 = input x : f32[b,4]
//   v1 = const 0.5 : f32[]
//   v2 = tanh v0 : f32[b,4]
//   v3 = add v2 v1 : f32[b,4]
//   v4 = reduce_sum v3 axes=1 keepdims=0 : f32[b]
//   out v3 v4
// The `: type` part is required for input, const, convert, reshape and broadcast_to, and
// optional (inferred) elsewhere. Types: f32 f64 i32 i64 bool and the narrow f16 bf16 i8 u8 i16
// u16 u32 u64 (an op on a narrow type follows the rules of its compute type, docs/dtypes.md; a
// const's value is rounded to f16/bf16 once, or truncated and wrapped to an integer type).
//
// Every choice comes from a Source: a seeded PRNG (xoshiro256**, the same programs on every
// machine) or a byte buffer (libFuzzer: every byte string gives a valid program; exhausted
// bytes read as zeros).
#ifndef SHAPEPOLY_TESTS_DIFFERENTIAL_PROGRAM_GEN_H_
#define SHAPEPOLY_TESTS_DIFFERENTIAL_PROGRAM_GEN_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace shpdiff {

// ---- Sources of choices ----------------------------------------------------------------------

class Source {
 public:
  virtual ~Source() = default;
  // A uniform choice in [0, n); 0 when n <= 1.
  virtual uint64_t Below(uint64_t n) = 0;
  // 64 raw bits (values of inputs, seeds).
  virtual uint64_t Bits() = 0;
  bool Chance(uint64_t num, uint64_t den) { return Below(den) < num; }
  int64_t Range(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }
};

// xoshiro256** seeded through splitmix64: deterministic across machines and compilers.
class PrngSource : public Source {
 public:
  explicit PrngSource(uint64_t seed);
  uint64_t Below(uint64_t n) override;
  uint64_t Bits() override;

 private:
  uint64_t s_[4];
};

// Reads choices from bytes (libFuzzer); past the end every choice is 0 (the first option,
// which always leads to a small valid program).
class ByteSource : public Source {
 public:
  ByteSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t Below(uint64_t n) override;
  uint64_t Bits() override;

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// ---- The program IR ----------------------------------------------------------------------------

// An affine dimension mul*var + add; var -1 is the constant `add`.
struct Dim {
  int var = -1;
  int64_t mul = 0;
  int64_t add = 0;
  bool operator==(const Dim& o) const {
    return var == o.var && (var < 0 || mul == o.mul) && add == o.add;
  }
  bool operator!=(const Dim& o) const { return !(*this == o); }
  bool IsConst() const { return var < 0; }
  bool IsOne() const { return var < 0 && add == 1; }
};

struct Type {
  shp_dtype_t dtype = SHP_F32;
  std::vector<Dim> shape;
};

struct Var {
  std::string name;
  int64_t lo = 1;  // 0: declared range [0, inf); 1: the default; 2: the constraint `name >= 2`
};

struct Node {
  std::string op;             // "input", "const", or an op name (shp_tensor_<op>)
  std::vector<int> args;      // operand node indices (< this node's)
  std::string name;           // input name
  double value = 0;           // const: every element
  std::vector<int64_t> ints;  // axes, permutation, strides, axis (first entry), trilu {k, upper}
  std::vector<Dim> starts;    // slice
  std::vector<Dim> limits;    // slice
  bool keepdims = false;      // reduce
  double eps = 1e-5;          // layer_norm
  Type type;
};

struct Program {
  std::vector<Var> vars;
  std::vector<Node> nodes;
  std::vector<int> outputs;
  std::vector<std::vector<int64_t>> valuations;  // each: one value per var
  uint64_t value_seed = 1;
  bool special = false;   // float inputs include 0, -0, inf, -inf, nan (f16, bf16: also
                          // their largest finite values, subnormals, smallest normal)
  bool extremes = false;  // integer inputs include INT_MIN, INT_MAX, -1, 0 (narrow integers:
                          // their min, max, 0, 1, -1 and any bits)
};

// ---- Element types -------------------------------------------------------------------------
// All thirteen (shp_dtype_t). The narrow ones (f16 bf16 i8 u8 i16 u16 u32 u64, docs/dtypes.md)
// appear in about one program in three: as inputs, constants, convert results and the values of
// every op the rules allow on them (the tracer computes those in f32, i32 or i64 and converts
// once on store; u64 div, rem and pow are never generated: they are refused).
extern const std::vector<shp_dtype_t> kAllDTypes;     // f32 f64 i32 i64 bool, then the narrow
extern const std::vector<shp_dtype_t> kNarrowDTypes;  // f16 bf16 i8 u8 i16 u16 u32 u64
bool IsNarrow(shp_dtype_t t);
size_t DTypeSize(shp_dtype_t t);
// f16 (IEEE binary16) and bf16 bits of v rounded to nearest, ties to even (overflow: inf), and
// back (exact).
uint16_t HalfBits(shp_dtype_t t, double v);
double HalfValue(shp_dtype_t t, uint16_t bits);
// Whether the element at p is a NaN (float types; false for the others).
bool IsNaNAt(shp_dtype_t t, const uint8_t* p);
// Whether a value of p has a narrow type.
bool HasNarrow(const Program& p);

// Every op name the IR knows (besides input and const).
extern const std::vector<std::string> kUnaryOps;    // neg ... erf, tan ... atanh
extern const std::vector<std::string> kBinaryOps;   // add ... xor
extern const std::vector<std::string> kCompareOps;  // eq ne lt le gt ge

const char* DTypeName(shp_dtype_t t);
std::string DimText(const Dim& d, const std::vector<Var>& vars);
std::string TypeText(const Type& t, const std::vector<Var>& vars);
int64_t DimValue(const Dim& d, const std::vector<int64_t>& vals);
int64_t Elements(const Type& t, const std::vector<int64_t>& vals);

// Infers nodes[i].type from its operands and attributes (ops whose type is given keep it),
// checking the dtype rules and shapes as the library does. False (with a reason) if illegal.
bool InferType(Program* pp, size_t i, std::string* why);

std::string ToText(const Program& p);
bool ParseText(const std::string& text, Program* p, std::string* error);

// Drops nodes no output needs (inputs too) and renumbers.
void Compact(Program* p);

// ---- Generation --------------------------------------------------------------------------------

struct GenOptions {
  int max_steps = 18;           // ops added after the first inputs (a pattern counts one)
  int max_depth = 8;            // longest chain from an input
  int valuations = 3;           // sizes each program runs at
  int64_t small_cap = 4096;     // elements of the largest value, for most valuations
  int64_t medium_cap = 300000;  // for 1 in medium_one_in valuations (crossing 65536, 131072)
  int medium_one_in = 8;
  int64_t huge_cap = 1200000;  // ~10^6 elements, for 1 in huge_one_in programs (0: never)
  int huge_one_in = 150;
};

Program Generate(Source& s, const GenOptions& o = GenOptions());

// The options of the libFuzzer target (small values: milliseconds per input under ASan).
GenOptions FuzzerGenOptions();

// Chooses `o.valuations` valuations for p (replacing p->valuations): sizes 0/1 where the
// variables allow them, SIMD tails, values around the 256-element chunk, the 1024-element tile
// and the 64-tile thread chunk, bounded by the caps.
void ChooseValuations(Source& s, const GenOptions& o, Program* p);

// ---- Building through the C API and making inputs ----------------------------------------------

// Traces p in a new scope and creates the program (outputs named o0, o1, ...). On failure
// returns NULL and sets *error (a generator bug for a generated program).
shp_program_t* Build(const Program& p, std::string* error);

// The input arrays of valuation `k` (one per input node, in node order), deterministic in
// (p.value_seed, the sizes of valuation k); index inputs of take stay in range. Caller
// destroys them.
std::vector<shp_array_t*> MakeInputs(const Program& p, size_t k);
std::vector<std::string> InputNames(const Program& p);

// Coverage counters ("op add:f32", "rank 2", "bcast scalar", ...), summed over programs.
void CountCoverage(const Program& p, std::map<std::string, long>* counts);
// The coverage keys ("op add:f32", ...) of every legal elementwise op and dtype combination.
std::vector<std::string> ElementwiseCombos();
// Those and every other op of the IR with each dtype it takes ("op reduce_sum:u8", "op
// take:bf16", "index take:u16": the index dtypes of take, ...): what the generator reaches.
std::vector<std::string> OpDTypeCombos();

}  // namespace shpdiff

#endif  // SHAPEPOLY_TESTS_DIFFERENTIAL_PROGRAM_GEN_H_
