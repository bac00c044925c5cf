// The Fourier–Motzkin core on its own: normalization with integer tightening, the row set,
// and elimination (projections, infeasibility and its origin, equalities, the caps).
#include "cc/dim/fm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace shp {
namespace dim {
namespace fm {
namespace {

Row R(std::vector<int64_t> c, int64_t c0, uint64_t origin = kImplicit, bool eq = false) {
  return Row{std::move(c), c0, origin, eq};
}

// Bounds of column `keep` after eliminating the others: {lo, hi} (INT64_MIN / INT64_MAX
// when unbounded); false if infeasible.
bool Project(const std::vector<Row>& rows, int keep, int64_t* lo, int64_t* hi,
             uint64_t* bad = nullptr) {
  Matrix m = ToMatrix(rows, rows[0].c.size());
  Scratch scratch;
  uint64_t origin = 0;
  if (!Eliminate(&m, keep, &origin, &scratch)) {
    if (bad) *bad = origin;
    return false;
  }
  *lo = INT64_MIN;
  *hi = INT64_MAX;
  if (keep < 0) return true;
  for (size_t i = 0; i < m.size(); ++i) {
    for (size_t j = 0; j < m.n; ++j) {
      if (static_cast<int>(j) != keep) {
        EXPECT_EQ(m.Row(i)[j], 0) << "column " << j << " left in row " << i;
      }
    }
    EXPECT_EQ(m.eq[i], 0);
    int64_t a = m.Row(i)[keep];
    if (a == 1) *lo = std::max(*lo, -m.c0[i]);
    if (a == -1) *hi = std::min(*hi, m.c0[i]);
  }
  return true;
}

TEST(Normalize, DividesByTheGcdAndRoundsTheConstantDown) {
  Row r = R({4, -6}, 7);  // 4x - 6y + 7 >= 0  ->  2x - 3y + 3 >= 0 (7/2 rounded down)
  EXPECT_EQ(Normalize(&r), Norm::kOk);
  EXPECT_EQ(r.c, (std::vector<int64_t>{2, -3}));
  EXPECT_EQ(r.c0, 3);
  Row n = R({4, 6}, -7);  // -7/2 rounds down to -4
  EXPECT_EQ(Normalize(&n), Norm::kOk);
  EXPECT_EQ(n.c0, -4);
  Row unit = R({3, 1}, 5);  // gcd 1: unchanged
  EXPECT_EQ(Normalize(&unit), Norm::kOk);
  EXPECT_EQ(unit.c0, 5);
}

TEST(Normalize, EqualitiesAndConstantRows) {
  Row e = R({2, 4}, 3, kImplicit, true);  // 2x + 4y + 3 == 0 has no integer solution
  EXPECT_EQ(Normalize(&e), Norm::kInfeasible);
  Row ok = R({2, 4}, 6, kImplicit, true);
  EXPECT_EQ(Normalize(&ok), Norm::kOk);
  EXPECT_EQ(ok.c0, 3);
  Row t = R({0, 0}, 0);
  EXPECT_EQ(Normalize(&t), Norm::kTrivial);
  Row f = R({0, 0}, -1);
  EXPECT_EQ(Normalize(&f), Norm::kInfeasible);
  Row te = R({0, 0}, 0, kImplicit, true);
  EXPECT_EQ(Normalize(&te), Norm::kTrivial);
  Row fe = R({0, 0}, 2, kImplicit, true);
  EXPECT_EQ(Normalize(&fe), Norm::kInfeasible);
  Row big = R({INT64_MIN, 0}, INT64_MIN);  // gcd 2^63 is taken as 2^62: no trap
  EXPECT_EQ(Normalize(&big), Norm::kOk);
  EXPECT_EQ(big.c[0], -2);
  EXPECT_EQ(big.c0, -2);
}

TEST(RowSet, KeepsTheTightestRowPerCoefficientVector) {
  Matrix m;
  m.n = 2;
  std::vector<int32_t> slots;
  RowSet set(&m, &slots);
  const int64_t a[] = {1, -1}, b[] = {1, 1};
  set.Add(a, 5, 1, 0, 0);
  set.Add(b, 2, 2, 0, 0);
  set.Add(a, 3, 4, 0, 0);  // tighter: replaces the constant and the origin
  set.Add(a, 9, 8, 0, 0);  // looser: ignored
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.c0[0], 3);
  EXPECT_EQ(m.origin[0], 4u);
  EXPECT_EQ(m.c0[1], 2);
  // Growing past the initial slots keeps every row findable.
  for (int64_t i = 0; i < 200; ++i) {
    const int64_t c[] = {i, 7};
    set.Add(c, i, 0, 0, 0);
  }
  for (int64_t i = 0; i < 200; ++i) {
    const int64_t c[] = {i, 7};
    set.Add(c, -1, 0, 0, 0);
  }
  EXPECT_EQ(m.size(), 202u);
  for (size_t r = 2; r < m.size(); ++r) EXPECT_EQ(m.c0[r], -1);
}

TEST(Eliminate, ProjectsInequalities) {
  // x >= 1, y >= x + 2, y <= 10  ->  y in [3, 10], x in [1, 8]
  std::vector<Row> rows = {R({1, 0}, -1), R({-1, 1}, -2), R({0, -1}, 10)};
  int64_t lo, hi;
  ASSERT_TRUE(Project(rows, 1, &lo, &hi));
  EXPECT_EQ(lo, 3);
  EXPECT_EQ(hi, 10);
  ASSERT_TRUE(Project(rows, 0, &lo, &hi));
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 8);
}

TEST(Eliminate, IntegerTighteningAfterCombination) {
  // 2z <= x, x <= 5  ->  z <= 2 (5/2 rounded down), not 2.5
  std::vector<Row> rows = {R({1, -2}, 0), R({-1, 0}, 5), R({0, 1}, 0)};
  int64_t lo, hi;
  ASSERT_TRUE(Project(rows, 1, &lo, &hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 2);
}

TEST(Eliminate, EqualitiesAreSubstitutedExactly) {
  // z == 2x + 1 with x in [0, 3]: z in [1, 7]; eliminating all is feasible.
  std::vector<Row> rows = {R({-2, 1}, -1, kImplicit, true), R({1, 0}, 0), R({-1, 0}, 3)};
  int64_t lo, hi;
  ASSERT_TRUE(Project(rows, 1, &lo, &hi));
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 7);
  // 2x == z with z == 1 has no integer solution: substituting z = 2x leaves 1 <= 2x <= 1,
  // which tightening turns into x >= 1 and x <= 0.
  std::vector<Row> odd = {R({2, -1}, 0, kImplicit, true), R({0, 1}, -1), R({0, -1}, 1)};
  uint64_t bad = 0;
  EXPECT_FALSE(Project(odd, -1, &lo, &hi, &bad));
}

TEST(Eliminate, SubstitutionKeepsResultsThatFitWhenAProductDoesNot) {
  // x == -K*y substituted into a*x + b*y >= 0: a*K = 2^63 + 2^32 leaves int64, but
  // b - a*K = -(2^62 + 2^32) fits, so the row stays: y <= 0 (with y >= -5 given).
  const int64_t k = (int64_t{1} << 31) + 1, a = int64_t{1} << 32, b = int64_t{1} << 62;
  std::vector<Row> rows = {R({1, k}, 0, kImplicit, true), R({a, b}, 0), R({0, 1}, 5)};
  int64_t lo, hi;
  ASSERT_TRUE(Project(rows, 1, &lo, &hi));
  EXPECT_EQ(lo, -5);
  EXPECT_EQ(hi, 0);
  // With b = -2^62 the result itself leaves int64: that row is dropped (y unbounded above),
  // never wrapped.
  std::vector<Row> wide = {R({1, k}, 0, kImplicit, true), R({a, -b}, 0), R({0, 1}, 5)};
  ASSERT_TRUE(Project(wide, 1, &lo, &hi));
  EXPECT_EQ(lo, -5);
  EXPECT_EQ(hi, INT64_MAX);
}

TEST(Eliminate, InfeasibleReportsTheOrigins) {
  // fact 0: x >= 5, fact 3: x <= 2, plus an unrelated implicit row.
  std::vector<Row> rows = {R({1, 0}, -5, FactOrigin(0)), R({-1, 0}, 2, FactOrigin(3)),
                           R({0, 1}, 0)};
  int64_t lo, hi;
  uint64_t bad = 0;
  EXPECT_FALSE(Project(rows, -1, &lo, &hi, &bad));
  EXPECT_EQ(bad, FactOrigin(0) | FactOrigin(3));
  EXPECT_EQ(FactOrigin(61), 1ULL << 61);
  EXPECT_EQ(FactOrigin(62), kLateFact);
  EXPECT_EQ(FactOrigin(500), kLateFact);
}

TEST(Eliminate, OverflowingCombinationsAreDroppedNotWrapped) {
  // Coefficients near 2^62: a combination overflows and is dropped, so the projection may be
  // weaker but never wrong. x in [1, 2]; 2^62 * x - y >= 0, y >= 2^62 - 1 + x.
  const int64_t p62 = int64_t{1} << 62;
  std::vector<Row> rows = {R({1, 0}, -1), R({-1, 0}, 2), R({p62, -1}, 0), R({-1, 1}, -(p62 - 1))};
  int64_t lo, hi;
  ASSERT_TRUE(Project(rows, 1, &lo, &hi));
  // The true range of y is [2^62, 2^63 - 1]; any answer must contain it.
  EXPECT_LE(lo, p62);
  EXPECT_EQ(hi, INT64_MAX);
}

// Eliminate drops columns that are 0 everywhere (and each one it eliminates) while it works;
// the result must come back at the full width, every kept column at its own index.
TEST(Eliminate, KeptColumnsComeBackAtTheirIndicesAndFullWidth) {
  // Columns: 0 unused, 1 kept (x), 2 eliminated (y), 3 unused, 4 kept (z), 5 unused.
  // x - y >= 0, y - 3 >= 0, z - y - 1 >= 0, -z + 10 >= 0.
  std::vector<Row> rows = {R({0, 1, -1, 0, 0, 0}, 0), R({0, 0, 1, 0, 0, 0}, -3),
                           R({0, 0, -1, 0, 1, 0}, -1), R({0, 0, 0, 0, -1, 0}, 10)};
  Matrix m = ToMatrix(rows, 6);
  Scratch scratch;
  uint64_t bad = 0;
  ASSERT_TRUE(
      Eliminate(&m, std::vector<bool>{false, true, false, false, true, false}, &bad, &scratch));
  ASSERT_EQ(m.n, 6u);
  ASSERT_EQ(m.c.size(), m.size() * 6);
  bool x_ge_3 = false, z_ge_4 = false, z_le_10 = false;
  for (size_t i = 0; i < m.size(); ++i) {
    const int64_t* r = m.Row(i);
    EXPECT_EQ(r[0], 0);
    EXPECT_EQ(r[2], 0);
    EXPECT_EQ(r[3], 0);
    EXPECT_EQ(r[5], 0);
    x_ge_3 |= r[1] == 1 && r[4] == 0 && m.c0[i] == -3;
    z_ge_4 |= r[1] == 0 && r[4] == 1 && m.c0[i] == -4;
    z_le_10 |= r[1] == 0 && r[4] == -1 && m.c0[i] == 10;
  }
  EXPECT_TRUE(x_ge_3);
  EXPECT_TRUE(z_ge_4);
  EXPECT_TRUE(z_le_10);
  // Keeping z alone: its bounds, [4, 10].
  int64_t lo, hi;
  ASSERT_TRUE(Project(rows, 4, &lo, &hi));
  EXPECT_EQ(lo, 4);
  EXPECT_EQ(hi, 10);
}

// Brute force: random small systems over 3 columns in a box; every integer point that
// satisfies the rows must satisfy the projection, and infeasible means no point.
TEST(Eliminate, SoundOnRandomSystems) {
  std::mt19937_64 rng(31337);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int infeasible = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<Row> rows;
    for (int j = 0; j < 3; ++j) {  // box [-4, 4] on every column
      std::vector<int64_t> c(3, 0);
      c[j] = 1;
      rows.push_back(R(c, 4));
      c[j] = -1;
      rows.push_back(R(c, 4));
    }
    int extra = pick(1, 4);
    for (int k = 0; k < extra; ++k) {
      rows.push_back(
          R({pick(-3, 3), pick(-3, 3), pick(-3, 3)}, pick(-6, 6), FactOrigin(k), pick(0, 4) == 0));
    }
    auto holds = [&](int64_t x, int64_t y, int64_t z) {
      for (const Row& r : rows) {
        int64_t v = r.c[0] * x + r.c[1] * y + r.c[2] * z + r.c0;
        if (r.eq ? v != 0 : v < 0) return false;
      }
      return true;
    };
    int keep = pick(0, 2);
    int64_t lo, hi;
    bool feasible = Project(rows, keep, &lo, &hi);
    int64_t true_lo = INT64_MAX, true_hi = INT64_MIN;
    for (int64_t x = -4; x <= 4; ++x) {
      for (int64_t y = -4; y <= 4; ++y) {
        for (int64_t z = -4; z <= 4; ++z) {
          if (!holds(x, y, z)) continue;
          int64_t v = keep == 0 ? x : keep == 1 ? y : z;
          true_lo = std::min(true_lo, v);
          true_hi = std::max(true_hi, v);
        }
      }
    }
    if (!feasible) {
      ++infeasible;
      ASSERT_EQ(true_lo, INT64_MAX)
          << "round " << round << ": reported infeasible, but a point exists";
      continue;
    }
    if (true_lo == INT64_MAX) continue;  // no integer point; FM over the rationals may miss it
    ASSERT_LE(lo, true_lo) << "round " << round;
    ASSERT_GE(hi, true_hi) << "round " << round;
  }
  EXPECT_GT(infeasible, 5);
}

// What Project (decide.cc) relies on: leaving out the columns no row has (EliminateNarrow)
// and the rows equal to an earlier one (Scratch::weight: the first stands for them) changes
// nothing, neither the rows left, their order, constants and origins, nor the work spent.
TEST(Eliminate, NarrowWithDuplicatesLeftOutIsTheSame) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int compared = 0, merged = 0;
  for (int round = 0; round < 3000; ++round) {
    const size_t n = 7;  // columns 1 and 4 in no row; column 6 is z
    std::vector<Row> rows;
    const int count = pick(3, 14);
    for (int k = 0; k < count; ++k) {
      std::vector<int64_t> c(n, 0);
      for (size_t j : {0, 2, 3, 5, 6}) c[j] = pick(0, 2) == 0 ? pick(-3, 3) : 0;
      if (k == 0) c[6] = 1;
      rows.push_back(R(c, pick(-9, 9), FactOrigin(static_cast<size_t>(k)), pick(0, 5) == 0));
      if (pick(0, 3) == 0) rows.push_back(rows[static_cast<size_t>(pick(0, k))]);  // a copy
    }
    for (Row& r : rows) {
      if (Normalize(&r) != Norm::kOk) r = R(std::vector<int64_t>(n, 0), 0);
    }
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const Row& r) {
                                return std::all_of(r.c.begin(), r.c.end(),
                                                   [](int64_t x) { return x == 0; });
                              }),
               rows.end());
    if (rows.empty()) continue;
    Matrix wide = ToMatrix(rows, n);
    Scratch s1;
    uint64_t bad1 = 0;
    long work1 = 100000;
    const bool ok1 = Eliminate(&wide, 6, &bad1, &s1, &work1);
    // The same rows once each (the first of equal ones, counted), over columns {0, 2, 3, 5, 6}.
    const int32_t cols[] = {0, 2, 3, 5, 6};
    Matrix narrow;
    narrow.n = 5;
    Scratch s2;
    for (size_t i = 0; i < rows.size(); ++i) {
      size_t first = i;
      for (size_t k = 0; k < i && first == i; ++k) {
        if (rows[k].c == rows[i].c && rows[k].c0 == rows[i].c0 && rows[k].eq == rows[i].eq) {
          first = k;
        }
      }
      if (first != i) {
        size_t at = 0;  // its row in `narrow`
        for (size_t k = 0; k < first; ++k) {
          bool dup = false;
          for (size_t l = 0; l < k && !dup; ++l) {
            dup = rows[l].c == rows[k].c && rows[l].c0 == rows[k].c0 && rows[l].eq == rows[k].eq;
          }
          at += !dup;
        }
        ++s2.weight[at];
        ++merged;
        continue;
      }
      int64_t c[5];
      for (size_t k = 0; k < 5; ++k) c[k] = rows[i].c[static_cast<size_t>(cols[k])];
      narrow.Push(c, rows[i].c0, rows[i].origin, 0, 0, rows[i].eq);
      s2.weight.push_back(1);
    }
    uint64_t bad2 = 0;
    long work2 = 100000;
    const bool ok2 = EliminateNarrow(&narrow, cols, n, 6, &bad2, &s2, &work2);
    ASSERT_EQ(ok1, ok2) << "round " << round;
    ASSERT_EQ(work1, work2) << "round " << round;
    if (!ok1) {
      ASSERT_EQ(bad1, bad2) << "round " << round;
      continue;
    }
    // When no combination step ran (nothing to eliminate after the substitutions, which
    // leaves equal rows apart), the copies are still there on the wide side: then the bounds
    // of z are the same. Otherwise the rows are.
    bool distinct = true;
    for (size_t i = 0; i < wide.size() && distinct; ++i) {
      for (size_t k = 0; k < i && distinct; ++k) {
        distinct = !std::equal(wide.Row(k), wide.Row(k) + n, wide.Row(i));
      }
    }
    ASSERT_EQ(narrow.n, n) << "round " << round;
    if (!distinct) {
      auto bounds = [&](const Matrix& m) {
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        for (size_t i = 0; i < m.size(); ++i) {
          if (m.Row(i)[6] == 1) lo = std::max(lo, -m.c0[i]);
          if (m.Row(i)[6] == -1) hi = std::min(hi, m.c0[i]);
        }
        return std::make_pair(lo, hi);
      };
      ASSERT_EQ(bounds(wide), bounds(narrow)) << "round " << round;
      continue;
    }
    ASSERT_EQ(wide.c, narrow.c) << "round " << round;
    ASSERT_EQ(wide.c0, narrow.c0) << "round " << round;
    ASSERT_EQ(wide.origin, narrow.origin) << "round " << round;
    ++compared;
  }
  EXPECT_GT(compared, 1000);
  EXPECT_GT(merged, 500);
}

}  // namespace
}  // namespace fm
}  // namespace dim
}  // namespace shp
