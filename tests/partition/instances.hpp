#pragma once
// Seeded random instances for the property tests: speed families and cuboid shapes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace cuboid::partition::testing {

enum class Family { equal, geometric, dominant, two_classes, tiny_and_big, uniform };
inline const std::vector<Family>& all_families() {
  static const std::vector<Family> f = {Family::equal,       Family::geometric,    Family::dominant,
                                        Family::two_classes, Family::tiny_and_big, Family::uniform};
  return f;
}
inline std::string name(Family f) {
  switch (f) {
    case Family::equal:
      return "equal";
    case Family::geometric:
      return "geometric";
    case Family::dominant:
      return "dominant";
    case Family::two_classes:
      return "two-classes";
    case Family::tiny_and_big:
      return "tiny+big";
    case Family::uniform:
      return "uniform";
  }
  return "?";
}

// p drawn log-uniformly in [1, max_p].
inline int draw_p(std::mt19937_64& rng, int max_p) {
  std::uniform_real_distribution<double> u(0.0, std::log(double(max_p) + 0.999));
  return std::clamp(int(std::exp(u(rng))), 1, max_p);
}

inline std::vector<double> speeds(Family f, int p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> w(std::size_t(p), 1.0);
  switch (f) {
    case Family::equal:
      break;
    case Family::geometric: {
      // Ratio r in [1.1, 3], capped so that fastest / slowest stays below 10^6 (a million-fold
      // heterogeneity is already far beyond real platforms).
      const double r = 1.1 + 1.9 * u(rng);
      const double step = std::min(r, std::pow(10.0, 6.0 / std::max(1, p - 1)));
      for (int i = 0; i < p; ++i) w[std::size_t(i)] = std::pow(step, i);
      break;
    }
    case Family::dominant:
      w[std::size_t(rng() % std::uint64_t(p))] = std::pow(10.0, 1.0 + 2.0 * u(rng));
      break;
    case Family::two_classes: {
      const double fast = 2.0 + 48.0 * u(rng);
      const double share = u(rng);
      for (auto& x : w)
        if (u(rng) < share) x = fast;
      break;
    }
    case Family::tiny_and_big: {
      const int big = 1 + int(rng() % 5);
      for (int b = 0; b < big && b < p; ++b)
        w[std::size_t(rng() % std::uint64_t(p))] = std::pow(10.0, 2.0 + 2.0 * u(rng));
      break;
    }
    case Family::uniform:
      for (auto& x : w) x = 0.1 + 9.9 * u(rng);
      break;
  }
  std::shuffle(w.begin(), w.end(), rng);
  return w;
}

enum class Shape { cube, large_k, flat };
inline const std::vector<Shape>& all_shapes() {
  static const std::vector<Shape> s = {Shape::cube, Shape::large_k, Shape::flat};
  return s;
}
inline std::string name(Shape s) {
  switch (s) {
    case Shape::cube:
      return "cube";
    case Shape::large_k:
      return "largeK";
    case Shape::flat:
      return "flat";
  }
  return "?";
}
// Extents in tiles with edge m: cube m^3, largeK m x m x 16m, flat m x m x m/16 (at least 1).
inline std::array<std::int64_t, 3> extent(Shape s, std::int64_t m) {
  switch (s) {
    case Shape::cube:
      return {m, m, m};
    case Shape::large_k:
      return {m, m, 16 * m};
    case Shape::flat:
      return {m, m, std::max<std::int64_t>(1, m / 16)};
  }
  return {m, m, m};
}

}  // namespace cuboid::partition::testing
