// Recession rays: a certificate that a projection can bound its query on neither side, so that
// Project may answer [-inf, inf] without the elimination (see decide.h, "Shortcuts").
//
// Why it is exact: every row an elimination derives has a coefficient vector that is a
// non-negative combination of the input rows' (an equality's with either sign; dividing by a
// gcd and rounding the constant never changes the direction). So if a vector r of column
// values has a·r >= 0 for every input inequality a and a·r == 0 for every equality, every
// derived row has a·r >= 0 too; a bound z <= c (the row -z + c >= 0) would need -r_z >= 0.
// Hence a ray with r_z > 0 means no upper bound of z is derivable (or the rows are
// contradictory, which Project also answers with [-inf, inf]), and one with r_z < 0 no lower
// bound. With a case analysis, a ray that every case's rows also admit makes each case
// unbounded or contradictory (then left out), so the hull is everything too. The candidates
// move one variable along its unbounded side (and others with it where a fact row needs it:
// n >= 2*h raises n twice as fast as h) and take each column's change; how they are found
// does not matter for soundness or for the answer, only the check of every row does.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/decide.h"
#include "cc/dim/decide_rows.h"
#include "cc/dim/eval.h"

namespace shp {
namespace dim {

namespace {

using I128 = __int128;
// A column whose change along a ray could not be computed (an overflow, a division by zero).
constexpr int64_t kNoSlope = INT64_MIN;
// The step of a ray: divisible by every small divisor, so that floordiv and mod atoms of the
// moved variable change linearly (mod not at all) between the two points.
constexpr int64_t kStep = 720720;  // lcm(1..16)

}  // namespace

void Decider::ResetRays() {
  rays_.reset();
  projections_without_rays_ = 0;
}

namespace {

// The change of monomial `m` from at0 to at1, or kNoSlope.
int64_t SlopeOf(Scope* s, const Mono* m, const std::vector<int64_t>& at0,
                const std::vector<int64_t>& at1) {
  try {
    const Expr* e = s->MonoExpr(m, 1);
    const int64_t a = Evaluate(e, at0), b = Evaluate(e, at1);
    int64_t d;
    if (__builtin_sub_overflow(b, a, &d) || d == kNoSlope) return kNoSlope;
    return d;
  } catch (const Error&) {
    return kNoSlope;
  }
}

// a·r over the row's columns (r[j] for j < cols, r_z at column z); false when a column of the
// row has no value or the sum leaves int128 range checks.
bool Dot(const std::vector<int64_t>& c, const int64_t* r, I128* out) {
  I128 sum = 0;
  for (size_t j = 0; j < c.size(); ++j) {
    if (c[j] == 0) continue;
    if (r[j] == kNoSlope) return false;
    I128 t;
    if (__builtin_mul_overflow(static_cast<I128>(c[j]), static_cast<I128>(r[j]), &t) ||
        __builtin_add_overflow(sum, t, &sum)) {
      return false;
    }
  }
  *out = sum;
  return true;
}

}  // namespace

void Decider::BuildRays() {
  rays_.reset(new Rays());
  Rays& R = *rays_;
  const size_t nv = s_->variables().size();
  R.vars = nv;
  const std::vector<Interval>& vb = var_bounds_;  // (Prepare ran: Project's caller)
  std::vector<int64_t> start(nv, 1);
  for (size_t v = 0; v < nv && v < vb.size(); ++v) {
    start[v] = vb[v].lo != kNegInf ? vb[v].lo : vb[v].hi != kPosInf ? vb[v].hi : 0;
  }
  // One ray per variable unbounded on a side, moving it that way, and moving others along
  // where a fact row needs it (d >= h + 8 and n >= 2*h: raising h raises d once and n twice).
  const System& base = *base_;
  const size_t nb = base.cols.size();
  std::vector<int32_t> var_col(nv, -1);  // the base column of each variable, if it has one
  for (size_t j = 0; j < nb; ++j) {
    const Mono* m = base.cols[j];
    if (m->factors.size() == 1 && m->factors[0].exp == 1 &&
        m->factors[0].atom->kind == AtomKind::kVar) {
      const int32_t v = m->factors[0].atom->var;
      if (v >= 0 && static_cast<size_t>(v) < nv) var_col[v] = static_cast<int32_t>(j);
    }
  }
  std::vector<int64_t> mult(nv), r(nb + 1);
  // The two points of the ray `mult` and the base columns' changes between them (false if a
  // point leaves int64).
  auto slopes = [&](std::vector<int64_t>* at0, std::vector<int64_t>* at1) {
    *at0 = start;
    *at1 = start;
    for (size_t v = 0; v < nv; ++v) {
      if (__builtin_add_overflow((*at0)[v], mult[v] * kStep, &(*at0)[v]) ||
          __builtin_add_overflow((*at1)[v], 2 * mult[v] * kStep, &(*at1)[v])) {
        return false;
      }
    }
    for (size_t j = 0; j < nb; ++j) r[j] = SlopeOf(s_, base.cols[j], *at0, *at1);
    r[nb] = 0;
    return true;
  };
  auto movable = [&](size_t v, int dir) {
    return v < vb.size() && (dir > 0 ? vb[v].hi == kPosInf : vb[v].lo == kNegInf);
  };
  for (size_t x = 0; x < nv && R.count < kMaxRays; ++x) {
    for (int dir : {1, -1}) {
      if (!movable(x, dir) || R.count >= kMaxRays) continue;
      std::fill(mult.begin(), mult.end(), 0);
      mult[x] = dir;
      const size_t k = R.count;
      bool ok = false;
      for (int iter = 0; iter < 8; ++iter) {
        if (!slopes(&R.at0[k], &R.at1[k])) break;
        const Row* bad = nullptr;
        I128 dot = 0;
        for (const Row& row : base.rows) {
          I128 d;
          if (row.c.size() > nb + 1 || !Dot(row.c, r.data(), &d) || (row.eq ? d != 0 : d < 0)) {
            bad = &row;
            dot = d;
            break;
          }
        }
        if (!bad) {
          ok = true;
          break;
        }
        if (bad->eq || dot >= 0 || bad->c.size() > nb + 1) break;
        // Raise (or lower) a variable that the row rewards, by as many steps as it lacks.
        bool fixed = false;
        for (size_t v = 0; v < nv && !fixed; ++v) {
          const int32_t j = var_col[v];
          if (j < 0 || bad->c[j] == 0) continue;
          const int d = bad->c[j] > 0 ? 1 : -1;
          if (!movable(v, d) || (mult[v] != 0 && (mult[v] > 0) != (d > 0))) continue;
          const I128 per = static_cast<I128>(bad->c[j] > 0 ? bad->c[j] : -bad->c[j]) * kStep;
          const I128 need = (-dot + per - 1) / per;
          if (need > 64 || (mult[v] < 0 ? -mult[v] : mult[v]) + need > 64) continue;
          mult[v] += d * static_cast<int64_t>(need);
          fixed = true;
        }
        if (!fixed) break;
      }
      if (!ok) continue;
      R.base_ok[k] = true;
      R.base_slope.resize(nb * kMaxRays, kNoSlope);
      for (size_t j = 0; j < nb; ++j) R.base_slope[j * kMaxRays + k] = r[j];
      ++R.count;
    }
  }
}
void Decider::UnboundedSides(const System& sys, const Row& q, const std::vector<CaseSplit>* splits,
                             const std::vector<int>* only, bool* up_out, bool* down_out) {
  if (preparing_ || !base_ || sys.base != base_.get()) return;
  // Building the rays evaluates every base column a few times: not for a scope that asks
  // one or two questions (explain.cc's copies); answers are the same without them.
  if (!rays_ && ++projections_without_rays_ < 3) return;
  if (!rays_ || rays_->vars != s_->variables().size()) BuildRays();  // (new variables)
  Rays& R = *rays_;
  if (R.count == 0) return;
  const size_t n = sys.cols.size(), nb = base_->cols.size();
  if (q.c.size() != n + 1 || q.c[n] != 1 || !q.eq) return;
  std::vector<int64_t>& r = buf_->ray;
  r.resize(n + 1);
  // The query's own columns: their values along every ray (cached per monomial).
  std::vector<const int64_t*>& own = buf_->ray_own;
  own.resize(n);
  for (size_t j = nb; j < n; ++j) {
    auto it = R.slope.find(sys.cols[j]);
    if (it == R.slope.end()) {
      std::vector<int64_t> sl(R.count);
      for (size_t k = 0; k < R.count; ++k) sl[k] = SlopeOf(s_, sys.cols[j], R.at0[k], R.at1[k]);
      it = R.slope.emplace(sys.cols[j], std::move(sl)).first;
    }
    own[j] = it->second.data();
  }
  bool& up = *up_out;
  bool& down = *down_out;
  for (size_t k = 0; k < R.count && !(up && down); ++k) {
    if (!R.base_ok[k]) continue;
    for (size_t j = 0; j < nb; ++j) r[j] = R.base_slope[j * kMaxRays + k];
    for (size_t j = nb; j < n; ++j) r[j] = own[j][k];
    // z == e: r_z is e's change, from the query row z - e == 0.
    r[n] = 0;
    I128 ez;
    if (!Dot(q.c, r.data(), &ez)) continue;  // z - e (r_z = 0 so far)
    ez = -ez;
    if (ez == 0 || ez > INT64_MAX || ez < -INT64_MAX) continue;
    if ((ez > 0 && up) || (ez < 0 && down)) continue;
    r[n] = static_cast<int64_t>(ez);
    auto holds = [&](const Row& row) {
      I128 d;
      return Dot(row.c, r.data(), &d) && (row.eq ? d == 0 : d >= 0);
    };
    bool ok = true;
    for (const Row& row : sys.rows) {
      if (!holds(row)) {
        ok = false;
        break;
      }
    }
    if (ok && splits) {
      for (size_t i = 0; i < splits->size(); ++i) {
        const CaseSplit& cs = (*splits)[i];
        for (int w = 0; w < 2; ++w) {
          if (only && (*only)[i] != w) continue;
          for (const Row& row : cs.rows[w]) ok = ok && holds(row);
        }
      }
    }
    if (!ok) continue;
    (ez > 0 ? up : down) = true;
  }
}

}  // namespace dim
}  // namespace shp
