// libFuzzer target: the deck parser and --set. The input is a deck, optionally followed by a
// line "%%" and then --set overrides separated by the byte 0x1e (so that an override may hold
// a line break). Anything parse_deck() may do with bad input is throw cuboid::Error; any other
// exception, a crash, a sanitizer report or a deck that breaks the invariants checked below is a
// finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "deck/deck.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

// What every accepted deck guarantees to the stages after it.
void check_invariants(const cuboid::deck::Deck& d) {
  const auto& p = d.problem;
  require(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.tile >= 1);
  const auto tasks =
      cuboid::checked_product({cuboid::ceil_div(p.m, p.tile), cuboid::ceil_div(p.n, p.tile),
                               cuboid::ceil_div(p.k, p.tile)});
  require(tasks && *tasks <= std::int64_t(1e15));
  require(cuboid::checked_product({p.m, p.n}) && cuboid::checked_product({p.m, p.k}) &&
          cuboid::checked_product({p.k, p.n}));
  require(d.platform.memory_budget_mib >= 0 && d.platform.memory_budget_mib <= double(1 << 30));
  require(!d.platform.measure_speeds || d.platform.speeds.empty());
  for (double s : d.platform.speeds) require(s > 0);
  if (d.mpi.grid.size() == 2)
    require(cuboid::checked_product({d.mpi.grid[0], d.mpi.grid[1]}, std::int64_t(1) << 24) &&
            d.mpi.grid[0] >= 1 && d.mpi.grid[1] >= 1);
  for (std::size_t i = 0; i < d.platform.processors.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      require(d.platform.processors[i] != d.platform.processors[j]);
  require(d.run.repetitions >= 1 && d.run.warmup >= 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string text = input;
  std::vector<std::string> sets;
  const auto cut = input.find("\n%%\n");
  if (cut != std::string::npos) {
    text = input.substr(0, cut);
    std::string rest = input.substr(cut + 4);
    std::size_t at = 0;
    while (at <= rest.size()) {
      const auto next = rest.find('\x1e', at);
      sets.push_back(rest.substr(at, next == std::string::npos ? std::string::npos : next - at));
      if (next == std::string::npos) break;
      at = next + 1;
    }
  }
  try {
    const auto d = cuboid::deck::parse_deck(text, "fuzz.toml", sets);
    check_invariants(d);
    (void)d.location("problem.m");
    (void)d.at("platform.processors");
  } catch (const cuboid::Error&) {
    // Bad input, reported as such: fine.
  }
  return 0;
}
