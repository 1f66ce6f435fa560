#pragma once
// The library context's options from the environment of a process that did not choose them: a
// preloaded p?gemm_ or BLAS drop-in. CUBOID_DECK names a deck whose [platform] and [partition]
// set the processors, speeds, cache use, memory budget and partition, as they set `cuboid run`'s;
// CUBOID_PROCESSORS (a comma-separated list) wins over the deck's processors.
#include <cuboid/cuboid.hpp>

#include <optional>
#include <string>
#include <vector>

#include "deck/deck.hpp"

namespace cuboid::deck {

struct EnvironmentOptions {
  ContextOptions context;
  std::optional<Deck> deck;  // the deck CUBOID_DECK named, for a caller's other settings
  std::optional<ProductSettings> settings;
};

// Throws KeyedError (a deck's key, or the variable's name) on a bad deck or list.
EnvironmentOptions options_from_environment();

// "a,b,,c" -> {"a", "b", "c"}: a list as CUBOID_PROCESSORS gives it.
std::vector<std::string> split_list(const std::string& s);

}  // namespace cuboid::deck
