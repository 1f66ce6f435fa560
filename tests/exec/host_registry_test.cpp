// exec/host_registry: which ranges a lease registers (the union of what it is asked for, in
// whole pages, once), what it shares with another lease, memory pinned by someone else used as
// it is, refusals, and that everything is unregistered when the last lease goes.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "exec/host_registry.hpp"

using namespace cuboid::exec;

namespace {

// A runtime that books registrations like cudaHostRegister: whole pages, overlaps refused.
struct FakeRuntime {
  static inline std::map<std::uintptr_t, std::uintptr_t> registered;  // first page -> end
  static inline std::vector<std::pair<std::uintptr_t, std::uintptr_t>> external;
  static inline int calls = 0, unregistered = 0, refuse = 0;
  static bool reg(void* p, std::size_t bytes) {
    ++calls;
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    if (a % 4096 != 0 || bytes % 4096 != 0) ADD_FAILURE() << "not whole pages";
    if (refuse > 0) {
      --refuse;
      return false;
    }
    for (const auto& [lo, hi] : registered)
      if (lo < a + bytes && a < hi) {
        ADD_FAILURE() << "registered twice";
        return false;
      }
    registered[a] = a + bytes;
    return true;
  }
  static void unreg(void* p) {
    ++unregistered;
    EXPECT_EQ(registered.erase(reinterpret_cast<std::uintptr_t>(p)), 1u);
  }
  static bool pinned(const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (const auto& [lo, hi] : external)
      if (lo <= a && a < hi) return true;
    return false;
  }
  static void reset() {
    registered.clear(), external.clear();
    calls = unregistered = refuse = 0;
  }
};

HostRegistry& registry() {
  static HostRegistry r(PinHooks{&FakeRuntime::reg, &FakeRuntime::unreg, &FakeRuntime::pinned});
  return r;
}

constexpr std::uintptr_t kBase = std::uintptr_t(1) << 32;  // never dereferenced
const void* at(std::uintptr_t offset) { return reinterpret_cast<const void*>(kBase + offset); }
ByteRange range(std::uintptr_t lo, std::uintptr_t hi) { return ByteRange{kBase + lo, kBase + hi}; }

}  // namespace

TEST(HostRegistry, OverlappingAndAliasedRangesAreRegisteredOnceInWholePages) {
  FakeRuntime::reset();
  {
    // A and B the same array, C overlapping its end, and a range apart.
    PinLease lease(registry(),
                   {range(100, 9000), range(100, 9000), range(8000, 12000), range(40000, 41000)});
    EXPECT_EQ(lease.registrations(), 2);
    EXPECT_EQ(lease.refused(), 0);
    EXPECT_EQ(FakeRuntime::registered.size(), 2u);
    EXPECT_EQ(FakeRuntime::registered.at(kBase), kBase + 12288);
    EXPECT_DOUBLE_EQ(lease.registered_bytes(), 12288 + 8192);  // 40000 straddles two pages
    EXPECT_TRUE(lease.covers(at(100), at(12000)));
    EXPECT_TRUE(lease.covers(at(40000), at(41000)));
    EXPECT_FALSE(lease.covers(at(100), at(41000))) << "two registrations, not one range";
    EXPECT_FALSE(lease.covers(at(20000), at(20008)));
  }
  EXPECT_TRUE(FakeRuntime::registered.empty());
  EXPECT_EQ(FakeRuntime::unregistered, 2);
}

TEST(HostRegistry, TwoLeasesShareWhatBothUseAndRegisterOnlyTheGap) {
  FakeRuntime::reset();
  auto first = std::make_unique<PinLease>(registry(), std::vector<ByteRange>{range(0, 8192)});
  {
    PinLease second(registry(), {range(4096, 16384)});
    EXPECT_EQ(second.registrations(), 1) << "only the pages the first lease does not hold";
    EXPECT_EQ(FakeRuntime::registered.size(), 2u);
    EXPECT_TRUE(second.covers(at(4096), at(8192)));
    EXPECT_TRUE(second.covers(at(8192), at(16384)));
    EXPECT_FALSE(second.covers(at(4096), at(16384))) << "across two registrations";
  }
  // The second lease's own piece went; the shared one stays for the first.
  EXPECT_EQ(FakeRuntime::registered.size(), 1u);
  EXPECT_TRUE(first->covers(at(0), at(8192)));
  first.reset();
  EXPECT_TRUE(FakeRuntime::registered.empty());
}

TEST(HostRegistry, MemoryPinnedElsewhereIsUsedAsItIs) {
  FakeRuntime::reset();
  FakeRuntime::external.push_back({kBase, kBase + 65536});
  {
    PinLease lease(registry(), {range(16, 30000)});
    EXPECT_EQ(FakeRuntime::calls, 0);
    EXPECT_TRUE(lease.covers(at(16), at(30000)));
  }
  EXPECT_EQ(FakeRuntime::unregistered, 0);
}

TEST(HostRegistry, ARefusedRangeIsNotCoveredAndTheRestIs) {
  FakeRuntime::reset();
  FakeRuntime::refuse = 1;
  {
    PinLease lease(registry(), {range(0, 4096), range(65536, 70000)});
    EXPECT_EQ(lease.refused(), 1);
    EXPECT_EQ(lease.registrations(), 1);
    EXPECT_FALSE(lease.covers(at(0), at(4096)));
    EXPECT_TRUE(lease.covers(at(65536), at(70000)));
  }
  {
    // Refused beside a piece another lease holds: that piece stays usable.
    PinLease first(registry(), {range(8192, 12288)});
    FakeRuntime::refuse = 1;
    PinLease second(registry(), {range(0, 12288)});
    EXPECT_EQ(second.refused(), 1);
    EXPECT_FALSE(second.covers(at(0), at(4096)));
    EXPECT_TRUE(second.covers(at(8192), at(12288)));
  }
  EXPECT_TRUE(FakeRuntime::registered.empty());
  PinLease none;
  EXPECT_FALSE(none.covers(at(0), at(8)));
}
