// Parsing of dimension expressions, shape specs and constraints. The grammar:
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '//' | '%') unary)*
//   unary   := '-'* power
//   power   := primary ('^' INT)?
//   primary := INT | IDENT | ('floordiv'|'mod'|'max'|'min') '(' expr ',' expr ')' | '(' expr ')'
//   shape   := [ '(' ] [ dim (',' dim)* [','] ] [ ')' ]      dim := expr | '_' | '...' (last)
//   constraint := expr ('>=' | '<=' | '==' | '>' | '<') expr
// Parentheses and function calls nest at most kMaxNestingDepth deep (as the builders' atoms).
// Errors are kParseError naming the input, the dimension, the column, what was expected
// and what was found; they quote the input through QuoteForMessage.
#ifndef SHAPEPOLY_CC_DIM_PARSE_H_
#define SHAPEPOLY_CC_DIM_PARSE_H_

#include <string>
#include <vector>

#include "cc/dim/scope.h"

namespace shp {
namespace dim {

bool IsValidVarName(const std::string& name);

// User text made safe for an error message (messages are UTF-8 and short): control
// characters and invalid UTF-8 become \xNN; text longer than kMaxQuotedBytes is cut to a
// window of about that size around byte `col`, with "..." where it was cut.
constexpr size_t kMaxQuotedBytes = 200;
std::string QuoteForMessage(const std::string& text, size_t col = 0);
// The length of the valid UTF-8 character at text[i] that is not an ASCII control character,
// or 0 (invalid UTF-8 or a control character).
size_t PrintableCharLength(const std::string& text, size_t i);
// Only the escaping of QuoteForMessage (for text that is short by construction).
std::string EscapeForMessage(const std::string& text);
const Expr* ParseExpr(Scope* scope, const std::string& text, bool mark_used);
// With `like`: `_` and `...` take its sizes, and a constant dimension that differs from
// its size there (>= 0) is kInvalidArgument naming the dimension and both sizes.
std::vector<const Expr*> ParseShapeSpec(Scope* scope, const std::string& spec,
                                        const std::vector<int64_t>* like);
Fact ParseConstraint(Scope* scope, const std::string& text);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_PARSE_H_
