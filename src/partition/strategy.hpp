#pragma once
// The partition algorithms and discretisations, by name, and the calls the rest of cuboid makes.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "partition/box.hpp"
#include "partition/cut_tree.hpp"

namespace cuboid::partition {

enum class Algorithm { nrrp3d, nrrp3d_2mode, nrrp2d, column, slab, grid };
enum class Discretization { none, rounded, precise, stepped };

// A discretisation refused because it would need memory or time out of proportion with the
// cuboid (PRECISE hands out every tile next to a cut one by one); the message says what to change.
struct TooLarge : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Names as written in decks and on the command line: "nrrp3d", "nrrp3d-2mode", "nrrp2d",
// "column", "slab", "grid"; "none", "rounded", "precise", "stepped".
std::string_view to_string(Algorithm a);
std::string_view to_string(Discretization d);
std::optional<Algorithm> parse_algorithm(std::string_view name);
std::optional<Discretization> parse_discretization(std::string_view name);
std::vector<std::string_view> algorithm_names();
std::vector<std::string_view> discretization_names();

// True for the algorithms that never split the inner dimension (every zone spans [0,K)).
bool is_2d(Algorithm a);

// One continuous zone per processor, in the order of `speeds`, exactly covering the cuboid
// with volumes proportional to speed. Throws std::invalid_argument with a readable message on
// bad input (no speeds, a speed that is not finite and positive, an empty cuboid).
std::vector<Zone> partition_continuous(Algorithm a, const std::vector<double>& speeds,
                                       const Extent& cuboid);

// The tree of cuts behind partition_continuous (same validation): what `stepped` follows.
CutTree partition_tree(Algorithm a, const std::vector<double>& speeds, const Extent& cuboid);

// Exact tiling of [0,M)x[0,N)x[0,K) with one zone per processor, each merged into few maximal
// boxes, from continuous zones. `d` must be rounded or precise (stepped needs the algorithm:
// partition_tiles). Throws std::invalid_argument when there are more
// processors than tasks or the input is malformed. When every continuous box spans [0,K), the
// tiles keep spanning it (PRECISE then counts C tiles, each worth K tasks).
std::vector<TileZone> discretize(Discretization d, const std::vector<Zone>& zones,
                                 const std::vector<double>& speeds, const TileExtent& tiles);

// partition_continuous followed by discretize: what the engine calls. PRECISE and STEPPED count C
// tiles for the 2D algorithms (is_2d) and tile tasks for the others; both give every processor
// exactly its exact_counts share. STEPPED (stepped.hpp) redoes the algorithm's cuts on whole
// tiles and makes each one exact with a one-layer step.
std::vector<TileZone> partition_tiles(Algorithm a, Discretization d,
                                      const std::vector<double>& speeds, const TileExtent& tiles);

// One zone per processor of the given speeds: partition_tiles, except that with fewer units than
// processors (tile tasks for the 3D algorithms, C tiles for the 2D ones) the fastest processor
// takes the whole cuboid and the others get empty zones (a small piece of a distributed run).
std::vector<TileZone> processor_zones(Algorithm a, Discretization d,
                                      const std::vector<double>& speeds, const TileExtent& tiles);

}  // namespace cuboid::partition
