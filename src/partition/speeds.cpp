#include "partition/speeds.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace cuboid::partition {

std::optional<std::string> speed_problem(const std::vector<double>& speeds) {
  std::ostringstream s;
  if (speeds.empty()) return std::string("no processors: at least one speed is needed");
  for (std::size_t p = 0; p < speeds.size(); ++p)
    if (!std::isfinite(speeds[p]) || !(speeds[p] > 0)) {
      s << "speed " << p << " is " << speeds[p] << ": speeds must be finite and positive";
      return s.str();
    }
  double total = 0.0;
  for (double w : speeds) total += w;
  if (!std::isfinite(total)) return std::string("the sum of the speeds overflows");
  const auto [slowest, fastest] = std::minmax_element(speeds.begin(), speeds.end());
  if (*fastest / *slowest > kMaxSpeedSpread) {
    s << "speeds range from " << *slowest << " to " << *fastest
      << ": more than 12 orders of magnitude apart cannot be partitioned in double precision";
    return s.str();
  }
  return std::nullopt;
}

}  // namespace cuboid::partition
