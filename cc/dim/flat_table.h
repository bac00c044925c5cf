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

// A set of pointers to objects that carry their own `hash` member (Atom, Mono, Expr).
template <typename T>
class PtrTable {
 public:
  // The entry with hash `h` for which `eq(entry)` holds, or nullptr.
  template <typename Eq>
  const T* Find(size_t h, Eq eq) const {
    if (slots_.empty()) return nullptr;
    const size_t mask = slots_.size() - 1;
    for (size_t i = SpreadHash(h) & mask;; i = (i + 1) & mask) {
      const T* p = slots_[i];
      if (p == nullptr) return nullptr;
      if (p->hash == h && eq(p)) return p;
    }
  }
  // Adds `p`, which no entry equals.
  void Insert(const T* p) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Place(p);
    ++size_;
  }

 private:
  void Place(const T* p) {
    const size_t mask = slots_.size() - 1;
    size_t i = SpreadHash(p->hash) & mask;
    while (slots_[i] != nullptr) i = (i + 1) & mask;
    slots_[i] = p;
  }
  void Grow() {
    std::vector<const T*> old(slots_.empty() ? 64 : 2 * slots_.size(), nullptr);
    old.swap(slots_);
    for (const T* p : old) {
      if (p != nullptr) Place(p);
    }
  }
  std::vector<const T*> slots_;
  size_t size_ = 0;
};

// A map from `Key` (with `Hash`) to a non-null pointer `V`; a null value marks a free slot.
template <typename Key, typename Hash, typename V>
class PtrValueMap {
 public:
  // The value of `key`, or nullptr.
  V Find(const Key& key) const {
    if (slots_.empty()) return nullptr;
    const size_t mask = slots_.size() - 1;
    for (size_t i = SpreadHash(Hash()(key)) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.value == nullptr) return nullptr;
      if (s.key == key) return s.value;
    }
  }
  // Maps `key`, which has no value yet, to `value` (not null).
  void Insert(const Key& key, V value) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Place(key, value);
    ++size_;
  }
  void Clear() {
    slots_.clear();
    size_ = 0;
  }

 private:
  struct Slot {
    Key key;
    V value;
  };
  void Place(const Key& key, V value) {
    const size_t mask = slots_.size() - 1;
    size_t i = SpreadHash(Hash()(key)) & mask;
    while (slots_[i].value != nullptr) i = (i + 1) & mask;
    slots_[i] = Slot{key, value};
  }
  void Grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : 2 * slots_.size(), Slot{Key{}, nullptr});
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.value != nullptr) Place(s.key, s.value);
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_FLAT_TABLE_H_
