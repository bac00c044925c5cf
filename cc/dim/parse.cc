#include "cc/dim/parse.h"

#include <cctype>
#include <cstring>
#include <limits>

#include "cc/base/error.h"

namespace shp {
namespace dim {
namespace {

constexpr int kMaxDepth = 200;
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

struct Token {
  Tok kind;
  size_t col;
  std::string text;
};

bool IsReserved(const std::string& s) {
  return s == "floordiv" || s == "mod" || s == "max" || s == "min";
}

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
    const Expr* e = Expr_(0);
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
                      "'_' in dimension " + std::to_string(dims.size()) + " of shape '" + text_ +
                          "' has no counterpart in the 'like' shape of rank " +
                          std::to_string(like->size()));
        }
        dims.push_back(s_->Constant((*like)[dims.size()]));
      } else if (t.kind == Tok::kEllipsis) {
        Next();
        if (!like) Fail(t, "a dimension expression ('...' needs a 'like' shape)");
        if (Peek().kind != Tok::kEnd)
          Fail(Peek(), "end of shape ('...' must be the last dimension)");
        if (dims.size() > like->size()) {
          throw Error(Code::kInvalidArgument,
                      "'...' in shape '" + text_ + "' starts at dimension " +
                          std::to_string(dims.size()) + " but the 'like' shape has rank " +
                          std::to_string(like->size()));
        }
        for (size_t i = dims.size(); i < like->size(); ++i)
          dims.push_back(s_->Constant((*like)[i]));
        break;
      } else {
        dims.push_back(Expr_(0));
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
    const Expr* lhs = Expr_(0);
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
    const Expr* rhs = Expr_(0);
    Expect(Tok::kEnd, "end of input");
    size_t b = text_.find_first_not_of(" \t\r\n");
    size_t e = text_.find_last_not_of(" \t\r\n");
    return Fact{lhs, op, rhs, text_.substr(b, e - b + 1), "", false};
  }

 private:
  void Tokenize() {
    size_t i = 0, n = text_.size();
    toks_.reserve(n / 2 + 2);
    while (true) {
      while (i < n && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
      if (i >= n) {
        toks_.push_back({Tok::kEnd, n, ""});
        break;
      }
      char c = text_[i];
      size_t start = i;
      if (std::isdigit(static_cast<unsigned char>(c))) {
        while (i < n && std::isdigit(static_cast<unsigned char>(text_[i]))) ++i;
        toks_.push_back({Tok::kInt, start, text_.substr(start, i - start)});
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (i < n && (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_'))
          ++i;
        toks_.push_back({Tok::kIdent, start, text_.substr(start, i - start)});
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
        toks_.push_back({k, start, text_.substr(start, len)});
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
    std::string found =
        (t.kind == Tok::kEnd && t.text.empty()) ? "end of input" : "'" + t.text + "'";
    std::string where = dim_ >= 0 ? " in dimension " + std::to_string(dim_) : "";
    throw Error(Code::kParseError, "syntax error in " + std::string(what_) + " '" + text_ + "'" +
                                       where + " at column " + std::to_string(t.col) +
                                       ": expected " + expected + " but found " + found);
  }

  void Expect(Tok kind, const char* what) {
    if (Peek().kind != kind) Fail(Peek(), what);
    Next();
  }

  const Expr* Expr_(int depth) {
    if (depth > kMaxDepth) Fail(Peek(), "a less deeply nested expression");
    const Expr* e = Term_(depth);
    while (Peek().kind == Tok::kPlus || Peek().kind == Tok::kMinus) {
      bool plus = Next().kind == Tok::kPlus;
      if (!plus && IsMinMagnitude(0)) {  // e - 9223372036854775808*x... == e + INT64_MIN*x...
        e = s_->Add(e, Term_(depth, true));
        continue;
      }
      const Expr* r = Term_(depth);
      e = plus ? s_->Add(e, r) : s_->Sub(e, r);
    }
    return e;
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

  // `negated`: a '-' before the literal 2^63 that starts this term was consumed; the term is
  // then INT64_MIN times a product (negating a floordiv or mod operand would change its value).
  const Expr* Term_(int depth, bool negated = false) {
    const Token& first = Peek();
    const Expr* e =
        negated ? (Next(), s_->Constant(std::numeric_limits<int64_t>::min())) : Unary_(depth);
    while (Peek().kind == Tok::kStar || Peek().kind == Tok::kSlashSlash ||
           Peek().kind == Tok::kPercent) {
      if (negated && Peek().kind != Tok::kStar) Fail(first, "an integer that fits in 64 bits");
      Tok k = Next().kind;
      const Expr* r = Unary_(depth);
      if (k == Tok::kStar)
        e = s_->Mul(e, r);
      else if (k == Tok::kSlashSlash)
        e = s_->FloorDiv(e, r);
      else
        e = s_->Mod(e, r);
    }
    return e;
  }

  const Expr* Unary_(int depth) {
    if (depth > kMaxDepth) Fail(Peek(), "a less deeply nested expression");
    if (Peek().kind == Tok::kMinus) {
      Next();
      if (IsMinMagnitude(0)) {  // -9223372036854775808 is INT64_MIN
        Next();
        return s_->Constant(std::numeric_limits<int64_t>::min());
      }
      return s_->Neg(Unary_(depth + 1));
    }
    const Expr* base = Primary_(depth);
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

  const Expr* Primary_(int depth) {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kInt:
        Next();
        return s_->Constant(ParseInt(t));
      case Tok::kLParen: {
        Next();
        const Expr* e = Expr_(depth + 1);
        Expect(Tok::kRParen, "')'");
        return e;
      }
      case Tok::kIdent: {
        if (IsReserved(t.text)) {
          std::string fn = t.text;
          Next();
          Expect(Tok::kLParen, ("'(' after '" + fn + "'").c_str());
          const Expr* a = Expr_(depth + 1);
          Expect(Tok::kComma, ("',' between the two arguments of '" + fn + "'").c_str());
          const Expr* b = Expr_(depth + 1);
          Expect(Tok::kRParen, "')'");
          if (fn == "floordiv") return s_->FloorDiv(a, b);
          if (fn == "mod") return s_->Mod(a, b);
          if (fn == "max") return s_->Max(a, b);
          return s_->Min(a, b);
        }
        if (t.text == "_")
          Fail(t, "a dimension expression ('_' stands only for a whole dimension)");
        if (PeekAt(1).kind == Tok::kLParen)
          Fail(PeekAt(1), "an operator after '" + t.text + "' (unknown function)");
        Next();
        return s_->Var(t.text, mark_used_);
      }
      default:
        Fail(t, "a dimension expression");
    }
  }

  Scope* s_;
  std::string text_;
  const char* what_;
  bool mark_used_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  size_t end_ = 0;
  Token end_tok_{Tok::kEnd, 0, ""};
  int dim_ = -1;
};

}  // namespace

bool IsValidVarName(const std::string& name) {
  if (name.empty() || name == "_" || IsReserved(name)) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
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
