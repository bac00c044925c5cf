#include "cc/dim/parse.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "cc/base/error.h"

namespace shp {
namespace dim {
namespace {

// Parentheses and function calls nest at most as deep as the builders' atoms: printed text
// nests exactly as deep as its expression's atoms.
constexpr int kMaxDepth = kMaxNestingDepth;
constexpr size_t kMaxInput = 1 << 20;

enum class Tok {
  kInt,
  kIdent,
  kPlus,
  kMinus,
  kStar,
  kSlashSlash,
  kPercent,
  kCaret,
  kLParen,
  kRParen,
  kComma,
  kGe,
  kLe,
  kEq,
  kGt,
  kLt,
  kEllipsis,
  kEnd,
  kBad
};

// A token's text is a view into the parsed input (which outlives the parser): tokenizing
// copies no strings.
struct Token {
  Tok kind;
  size_t col;
  std::string_view text;
};

// The functions of the grammar (kNone: not a function name).
enum class Fn : uint8_t { kNone, kFloorDiv, kMod, kMax, kMin };

const char* FnName(Fn fn) {
  switch (fn) {
    case Fn::kFloorDiv:
      return "floordiv";
    case Fn::kMod:
      return "mod";
    case Fn::kMax:
      return "max";
    case Fn::kMin:
      return "min";
    case Fn::kNone:
      break;
  }
  return "";
}

// Which function `s` names: decided on length and first letter before any comparison.
Fn ReservedFn(std::string_view s) {
  if (s.size() == 3 && s[0] == 'm') {
    if (s[1] == 'o' && s[2] == 'd') return Fn::kMod;
    if (s[1] == 'a' && s[2] == 'x') return Fn::kMax;
    if (s[1] == 'i' && s[2] == 'n') return Fn::kMin;
  } else if (s.size() == 8 && s[0] == 'f' && s == "floordiv") {
    return Fn::kFloorDiv;
  }
  return Fn::kNone;
}

bool IsReserved(std::string_view s) { return ReservedFn(s) != Fn::kNone; }

// ASCII classes as the "C" locale has them, inline and independent of the process's locale.
bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

// A stack of trivially copyable T that keeps its first N elements in place: short inputs
// parse without allocating; longer ones move to the heap.
template <typename T, size_t N>
class InlineStack {
  static_assert(std::is_trivially_copyable<T>::value, "copied as bytes");

 public:
  InlineStack() = default;
  InlineStack(const InlineStack&) = delete;
  InlineStack& operator=(const InlineStack&) = delete;

  void reserve(size_t n) {
    if (n > cap_) Grow(n);
  }
  void push_back(const T& x) {
    if (size_ == cap_) Grow(2 * cap_);
    data_[size_++] = x;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  T& back() { return data_[size_ - 1]; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }

 private:
  void Grow(size_t n) {
    std::vector<T> bigger(n);
    std::copy(data_, data_ + size_, bigger.begin());
    heap_.swap(bigger);
    data_ = heap_.data();
    cap_ = n;
  }

  // Left uninitialized: elements are written before they are read.
  union Storage {
    Storage() {}
    T items[N];
  } inline_;
  std::vector<T> heap_;
  T* data_ = inline_.items;
  size_t size_ = 0;
  size_t cap_ = N;
};

class Parser {
 public:
  Parser(Scope* scope, const std::string& text, const char* what, bool mark_used)
      : s_(scope), text_(text), what_(what), mark_used_(mark_used) {
    if (text.size() > kMaxInput) {
      throw Error(Code::kParseError,
                  std::string(what) + " too long (" + std::to_string(text.size()) + " bytes)");
    }
    Tokenize();
  }

  const Expr* ParseWholeExpr() {
    const Expr* e = Expression();
    Expect(Tok::kEnd, "end of input");
    return e;
  }

  std::vector<const Expr*> ParseShape(const std::vector<int64_t>* like) {
    size_t end = toks_.size() - 1;  // index of kEnd
    // One optional pair of parentheses around the whole spec.
    if (toks_[0].kind == Tok::kLParen) {
      int depth = 0;
      size_t match = 0;
      for (size_t i = 0; i < end; ++i) {
        if (toks_[i].kind == Tok::kLParen) ++depth;
        if (toks_[i].kind == Tok::kRParen && --depth == 0) {
          match = i;
          break;
        }
      }
      if (match == end - 1 && match > 0) {
        pos_ = 1;
        SetEnd(match);
      }
    }
    std::vector<const Expr*> dims;
    while (Peek().kind != Tok::kEnd) {
      dim_ = static_cast<int>(dims.size());
      const Token& t = Peek();
      if (t.kind == Tok::kIdent && t.text == "_" &&
          (PeekAt(1).kind == Tok::kComma || PeekAt(1).kind == Tok::kEnd)) {
        Next();
        if (!like) Fail(t, "a dimension expression ('_' needs a 'like' shape)");
        if (dims.size() >= like->size()) {
          throw Error(Code::kInvalidArgument,
                      "'_' in dimension " + std::to_string(dims.size()) + " of shape '" +
                          QuoteForMessage(text_, t.col) +
                          "' has no counterpart in the 'like' shape of rank " +
                          std::to_string(like->size()));
        }
        const size_t i = dims.size();
        if ((*like)[i] < 0) {
          throw Error(Code::kInvalidArgument,
                      "'_' in dimension " + std::to_string(i) + " of shape '" +
                          QuoteForMessage(text_, t.col) +
                          "' takes its size from the 'like' shape, which has none there (unknown)");
        }
        dims.push_back(s_->Constant((*like)[i]));
      } else if (t.kind == Tok::kEllipsis) {
        Next();
        if (!like) Fail(t, "a dimension expression ('...' needs a 'like' shape)");
        // A trailing comma is allowed here as after any dimension: "(a, ...,)".
        if (Peek().kind == Tok::kComma && PeekAt(1).kind == Tok::kEnd) Next();
        if (Peek().kind != Tok::kEnd)
          Fail(Peek(), "end of shape ('...' must be the last dimension)");
        if (dims.size() > like->size()) {
          throw Error(Code::kInvalidArgument,
                      "'...' in shape '" + QuoteForMessage(text_, t.col) +
                          "' starts at dimension " + std::to_string(dims.size()) +
                          " but the 'like' shape has rank " + std::to_string(like->size()));
        }
        for (size_t i = dims.size(); i < like->size(); ++i) {
          if ((*like)[i] < 0) {
            throw Error(Code::kInvalidArgument,
                        "'...' in shape '" + QuoteForMessage(text_, t.col) + "' takes dimension " +
                            std::to_string(i) +
                            " from the 'like' shape, which has no size there (unknown)");
          }
          dims.push_back(s_->Constant((*like)[i]));
        }
        break;
      } else {
        const size_t col = t.col;
        dims.push_back(Expression());
        // A constant must match the 'like' shape where it has a size (JAX: "different size").
        const size_t i = dims.size() - 1;
        if (like && i < like->size() && (*like)[i] >= 0 && dims.back()->IsConstant() &&
            dims.back()->ConstantTerm() != (*like)[i]) {
          throw Error(Code::kInvalidArgument, "dimension " + std::to_string(i) + " of shape '" +
                                                  QuoteForMessage(text_, col) + "' is " +
                                                  std::to_string(dims.back()->ConstantTerm()) +
                                                  " but the 'like' shape has the different size " +
                                                  std::to_string((*like)[i]) + " there");
        }
      }
      if (Peek().kind == Tok::kComma) {
        Next();
      } else if (Peek().kind != Tok::kEnd) {
        Fail(Peek(), "',' or the end of the shape");
      }
    }
    if (end_ != toks_.size() - 1) pos_ = end_ + 1;  // skip the closing parenthesis
    dim_ = -1;
    SetEnd(toks_.size() - 1);
    Expect(Tok::kEnd, "end of input");
    return dims;
  }

  Fact ParseConstraintText() {
    const Expr* lhs = Expression();
    const Token& t = Peek();
    Cmp op;
    // clang-format off
    switch (t.kind) {
      case Tok::kGe: op = Cmp::kGe; break;
      case Tok::kLe: op = Cmp::kLe; break;
      case Tok::kEq: op = Cmp::kEq; break;
      case Tok::kGt: op = Cmp::kGt; break;
      case Tok::kLt: op = Cmp::kLt; break;
      default: Fail(t, "a comparison ('>=', '<=', '==', '>' or '<')");
    }
    // clang-format on
    Next();
    const Expr* rhs = Expression();
    Expect(Tok::kEnd, "end of input");
    size_t b = text_.find_first_not_of(" \t\r\n");
    size_t e = text_.find_last_not_of(" \t\r\n");
    return Fact{lhs,           op,   rhs, text_.substr(b, e - b + 1), std::string(), false, false,
                std::string(), false};
  }

 private:
  void Tokenize() {
    size_t i = 0, n = text_.size();
    toks_.reserve(n / 2 + 2);
    const std::string_view text(text_);
    while (true) {
      while (i < n && IsSpace(text_[i])) ++i;
      if (i >= n) {
        toks_.push_back({Tok::kEnd, n, std::string_view()});
        break;
      }
      char c = text_[i];
      size_t start = i;
      if (IsDigit(c)) {
        while (i < n && IsDigit(text_[i])) ++i;
        toks_.push_back({Tok::kInt, start, text.substr(start, i - start)});
      } else if (IsIdentStart(c)) {
        while (i < n && IsIdentChar(text_[i])) ++i;
        toks_.push_back({Tok::kIdent, start, text.substr(start, i - start)});
      } else {
        auto two = [&](char x, char y) { return c == x && i + 1 < n && text_[i + 1] == y; };
        Tok k;
        size_t len = 1;
        // clang-format off
        if (two('/', '/')) { k = Tok::kSlashSlash; len = 2; }
        else if (two('>', '=')) { k = Tok::kGe; len = 2; }
        else if (two('<', '=')) { k = Tok::kLe; len = 2; }
        else if (two('=', '=')) { k = Tok::kEq; len = 2; }
        else if (c == '.' && text_.compare(i, 3, "...") == 0) { k = Tok::kEllipsis; len = 3; }
        else if (c == '+') k = Tok::kPlus;
        else if (c == '-') k = Tok::kMinus;
        else if (c == '*') k = Tok::kStar;
        else if (c == '%') k = Tok::kPercent;
        else if (c == '^') k = Tok::kCaret;
        else if (c == '(') k = Tok::kLParen;
        else if (c == ')') k = Tok::kRParen;
        else if (c == ',') k = Tok::kComma;
        else if (c == '>') k = Tok::kGt;
        else if (c == '<') k = Tok::kLt;
        else k = Tok::kBad;
        // clang-format on
        // A multi-byte UTF-8 character is reported whole.
        if (k == Tok::kBad && (static_cast<unsigned char>(c) & 0x80)) {
          while (i + len < n && (static_cast<unsigned char>(text_[i + len]) & 0xC0) == 0x80) ++len;
        }
        i += len;
        toks_.push_back({k, start, text.substr(start, len)});
      }
    }
    SetEnd(toks_.size() - 1);
  }

  // Parsing stops at end_: the kEnd token, or the closing outer parenthesis of a shape.
  const Token& Peek() const { return pos_ < end_ ? toks_[pos_] : end_tok_; }
  const Token& PeekAt(size_t k) const { return pos_ + k < end_ ? toks_[pos_ + k] : end_tok_; }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ < end_) ++pos_;
    return t;
  }
  void SetEnd(size_t end) {
    end_ = end;
    end_tok_ = Token{Tok::kEnd, toks_[end].col, toks_[end].text};
  }

  [[noreturn]] void Fail(const Token& t, const std::string& expected) const {
    std::string found = (t.kind == Tok::kEnd && t.text.empty())
                            ? "end of input"
                            : "'" + QuoteForMessage(std::string(t.text)) + "'";
    std::string where = dim_ >= 0 ? " in dimension " + std::to_string(dim_) : "";
    throw Error(Code::kParseError, "syntax error in " + std::string(what_) + " '" +
                                       QuoteForMessage(text_, t.col) + "'" + where + " at column " +
                                       std::to_string(t.col) + ": expected " + expected +
                                       " but found " + found);
  }

  void Expect(Tok kind, const char* what) {
    if (Peek().kind != kind) Fail(Peek(), what);
    Next();
  }
  // The same with the expectation "<before><fn's name><after>", built only on failure.
  void ExpectAfterFn(Tok kind, const char* before, Fn fn, const char* after) {
    if (Peek().kind != kind) Fail(Peek(), before + std::string(FnName(fn)) + after);
    Next();
  }

  // One open level of the expression: the whole input, a parenthesis or a call. Parsing
  // keeps them on an explicit stack, so deep nesting never grows the machine stack.
  struct Frame {
    enum Kind { kTop, kParen, kCall } kind;
    Fn fn;              // kCall: floordiv, mod, max or min
    const Expr* first;  // kCall: the first argument, once parsed
    size_t minuses;     // unary minuses before the '(' or call, applied to its value
    const Expr* sum;    // the complete terms so far
    Tok add_op;         // the operator before the current term (kEnd: first term)
    const Expr* term;   // the factors so far of the current term
    Tok mul_op;         // the operator before the next factor (kEnd: first factor)
    bool min_term;      // the current term is "- 9223372036854775808 * ..."
    Token min_literal;  // that literal
  };

  // expr := term (('+' | '-') term)*, term := unary (('*' | '//' | '%') unary)*,
  // unary := '-'* power, power := primary ('^' INT)?, evaluated left to right.
  const Expr* Expression() {
    InlineStack<Frame, 8>& stack = stack_;
    stack.clear();
    stack.push_back(NewFrame(Frame::kTop, Fn::kNone, 0));
    while (true) {
      // An operand: '-'* then a primary, or the literal -9223372036854775808 (INT64_MIN).
      size_t minuses = 0;
      while (Peek().kind == Tok::kMinus) {
        Next();
        ++minuses;
      }
      const Expr* operand;
      if (minuses > 0 && IsMinMagnitude(0)) {
        Next();
        operand = Negate(s_->Constant(std::numeric_limits<int64_t>::min()), minuses - 1);
      } else {
        const Token& t = Peek();
        if (t.kind == Tok::kLParen) {
          Next();
          Open(&stack, NewFrame(Frame::kParen, Fn::kNone, minuses));
          continue;
        }
        const Fn fn = t.kind == Tok::kIdent ? ReservedFn(t.text) : Fn::kNone;
        if (fn != Fn::kNone) {
          Next();
          ExpectAfterFn(Tok::kLParen, "'(' after '", fn, "'");
          Open(&stack, NewFrame(Frame::kCall, fn, minuses));
          continue;
        }
        operand = Negate(Power(Leaf()), minuses);
      }
      // Close every level whose expression ends after this operand.
      while (true) {
        Frame& f = stack.back();
        if (!AddOperand(&f, operand)) break;  // an operator: the next operand follows
        const Expr* value = f.sum;
        if (f.kind == Frame::kTop) return value;
        if (f.kind == Frame::kCall && f.first == nullptr) {
          ExpectAfterFn(Tok::kComma, "',' between the two arguments of '", f.fn, "'");
          Frame second = NewFrame(Frame::kCall, f.fn, f.minuses);
          second.first = value;
          f = second;
          break;
        }
        Expect(Tok::kRParen, "')'");
        if (f.kind == Frame::kCall) {
          if (f.fn == Fn::kFloorDiv) {
            value = s_->FloorDiv(f.first, value);
          } else if (f.fn == Fn::kMod) {
            value = s_->Mod(f.first, value);
          } else if (f.fn == Fn::kMax) {
            value = s_->Max(f.first, value);
          } else {
            value = s_->Min(f.first, value);
          }
        }
        size_t outer_minuses = f.minuses;
        stack.pop_back();
        operand = Negate(Power(value), outer_minuses);
      }
    }
  }

  static Frame NewFrame(Frame::Kind kind, Fn fn, size_t minuses) {
    return Frame{kind,      fn,      nullptr,   minuses, nullptr,
                 Tok::kEnd, nullptr, Tok::kEnd, false,   Token{Tok::kEnd, 0, std::string_view()}};
  }

  void Open(InlineStack<Frame, 8>* stack, const Frame& frame) {
    if (stack->size() > static_cast<size_t>(kMaxDepth)) {
      Fail(Peek(), "a less deeply nested expression (at most " + std::to_string(kMaxDepth) +
                       " levels of parentheses)");
    }
    stack->push_back(frame);
  }

  // Adds `operand` to f's current term. False when an operator follows (consumed): the next
  // operand belongs to f; true when f's expression is complete (in f->sum).
  bool AddOperand(Frame* f, const Expr* operand) {
    while (true) {
      if (f->mul_op == Tok::kEnd) {
        f->term = operand;
      } else if (f->mul_op == Tok::kStar) {
        f->term = s_->Mul(f->term, operand);
      } else if (f->mul_op == Tok::kSlashSlash) {
        f->term = s_->FloorDiv(f->term, operand);
      } else {
        f->term = s_->Mod(f->term, operand);
      }
      Tok k = Peek().kind;
      if (k == Tok::kStar || k == Tok::kSlashSlash || k == Tok::kPercent) {
        // Negating a floordiv or mod operand would change its value.
        if (f->min_term && k != Tok::kStar) Fail(f->min_literal, "an integer that fits in 64 bits");
        f->mul_op = Next().kind;
        return false;
      }
      if (f->add_op == Tok::kEnd) {
        f->sum = f->term;
      } else {
        f->sum = f->add_op == Tok::kPlus ? s_->Add(f->sum, f->term) : s_->Sub(f->sum, f->term);
      }
      f->mul_op = Tok::kEnd;
      f->min_term = false;
      k = Peek().kind;
      if (k != Tok::kPlus && k != Tok::kMinus) return true;
      bool plus = Next().kind == Tok::kPlus;
      if (!plus && IsMinMagnitude(0)) {  // e - 9223372036854775808*x... == e + INT64_MIN*x...
        f->add_op = Tok::kPlus;
        f->min_term = true;
        f->min_literal = Peek();
        Next();
        operand = s_->Constant(std::numeric_limits<int64_t>::min());
        continue;
      }
      f->add_op = plus ? Tok::kPlus : Tok::kMinus;
      return false;
    }
  }

  // True if the token at offset k is the literal 2^63 (no int64, but -2^63 is): the printer
  // writes INT64_MIN coefficients as "-9223372036854775808*x" and "a - 9223372036854775808*x".
  bool IsMinMagnitude(size_t k) const {
    const Token& t = PeekAt(k);
    if (t.kind != Tok::kInt || PeekAt(k + 1).kind == Tok::kCaret) return false;
    size_t nz = t.text.find_first_not_of('0');
    return nz != std::string::npos &&
           t.text.compare(nz, std::string::npos, "9223372036854775808") == 0;
  }

  // -(-(...e)) with `n` minuses: the first negation overflows (a coefficient INT64_MIN) or
  // none does, so two of them are as good as any even number.
  const Expr* Negate(const Expr* e, size_t n) {
    if (n == 0) return e;
    return n % 2 == 1 ? s_->Neg(e) : s_->Neg(s_->Neg(e));
  }

  const Expr* Power(const Expr* base) {
    if (Peek().kind == Tok::kCaret) {
      Next();
      const Token& t = Peek();
      if (t.kind != Tok::kInt) Fail(t, "a non-negative integer exponent");
      Next();
      base = s_->Pow(base, ParseInt(t));
    }
    return base;
  }

  int64_t ParseInt(const Token& t) const {
    int64_t v = 0;
    for (char c : t.text) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) {
        Fail(t, "an integer that fits in 64 bits");
      }
    }
    return v;
  }

  // An integer or a variable (parentheses and calls are levels of Expression).
  const Expr* Leaf() {
    const Token& t = Peek();
    if (t.kind == Tok::kInt) {
      Next();
      return s_->Constant(ParseInt(t));
    }
    if (t.kind != Tok::kIdent) Fail(t, "a dimension expression");
    if (t.text == "_") Fail(t, "a dimension expression ('_' stands only for a whole dimension)");
    if (PeekAt(1).kind == Tok::kLParen)
      Fail(PeekAt(1), "an operator after '" + std::string(t.text) + "' (unknown function)");
    Next();
    return s_->Var(std::string(t.text), mark_used_);
  }

  Scope* s_;
  const std::string& text_;  // the caller's input, which outlives the parser
  const char* what_;
  bool mark_used_;
  InlineStack<Token, 32> toks_;
  InlineStack<Frame, 8> stack_;  // Expression's open levels (kept for its next call)
  size_t pos_ = 0;
  size_t end_ = 0;
  Token end_tok_{Tok::kEnd, 0, std::string_view()};
  int dim_ = -1;
};

}  // namespace

size_t PrintableCharLength(const std::string& text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x20 || c == 0x7f) return 0;
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range (no overlongs, surrogates)
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  return len;
}

std::string QuoteForMessage(const std::string& text, size_t col) {
  size_t begin = 0, end = text.size();
  if (text.size() > kMaxQuotedBytes) {
    col = std::min(col, text.size());
    begin = col > kMaxQuotedBytes / 2 ? col - kMaxQuotedBytes / 2 : 0;
    end = std::min(text.size(), begin + kMaxQuotedBytes);
    begin = end - std::min(end, kMaxQuotedBytes);
    // Cut between characters, not inside one.
    auto continuation = [&](size_t k) {
      return k < text.size() && (static_cast<unsigned char>(text[k]) & 0xc0) == 0x80;
    };
    for (int k = 0; k < 3 && begin > 0 && continuation(begin); ++k) ++begin;
    for (int k = 0; k < 3 && end < text.size() && continuation(end); ++k) --end;
  }
  std::string out = begin > 0 ? "..." : "";
  out += EscapeForMessage(text.substr(begin, end - begin));
  if (end < text.size()) out += "...";
  return out;
}

std::string EscapeForMessage(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0, end = text.size(); i < end;) {
    size_t len = PrintableCharLength(text, i);
    if (len > 0) {
      out.append(text, i, len);
      i += len;
    } else {
      static const char kHex[] = "0123456789abcdef";
      unsigned char c = static_cast<unsigned char>(text[i++]);
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool IsValidVarName(const std::string& name) {
  if (name.empty() || name == "_" || IsReserved(name)) return false;
  if (!IsIdentStart(name[0])) return false;
  for (char c : name) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

const Expr* ParseExpr(Scope* scope, const std::string& text, bool mark_used) {
  Parser p(scope, text, "symbolic dimension", mark_used);
  return p.ParseWholeExpr();
}

std::vector<const Expr*> ParseShapeSpec(Scope* scope, const std::string& spec,
                                        const std::vector<int64_t>* like) {
  Parser p(scope, spec, "symbolic shape", true);
  return p.ParseShape(like);
}

Fact ParseConstraint(Scope* scope, const std::string& text) {
  Parser p(scope, text, "constraint", false);
  return p.ParseConstraintText();
}

}  // namespace dim
}  // namespace shp
