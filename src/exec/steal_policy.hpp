#pragma once
// How a run shares out the plan's steps (the deck's run.schedule): plain C++, so that the deck
// names it without the scheduler.
#include <optional>
#include <string_view>
#include <vector>

namespace cuboid::exec {

enum class StealPolicy {
  static_plan,  // every processor runs its own steps, nothing moves (the default)
  random,       // a random victim's last unstarted unit (the paper's RandSteal)
  cheapest,     // the unstarted unit with the fewest bytes to move per flop (EffectiveSteal)
};
std::optional<StealPolicy> parse_steal_policy(std::string_view name);
std::string_view to_string(StealPolicy s);
std::vector<std::string_view> steal_policy_names();

}  // namespace cuboid::exec
