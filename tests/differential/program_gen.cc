#include "tests/differential/program_gen.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

namespace shpdiff {

// ---- Sources ---------------------------------------------------------------------------------

namespace {
uint64_t SplitMix(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

PrngSource::PrngSource(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& w : s_) w = SplitMix(&x);
}

uint64_t PrngSource::Bits() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t PrngSource::Below(uint64_t n) {
  if (n <= 1) return 0;
  return Bits() % n;  // the bias is irrelevant here; the result is the same on every machine
}

uint64_t ByteSource::Below(uint64_t n) {
  if (n <= 1) return 0;
  uint64_t v = 0;
  int bytes = n <= 256 ? 1 : n <= 65536 ? 2 : 4;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | (pos_ < size_ ? data_[pos_++] : 0);
  return v % n;
}

uint64_t ByteSource::Bits() {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | (pos_ < size_ ? data_[pos_++] : 0);
  return v;
}

// ---- IR helpers --------------------------------------------------------------------------------

const std::vector<std::string> kUnaryOps = {
    "neg", "abs",  "exp",      "log",   "log1p", "expm1", "sqrt",  "rsqrt", "sin",
    "cos", "tanh", "logistic", "floor", "ceil",  "round", "sign",  "not",   "erf",
    "tan", "sinh", "cosh",     "asin",  "acos",  "atan",  "asinh", "acosh", "atanh"};
const std::vector<std::string> kBinaryOps = {"add", "sub", "mul", "div", "pow", "max",
                                             "min", "rem", "and", "or",  "xor"};
const std::vector<std::string> kCompareOps = {"eq", "ne", "lt", "le", "gt", "ge"};
namespace {
const std::vector<std::string> kReduceOps = {"reduce_sum", "reduce_mean", "reduce_max",
                                             "reduce_min", "reduce_prod"};

int IndexOf(const std::vector<std::string>& v, const std::string& s) {
  auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}
// The type an op on t computes in (docs/dtypes.md): the rules of an op follow it.
shp_dtype_t ComputeOf(shp_dtype_t t) {
  switch (t) {
    case SHP_F16:
    case SHP_BF16:
      return SHP_F32;
    case SHP_I8:
    case SHP_U8:
    case SHP_I16:
    case SHP_U16:
      return SHP_I32;
    case SHP_U32:
    case SHP_U64:
      return SHP_I64;
    default:
      return t;
  }
}
bool IsFloat(shp_dtype_t t) { return ComputeOf(t) == SHP_F32 || ComputeOf(t) == SHP_F64; }
bool IsInt(shp_dtype_t t) { return ComputeOf(t) == SHP_I32 || ComputeOf(t) == SHP_I64; }
bool IsNumeric(shp_dtype_t t) { return t != SHP_BOOL; }
bool IsUnsigned(shp_dtype_t t) {
  return t == SHP_U8 || t == SHP_U16 || t == SHP_U32 || t == SHP_U64;
}
size_t ElemSize(shp_dtype_t t) { return DTypeSize(t); }
// The smallest and largest value of an integer type (u64's largest as -1: its bits).
int64_t IntMin(shp_dtype_t t) {
  if (IsUnsigned(t)) return 0;
  const size_t bits = 8 * DTypeSize(t);
  return bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
}
int64_t IntMax(shp_dtype_t t) {
  const size_t bits = 8 * DTypeSize(t) - (IsUnsigned(t) ? 0 : 1);
  return bits == 64   ? -1
         : bits == 63 ? std::numeric_limits<int64_t>::max()
                      : (int64_t{1} << bits) - 1;
}
// A constant's value as an integer (NaN -> 0, saturated to int64); stored wrapped to the type.
int64_t IntOf(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}
// Stores one element of type t: floats from f, integers and bools from i (the low bytes: the
// value wrapped to the type; the hosts are little-endian).
void Store(shp_dtype_t t, double f, int64_t i, uint8_t* dst) {
  switch (t) {
    case SHP_F32: {
      float v = static_cast<float>(f);
      std::memcpy(dst, &v, 4);
      break;
    }
    case SHP_F64:
      std::memcpy(dst, &f, 8);
      break;
    case SHP_F16:
    case SHP_BF16: {
      uint16_t b = HalfBits(t, f);
      std::memcpy(dst, &b, 2);
      break;
    }
    case SHP_BOOL:
      *dst = f != 0;
      break;
    default:  // integers
      std::memcpy(dst, &i, DTypeSize(t));
      break;
  }
}

// Whether unary `op` takes dtype t (docs/ops.md, docs/dtypes.md and the builder's rules).
bool UnaryTakes(const std::string& op, shp_dtype_t t) {
  if (op == "neg" || op == "abs" || op == "sign") return IsNumeric(t);
  if (op == "not") return !IsFloat(t);
  return IsFloat(t);
}
bool BinaryTakes(const std::string& op, shp_dtype_t t) {
  if (op == "and" || op == "or" || op == "xor") return !IsFloat(t);
  if (t == SHP_U64 && (op == "div" || op == "rem" || op == "pow")) return false;  // refused
  return IsNumeric(t);
}

Dim ConstDim(int64_t c) { return Dim{-1, 0, c}; }

// NumPy broadcasting on our dims: equal, or one of them the constant 1.
bool Broadcast(const std::vector<const std::vector<Dim>*>& shapes, std::vector<Dim>* out) {
  size_t rank = 0;
  for (auto* s : shapes) rank = std::max(rank, s->size());
  std::vector<Dim> r(rank, ConstDim(1));
  for (size_t k = 0; k < rank; ++k) {
    bool set = false;
    Dim acc = ConstDim(1);
    for (auto* s : shapes) {
      if (k >= s->size()) continue;
      const Dim& d = (*s)[s->size() - 1 - k];
      if (!set || acc.IsOne()) {
        acc = d;
        set = true;
        continue;
      }
      if (d.IsOne() || d == acc) continue;
      return false;
    }
    r[rank - 1 - k] = acc;
  }
  *out = r;
  return true;
}

// The smallest value a dim takes under the variables' lower bounds (affine, mul >= 0).
int64_t DimMin(const Dim& d, const std::vector<Var>& vars) {
  if (d.var < 0) return d.add;
  return d.mul * vars[d.var].lo + d.add;
}

bool AddDims(const Dim& a, const Dim& b, Dim* out) {
  if (a.var < 0 && b.var < 0) {
    *out = ConstDim(a.add + b.add);
  } else if (a.var < 0 || b.var < 0 || a.var == b.var) {
    Dim r;
    r.var = a.var >= 0 ? a.var : b.var;
    r.mul = (a.var >= 0 ? a.mul : 0) + (b.var >= 0 ? b.mul : 0);
    r.add = a.add + b.add;
    *out = r;
  } else {
    return false;
  }
  return true;
}

bool MulDims(const Dim& a, const Dim& b, Dim* out) {
  if (a.var >= 0 && b.var >= 0) return false;
  const Dim& v = a.var >= 0 ? a : b;
  const Dim& c = a.var >= 0 ? b : a;
  if (v.var < 0) {
    *out = ConstDim(v.add * c.add);
  } else if (c.add == 0) {
    *out = ConstDim(0);
  } else {
    *out = Dim{v.var, v.mul * c.add, v.add * c.add};
  }
  return true;
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

const std::vector<shp_dtype_t> kAllDTypes = {SHP_F32, SHP_F64,  SHP_I32, SHP_I64, SHP_BOOL,
                                             SHP_F16, SHP_BF16, SHP_I8,  SHP_U8,  SHP_I16,
                                             SHP_U16, SHP_U32,  SHP_U64};
const std::vector<shp_dtype_t> kNarrowDTypes = {SHP_F16, SHP_BF16, SHP_I8,  SHP_U8,
                                                SHP_I16, SHP_U16,  SHP_U32, SHP_U64};

bool IsNarrow(shp_dtype_t t) { return t != ComputeOf(t); }

size_t DTypeSize(shp_dtype_t t) {
  switch (t) {
    case SHP_F64:
    case SHP_I64:
    case SHP_U64:
      return 8;
    case SHP_F32:
    case SHP_I32:
    case SHP_U32:
      return 4;
    case SHP_F16:
    case SHP_BF16:
    case SHP_I16:
    case SHP_U16:
      return 2;
    default:
      return 1;
  }
}

uint16_t HalfBits(shp_dtype_t t, double v) {
  const int mant = t == SHP_BF16 ? 7 : 10, bias = t == SHP_BF16 ? 127 : 15;
  const int ebits = 15 - mant;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const uint16_t inf = static_cast<uint16_t>(((1u << ebits) - 1) << mant);
  if (std::isnan(v)) return static_cast<uint16_t>(sign | inf | (1u << (mant - 1)));
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | inf;
  if (a == 0) return sign;
  const int emin = 1 - bias;  // the exponent of the smallest normal value
  int e;
  std::frexp(a, &e);                             // a = f * 2^e with f in [0.5, 1)
  int q = std::max(e - 1, emin) - mant;          // the exponent of the last place
  double m = std::nearbyint(std::ldexp(a, -q));  // to nearest, ties to even (the default mode)
  if (m >= std::ldexp(1.0, mant + 1)) {          // rounded up into the next binade
    m /= 2;
    ++q;
  }
  if (m < std::ldexp(1.0, mant)) return static_cast<uint16_t>(sign | static_cast<uint32_t>(m));
  const int biased = q + mant + bias;
  if (biased >= (1 << ebits) - 1) return sign | inf;
  return static_cast<uint16_t>(sign | (biased << mant) | (static_cast<uint32_t>(m) - (1u << mant)));
}

double HalfValue(shp_dtype_t t, uint16_t bits) {
  const int mant = t == SHP_BF16 ? 7 : 10, bias = t == SHP_BF16 ? 127 : 15;
  const int ebits = 15 - mant;
  const int biased = (bits >> mant) & ((1 << ebits) - 1);
  const uint32_t m = bits & ((1u << mant) - 1);
  const double s = (bits & 0x8000) ? -1.0 : 1.0;
  if (biased == (1 << ebits) - 1)
    return m ? std::copysign(std::numeric_limits<double>::quiet_NaN(), s)
             : s * std::numeric_limits<double>::infinity();
  if (biased == 0) return s * std::ldexp(m, 1 - bias - mant);
  return s * std::ldexp(m + (1u << mant), biased - bias - mant);
}

bool IsNaNAt(shp_dtype_t t, const uint8_t* p) {
  switch (t) {
    case SHP_F32: {
      float x;
      std::memcpy(&x, p, 4);
      return std::isnan(x);
    }
    case SHP_F64: {
      double x;
      std::memcpy(&x, p, 8);
      return std::isnan(x);
    }
    case SHP_F16:
    case SHP_BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return std::isnan(HalfValue(t, b));
    }
    default:
      return false;
  }
}

bool HasNarrow(const Program& p) {
  for (const Node& n : p.nodes)
    if (IsNarrow(n.type.dtype)) return true;
  return false;
}

const char* DTypeName(shp_dtype_t t) {
  static const char* const kNames[] = {"f32", "f64", "i32", "i64", "bool", "f16", "bf16",
                                       "i8",  "u8",  "i16", "u16", "u32",  "u64"};
  const int i = static_cast<int>(t);
  return i >= 0 && i < 13 ? kNames[i] : "?";
}

std::string DimText(const Dim& d, const std::vector<Var>& vars) {
  if (d.var < 0) return std::to_string(d.add);
  std::string s;
  if (d.mul != 1) s = std::to_string(d.mul) + "*";
  s += vars[d.var].name;
  if (d.add > 0) s += "+" + std::to_string(d.add);
  if (d.add < 0) s += "-" + std::to_string(-d.add);
  return s;
}

std::string TypeText(const Type& t, const std::vector<Var>& vars) {
  std::string s = DTypeName(t.dtype);
  s += "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + DimText(t.shape[i], vars);
  return s + "]";
}

int64_t DimValue(const Dim& d, const std::vector<int64_t>& vals) {
  if (d.var < 0) return d.add;
  return d.mul * vals[d.var] + d.add;
}

int64_t Elements(const Type& t, const std::vector<int64_t>& vals) {
  int64_t n = 1;
  for (const Dim& d : t.shape) {
    int64_t v = DimValue(d, vals);
    if (v <= 0) return 0;
    if (n > (int64_t{1} << 40) / v) return int64_t{1} << 40;
    n *= v;
  }
  return n;
}

// ---- Type inference ----------------------------------------------------------------------------

bool InferType(Program* pp, size_t i, std::string* why) {
  const Program& p = *pp;
  const Node& n = p.nodes[i];
  Type out;
  auto fail = [&](const std::string& m) {
    *why = "v" + std::to_string(i) + " (" + n.op + "): " + m;
    return false;
  };
  std::vector<const Type*> a;
  for (int k : n.args) {
    if (k < 0 || static_cast<size_t>(k) >= i) return fail("bad operand index");
    a.push_back(&p.nodes[k].type);
  }
  auto nargs = [&](size_t k) { return a.size() == k; };
  auto norm_axis = [&](int64_t ax, size_t rank, int64_t* o) {
    int64_t r = static_cast<int64_t>(rank);
    if (ax < -r || ax >= r) return false;
    *o = ax < 0 ? ax + r : ax;
    return true;
  };
  const std::string& op = n.op;
  if (op == "input" || op == "const") {
    if (!nargs(0)) return fail("takes no operands");
    return true;
  }
  if (IndexOf(kUnaryOps, op) >= 0) {
    if (!nargs(1)) return fail("takes one operand");
    if (!UnaryTakes(op, a[0]->dtype)) return fail("dtype");
    out = *a[0];
  } else if (IndexOf(kBinaryOps, op) >= 0 || IndexOf(kCompareOps, op) >= 0) {
    if (!nargs(2)) return fail("takes two operands");
    if (a[0]->dtype != a[1]->dtype) return fail("dtypes differ");
    bool cmp = IndexOf(kCompareOps, op) >= 0;
    if (!cmp && !BinaryTakes(op, a[0]->dtype)) return fail("dtype");
    if (!Broadcast({&a[0]->shape, &a[1]->shape}, &out.shape)) return fail("broadcast");
    out.dtype = cmp ? SHP_BOOL : a[0]->dtype;
  } else if (op == "select") {
    if (!nargs(3)) return fail("takes three operands");
    if (a[0]->dtype != SHP_BOOL || a[1]->dtype != a[2]->dtype) return fail("dtype");
    if (!Broadcast({&a[0]->shape, &a[1]->shape, &a[2]->shape}, &out.shape))
      return fail("broadcast");
    out.dtype = a[1]->dtype;
  } else if (op == "convert") {
    if (!nargs(1)) return fail("takes one operand");
    out = n.type;
    out.shape = a[0]->shape;
  } else if (op == "broadcast_to") {
    if (!nargs(1)) return fail("takes one operand");
    const auto& x = a[0]->shape;
    const auto& to = n.type.shape;
    if (to.size() < x.size()) return fail("rank");
    size_t off = to.size() - x.size();
    for (size_t k = 0; k < x.size(); ++k)
      if (!(x[k] == to[off + k] || x[k].IsOne())) return fail("not broadcastable");
    for (const Dim& d : to)
      if (DimMin(d, p.vars) < 0) return fail("negative dim");
    out.dtype = a[0]->dtype;
    out.shape = to;
  } else if (op == "reshape") {
    if (!nargs(1)) return fail("takes one operand");
    // The sizes must be provably equal: compare the products as polynomials in the variables
    // (monomial: the sorted list of its variables).
    auto product = [&](const std::vector<Dim>& s) {
      std::map<std::vector<int>, int64_t> poly = {{{}, 1}};
      for (const Dim& d : s) {
        std::map<std::vector<int>, int64_t> next;
        for (auto& [m, c] : poly) {
          if (d.add != 0) next[m] += c * d.add;
          if (d.var >= 0 && d.mul != 0) {
            std::vector<int> m2 = m;
            m2.insert(std::upper_bound(m2.begin(), m2.end(), d.var), d.var);
            next[m2] += c * d.mul;
          }
        }
        poly.clear();
        for (auto& [m, c] : next)
          if (c != 0) poly[m] = c;
      }
      return poly;
    };
    bool ok = true;
    auto p1 = product(a[0]->shape);
    auto p2 = product(n.type.shape);
    if (!ok || p1 != p2) return fail("element counts differ");
    out.dtype = a[0]->dtype;
    out.shape = n.type.shape;
  } else if (IndexOf(kReduceOps, op) >= 0) {
    if (!nargs(1)) return fail("takes one operand");
    shp_dtype_t t = a[0]->dtype;
    if (!IsNumeric(t) || (op == "reduce_mean" && !IsFloat(t))) return fail("dtype");
    std::set<int64_t> axes;
    for (int64_t ax : n.ints) {
      int64_t na;
      if (!norm_axis(ax, a[0]->shape.size(), &na) || !axes.insert(na).second) return fail("axes");
    }
    if (n.ints.empty())
      for (size_t k = 0; k < a[0]->shape.size(); ++k) axes.insert(static_cast<int64_t>(k));
    out.dtype = t;
    for (size_t k = 0; k < a[0]->shape.size(); ++k) {
      if (!axes.count(static_cast<int64_t>(k)))
        out.shape.push_back(a[0]->shape[k]);
      else if (n.keepdims)
        out.shape.push_back(ConstDim(1));
    }
  } else if (op == "matmul") {
    if (!nargs(2)) return fail("takes two operands");
    if (a[0]->dtype != a[1]->dtype || !IsNumeric(a[0]->dtype)) return fail("dtype");
    const auto& x = a[0]->shape;
    const auto& w = a[1]->shape;
    if (x.empty() || w.size() != 2) return fail("ranks (lhs rank >= 1, rhs rank 2)");
    if (x.back() != w[0]) return fail("contracting dims differ");
    out.dtype = a[0]->dtype;
    out.shape.assign(x.begin(), x.end() - 1);
    out.shape.push_back(w[1]);
  } else if (op == "softmax" || op == "layer_norm" || op == "cumsum") {
    if (!nargs(1) || n.ints.size() != 1) return fail("one operand and an axis");
    int64_t ax;
    if (!norm_axis(n.ints[0], a[0]->shape.size(), &ax)) return fail("axis");
    if (op == "cumsum" ? !IsNumeric(a[0]->dtype) : !IsFloat(a[0]->dtype)) return fail("dtype");
    out = *a[0];
  } else if (op == "reverse") {
    if (!nargs(1)) return fail("takes one operand");
    std::set<int64_t> axes;
    for (int64_t ax : n.ints) {
      int64_t na;
      if (!norm_axis(ax, a[0]->shape.size(), &na) || !axes.insert(na).second) return fail("axes");
    }
    out = *a[0];
  } else if (op == "trilu") {  // ints: {k, upper}
    if (!nargs(1) || n.ints.size() != 2) return fail("one operand, k and upper");
    if (a[0]->shape.size() < 2) return fail("rank < 2");
    out = *a[0];
  } else if (op == "transpose") {
    if (!nargs(1) || n.ints.size() != a[0]->shape.size()) return fail("permutation");
    std::vector<int64_t> perm = n.ints;
    std::sort(perm.begin(), perm.end());
    for (size_t k = 0; k < perm.size(); ++k)
      if (perm[k] != static_cast<int64_t>(k)) return fail("permutation");
    out.dtype = a[0]->dtype;
    for (int64_t k : n.ints) out.shape.push_back(a[0]->shape[k]);
  } else if (op == "concat") {
    if (a.empty() || n.ints.size() != 1) return fail("operands and an axis");
    int64_t ax;
    if (!norm_axis(n.ints[0], a[0]->shape.size(), &ax)) return fail("axis");
    out = *a[0];
    for (size_t k = 1; k < a.size(); ++k) {
      if (a[k]->dtype != a[0]->dtype || a[k]->shape.size() != a[0]->shape.size())
        return fail("dtype/rank");
      for (size_t d = 0; d < a[0]->shape.size(); ++d) {
        if (static_cast<int64_t>(d) == ax) {
          if (!AddDims(out.shape[d], a[k]->shape[d], &out.shape[d])) return fail("axis sum");
        } else if (a[k]->shape[d] != a[0]->shape[d]) {
          return fail("dims differ");
        }
      }
    }
  } else if (op == "slice") {
    const auto& x = a[0]->shape;
    if (!nargs(1) || n.starts.size() != x.size() || n.limits.size() != x.size() ||
        n.ints.size() != x.size())
      return fail("slice attributes");
    out.dtype = a[0]->dtype;
    for (size_t k = 0; k < x.size(); ++k) {
      const Dim &s = n.starts[k], &l = n.limits[k];
      int64_t st = n.ints[k];
      if (st < 1) return fail("stride");
      Dim neg_s = s;
      neg_s.mul = -s.mul;
      neg_s.add = -s.add;
      Dim len, room;
      Dim neg_l = l;
      neg_l.mul = -l.mul;
      neg_l.add = -l.add;
      if (!AddDims(l, neg_s, &len) || !AddDims(x[k], neg_l, &room)) return fail("slice dims");
      if (len.var >= 0 && len.mul == 0) len = ConstDim(len.add);
      if (room.var >= 0 && room.mul == 0) room = ConstDim(room.add);
      // 0 <= start, start <= limit, limit <= dim, provably (mul >= 0 and var >= lo).
      if (s.var >= 0 || s.add < 0) return fail("start must be a constant >= 0");
      if (len.mul < 0 || room.mul < 0 || DimMin(len, p.vars) < 0 || DimMin(room, p.vars) < 0)
        return fail("not provably in range");
      if (st == 1) {
        out.shape.push_back(len);
      } else {
        if (len.var >= 0) return fail("a stride on a symbolic length");
        out.shape.push_back(ConstDim((len.add + st - 1) / st));
      }
    }
  } else if (op == "take") {
    if (!nargs(2) || n.ints.size() != 1) return fail("operands and an axis");
    int64_t ax;
    if (!norm_axis(n.ints[0], a[0]->shape.size(), &ax)) return fail("axis");
    if (!IsInt(a[1]->dtype)) return fail("integer indices");
    out.dtype = a[0]->dtype;
    out.shape.assign(a[0]->shape.begin(), a[0]->shape.begin() + ax);
    out.shape.insert(out.shape.end(), a[1]->shape.begin(), a[1]->shape.end());
    out.shape.insert(out.shape.end(), a[0]->shape.begin() + ax + 1, a[0]->shape.end());
  } else if (op == "take_along_axis") {
    if (!nargs(2) || n.ints.size() != 1) return fail("operands and an axis");
    int64_t ax;
    const size_t rank = a[0]->shape.size();
    if (rank == 0 || !norm_axis(n.ints[0], rank, &ax)) return fail("axis");
    if (a[1]->dtype != SHP_I32 && a[1]->dtype != SHP_I64) return fail("i32 or i64 indices");
    if (a[1]->shape.size() != rank) return fail("indices of the operand's rank");
    for (size_t k = 0; k < rank; ++k)
      if (static_cast<int64_t>(k) != ax && !(a[1]->shape[k] == a[0]->shape[k]))
        return fail("indices differ off the axis");
    out.dtype = a[0]->dtype;
    out.shape = a[1]->shape;
  } else if (op == "scatter") {  // ints = {axis, reduction}
    if (!nargs(3) || n.ints.size() != 2) return fail("operands, an axis and a reduction");
    int64_t ax;
    const size_t rank = a[0]->shape.size();
    if (rank == 0 || !norm_axis(n.ints[0], rank, &ax)) return fail("axis");
    if (n.ints[1] < 0 || n.ints[1] > 4) return fail("reduction");
    if (!IsNumeric(a[0]->dtype) || a[2]->dtype != a[0]->dtype) return fail("dtype");
    if (!IsInt(a[1]->dtype)) return fail("integer indices");
    std::vector<Dim> want(a[0]->shape.begin(), a[0]->shape.begin() + ax);
    want.insert(want.end(), a[1]->shape.begin(), a[1]->shape.end());
    want.insert(want.end(), a[0]->shape.begin() + ax + 1, a[0]->shape.end());
    if (a[2]->shape.size() != want.size()) return fail("updates: take's shape");
    for (size_t k = 0; k < want.size(); ++k)
      if (!(a[2]->shape[k] == want[k])) return fail("updates: take's shape");
    out = *a[0];
  } else {
    return fail("unknown op");
  }
  pp->nodes[i].type = out;
  return true;
}

// ---- Text --------------------------------------------------------------------------------------

namespace {
std::string DoubleText(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

std::string ToText(const Program& p) {
  std::ostringstream o;
  o << "vars";
  for (const Var& v : p.vars) {
    o << " " << v.name;
    if (v.lo != 1) o << ":" << v.lo;
  }
  o << "\n";
  if (!p.valuations.empty() && !p.vars.empty()) {
    o << "sizes";
    for (size_t v = 0; v < p.vars.size(); ++v) {
      o << " " << p.vars[v].name << "=";
      for (size_t k = 0; k < p.valuations.size(); ++k) o << (k ? "," : "") << p.valuations[k][v];
    }
    o << "\n";
  } else if (!p.valuations.empty()) {
    o << "runs " << p.valuations.size() << "\n";
  }
  o << "values seed=" << p.value_seed << " special=" << (p.special ? 1 : 0)
    << " extremes=" << (p.extremes ? 1 : 0) << "\n";
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    o << "v" << i << " = " << n.op;
    if (n.op == "input") o << " " << n.name;
    if (n.op == "const") o << " " << DoubleText(n.value);
    for (int k : n.args) o << " v" << k;
    if (IndexOf(kReduceOps, n.op) >= 0) {
      o << " axes=" << Join(n.ints) << " keepdims=" << (n.keepdims ? 1 : 0);
    } else if (n.op == "softmax" || n.op == "cumsum" || n.op == "concat" || n.op == "take" ||
               n.op == "take_along_axis") {
      o << " axis=" << n.ints[0];
    } else if (n.op == "scatter") {
      o << " axis=" << n.ints[0] << " reduction=" << n.ints[1];
    } else if (n.op == "layer_norm") {
      o << " axis=" << n.ints[0] << " eps=" << DoubleText(n.eps);
    } else if (n.op == "reverse") {
      o << " axes=" << Join(n.ints);
    } else if (n.op == "trilu") {
      o << " k=" << n.ints[0] << " upper=" << n.ints[1];
    } else if (n.op == "transpose") {
      o << " perm=" << Join(n.ints);
    } else if (n.op == "slice") {
      o << " start=";
      for (size_t k = 0; k < n.starts.size(); ++k)
        o << (k ? "," : "") << DimText(n.starts[k], p.vars);
      o << " limit=";
      for (size_t k = 0; k < n.limits.size(); ++k)
        o << (k ? "," : "") << DimText(n.limits[k], p.vars);
      o << " stride=" << Join(n.ints);
    }
    o << " : " << TypeText(n.type, p.vars) << "\n";
  }
  o << "out";
  for (int k : p.outputs) o << " v" << k;
  o << "\n";
  return o.str();
}

namespace {
std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> r;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      r.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  r.push_back(cur);
  return r;
}

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  char* end;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (*end != 0 || errno) return false;
  *v = x;
  return true;
}

bool ParseInts(const std::string& s, std::vector<int64_t>* out) {
  out->clear();
  if (s.empty()) return true;
  for (const std::string& t : Split(s, ',')) {
    int64_t v;
    if (!ParseInt(t, &v)) return false;
    out->push_back(v);
  }
  return true;
}

// "4", "b", "2*b", "2*b+1", "b-1", "3*n-2".
bool ParseDim(const std::string& s0, const std::vector<Var>& vars, Dim* d) {
  std::string s;
  for (char c : s0)
    if (c != ' ') s += c;
  int64_t c;
  if (ParseInt(s, &c)) {
    *d = ConstDim(c);
    return true;
  }
  Dim r;
  r.mul = 1;
  size_t star = s.find('*');
  if (star != std::string::npos) {
    if (!ParseInt(s.substr(0, star), &r.mul)) return false;
    s = s.substr(star + 1);
  }
  size_t pm = s.find_first_of("+-");
  std::string name = s.substr(0, pm);
  if (pm != std::string::npos) {
    int64_t add;
    if (!ParseInt(s.substr(pm + 1), &add)) return false;
    r.add = s[pm] == '-' ? -add : add;
  }
  for (size_t v = 0; v < vars.size(); ++v)
    if (vars[v].name == name) r.var = static_cast<int>(v);
  if (r.var < 0) return false;
  *d = r;
  return true;
}

bool ParseDims(const std::string& s, const std::vector<Var>& vars, std::vector<Dim>* out) {
  out->clear();
  if (s.empty()) return true;
  for (const std::string& t : Split(s, ',')) {
    Dim d;
    if (!ParseDim(t, vars, &d)) return false;
    out->push_back(d);
  }
  return true;
}

bool ParseType(const std::string& s, const std::vector<Var>& vars, Type* t) {
  size_t lb = s.find('['), rb = s.rfind(']');
  if (lb == std::string::npos || rb == std::string::npos || rb < lb) return false;
  std::string dt = s.substr(0, lb);
  bool found = false;
  for (shp_dtype_t d : kAllDTypes)
    if (dt == DTypeName(d)) t->dtype = d, found = true;
  return found && ParseDims(s.substr(lb + 1, rb - lb - 1), vars, &t->shape);
}
}  // namespace

bool ParseText(const std::string& text, Program* out, std::string* error) {
  Program p;
  std::map<std::string, int> ids;
  std::vector<std::pair<std::string, std::vector<int64_t>>> sizes;
  int64_t runs = 0;
  bool have_outputs = false;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  auto fail = [&](const std::string& m) {
    *error = "line " + std::to_string(lineno) + ": " + m + ": " + line;
    return false;
  };
  while (std::getline(in, line)) {
    ++lineno;
    size_t hash = line.find('#');
    std::string body = hash == std::string::npos ? line : line.substr(0, hash);
    std::istringstream ls(body);
    std::vector<std::string> tok;
    std::string t;
    while (ls >> t) tok.push_back(t);
    if (tok.empty()) continue;
    if (tok[0] == "vars") {
      for (size_t k = 1; k < tok.size(); ++k) {
        Var v;
        size_t colon = tok[k].find(':');
        v.name = tok[k].substr(0, colon);
        if (colon != std::string::npos && !ParseInt(tok[k].substr(colon + 1), &v.lo))
          return fail("bad variable");
        if (v.lo < 0 || v.lo > 2) return fail("a lower bound must be 0, 1 or 2");
        p.vars.push_back(v);
      }
    } else if (tok[0] == "sizes") {
      for (size_t k = 1; k < tok.size(); ++k) {
        size_t eq = tok[k].find('=');
        if (eq == std::string::npos) return fail("sizes name=v,v,...");
        std::vector<int64_t> v;
        if (!ParseInts(tok[k].substr(eq + 1), &v)) return fail("bad sizes");
        sizes.push_back({tok[k].substr(0, eq), v});
      }
    } else if (tok[0] == "runs") {
      if (tok.size() != 2 || !ParseInt(tok[1], &runs)) return fail("runs N");
    } else if (tok[0] == "values") {
      for (size_t k = 1; k < tok.size(); ++k) {
        size_t eq = tok[k].find('=');
        int64_t v;
        if (eq == std::string::npos || !ParseInt(tok[k].substr(eq + 1), &v))
          return fail("values key=int");
        std::string key = tok[k].substr(0, eq);
        if (key == "seed")
          p.value_seed = static_cast<uint64_t>(v);
        else if (key == "special")
          p.special = v != 0;
        else if (key == "extremes")
          p.extremes = v != 0;
        else
          return fail("unknown values key");
      }
    } else if (tok[0] == "out") {
      have_outputs = true;
      for (size_t k = 1; k < tok.size(); ++k) {
        if (!ids.count(tok[k])) return fail("unknown value " + tok[k]);
        p.outputs.push_back(ids[tok[k]]);
      }
    } else {
      if (tok.size() < 3 || tok[1] != "=") return fail("expected `vN = op ...`");
      if (ids.count(tok[0])) return fail("value defined twice");
      Node n;
      n.op = tok[2];
      size_t k = 3;
      bool have_type = false;
      if (n.op == "input") {
        if (k >= tok.size()) return fail("input needs a name");
        n.name = tok[k++];
      } else if (n.op == "const") {
        if (k >= tok.size()) return fail("const needs a value");
        char* end;
        n.value = std::strtod(tok[k].c_str(), &end);
        if (*end) return fail("bad constant");
        ++k;
      }
      for (; k < tok.size(); ++k) {
        const std::string& w = tok[k];
        if (w == ":") {
          std::string rest;
          for (size_t j = k + 1; j < tok.size(); ++j) rest += tok[j];
          if (!ParseType(rest, p.vars, &n.type)) return fail("bad type");
          have_type = true;
          break;
        }
        size_t eq = w.find('=');
        if (eq == std::string::npos) {
          if (!ids.count(w)) return fail("unknown value " + w);
          n.args.push_back(ids[w]);
          continue;
        }
        std::string key = w.substr(0, eq), val = w.substr(eq + 1);
        bool ok = true;
        if (key == "axes" || key == "perm" || key == "stride") {
          ok = ParseInts(val, &n.ints);
        } else if (key == "axis") {
          int64_t ax;
          ok = ParseInt(val, &ax);
          n.ints = {ax};
        } else if (key == "reduction") {  // scatter: ints = {axis, reduction}, after axis=
          int64_t v;
          ok = ParseInt(val, &v) && n.ints.size() == 1;
          n.ints.push_back(v);
        } else if (key == "k" || key == "upper") {  // trilu: ints = {k, upper}
          int64_t v;
          ok = ParseInt(val, &v);
          n.ints.resize(2, 1);
          n.ints[key == "k" ? 0 : 1] = v;
        } else if (key == "keepdims") {
          int64_t kd;
          ok = ParseInt(val, &kd);
          n.keepdims = kd != 0;
        } else if (key == "eps") {
          char* end;
          n.eps = std::strtod(val.c_str(), &end);
          ok = *end == 0;
        } else if (key == "start") {
          ok = ParseDims(val, p.vars, &n.starts);
        } else if (key == "limit") {
          ok = ParseDims(val, p.vars, &n.limits);
        } else {
          return fail("unknown attribute " + key);
        }
        if (!ok) return fail("bad attribute " + key);
      }
      bool needs_type = n.op == "input" || n.op == "const" || n.op == "convert" ||
                        n.op == "reshape" || n.op == "broadcast_to";
      if (needs_type && !have_type) return fail(n.op + " needs `: type`");
      if (n.op == "slice" && n.ints.empty() && !n.args.empty()) {
        size_t r = p.nodes[n.args[0]].type.shape.size();
        n.ints.assign(r, 1);
      }
      p.nodes.push_back(n);
      std::string why;
      if (!InferType(&p, p.nodes.size() - 1, &why)) return fail(why);
      ids[tok[0]] = static_cast<int>(p.nodes.size() - 1);
    }
  }
  if (!have_outputs || p.outputs.empty()) {
    *error = "no `out` line";
    return false;
  }
  // Valuations: one per column of `sizes` (a variable with one size keeps it in every column).
  size_t cols = runs > 0 ? static_cast<size_t>(runs) : 0;
  for (auto& s : sizes) cols = std::max(cols, s.second.size());
  if (cols == 0) cols = 1;
  for (size_t c = 0; c < cols; ++c) {
    std::vector<int64_t> val(p.vars.size(), -1);
    for (auto& s : sizes) {
      for (size_t v = 0; v < p.vars.size(); ++v)
        if (p.vars[v].name == s.first) val[v] = s.second[std::min(c, s.second.size() - 1)];
    }
    for (size_t v = 0; v < p.vars.size(); ++v) {
      if (val[v] < 0) val[v] = std::max<int64_t>(p.vars[v].lo, 3);
      if (val[v] < p.vars[v].lo) {
        *error = "size of " + p.vars[v].name + " below its lower bound";
        return false;
      }
    }
    p.valuations.push_back(val);
  }
  *out = p;
  return true;
}

void Compact(Program* p) {
  std::vector<bool> live(p->nodes.size(), false);
  for (int o : p->outputs) live[o] = true;
  for (size_t i = p->nodes.size(); i-- > 0;)
    if (live[i])
      for (int a : p->nodes[i].args) live[a] = true;
  // Keep a dead input when it alone gives a variable that a live value needs (the program
  // must determine every variable from its input shapes).
  auto vars_of = [&](const Node& n, std::set<int>* out) {
    for (const Dim& d : n.type.shape)
      if (d.var >= 0) out->insert(d.var);
    for (const Dim& d : n.starts)
      if (d.var >= 0) out->insert(d.var);
    for (const Dim& d : n.limits)
      if (d.var >= 0) out->insert(d.var);
  };
  std::set<int> needed, carried;
  for (size_t i = 0; i < p->nodes.size(); ++i) {
    if (!live[i]) continue;
    vars_of(p->nodes[i], &needed);
    if (p->nodes[i].op == "input") vars_of(p->nodes[i], &carried);
  }
  for (size_t i = 0; i < p->nodes.size(); ++i) {
    if (live[i] || p->nodes[i].op != "input") continue;
    std::set<int> mine;
    vars_of(p->nodes[i], &mine);
    for (int v : mine) {
      if (needed.count(v) && !carried.count(v)) {
        live[i] = true;
        carried.insert(mine.begin(), mine.end());
        break;
      }
    }
  }
  std::vector<int> remap(p->nodes.size(), -1);
  std::vector<Node> nodes;
  for (size_t i = 0; i < p->nodes.size(); ++i) {
    if (!live[i]) continue;
    remap[i] = static_cast<int>(nodes.size());
    Node n = p->nodes[i];
    for (int& a : n.args) a = remap[a];
    nodes.push_back(n);
  }
  p->nodes = nodes;
  for (int& o : p->outputs) o = remap[o];
}

// ---- Generation --------------------------------------------------------------------------------

namespace {

class Gen {
 public:
  Gen(Source& s, const GenOptions& o) : s_(s), o_(o) {}

  Program Run() {
    // Variables: one or two, some allowed to be 0, some with a constraint.
    int nvars = 1 + static_cast<int>(s_.Below(2));
    const char* names[] = {"b", "n"};
    for (int v = 0; v < nvars; ++v) {
      Var var;
      var.name = names[v];
      uint64_t r = s_.Below(10);
      var.lo = r < 6 ? 1 : r < 9 ? 0 : 2;
      p_.vars.push_back(var);
    }
    p_.special = s_.Chance(1, 5);
    p_.extremes = s_.Chance(1, 4);
    p_.value_seed = s_.Bits() & 0xffffffffffffULL;
    // One program in four has narrow types: its own (the main dtype of two in three of them),
    // others through converts (RandomDType). Choice 0 (exhausted fuzzer bytes) is "none".
    if (s_.Below(4) == 3) {
      has_narrow_ = true;
      narrow_ = s_.Pick(kNarrowDTypes);
    }
    // The shape most values have.
    base_rank_ = static_cast<int>(s_.Pick(std::vector<int>{1, 1, 2, 2, 2, 3, 0, 4}));
    for (int k = 0; k < base_rank_; ++k) base_.push_back(RandomDim());
    main_dtype_ = has_narrow_ && s_.Below(3) > 0 ? narrow_ : RandomDType();
    int ninputs = 1 + static_cast<int>(s_.Below(3));
    for (int k = 0; k < ninputs; ++k) NewInput(main_dtype_, k == 0 ? base_ : Variant(base_));
    int steps = 1 + static_cast<int>(s_.Below(static_cast<uint64_t>(o_.max_steps)));
    for (int k = 0; k < steps; ++k) Step();
    // Outputs: the last value, sometimes intermediates (also operands) and an input.
    p_.outputs.push_back(static_cast<int>(p_.nodes.size() - 1));
    int extra = static_cast<int>(s_.Pick(std::vector<int>{0, 0, 1, 1, 2}));
    for (int k = 0; k < extra; ++k) {
      int c = static_cast<int>(s_.Below(p_.nodes.size()));
      if (std::find(p_.outputs.begin(), p_.outputs.end(), c) == p_.outputs.end() &&
          p_.nodes[c].op != "const")
        p_.outputs.push_back(c);
    }
    // Every variable a value uses must be given by an input shape.
    std::set<int> carried;
    for (const Node& n : p_.nodes)
      if (n.op == "input")
        for (const Dim& d : n.type.shape)
          if (d.var >= 0) carried.insert(d.var);
    for (size_t v = 0; v < p_.vars.size(); ++v)
      if (!carried.count(static_cast<int>(v)))
        NewInput(main_dtype_, {VarDim(static_cast<int>(v), 1, 0)});
    Compact(&p_);
    ChooseValuations(s_, o_, &p_);
    return p_;
  }

 private:
  // A compute type; in a program with narrow types, its narrow type (3 in 10) or any narrow
  // type (1 in 10) too.
  shp_dtype_t RandomDType() {
    static const std::vector<shp_dtype_t> kDTypes = {SHP_F32, SHP_F32, SHP_F32, SHP_F32, SHP_F64,
                                                     SHP_F64, SHP_I32, SHP_I32, SHP_I64, SHP_BOOL};
    if (has_narrow_) {
      uint64_t r = s_.Below(10);
      if (r < 3) return narrow_;
      if (r < 4) return s_.Pick(kNarrowDTypes);
    }
    return s_.Pick(kDTypes);
  }

  Dim VarDim(int v, int64_t mul, int64_t add) { return Dim{v, mul, add}; }

  Dim RandomDim() {
    uint64_t r = s_.Below(20);
    int v = static_cast<int>(s_.Below(p_.vars.size()));
    if (r < 8) return VarDim(v, 1, 0);
    if (r < 10) return VarDim(v, 2, 1);
    if (r < 11) return ConstDim(0);
    if (r < 14) return ConstDim(1);
    return ConstDim(s_.Pick(std::vector<int64_t>{2, 3, 4, 5, 7, 8, 16, 17}));
  }

  // A shape that broadcasts against `s` to `s`: leading axes dropped, some axes made 1.
  std::vector<Dim> Variant(const std::vector<Dim>& s) {
    uint64_t r = s_.Below(8);
    if (r < 3) return s;
    if (r < 4) return {};
    std::vector<Dim> v(s.begin() + static_cast<long>(s_.Below(s.size() + 1)), s.end());
    for (Dim& d : v)
      if (s_.Chance(1, 3)) d = ConstDim(1);
    return v;
  }

  int Add(Node n) {
    p_.nodes.push_back(n);
    std::string why;
    if (!InferType(&p_, p_.nodes.size() - 1, &why)) {
      std::fprintf(stderr, "program_gen: internal error: %s\n%s", why.c_str(), ToText(p_).c_str());
      std::abort();
    }
    int d = 0;
    for (int a : n.args) d = std::max(d, depth_[a] + 1);
    depth_.push_back(d);
    return static_cast<int>(p_.nodes.size() - 1);
  }

  int NewInput(shp_dtype_t t, const std::vector<Dim>& shape) {
    static const char* kNames[] = {"x", "y", "z", "w", "u", "v", "p", "q"};
    Node n;
    n.op = "input";
    n.name = ninputs_ < 8 ? kNames[ninputs_] : "in" + std::to_string(ninputs_);
    ++ninputs_;
    n.type.dtype = t;
    n.type.shape = shape;
    return Add(n);
  }

  int NewConst(shp_dtype_t t, const std::vector<Dim>& shape) {
    Node n;
    n.op = "const";
    n.type.dtype = t;
    n.type.shape = shape;
    if (IsFloat(t)) {
      std::vector<double> vals = {0.5, -1.25, 2.0, 1.0, 0.0, -3.0, 1e-3, 0.1};
      if (p_.special) {
        vals.push_back(-0.0);
        vals.push_back(std::numeric_limits<double>::infinity());
        vals.push_back(std::numeric_limits<double>::quiet_NaN());
        if (IsNarrow(t)) vals.push_back(t == SHP_F16 ? -65504.0 : 3.3895313892515355e38);
      }
      n.value = s_.Pick(vals);
    } else if (t == SHP_BOOL) {
      n.value = static_cast<double>(s_.Below(2));
    } else {
      std::vector<double> vals = {0, 1, -1, 2, 3, 7, -8};
      if (p_.extremes && IsNarrow(t)) {  // the type's limits (u64's largest is -1 above)
        vals.push_back(static_cast<double>(t == SHP_U64 ? IntMin(SHP_I64) : IntMin(t)));
        if (t != SHP_U64) vals.push_back(static_cast<double>(IntMax(t)));
      } else if (p_.extremes) {
        vals.push_back(t == SHP_I32 ? -2147483648.0 : -9007199254740992.0);
      }
      n.value = s_.Pick(vals);
    }
    return Add(n);
  }

  // A node to extend: mostly recent (depth), sometimes any (fan-out); under the depth limit.
  // In programs with narrow types, two picks in three are among the narrow values (if any).
  int Pick(bool (*ok)(const Type&) = nullptr) {
    std::vector<int> c;
    for (size_t i = 0; i < p_.nodes.size(); ++i)
      if (depth_[i] < o_.max_depth && (!ok || ok(p_.nodes[i].type)))
        c.push_back(static_cast<int>(i));
    if (c.empty()) return -1;
    if (has_narrow_ && s_.Chance(2, 3)) {
      std::vector<int> narrow;
      for (int i : c)
        if (IsNarrow(p_.nodes[i].type.dtype)) narrow.push_back(i);
      if (!narrow.empty()) c = narrow;
    }
    if (s_.Chance(2, 3)) {
      // one of the last three candidates
      size_t from = c.size() > 3 ? c.size() - 3 : 0;
      return c[from + s_.Below(c.size() - from)];
    }
    return s_.Pick(c);
  }

  // An operand of dtype t broadcasting with `shape`: an existing value or a new leaf.
  int Operand(shp_dtype_t t, const std::vector<Dim>& shape) {
    if (s_.Chance(1, 2)) {
      std::vector<int> c;
      for (size_t i = 0; i < p_.nodes.size(); ++i) {
        const Type& ty = p_.nodes[i].type;
        std::vector<Dim> r;
        if (ty.dtype == t && depth_[i] < o_.max_depth && Broadcast({&shape, &ty.shape}, &r) &&
            r.size() <= 4 && r == shape)
          c.push_back(static_cast<int>(i));
      }
      if (!c.empty()) return s_.Pick(c);
    }
    uint64_t r = s_.Below(10);
    if (r < 2) return NewConst(t, {});
    if (r < 3)
      return NewConst(
          t, std::vector<Dim>(s_.Below(std::min<size_t>(shape.size(), 2) + 1), ConstDim(1)));
    if (r < 4) {
      // a convert of a value of another dtype and a compatible shape
      for (int tries = 0; tries < 4; ++tries) {
        int k = static_cast<int>(s_.Below(p_.nodes.size()));
        std::vector<Dim> b;
        const Type& ty = p_.nodes[k].type;
        if (ty.dtype != t && depth_[k] < o_.max_depth && Broadcast({&shape, &ty.shape}, &b) &&
            b == shape) {
          Node n;
          n.op = "convert";
          n.args = {k};
          n.type.dtype = t;
          return Add(n);
        }
      }
    }
    return NewInput(t, Variant(shape));
  }

  bool Legal(const std::string& op, shp_dtype_t t) {
    if (IndexOf(kUnaryOps, op) >= 0) return UnaryTakes(op, t);
    return BinaryTakes(op, t);
  }

  int Unary(int x, const std::string& op) {
    Node n;
    n.op = op;
    n.args = {x};
    return Add(n);
  }
  int Binary(const std::string& op, int a, int b) {
    Node n;
    n.op = op;
    n.args = {a, b};
    return Add(n);
  }

  // One of the patterns the fusion planner builds (float), around value x.
  void Pattern(int x) {
    const Type t = p_.nodes[x].type;
    std::vector<std::string> acts = {"tanh", "exp", "logistic", "tanh"};
    const std::string act = s_.Pick(acts);
    int a = Operand(t.dtype, t.shape), b = Operand(t.dtype, t.shape);
    switch (s_.Below(7)) {
      case 0:  // c + a*b
        Binary("add", a, Binary("mul", x, b));
        break;
      case 1:  // a*b + c
        Binary("add", Binary("mul", x, b), a);
        break;
      case 2:  // x * act(y) + z
        Binary("add", Binary("mul", a, Unary(x, act)), b);
        break;
      case 3:  // z + x * act(y)
        Binary("add", b, Binary("mul", a, Unary(x, act)));
        break;
      case 4:  // act(a*x + b) * c
        Binary("mul", Unary(Binary("add", Binary("mul", a, x), b), act), Operand(t.dtype, t.shape));
        break;
      case 5: {  // an LSTM-like cell: c' = f*c + i*tanh(g); h' = o*tanh(c')
        int f = Unary(a, "logistic"), i = Unary(b, "logistic");
        int c2 = Binary("add", Binary("mul", f, x), Binary("mul", i, Unary(x, "tanh")));
        Binary("mul", Unary(Operand(t.dtype, t.shape), "logistic"), Unary(c2, "tanh"));
        break;
      }
      default:  // sub/max chains of the issue
        Binary("sub", Binary("add", x, Binary("mul", Binary("sub", a, x), Unary(b, "exp"))),
               Binary("mul", a, Binary("max", x, b)));
        break;
    }
  }

  void ConvertStep() {
    int x = Pick();
    if (x < 0) return;
    Node n;
    n.op = "convert";
    n.args = {x};
    // Programs with narrow types: half of their converts to any of the 13 types, and then
    // (half the time) again to any type: every one of the 169 pairs.
    n.type.dtype = has_narrow_ && s_.Chance(1, 2) ? s_.Pick(kAllDTypes) : RandomDType();
    int y = Add(n);
    if (has_narrow_ && s_.Chance(1, 2) && depth_[y] < o_.max_depth) {
      n.args = {y};
      n.type.dtype = s_.Pick(kAllDTypes);
      Add(n);
    }
  }

  void Step() {
    if (has_narrow_ && s_.Chance(1, 10)) return ConvertStep();  // more conversions
    uint64_t r = s_.Below(100);
    if (r < 28) {  // unary
      int x = Pick();
      if (x < 0) return;
      std::vector<std::string> ok;
      for (const auto& op : kUnaryOps)
        if (Legal(op, p_.nodes[x].type.dtype)) ok.push_back(op);
      if (!ok.empty()) Unary(x, s_.Pick(ok));
      return;
    }
    if (r < 52) {  // binary
      int x = Pick();
      if (x < 0) return;
      const Type t = p_.nodes[x].type;
      std::vector<std::string> ok;
      for (const auto& op : kBinaryOps)
        if (Legal(op, t.dtype)) ok.push_back(op);
      if (ok.empty()) return;
      std::string op = s_.Pick(ok);
      int y = Operand(t.dtype, t.shape);
      if (s_.Chance(1, 2)) std::swap(x, y);
      Binary(op, x, y);
      return;
    }
    if (r < 60) {  // fusion patterns (float)
      int x = Pick([](const Type& t) { return IsFloat(t.dtype); });
      if (x < 0) x = FloatFrom(Pick());
      if (x >= 0) Pattern(x);
      return;
    }
    if (r < 65) {  // compare
      int x = Pick();
      if (x < 0) return;
      const Type t = p_.nodes[x].type;
      Binary(s_.Pick(kCompareOps), x, Operand(t.dtype, t.shape));
      return;
    }
    if (r < 70) {  // select
      int x = Pick();
      if (x < 0) return;
      const Type t = p_.nodes[x].type;
      int pred = Operand(SHP_BOOL, t.shape);
      int other = Operand(t.dtype, t.shape);
      Node n;
      n.op = "select";
      n.args =
          s_.Chance(1, 2) ? std::vector<int>{pred, x, other} : std::vector<int>{pred, other, x};
      Add(n);
      return;
    }
    if (r < 74) return ConvertStep();
    if (r < 77) {  // fan-out: one value used by 2-4 new ops
      int x = Pick();
      if (x < 0) return;
      int uses = 2 + static_cast<int>(s_.Below(3));
      int acc = -1;
      const Type t = p_.nodes[x].type;
      for (int k = 0; k < uses; ++k) {
        std::vector<std::string> ok;
        for (const auto& op : kBinaryOps)
          if (Legal(op, t.dtype) && op != "pow") ok.push_back(op);
        if (ok.empty()) break;
        int y = Binary(s_.Pick(ok), x, Operand(t.dtype, t.shape));
        acc = acc < 0 ? y : Binary(s_.Pick(ok), acc, y);
      }
      return;
    }
    NonElementwise();
  }

  // A float value from x (converting it), or -1.
  int FloatFrom(int x) {
    if (x < 0) return -1;
    Node n;
    n.op = "convert";
    n.args = {x};
    if (has_narrow_ && IsFloat(narrow_) && s_.Chance(1, 3))
      n.type.dtype = narrow_;  // the fusion patterns in f16 or bf16
    else
      n.type.dtype = s_.Chance(3, 4) ? SHP_F32 : SHP_F64;
    return Add(n);
  }

  void NonElementwise() {
    int x = Pick();
    if (x < 0) return;
    const Type t = p_.nodes[x].type;
    const size_t rank = t.shape.size();
    Node n;
    n.args = {x};
    switch (s_.Below(16)) {
      case 0: {  // reduce
        if (!IsNumeric(t.dtype)) return;
        std::vector<std::string> ok = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"};
        if (IsFloat(t.dtype)) ok.push_back("reduce_mean");
        n.op = s_.Pick(ok);
        for (size_t k = 0; k < rank; ++k)
          if (s_.Chance(1, 2))
            n.ints.push_back(s_.Chance(1, 4) ? static_cast<int64_t>(k) - static_cast<int64_t>(rank)
                                             : static_cast<int64_t>(k));
        n.keepdims = s_.Chance(1, 2);
        break;
      }
      case 1: {  // matmul (+ bias, + activation: the epilogue)
        if (!IsNumeric(t.dtype) || rank == 0 || rank > 3) return;
        Dim m =
            s_.Chance(1, 4) ? RandomDim() : ConstDim(s_.Pick(std::vector<int64_t>{1, 3, 4, 8, 17}));
        int w = NewInput(t.dtype, {t.shape.back(), m});
        n.op = "matmul";
        n.args = {x, w};
        int y = Add(n);
        if (s_.Chance(2, 3)) {
          int bias =
              s_.Chance(3, 4) ? NewInput(t.dtype, {m}) : Operand(t.dtype, p_.nodes[y].type.shape);
          y = s_.Chance(1, 2) ? Binary("add", y, bias) : Binary("add", bias, y);
          if (IsFloat(t.dtype) && s_.Chance(1, 2))
            Unary(y, s_.Pick(std::vector<std::string>{"tanh", "logistic", "exp"}));
        }
        return;
      }
      case 2:  // softmax / layer_norm
        if (!IsFloat(t.dtype) || rank == 0) return;
        n.op = s_.Chance(1, 2) ? "softmax" : "layer_norm";
        n.ints = {static_cast<int64_t>(s_.Below(rank))};
        if (s_.Chance(1, 3)) n.ints[0] -= static_cast<int64_t>(rank);
        break;
      case 3: {  // concat with a partner of the same shape but the axis
        if (rank == 0) return;
        int64_t ax = static_cast<int64_t>(s_.Below(rank));
        n.op = "concat";
        n.ints = {ax};
        int parts = 1 + static_cast<int>(s_.Below(2));
        for (int k = 0; k < parts; ++k) {
          if (s_.Chance(1, 3)) {
            n.args.push_back(x);  // fan-out: x twice
            continue;
          }
          std::vector<Dim> s = t.shape;
          if (s_.Chance(1, 2)) s[ax] = ConstDim(s_.Pick(std::vector<int64_t>{0, 1, 2, 5}));
          n.args.push_back(NewInput(t.dtype, s));
        }
        Dim sum = t.shape[ax];
        for (size_t k = 1; k < n.args.size(); ++k)
          if (!AddDims(sum, p_.nodes[n.args[k]].type.shape[ax], &sum)) return;
        if (s_.Chance(1, 2)) std::swap(n.args[0], n.args.back());
        break;
      }
      case 4: {  // slice
        n.op = "slice";
        for (size_t k = 0; k < rank; ++k) {
          const Dim& d = t.shape[k];
          Dim st = ConstDim(0), lim = d;
          int64_t stride = 1;
          if (d.var < 0) {
            int64_t a = static_cast<int64_t>(s_.Below(static_cast<uint64_t>(d.add) + 1));
            int64_t b = a + static_cast<int64_t>(s_.Below(static_cast<uint64_t>(d.add - a) + 1));
            st = ConstDim(a);
            lim = ConstDim(b);
            stride = 1 + static_cast<int64_t>(s_.Below(3));
          } else {
            int64_t mn = DimMin(d, p_.vars);
            int64_t a =
                static_cast<int64_t>(s_.Below(static_cast<uint64_t>(std::min<int64_t>(mn, 2)) + 1));
            st = ConstDim(a);
            if (s_.Chance(1, 3) && mn - a >= 1) lim = Dim{d.var, d.mul, d.add - 1};
          }
          n.starts.push_back(st);
          n.limits.push_back(lim);
          n.ints.push_back(stride);
        }
        break;
      }
      case 5: {  // reshape
        n.op = "reshape";
        n.type.dtype = t.dtype;
        std::vector<Dim> s = t.shape;
        uint64_t kind = s_.Below(4);
        if (kind == 0 && rank < 4) {
          s.insert(s.begin() + static_cast<long>(s_.Below(rank + 1)), ConstDim(1));
        } else if (kind == 1 && rank >= 2) {
          size_t k = s_.Below(rank - 1);
          Dim prod;
          if (!MulDims(s[k], s[k + 1], &prod)) return;
          s[k] = prod;
          s.erase(s.begin() + static_cast<long>(k) + 1);
        } else if (kind == 2) {  // flatten
          Dim prod = ConstDim(1);
          for (const Dim& d : t.shape)
            if (!MulDims(prod, d, &prod)) return;
          s = {prod};
        } else {  // split a constant axis
          size_t k = rank ? s_.Below(rank) : 0;
          if (rank == 0 || s[k].var >= 0 || s[k].add < 4 || s[k].add % 2) return;
          int64_t c = s[k].add;
          s[k] = ConstDim(c / 2);
          s.insert(s.begin() + static_cast<long>(k) + 1, ConstDim(2));
        }
        n.type.shape = s;
        break;
      }
      case 6: {  // transpose
        if (rank < 2) return;
        std::vector<int64_t> perm(rank);
        for (size_t k = 0; k < rank; ++k) perm[k] = static_cast<int64_t>(k);
        for (size_t k = rank - 1; k > 0; --k) std::swap(perm[k], perm[s_.Below(k + 1)]);
        n.op = "transpose";
        n.ints = perm;
        break;
      }
      case 7: {  // take (gather) with an index input
        if (rank == 0) return;
        int64_t ax = static_cast<int64_t>(s_.Below(rank));
        std::vector<Dim> ish;
        int irank = static_cast<int>(s_.Below(3));
        for (int k = 0; k < irank; ++k)
          ish.push_back(s_.Chance(1, 2) ? ConstDim(1 + static_cast<int64_t>(s_.Below(5)))
                                        : RandomDim());
        static const std::vector<shp_dtype_t> kNarrowIndex = {SHP_I8,  SHP_U8,  SHP_I16,
                                                              SHP_U16, SHP_U32, SHP_U64};
        int idx = NewInput(has_narrow_ && s_.Chance(1, 3) ? s_.Pick(kNarrowIndex)
                           : s_.Chance(1, 2)              ? SHP_I32
                                                          : SHP_I64,
                           ish);
        n.op = "take";
        n.args = {x, idx};
        n.ints = {ax};
        break;
      }
      case 8: {  // broadcast_to: new leading axes, 1s expanded
        n.op = "broadcast_to";
        n.type.dtype = t.dtype;
        std::vector<Dim> s = t.shape;
        for (Dim& d : s)
          if (d.IsOne() && s_.Chance(1, 2)) d = RandomDim();
        size_t extra = s_.Below(3);
        if (rank + extra > 4) extra = 0;
        for (size_t k = 0; k < extra; ++k) s.insert(s.begin(), RandomDim());
        n.type.shape = s;
        break;
      }
      case 9:  // cumsum
        if (!IsNumeric(t.dtype) || rank == 0) return;
        n.op = "cumsum";
        n.ints = {static_cast<int64_t>(s_.Below(rank))};
        break;
      case 10:  // reverse
        n.op = "reverse";
        for (size_t k = 0; k < rank; ++k)
          if (s_.Chance(1, 2)) n.ints.push_back(static_cast<int64_t>(k));
        break;
      case 14: {  // take_along_axis: indices of x's shape but on the axis
        if (rank == 0) return;
        const size_t ax = s_.Below(rank);
        std::vector<Dim> ish = t.shape;
        ish[ax] = s_.Chance(1, 2) ? ConstDim(1 + static_cast<int64_t>(s_.Below(5))) : RandomDim();
        n.op = "take_along_axis";
        n.args = {x, NewInput(s_.Chance(1, 2) ? SHP_I32 : SHP_I64, ish)};
        n.ints = {s_.Chance(1, 2) ? static_cast<int64_t>(ax)
                                  : static_cast<int64_t>(ax) - static_cast<int64_t>(rank)};
        break;
      }
      case 15: {  // scatter (each reduction) with index and update inputs, take's layout
        if (!IsNumeric(t.dtype) || rank == 0) return;
        const size_t ax = s_.Below(rank);
        std::vector<Dim> ish;
        const int irank = static_cast<int>(s_.Below(3));
        for (int k = 0; k < irank; ++k)
          ish.push_back(s_.Chance(1, 2) ? ConstDim(1 + static_cast<int64_t>(s_.Below(5)))
                                        : RandomDim());
        std::vector<Dim> ush(t.shape.begin(), t.shape.begin() + static_cast<std::ptrdiff_t>(ax));
        ush.insert(ush.end(), ish.begin(), ish.end());
        ush.insert(ush.end(), t.shape.begin() + static_cast<std::ptrdiff_t>(ax) + 1, t.shape.end());
        const int idx = NewInput(s_.Chance(1, 2) ? SHP_I32 : SHP_I64, ish);
        n.op = "scatter";
        n.args = {x, idx, NewInput(t.dtype, ush)};
        n.ints = {static_cast<int64_t>(ax), static_cast<int64_t>(s_.Below(5))};
        break;
      }
      case 13:  // trilu: diagonals inside, on and far outside the matrices
        if (rank < 2) return;
        n.op = "trilu";
        n.ints = {s_.Pick(std::vector<int64_t>{-2, -1, 0, 1, 3, INT64_MIN, INT64_MAX}),
                  s_.Chance(1, 2) ? 1 : 0};
        break;
      default: {  // an elementwise op on a non-elementwise result (fused regions between them)
        Pattern(FloatFrom(x));
        return;
      }
    }
    Add(n);
  }

  Source& s_;
  const GenOptions& o_;
  Program p_;
  std::vector<int> depth_;
  std::vector<Dim> base_;
  int base_rank_ = 1;
  shp_dtype_t main_dtype_ = SHP_F32;
  bool has_narrow_ = false;       // the program has narrow types
  shp_dtype_t narrow_ = SHP_F16;  // its own narrow type
  int ninputs_ = 0;
};

}  // namespace

Program Generate(Source& s, const GenOptions& o) { return Gen(s, o).Run(); }

GenOptions FuzzerGenOptions() {
  GenOptions o;
  o.max_steps = 12;
  o.small_cap = 2048;
  o.medium_one_in = 0;
  o.huge_one_in = 0;
  return o;
}

void ChooseValuations(Source& s, const GenOptions& o, Program* p) {
  static const std::vector<int64_t> kTails = {1, 2, 3, 7, 17, 33, 63, 65};
  static const std::vector<int64_t> kMid = {255, 256, 257, 1000, 1023, 1024, 1025, 2047, 4097};
  static const std::vector<int64_t> kBig = {65535, 65536, 65537, 131071, 131072, 131073, 200000};
  p->valuations.clear();
  bool huge = o.huge_one_in > 0 && s.Below(static_cast<uint64_t>(o.huge_one_in)) == 0;
  for (int k = 0; k < o.valuations; ++k) {
    int64_t cap = o.small_cap;
    if (huge && k == o.valuations - 1)
      cap = o.huge_cap;
    else if (o.medium_one_in > 0 && s.Below(static_cast<uint64_t>(o.medium_one_in)) == 0)
      cap = o.medium_cap;
    std::vector<int64_t> val(p->vars.size());
    for (int attempt = 0; attempt < 12; ++attempt) {
      for (size_t v = 0; v < p->vars.size(); ++v) {
        int64_t lo = p->vars[v].lo;
        int64_t x;
        if (k == 0) {
          x = lo;  // 0 or 1 (or 2) where allowed
        } else if (k == 1) {
          x = s.Pick(kTails);
        } else {
          uint64_t r = s.Below(10);
          if (cap > o.small_cap)
            x = r < 7 ? s.Pick(kBig) : s.Pick(kMid);
          else
            x = r < 4 ? s.Pick(kTails) : s.Pick(kMid);
          if (huge && k == o.valuations - 1 && s.Chance(1, 2)) x = 1000000 + s.Range(-1, 1);
        }
        if (attempt >= 8) x = std::max<int64_t>(1, x >> (attempt - 7) * 3);
        val[v] = std::max(lo, x);
      }
      int64_t largest = 0;
      for (const Node& n : p->nodes) largest = std::max(largest, Elements(n.type, val));
      if (largest <= cap) break;
      if (attempt == 11)
        for (size_t v = 0; v < p->vars.size(); ++v) val[v] = p->vars[v].lo;
    }
    p->valuations.push_back(val);
  }
}

// ---- Building ----------------------------------------------------------------------------------

namespace {
struct ErrorText {
  shp_error_t* e;
  explicit ErrorText(shp_error_t* err) : e(err) {}
  ~ErrorText() { shp_error_destroy(e); }
};
}  // namespace

shp_program_t* Build(const Program& p, std::string* error) {
  std::vector<const char*> names, cons;
  std::vector<int64_t> mins, maxs;
  std::vector<std::string> con_text;
  for (const Var& v : p.vars) {
    if (v.lo == 0) {
      names.push_back(v.name.c_str());
      mins.push_back(0);
      maxs.push_back(std::numeric_limits<int64_t>::max());
    }
    if (v.lo == 2) con_text.push_back(v.name + " >= 2");
  }
  for (const auto& c : con_text) cons.push_back(c.c_str());
  shp_scope_t* scope = nullptr;
  auto check = [&](shp_error_t* e, const std::string& what) {
    if (e == nullptr) return true;
    *error = what + ": " + shp_error_message(e);
    shp_error_destroy(e);
    return false;
  };
  if (!check(shp_scope_create_with_ranges(cons.data(), cons.size(), names.data(), mins.data(),
                                          maxs.data(), names.size(), &scope),
             "scope"))
    return nullptr;
  std::unique_ptr<shp_scope_t, void (*)(shp_scope_t*)> guard(scope, shp_scope_destroy);
  // Make sure every variable exists in the scope, in order.
  for (const Var& v : p.vars) {
    const shp_dim_t* d;
    if (!check(shp_dim_variable(scope, v.name.c_str(), &d), "variable")) return nullptr;
  }
  auto dim = [&](const Dim& d, const shp_dim_t** out) {
    return check(shp_dim_parse(scope, DimText(d, p.vars).c_str(), out), "dim");
  };
  auto dims = [&](const std::vector<Dim>& s, std::vector<const shp_dim_t*>* out) {
    out->resize(s.size());
    for (size_t k = 0; k < s.size(); ++k)
      if (!dim(s[k], &(*out)[k])) return false;
    return true;
  };
  std::vector<const shp_tensor_t*> t(p.nodes.size(), nullptr);
  std::vector<const shp_tensor_t*> inputs;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    const std::string what = "v" + std::to_string(i) + " " + n.op;
    auto arg = [&](size_t k) { return t[n.args[k]]; };
    shp_error_t* e = nullptr;
    if (n.op == "input") {
      std::vector<const shp_dim_t*> d;
      if (!dims(n.type.shape, &d)) return nullptr;
      e = shp_tensor_input_dims(scope, n.name.c_str(), n.type.dtype, d.data(), d.size(), &t[i]);
      inputs.push_back(t[i]);
    } else if (n.op == "const") {
      std::vector<int64_t> shape;
      int64_t count = 1;
      for (const Dim& d : n.type.shape) {
        if (d.var >= 0) {
          *error = what + ": a constant has a symbolic shape";
          return nullptr;
        }
        shape.push_back(d.add);
        count *= d.add;
      }
      std::vector<uint8_t> bytes(static_cast<size_t>(count) * ElemSize(n.type.dtype));
      for (int64_t k = 0; k < count; ++k)
        Store(n.type.dtype, n.value, IntOf(n.value), bytes.data() + k * ElemSize(n.type.dtype));
      e = shp_tensor_constant(scope, n.type.dtype, shape.data(), shape.size(), bytes.data(),
                              bytes.size(), &t[i]);
    } else if (IndexOf(kUnaryOps, n.op) >= 0) {
      e = shp_tensor_unary(static_cast<shp_unary_op_t>(IndexOf(kUnaryOps, n.op)), arg(0), &t[i]);
    } else if (IndexOf(kBinaryOps, n.op) >= 0) {
      e = shp_tensor_binary(static_cast<shp_binary_op_t>(IndexOf(kBinaryOps, n.op)), arg(0), arg(1),
                            &t[i]);
    } else if (IndexOf(kCompareOps, n.op) >= 0) {
      e = shp_tensor_compare(arg(0), static_cast<shp_cmp_t>(IndexOf(kCompareOps, n.op)), arg(1),
                             &t[i]);
    } else if (n.op == "select") {
      e = shp_tensor_select(arg(0), arg(1), arg(2), &t[i]);
    } else if (n.op == "convert") {
      e = shp_tensor_convert(arg(0), n.type.dtype, &t[i]);
    } else if (n.op == "broadcast_to" || n.op == "reshape") {
      std::vector<const shp_dim_t*> d;
      if (!dims(n.type.shape, &d)) return nullptr;
      e = n.op == "reshape" ? shp_tensor_reshape(arg(0), d.data(), d.size(), &t[i])
                            : shp_tensor_broadcast_to(arg(0), d.data(), d.size(), &t[i]);
    } else if (IndexOf(kReduceOps, n.op) >= 0) {
      e = shp_tensor_reduce(static_cast<shp_reduce_op_t>(IndexOf(kReduceOps, n.op)), arg(0),
                            n.ints.data(), n.ints.size(), n.keepdims, &t[i]);
    } else if (n.op == "matmul") {
      e = shp_tensor_matmul(arg(0), arg(1), &t[i]);
    } else if (n.op == "softmax") {
      e = shp_tensor_softmax(arg(0), n.ints[0], &t[i]);
    } else if (n.op == "layer_norm") {
      e = shp_tensor_layer_norm(arg(0), n.ints[0], n.eps, &t[i]);
    } else if (n.op == "cumsum") {
      e = shp_tensor_cumsum(arg(0), n.ints[0], &t[i]);
    } else if (n.op == "reverse") {
      e = shp_tensor_reverse(arg(0), n.ints.data(), n.ints.size(), &t[i]);
    } else if (n.op == "trilu") {
      e = shp_tensor_trilu(arg(0), n.ints[0], n.ints[1] != 0, &t[i]);
    } else if (n.op == "transpose") {
      e = shp_tensor_transpose(arg(0), n.ints.data(), n.ints.size(), &t[i]);
    } else if (n.op == "concat") {
      std::vector<const shp_tensor_t*> xs;
      for (size_t k = 0; k < n.args.size(); ++k) xs.push_back(arg(k));
      e = shp_tensor_concatenate(xs.data(), xs.size(), n.ints[0], &t[i]);
    } else if (n.op == "slice") {
      std::vector<const shp_dim_t*> st, li;
      if (!dims(n.starts, &st) || !dims(n.limits, &li)) return nullptr;
      e = shp_tensor_slice(arg(0), st.data(), li.data(), n.ints.data(), n.ints.size(), &t[i]);
    } else if (n.op == "take") {
      e = shp_tensor_take(arg(0), arg(1), n.ints[0], &t[i]);
    } else if (n.op == "take_along_axis") {
      e = shp_tensor_take_along_axis(arg(0), arg(1), n.ints[0], &t[i]);
    } else if (n.op == "scatter") {
      e = shp_tensor_scatter(arg(0), arg(1), arg(2), n.ints[0], n.ints[1], &t[i]);
    } else {
      *error = what + ": unknown op";
      return nullptr;
    }
    if (!check(e, what)) return nullptr;
  }
  std::vector<const shp_tensor_t*> outs;
  std::vector<std::string> out_names;
  std::vector<const char*> out_cnames;
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    outs.push_back(t[p.outputs[k]]);
    out_names.push_back("o" + std::to_string(k));
  }
  for (const auto& s : out_names) out_cnames.push_back(s.c_str());
  shp_program_t* prog = nullptr;
  if (!check(shp_program_create(scope, inputs.data(), inputs.size(), outs.data(), out_cnames.data(),
                                outs.size(), &prog),
             "program"))
    return nullptr;
  return prog;
}

std::vector<std::string> InputNames(const Program& p) {
  std::vector<std::string> r;
  for (const Node& n : p.nodes)
    if (n.op == "input") r.push_back(n.name);
  return r;
}

namespace {
// The special values of float inputs (p.special): zeros, infinities, NaN; for f16 and bf16 also
// the largest finite values, the smallest normal one and subnormals.
std::vector<double> SpecialValues(shp_dtype_t t) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN()};
  if (t == SHP_F16 || t == SHP_BF16) {
    const int emin = t == SHP_F16 ? -14 : -126, mant = t == SHP_F16 ? 10 : 7;
    const double max = HalfValue(t, t == SHP_F16 ? 0x7bff : 0x7f7f);
    const double sub = std::ldexp(1.0, emin - mant);  // the smallest subnormal
    v.insert(v.end(), {max, -max, sub, -sub, std::ldexp(1.0, emin), std::ldexp(1.0, emin) - sub,
                       -std::ldexp(1.0, emin - 1), 7 * sub});
  }
  return v;
}
// The extreme values of integer inputs (p.extremes), wrapped to the type when stored.
std::vector<int64_t> ExtremeValues(shp_dtype_t t) {
  if (t == SHP_I32) return {0, -1, INT32_MIN, INT32_MAX};
  if (!IsNarrow(t)) return {0, -1, INT64_MIN, INT64_MAX};
  return {0, 1, -1, IntMin(t), IntMax(t), IntMin(t) + 1, IntMax(t) - 1};
}
}  // namespace

std::vector<shp_array_t*> MakeInputs(const Program& p, size_t k) {
  const std::vector<int64_t>& val = p.valuations[k];
  // Seeded by the sizes, not the valuation's position: a minimized program that keeps only
  // the failing valuation gets the same values.
  uint64_t h = p.value_seed;
  for (int64_t v : val) h = h * 1000003ULL + static_cast<uint64_t>(v) + 1;
  PrngSource s(h);
  // Index inputs of take, take_along_axis and scatter: values in [0, the smallest indexed axis).
  std::map<int, int64_t> bound;
  for (const Node& n : p.nodes) {
    if ((n.op != "take" && n.op != "take_along_axis" && n.op != "scatter") ||
        p.nodes[n.args[1]].op != "input")
      continue;
    const Type& x = p.nodes[n.args[0]].type;
    int64_t ax = n.ints[0] < 0 ? n.ints[0] + static_cast<int64_t>(x.shape.size()) : n.ints[0];
    int64_t b = DimValue(x.shape[ax], val);
    auto it = bound.find(n.args[1]);
    bound[n.args[1]] = it == bound.end() ? b : std::min(it->second, b);
  }
  std::vector<shp_array_t*> arrays;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    if (n.op != "input") continue;
    std::vector<int64_t> shape;
    for (const Dim& d : n.type.shape) shape.push_back(std::max<int64_t>(0, DimValue(d, val)));
    shp_array_t* a = nullptr;
    shp_error_t* e = shp_array_create(n.type.dtype, shape.data(), shape.size(), &a);
    if (e) {
      std::fprintf(stderr, "program_gen: shp_array_create: %s\n", shp_error_message(e));
      std::abort();
    }
    uint8_t* data = static_cast<uint8_t*>(shp_array_data(a));
    const shp_dtype_t t = n.type.dtype;
    const size_t es = ElemSize(t);
    size_t count = shp_array_nbytes(a) / es;
    auto it = bound.find(static_cast<int>(i));
    int64_t index_bound = it == bound.end() ? 0 : it->second;
    if (it != bound.end() && IsNarrow(t) && DTypeSize(t) < 4)  // indices the index type holds
      index_bound = std::min(index_bound, IntMax(t) + 1);
    const std::vector<double> specials = SpecialValues(t);
    const std::vector<int64_t> extremes = ExtremeValues(t);
    for (size_t j = 0; j < count; ++j) {
      uint64_t bits = s.Bits();
      double f = (static_cast<double>(bits >> 11) / 9007199254740992.0) * 6.0 - 3.0;
      if (p.special && (bits & 15) == 0) f = specials[(bits >> 4) % specials.size()];
      int64_t iv = static_cast<int64_t>((bits >> 8) % 11) - 5;
      if (p.extremes && (bits & 15) == 1) iv = extremes[(bits >> 4) % extremes.size()];
      if (p.extremes && (bits & 15) == 2 && IsNarrow(t) && IsInt(t))
        iv = static_cast<int64_t>(s.Bits());  // any bits (wrapped to the type)
      if (it != bound.end())
        iv = index_bound > 0
                 ? static_cast<int64_t>((bits >> 8) % static_cast<uint64_t>(index_bound))
                 : 0;
      Store(t, t == SHP_BOOL ? static_cast<double>((bits >> 20) & 1) : f, iv, data + es * j);
    }
    arrays.push_back(a);
  }
  return arrays;
}

// ---- Coverage ----------------------------------------------------------------------------------

void CountCoverage(const Program& p, std::map<std::string, long>* counts) {
  auto& c = *counts;
  for (const Node& n : p.nodes) {
    shp_dtype_t t = n.args.empty() ? n.type.dtype : p.nodes[n.args[0]].type.dtype;
    if (n.op == "convert") {
      c[std::string("op convert:") + DTypeName(t) + "->" + DTypeName(n.type.dtype)]++;
    } else if (n.op == "select") {
      c[std::string("op select:") + DTypeName(n.type.dtype)]++;
    } else if (n.op == "take" || n.op == "take_along_axis" || n.op == "scatter") {
      c["op " + n.op + ":" + DTypeName(t)]++;
      c["index " + n.op + ":" + DTypeName(p.nodes[n.args[1]].type.dtype)]++;
    } else {
      c["op " + n.op + ":" + DTypeName(t)]++;
    }
    c["rank " + std::to_string(n.type.shape.size())]++;
    bool elementwise =
        IndexOf(kBinaryOps, n.op) >= 0 || IndexOf(kCompareOps, n.op) >= 0 || n.op == "select";
    if (elementwise) {
      for (int a : n.args) {
        const auto& s = p.nodes[a].type.shape;
        const auto& r = n.type.shape;
        std::string kind;
        if (s.empty() && !r.empty())
          kind = "rank0";
        else if (s.size() < r.size())
          kind = "rank-extend";
        else if (s != r)
          kind = "size1-axis";
        else
          kind = "same";
        c["bcast " + kind]++;
      }
    }
  }
  for (const auto& val : p.valuations) {
    int64_t largest = 0;
    bool zero = false;
    for (const Node& n : p.nodes) {
      int64_t e = Elements(n.type, val);
      largest = std::max(largest, e);
      if (e == 0) zero = true;
    }
    const char* b = largest == 0        ? "0"
                    : largest == 1      ? "1"
                    : largest < 256     ? "2..255"
                    : largest < 1024    ? "256..1023"
                    : largest < 65536   ? "1024..65535"
                    : largest < 131072  ? "65536..131071"
                    : largest < 1000000 ? "131072..999999"
                                        : ">=1000000";
    c[std::string("size largest ") + b]++;
    if (zero) c["size has-zero-size-value"]++;
  }
  c["shape vars " + std::to_string(p.vars.size())]++;
  for (const Var& v : p.vars) c["shape var-lo " + std::to_string(v.lo)]++;
  c["shape outputs " + std::to_string(p.outputs.size())]++;
}

std::vector<std::string> ElementwiseCombos() {
  std::vector<std::string> r;
  for (shp_dtype_t t : kAllDTypes) {
    for (const auto& op : kUnaryOps)
      if (UnaryTakes(op, t)) r.push_back("op " + op + ":" + DTypeName(t));
    for (const auto& op : kBinaryOps)
      if (BinaryTakes(op, t)) r.push_back("op " + op + ":" + DTypeName(t));
    for (const auto& op : kCompareOps) r.push_back("op " + op + ":" + DTypeName(t));
    r.push_back(std::string("op select:") + DTypeName(t));
    for (shp_dtype_t u : kAllDTypes)
      r.push_back(std::string("op convert:") + DTypeName(t) + "->" + DTypeName(u));
  }
  return r;
}

std::vector<std::string> OpDTypeCombos() {
  std::vector<std::string> r = ElementwiseCombos();
  for (shp_dtype_t t : kAllDTypes) {
    const std::string d = DTypeName(t);
    for (const char* op : {"input", "const", "concat", "slice", "reshape", "transpose", "take",
                           "take_along_axis", "broadcast_to", "reverse", "trilu"})
      r.push_back(std::string("op ") + op + ":" + d);
    if (IsNumeric(t))
      for (const char* op :
           {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "matmul", "cumsum"})
        r.push_back(std::string("op ") + op + ":" + d);
    if (IsFloat(t))
      for (const char* op : {"reduce_mean", "softmax", "layer_norm"})
        r.push_back(std::string("op ") + op + ":" + d);
    if (IsInt(t)) r.push_back("index take:" + d);
    if (t == SHP_I32 || t == SHP_I64) r.push_back("index take_along_axis:" + d);
    if (IsNumeric(t)) r.push_back("op scatter:" + d);
  }
  return r;
}

}  // namespace shpdiff
