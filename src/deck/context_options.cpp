#include "deck/context_options.hpp"

#include <cstdlib>
#include <sstream>

namespace cuboid::deck {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

EnvironmentOptions options_from_environment() {
  EnvironmentOptions e;
  ContextOptions& o = e.context;
  if (const char* p = std::getenv("CUBOID_DECK"); p && *p) {
    e.deck = load_deck(p);
    e.settings = product_settings(*e.deck);
    const ProductSettings& s = *e.settings;
    o.processors = s.processors;
    o.speeds = s.speeds;
    if (!s.use_speed_cache) o.speed_cache = "";
    o.memory_budget_mib = s.memory_budget_mib;
    o.register_host = s.register_host;
    o.algorithm = s.algorithm;
    o.discretization = s.discretization;
  }
  if (const char* p = std::getenv("CUBOID_PROCESSORS"); p && *p) {
    o.processors = split_list(p);
    o.speeds.clear();  // a deck's speeds were for its own processors
  }
  return e;
}

}  // namespace cuboid::deck
