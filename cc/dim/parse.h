// Parsing of dimension expressions, shape specs and constraints. The grammar:
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '//' | '%') unary)*
//   unary   := '-' unary | power
//   power   := primary ('^' INT)?
//   primary := INT | IDENT | ('floordiv'|'mod'|'max'|'min') '(' expr ',' expr ')' | '(' expr ')'
//   shape   := [ '(' ] [ dim (',' dim)* [','] ] [ ')' ]      dim := expr | '_' | '...' (last)
//   constraint := expr ('>=' | '<=' | '==' | '>' | '<') expr
// Errors are kParseError naming the input, the dimension, the column, what was expected
// and what was found.
#ifndef SHAPEPOLY_CC_DIM_PARSE_H_
#define SHAPEPOLY_CC_DIM_PARSE_H_

#include <string>
#include <vector>

#include "cc/dim/scope.h"

namespace shp {
namespace dim {

bool IsValidVarName(const std::string& name);
const Expr* ParseExpr(Scope* scope, const std::string& text, bool mark_used);
std::vector<const Expr*> ParseShapeSpec(Scope* scope, const std::string& spec,
                                        const std::vector<int64_t>* like);
Fact ParseConstraint(Scope* scope, const std::string& text);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_PARSE_H_
