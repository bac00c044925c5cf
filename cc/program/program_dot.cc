// Program::ToDot: the program as a Graphviz DOT graph. Inputs, operations and outputs are
// nodes (in value order, which is topological); an edge carries the dtype and symbolic shape of
// the value it moves; constants used by operations are listed in their consumers' labels
// instead of being drawn; a note-shaped legend holds the variables, constraints, assertions,
// guards and variants. Labels are plain quoted strings (no HTML), wrapped to short lines.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "cc/dim/parse.h"
#include "cc/ops/op_def.h"
#include "cc/kernels/narrow.h"
#include "cc/program/program.h"

namespace shp {
namespace program {
namespace {

using trace::DType;
using trace::OpKind;

// Longest label line, in characters; longer lines are wrapped (at a space when there is one).
constexpr size_t kLineWidth = 60;
// Most entries a legend section lists; the listing (Program::text) has them all.
constexpr size_t kMaxLegendEntries = 32;
// Constants with at most this many elements show their values.
constexpr size_t kMaxShownElements = 4;

// Text that is safe to show: printable UTF-8 kept, anything else (a newline in a message,
// invalid UTF-8) as \xNN, so that Graphviz never sees bytes it would reject.
std::string Printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = dim::PrintableCharLength(s, i);
    if (n > 0) {
      out.append(s, i, n);
      i += n;
    } else {
      static const char kHex[] = "0123456789abcdef";
      const unsigned char c = static_cast<unsigned char>(s[i++]);
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Escapes printable text for a DOT quoted string: quotes and backslashes.
void AppendEscaped(const std::string& s, std::string* out) {
  for (char c : s) {
    if (c == '"' || c == '\\') *out += '\\';
    *out += c;
  }
}

// Splits a printable line into lines of at most kLineWidth characters (UTF-8 aware), breaking
// after the last space that fits, else at the width. Continuation lines start with `indent`.
void Wrap(const std::string& line, const std::string& indent, std::vector<std::string>* out) {
  size_t begin = 0;
  bool first = true;
  while (begin < line.size()) {
    const size_t width = first ? kLineWidth : kLineWidth - indent.size();
    size_t end = begin, chars = 0, last_space = std::string::npos;
    while (end < line.size() && chars < width) {
      if (line[end] == ' ') last_space = end;
      ++end;
      while (end < line.size() && (static_cast<unsigned char>(line[end]) & 0xc0) == 0x80) ++end;
      ++chars;
    }
    if (end < line.size()) {
      if (line[end] == ' ') {
        last_space = end;  // the break falls on a space: keep the whole width
      }
      if (last_space != std::string::npos && last_space > begin) end = last_space;
    }
    size_t stop = end;  // without the spaces before the break
    while (stop > begin && line[stop - 1] == ' ') --stop;
    out->push_back((first ? "" : indent) + line.substr(begin, stop - begin));
    first = false;
    begin = end;
    while (begin < line.size() && line[begin] == ' ') ++begin;
  }
  if (first) out->push_back("");
}

// A label: lines joined by `brk` (DOT's "\n" centers the line before it, "\l" left-aligns it).
class Label {
 public:
  // Continuation lines of a centered label are not indented, those of a left-aligned one are.
  explicit Label(const char* brk)
      : brk_(brk), indent_(std::strcmp(brk, "\\l") == 0 ? "    " : "") {}
  // Adds one line of text (made printable, escaped and wrapped here).
  void Line(const std::string& text) {
    if (text.size() <= kLineWidth) {  // the common case: short ASCII, appended as it is
      bool plain = true;
      for (char c : text) plain &= c >= 0x20 && c < 0x7f;
      if (plain) {
        AppendEscaped(text, &text_);
        text_ += brk_;
        return;
      }
    }
    std::vector<std::string> lines;
    Wrap(Printable(text), indent_, &lines);
    for (const std::string& l : lines) {
      AppendEscaped(l, &text_);
      text_ += brk_;
    }
  }
  // The quoted label; a centered label drops its last break (Graphviz would add an empty
  // line), a left-aligned one keeps it (it aligns the last line).
  std::string Quoted() const {
    std::string t;
    AppendQuoted(&t);
    return t;
  }
  void AppendQuoted(std::string* out) const {
    const bool centered = std::strcmp(brk_, "\\n") == 0 && text_.size() >= 2;
    *out += '"';
    out->append(text_, 0, centered ? text_.size() - 2 : text_.size());
    *out += '"';
  }
  bool empty() const { return text_.empty(); }

 private:
  const char* brk_;
  const char* indent_;
  std::string text_;
};

// A short, exact decimal for a float: the fewest significant digits that read back the same.
template <typename T>
std::string ShortFloat(T x, int max_digits) {
  char buf[48];
  for (int digits = 6; digits <= max_digits; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    if (static_cast<T>(std::strtod(buf, nullptr)) == x || x != x) break;
  }
  return buf;
}

// The values of a small constant ("0.5", "[1, 2, 3]"), or "" when it has more than
// kMaxShownElements elements or its bytes do not match its dtype.
std::string ConstantValues(const std::string& bytes, DType dtype, size_t rank) {
  const size_t size = trace::DTypeSize(dtype);
  if (size == 0 || bytes.size() % size != 0) return "";
  const size_t n = bytes.size() / size;
  if (n > kMaxShownElements || (rank == 0 && n != 1)) return "";
  std::string out = rank == 0 ? "" : "[";
  for (size_t i = 0; i < n; ++i) {
    const char* p = bytes.data() + i * size;
    if (i) out += ", ";
    switch (dtype) {
      case DType::kF32: {
        float v;
        std::memcpy(&v, p, sizeof v);
        out += ShortFloat(v, 9);
        break;
      }
      case DType::kF64: {
        double v;
        std::memcpy(&v, p, sizeof v);
        out += ShortFloat(v, 17);
        break;
      }
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, p, sizeof v);
        out += std::to_string(v);
        break;
      }
      case DType::kI64: {
        int64_t v;
        std::memcpy(&v, p, sizeof v);
        out += std::to_string(v);
        break;
      }
      case DType::kBool:
        out += *p ? "true" : "false";
        break;
      default:
        if (trace::IsNarrowFloat(dtype)) {
          double v = 0;
          kernels::ConvertElements(dtype, p, DType::kF64, &v, 1);
          out += ShortFloat(v, 5);
        } else if (dtype == DType::kU64) {
          uint64_t v;
          std::memcpy(&v, p, sizeof v);
          out += std::to_string(v);
        } else {  // exact in i64 (sign- or zero-extended)
          int64_t v = 0;
          kernels::ConvertElements(dtype, p, DType::kI64, &v, 1);
          out += std::to_string(v);
        }
        break;
    }
  }
  return rank == 0 ? out : out + "]";
}

const char* RoleText(InputRole role) {
  switch (role) {
    case InputRole::kData:
      return "data";
    case InputRole::kDim:
      return "dimension";
    case InputRole::kParameter:
      return "parameter";
    case InputRole::kTangent:
      return "tangent";
    case InputRole::kCotangent:
      return "cotangent";
  }
  return "input";
}

const char* InputFill(InputRole role) {
  switch (role) {
    case InputRole::kData:
      return "#dbe9f6";
    case InputRole::kDim:
      return "#eeeeee";
    case InputRole::kParameter:
      return "#fff2cc";
    default:
      return "#f0e0f5";  // tangents and cotangents
  }
}

// Appends a legend section: a title and its entries, indented, at most kMaxLegendEntries.
void Section(const std::string& title, const std::vector<std::string>& entries, Label* legend) {
  if (entries.empty()) return;
  legend->Line(title);
  for (size_t i = 0; i < entries.size() && i < kMaxLegendEntries; ++i) {
    legend->Line("  " + entries[i]);
  }
  if (entries.size() > kMaxLegendEntries) {
    legend->Line("  ... and " + std::to_string(entries.size() - kMaxLegendEntries) +
                 " more (see the listing)");
  }
}

std::vector<std::string> Facts(const std::vector<std::string>& texts,
                               const std::vector<std::string>& messages,
                               const std::vector<std::string>* origins) {
  std::vector<std::string> out;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string t = texts[i];
    if (!messages[i].empty()) t += "  \"" + messages[i] + "\"";
    if (origins != nullptr && !(*origins)[i].empty()) t += "  (from " + (*origins)[i] + ")";
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

// The sections of ToDot, one function each: a nested class, so that they may read the private
// state of the program and of its variants.
class Program::DotWriter {
 public:
  // The input nodes, shared by every variant (their type is variant 0's).
  static void Inputs(const Program& p, std::string* out);
  // The operation nodes of variant `v` (program p; a cluster when `clusters`), their edges, and
  // its edges to the shared output nodes.
  static void Operations(const Program& p, size_t v, bool clusters, std::string* out);
  // The output nodes, shared by every variant.
  static void Outputs(const Program& p, std::string* out);
  // The legend node: variables, constraints, and the assertions and guards of every variant.
  static void Legend(const Program& root, bool clusters, std::string* out);
};

void Program::DotWriter::Inputs(const Program& p, std::string* out_ptr) {
  std::string& out = *out_ptr;
  for (size_t i = 0; i < p.inputs_.size(); ++i) {
    const Input& in = p.inputs_[i];
    Label l("\\n");
    l.Line(in.name);
    std::string role = RoleText(in.role);
    if (in.role == InputRole::kDim) {
      std::lock_guard<std::mutex> lock(*p.mu_);
      role += " " + p.scope_->VarName(in.var);
    }
    // A parameter has a default by design; say so only of other roles (and of its absence).
    if (in.default_buffer >= 0 && in.role != InputRole::kParameter) role += ", with a default";
    if (in.default_buffer < 0 && in.role == InputRole::kParameter) role += ", no default";
    if (in.has_fill) role += ", default fill " + trace::FillText(in.fill);
    l.Line(role);
    {
      std::lock_guard<std::mutex> lock(*p.mu_);
      l.Line(p.TypeString(in.type));
    }
    out += "  in" + std::to_string(i) + " [label=" + l.Quoted() +
           ", shape=ellipse, style=filled, fillcolor=\"" + InputFill(in.role) + "\"];\n";
  }
}

void Program::DotWriter::Operations(const Program& p, size_t v, bool clusters,
                                    std::string* out_ptr) {
  std::string& out = *out_ptr;
  const std::string prefix = v == 0 ? "n" : "v" + std::to_string(v) + "n";
  const std::string pad = clusters ? "    " : "  ";
  const size_t num_inputs = p.inputs_.size();
  if (clusters) {
    // The cluster's title: the variant and its guards (their messages are in the legend).
    Label title("\\n");
    std::string guards;
    for (const std::string& g : p.guard_texts_) guards += (guards.empty() ? "" : ", ") + g;
    title.Line("variant " + std::to_string(v) + (guards.empty() ? "" : ": " + guards));
    out += "  subgraph cluster_v" + std::to_string(v) + " {\n    label=" + title.Quoted() +
           ";\n    fontname=\"Helvetica\";\n    style=dashed;\n";
  }
  std::lock_guard<std::mutex> lock(*p.mu_);
  // The attributes of the edges from each value, made once (on first use).
  std::vector<std::string> edge_attrs(p.num_values());
  // A constant is folded into its consumers' labels when it has consumers and is no output.
  std::vector<bool> used(p.nodes_.size(), false), is_output(p.nodes_.size(), false);
  for (const Node& n : p.nodes_) {
    for (int32_t o : n.operands) {
      if (static_cast<size_t>(o) >= num_inputs) used[static_cast<size_t>(o) - num_inputs] = true;
    }
  }
  for (const Output& o : p.outputs_) {
    if (static_cast<size_t>(o.value) >= num_inputs)
      is_output[static_cast<size_t>(o.value) - num_inputs] = true;
  }
  auto folded = [&](int32_t value) {
    if (static_cast<size_t>(value) < num_inputs) return false;
    const size_t k = static_cast<size_t>(value) - num_inputs;
    return p.nodes_[k].op == OpKind::kConstant && used[k] && !is_output[k];
  };
  auto node_id = [&](int32_t value) {
    return static_cast<size_t>(value) < num_inputs ? "in" + std::to_string(value)
                                                   : prefix + std::to_string(value);
  };
  // An edge from `from` (a value) to node `to`, labelled with the value's type. The data
  // path weighs more than the edges from parameters and constants, so that dot draws it
  // straight and puts the weights aside.
  auto add_edge = [&](int32_t from, const std::string& to, std::string* dst) {
    const size_t k = static_cast<size_t>(from);
    std::string& attrs = edge_attrs[k];
    if (attrs.empty()) {
      Label l("\\n");
      l.Line(p.TypeString(p.value_type(from)));
      const bool side = k < num_inputs ? p.inputs_[k].role == InputRole::kParameter
                                       : p.nodes_[k - num_inputs].op == OpKind::kConstant;
      attrs = " [label=" + l.Quoted() + (side ? "];\n" : ", weight=4];\n");
    }
    *dst += "  ";
    *dst += node_id(from);
    *dst += " -> ";
    *dst += to;
    *dst += attrs;
  };
  auto constant_text = [&](const Node& n) {
    const int32_t b = std::get<ops::ConstantAttrs>(n.attrs).buffer;
    std::string values;
    if (b >= 0 && static_cast<size_t>(b) < p.buffers_.size()) {
      values =
          ConstantValues(p.buffers_[static_cast<size_t>(b)], n.type.dtype, n.type.shape.size());
    }
    return "const " + p.TypeString(n.type) + (values.empty() ? "" : " " + values);
  };
  std::string edges;
  for (size_t k = 0; k < p.nodes_.size(); ++k) {
    const Node& n = p.nodes_[k];
    const int32_t value = static_cast<int32_t>(num_inputs + k);
    if (folded(value)) continue;
    Label l("\\n");
    const std::string id = prefix + std::to_string(value);
    std::string call = "%" + std::to_string(value) + " = ";
    if (n.op == OpKind::kConstant) {
      l.Line(call + constant_text(n));
    } else {
      call += ops::OpName(n.op);
      for (size_t j = 0; j < n.operands.size(); ++j) {
        call += j ? ", %" : "(%";
        call += std::to_string(n.operands[j]);
      }
      call += n.operands.empty() ? "()" : ")";
      l.Line(call);
      std::string attrs = p.AttrString(n);
      if (!attrs.empty() && attrs[0] == ' ') attrs.erase(0, 1);
      if (!attrs.empty()) l.Line(attrs);
      for (size_t j = 0; j < n.operands.size(); ++j) {
        const int32_t o = n.operands[j];
        if (!folded(o)) {
          add_edge(o, id, &edges);
          continue;
        }
        bool listed = false;  // an operand used twice is listed once
        for (size_t i = 0; i < j; ++i) listed |= n.operands[i] == o;
        if (!listed) {
          l.Line("%" + std::to_string(o) + " = " +
                 constant_text(p.nodes_[static_cast<size_t>(o) - num_inputs]));
        }
      }
    }
    out += pad;
    out += id;
    out += " [label=";
    l.AppendQuoted(&out);
    out += n.op == OpKind::kConstant ? ", shape=box, style=dashed];\n"
                                     : ", shape=box, style=rounded];\n";
  }
  if (clusters) out += "  }\n";
  out += edges;
  // Outputs are shared; each variant draws its edge to them.
  for (size_t i = 0; i < p.outputs_.size(); ++i) {
    const int32_t o = p.outputs_[i].value;
    add_edge(o, "out" + std::to_string(i), &out);
  }
}

void Program::DotWriter::Outputs(const Program& p, std::string* out_ptr) {
  std::string& out = *out_ptr;
  for (size_t i = 0; i < p.outputs_.size(); ++i) {
    const Output& o = p.outputs_[i];
    Label l("\\n");
    l.Line(o.name);
    if (o.role == OutputRole::kTangent) l.Line("tangent");
    if (o.role == OutputRole::kGrad) l.Line("grad");
    out += "  out" + std::to_string(i) + " [label=" + l.Quoted() +
           ", shape=ellipse, style=filled, fillcolor=\"#d9f2d9\"];\n";
  }
}

void Program::DotWriter::Legend(const Program& root, bool clusters, std::string* out_ptr) {
  std::string& out = *out_ptr;
  Label legend("\\l");
  {
    std::lock_guard<std::mutex> lock(*root.mu_);
    std::vector<std::string> vars;
    for (const SolveStep& st : root.solve_) {
      const dim::Variable& var = root.scope_->variables()[static_cast<size_t>(st.var)];
      std::string range = var.name;
      if (var.lo != dim::kNegInf && var.hi != dim::kPosInf) {
        range = std::to_string(var.lo) + " <= " + var.name + " <= " + std::to_string(var.hi);
      } else if (var.lo != dim::kNegInf) {
        range = var.name + " >= " + std::to_string(var.lo);
      } else if (var.hi != dim::kPosInf) {
        range = var.name + " <= " + std::to_string(var.hi);
      }
      const Input& in = root.inputs_[static_cast<size_t>(st.input)];
      vars.push_back(range + "  (" +
                     (st.axis < 0
                          ? "given by input '" + in.name + "'"
                          : "from input '" + in.name + "' axis " + std::to_string(st.axis)) +
                     ")");
    }
    Section("variables:", vars, &legend);
  }
  Section("constraints:", root.constraint_texts_, &legend);
  if (!clusters) {
    Section("assertions:", Facts(root.assertion_texts_, root.assertion_messages_, nullptr),
            &legend);
    Section("guards:", Facts(root.guard_texts_, root.guard_messages_, &root.guard_origins_),
            &legend);
  } else {
    legend.Line(std::to_string(root.num_variants()) +
                " variants: the first whose guards hold runs");
    legend.Line("exhaustive: " + (root.exhaustive_ == dim::Truth::kTrue ? std::string("yes")
                                  : root.exhaustive_ == dim::Truth::kFalse
                                      ? "no: " + root.counterexample_
                                      : std::string("unknown")));
    for (size_t v = 0; v < root.num_variants(); ++v) {
      const Program& p = root.variant(v);
      const std::string name = "variant " + std::to_string(v);
      if (p.guard_texts_.empty()) legend.Line(name + ": no guards");
      Section(name + " guards:", Facts(p.guard_texts_, p.guard_messages_, &p.guard_origins_),
              &legend);
      Section(name + " assertions:", Facts(p.assertion_texts_, p.assertion_messages_, nullptr),
              &legend);
    }
  }
  if (!legend.empty()) {
    out += "  legend [label=" + legend.Quoted() + ", shape=note, fontsize=9];\n";
  }
}

std::string Program::ToDot() const {
  const bool clusters = num_variants() > 1;
  std::string out =
      "digraph program {\n"
      "  rankdir=TB;\n"
      "  node [fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  DotWriter::Inputs(*this, &out);
  for (size_t v = 0; v < num_variants(); ++v) DotWriter::Operations(variant(v), v, clusters, &out);
  DotWriter::Outputs(*this, &out);
  DotWriter::Legend(*this, clusters, &out);
  return out + "}\n";
}

}  // namespace program
}  // namespace shp
