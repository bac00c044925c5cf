// Open-addressing hash tables (linear probing, power-of-two capacity, at most half full) for a
// scope's interning and memo tables. Unlike std::unordered_*, they allocate nothing per entry:
// node allocation and freeing were about a third of Scope::Create's time (issue 14's
// scope10_create). Entries are never erased one by one, only all at once (Clear).
#ifndef SHAPEPOLY_CC_DIM_FLAT_TABLE_H_
#define SHAPEPOLY_CC_DIM_FLAT_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace shp {
namespace dim {

// The slot index of hash `h`: the callers' hashes mix pointers and small integers, whose low
// bits alone (the mask) would cluster.
inline size_t SpreadHash(size_t h) {
  h ^= h >> 31;
  h *= 0x9e3779b97f4a7c15ULL;
  return h ^ (h >> 29);
}

// The probing both tables share: `Slot`s in a power-of-two vector, a slot free when
// `Traits::IsFree(slot)` (a new one is `Traits::FreeSlot()`), placed by `Traits::HashOf(slot)`.
template <typename Slot, typename Traits>
class OpenTable {
 public:
  // The slot for hash `h` for which `match(slot)` holds, or nullptr.
  template <typename Match>
  const Slot* Find(size_t h, Match match) const {
    if (slots_.empty()) return nullptr;
    const size_t mask = slots_.size() - 1;
    for (size_t i = SpreadHash(h) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (Traits::IsFree(s)) return nullptr;
      if (match(s)) return &s;
    }
  }
  // Adds `s`, which no entry matches.
  void Insert(const Slot& s) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Place(s);
    ++size_;
  }
  void Clear() {
    slots_.clear();
    size_ = 0;
  }

 private:
  void Place(const Slot& s) {
    const size_t mask = slots_.size() - 1;
    size_t i = SpreadHash(Traits::HashOf(s)) & mask;
    while (!Traits::IsFree(slots_[i])) i = (i + 1) & mask;
    slots_[i] = s;
  }
  void Grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : 2 * slots_.size(), Traits::FreeSlot());
    old.swap(slots_);
    for (const Slot& s : old) {
      if (!Traits::IsFree(s)) Place(s);
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// A set of pointers to objects that carry their own `hash` member (Atom, Mono, Expr).
template <typename T>
class PtrTable {
 public:
  // The entry with hash `h` for which `eq(entry)` holds, or nullptr.
  template <typename Eq>
  const T* Find(size_t h, Eq eq) const {
    const T* const* slot = table_.Find(h, [&](const T* p) { return p->hash == h && eq(p); });
    return slot ? *slot : nullptr;
  }
  // Adds `p`, which no entry equals.
  void Insert(const T* p) { table_.Insert(p); }

 private:
  struct Traits {
    static const T* FreeSlot() { return nullptr; }
    static bool IsFree(const T* p) { return p == nullptr; }
    static size_t HashOf(const T* p) { return p->hash; }
  };
  OpenTable<const T*, Traits> table_;
};

// A map from `Key` (with `Hash`) to a non-null pointer `V`; a null value marks a free slot.
template <typename Key, typename Hash, typename V>
class PtrValueMap {
 public:
  // The value of `key`, or nullptr.
  V Find(const Key& key) const {
    const Slot* slot = table_.Find(Hash()(key), [&](const Slot& s) { return s.key == key; });
    return slot ? slot->value : nullptr;
  }
  // Maps `key`, which has no value yet, to `value` (not null).
  void Insert(const Key& key, V value) { table_.Insert(Slot{key, value}); }
  void Clear() { table_.Clear(); }

 private:
  struct Slot {
    Key key;
    V value;
  };
  struct Traits {
    static Slot FreeSlot() { return Slot{Key{}, nullptr}; }
    static bool IsFree(const Slot& s) { return s.value == nullptr; }
    static size_t HashOf(const Slot& s) { return Hash()(s.key); }
  };
  OpenTable<Slot, Traits> table_;
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_FLAT_TABLE_H_
