#include "cc/autodiff/ad_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cc/autodiff/autodiff.h"
#include "cc/base/error.h"
#include "cc/runtime/runtime.h"

namespace shp {
namespace autodiff {
namespace testing {
namespace {

using trace::DType;

std::vector<uint8_t> ToBytes(const Array& a) {
  std::vector<uint8_t> out(a.data.size() * trace::DTypeSize(a.dtype));
  for (size_t i = 0; i < a.data.size(); ++i) {
    uint8_t* p = out.data() + i * trace::DTypeSize(a.dtype);
    const double v = a.data[i];
    switch (a.dtype) {
      case DType::kF64:
        std::memcpy(p, &v, 8);
        break;
      case DType::kF32: {
        float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::kI32: {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
      case DType::kI64: {
        int64_t x = static_cast<int64_t>(v);
        std::memcpy(p, &x, 8);
        break;
      }
      default:
        *p = v != 0;
        break;
    }
  }
  return out;
}

double FromBytes(DType dtype, const uint8_t* p) {
  switch (dtype) {
    case DType::kF64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::kF32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kI32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kI64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default:
      return *p;
  }
}

class Sink : public runtime::OutputSink {
 public:
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<Array> arrays;
  void* Output(size_t i, DType dtype, const int64_t* shape, size_t rank) override {
    if (arrays.size() <= i) {
      arrays.resize(i + 1);
      bytes.resize(i + 1);
    }
    arrays[i].dtype = dtype;
    arrays[i].shape.assign(shape, shape + rank);
    size_t n = 1;
    for (size_t k = 0; k < rank; ++k) n *= static_cast<size_t>(shape[k]);
    arrays[i].data.resize(n);
    bytes[i].resize(n * trace::DTypeSize(dtype) + 1);
    return bytes[i].data();
  }
};

size_t Count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

Arrays Run(std::shared_ptr<const program::Program> p, const Arrays& inputs) {
  runtime::Options options;
  options.num_threads = 1;
  runtime::Runtime rt(p, options);
  std::vector<std::string> names;
  std::vector<std::vector<uint8_t>> data;
  std::vector<runtime::ArrayView> views;
  for (const auto& [name, a] : inputs) {
    names.push_back(name);
    data.push_back(ToBytes(a));
  }
  size_t k = 0;
  for (const auto& [name, a] : inputs) {
    views.push_back(runtime::ArrayView{a.dtype, a.shape.data(), a.shape.size(), data[k].data()});
    ++k;
  }
  std::vector<const char*> cnames;
  for (const std::string& n : names) cnames.push_back(n.c_str());
  Sink sink;
  rt.Run(cnames.data(), views.data(), views.size(), &sink);
  Arrays out;
  for (size_t i = 0; i < sink.arrays.size(); ++i) {
    Array& a = sink.arrays[i];
    for (size_t j = 0; j < a.data.size(); ++j)
      a.data[j] = FromBytes(a.dtype, sink.bytes[i].data() + j * trace::DTypeSize(a.dtype));
    out[p->outputs()[i].name] = a;
  }
  return out;
}

namespace {

// The derived names, read from the derived programs by position (a transformation picks
// free names: "x.grad.grad" when "x.grad" is taken).
struct DerivedNames {
  std::map<std::string, std::string> tangent_in;   // input -> its tangent input (jvp)
  std::map<std::string, std::string> tangent_out;  // output -> its tangent output (jvp)
  std::map<std::string, std::string> cotangent;    // output -> its cotangent input (vjp)
  std::map<std::string, std::string> grad;         // input -> its grad output (vjp)
};

// (vp null: forward mode only.)
DerivedNames NamesOf(const program::Program& p, const program::Program& jp,
                     const program::Program* vp, const std::vector<std::string>& wrt,
                     const std::vector<std::string>& of) {
  DerivedNames d;
  const size_t ni = p.inputs().size(), no = p.outputs().size();
  for (size_t k = 0; k < wrt.size(); ++k) {
    d.tangent_in[wrt[k]] = jp.inputs().at(ni + k).name;
    if (vp != nullptr) d.grad[wrt[k]] = vp->outputs().at(no + k).name;
  }
  for (size_t k = 0; k < of.size(); ++k) {
    d.tangent_out[of[k]] = jp.outputs().at(no + k).name;
    if (vp != nullptr) d.cotangent[of[k]] = vp->inputs().at(ni + k).name;
  }
  return d;
}

// Checks the JVP and VJP of `traced` (and of it loaded back from bytes) at `x` with the
// tangents `tangents` (by input, for every input in `wrt`).
void CheckAt(std::shared_ptr<const program::Program> traced, const Arrays& x,
             const Arrays& tangents, const std::vector<std::string>& wrt, std::mt19937_64& rng,
             bool forward_only = false) {
  std::vector<std::string> out_names, of;
  for (const program::Output& o : traced->outputs()) {
    out_names.push_back(o.name);
    if (trace::IsFloat(traced->value_type(o.value).dtype)) of.push_back(o.name);
  }
  std::string bytes = traced->Serialize();
  std::shared_ptr<const program::Program> loaded =
      program::Program::Load(bytes.data(), bytes.size());

  for (const auto& p : {traced, loaded}) {
    SCOPED_TRACE(p == traced ? "traced" : "loaded");
    std::shared_ptr<const program::Program> jp, vp;
    try {
      jp = Jvp(*p, wrt);
      if (forward_only) {
        try {
          Vjp(*p, of, wrt);
          ADD_FAILURE() << "a forward-only program has a vjp";
        } catch (const shp::Error& e) {
          EXPECT_EQ(e.code(), Code::kUnsupported) << e.message();
        }
      }
      vp = forward_only ? jp : Vjp(*p, of, wrt);
    } catch (const shp::Error& e) {
      ADD_FAILURE() << "transformation failed: " << e.message();
      return;
    }
    const DerivedNames names = NamesOf(*p, *jp, forward_only ? nullptr : vp.get(), wrt, of);
    // The derived programs serialize and load back like any program.
    std::string jb = jp->Serialize(), vb = vp->Serialize();
    EXPECT_EQ(program::Program::Load(jb.data(), jb.size())->Serialize(), jb);
    EXPECT_EQ(program::Program::Load(vb.data(), vb.size())->Serialize(), vb);

    const Arrays base = Run(p, x);
    Arrays jin = x;
    for (const std::string& w : wrt) jin[names.tangent_in.at(w)] = tangents.at(w);
    const Arrays jout = Run(jp, jin);
    for (const std::string& o : out_names) EXPECT_EQ(jout.at(o).data, base.at(o).data) << o;

    // JVP against central differences (f64).
    const double h = 1e-5;
    Arrays xp = x, xm = x;
    for (const std::string& w : wrt) {
      const Array& ta = tangents.at(w);
      for (size_t j = 0; j < ta.data.size(); ++j) {
        xp[w].data[j] += h * ta.data[j];
        xm[w].data[j] -= h * ta.data[j];
      }
    }
    const Arrays fp = Run(p, xp), fm = Run(p, xm);
    for (const std::string& o : of) {
      const std::vector<double>& jt = jout.at(names.tangent_out.at(o)).data;
      ASSERT_EQ(jt.size(), base.at(o).data.size()) << o;
      for (size_t j = 0; j < jt.size(); ++j) {
        double fd = (fp.at(o).data[j] - fm.at(o).data[j]) / (2 * h);
        EXPECT_NEAR(jt[j], fd, 1e-5 * (1 + std::fabs(fd))) << o << "[" << j << "]";
      }
    }

    if (forward_only) continue;
    // VJP against JVP: <vjp(ct), t> == <ct, jvp(t)>.
    Arrays vin = x;
    std::normal_distribution<double> n(0, 1);
    double rhs = 0, scale = 1;
    for (const std::string& o : of) {
      Array ct = base.at(o);
      const std::vector<double>& jt = jout.at(names.tangent_out.at(o)).data;
      for (double& v : ct.data) v = n(rng);
      rhs += Dot(ct.data, jt);
      for (size_t j = 0; j < ct.data.size(); ++j) scale += std::fabs(ct.data[j] * jt[j]);
      vin[names.cotangent.at(o)] = ct;
    }
    const Arrays vout = Run(vp, vin);
    for (const std::string& o : out_names) EXPECT_EQ(vout.at(o).data, base.at(o).data) << o;
    double lhs = 0;
    for (const std::string& w : wrt) {
      const Array& g = vout.at(names.grad.at(w));
      EXPECT_EQ(g.shape, x.at(w).shape) << w;
      lhs += Dot(g.data, tangents.at(w).data);
      for (size_t j = 0; j < g.data.size(); ++j)
        scale += std::fabs(g.data[j] * tangents.at(w).data[j]);
    }
    EXPECT_NEAR(lhs, rhs, 1e-9 * scale) << "<vjp(ct), t> vs <ct, jvp(t)>";
  }
}

}  // namespace

TracedCase TraceCase(const Case& c) {
  TracedCase r;
  r.scope = dim::Scope::Create(c.constraints);
  r.trace = std::make_unique<trace::Trace>(r.scope.get());
  std::vector<const trace::Tensor*> outs;
  c.build(*r.trace, &r.inputs, &outs);
  std::vector<std::string> out_names;
  for (size_t i = 0; i < outs.size(); ++i) out_names.push_back("out" + std::to_string(i));
  r.program = program::Program::FromTrace(*r.trace, r.inputs, outs, out_names);
  return r;
}

void CheckCase(const Case& c, uint32_t seed) {
  std::mt19937_64 rng(seed);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(c.name + ", valuation " + std::to_string(k));
    const TracedCase tc = TraceCase(c);
    const std::vector<const trace::Tensor*>& ins = tc.inputs;
    std::shared_ptr<const program::Program> traced = tc.program;

    // Inputs and tangents.
    const std::map<std::string, std::vector<int64_t>> shapes = c.shapes(k);
    Arrays x, tangents;
    std::vector<std::string> wrt;
    for (const trace::Tensor* in : ins) {
      Array a;
      a.dtype = in->type.dtype;
      a.shape = shapes.at(in->name);
      a.data.resize(Count(a.shape));
      if (trace::IsFloat(a.dtype)) {
        Domain d;
        if (c.domains.count(in->name)) d = c.domains.at(in->name);
        std::uniform_real_distribution<double> u(d.lo, d.hi);
        for (double& v : a.data) v = u(rng);
        Array ta = a;
        std::normal_distribution<double> n(0, 1);
        for (double& v : ta.data) v = n(rng);
        tangents[in->name] = ta;
        wrt.push_back(in->name);
      } else {
        int64_t bound = c.int_bounds.count(in->name) ? c.int_bounds.at(in->name) : 2;
        std::uniform_int_distribution<int64_t> u(0, bound - 1);
        for (double& v : a.data) v = static_cast<double>(u(rng));
      }
      x[in->name] = a;
    }
    CheckAt(traced, x, tangents, wrt, rng, c.forward_only);
  }
}

void CheckProgram(std::shared_ptr<const program::Program> p, const Arrays& x, uint32_t seed) {
  std::mt19937_64 rng(seed);
  Arrays tangents;
  std::vector<std::string> wrt;
  for (const program::Input& in : p->inputs()) {
    if (!trace::IsFloat(in.type.dtype)) continue;
    Array ta = x.at(in.name);
    std::normal_distribution<double> n(0, 1);
    for (double& v : ta.data) v = n(rng);
    tangents[in.name] = ta;
    wrt.push_back(in.name);
  }
  CheckAt(p, x, tangents, wrt, rng);
}

}  // namespace testing
}  // namespace autodiff
}  // namespace shp
