#include "report/partition_svg.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace cuboid::report {
namespace {

constexpr double kDrawing = 520.0;  // size of the drawing area in px
constexpr double kLegendWidth = 260.0;
constexpr std::size_t kLegendRows = 40;
// Title and summary run across the top; the drawing starts below them and its caption sits
// under it, so no two texts share a line.
constexpr double kTop = 64.0;
constexpr double kCaption = kTop + kDrawing + 22.0;

// Well separated hues for neighbouring ids (golden angle), two lightness bands.
std::string colour(std::size_t id, double lightness_shift = 0.0) {
  const double hue = std::fmod(double(id) * 137.508, 360.0);
  const double light = (id % 2 ? 48.0 : 62.0) + lightness_shift;
  std::ostringstream s;
  s.precision(4);
  s << "hsl(" << hue << "," << 70 << "%," << std::clamp(light, 5.0, 95.0) << "%)";
  return s.str();
}

struct Point {
  double x, y;
};

void polygon(std::ostringstream& out, const std::vector<Point>& pts, const std::string& fill) {
  out << "<polygon points=\"";
  for (const Point& p : pts) out << p.x << "," << p.y << " ";
  out << "\" fill=\"" << fill << "\" stroke=\"#222\" stroke-width=\"0.6\"/>\n";
}

bool never_splits_l(const PartitionResult& r) {
  for (const auto& zone : r.pieces)
    for (const partition::Box& p : zone)
      if (p.lo[2] != 0.0 || p.hi[2] != double(r.dims[2])) return false;
  return true;
}

void draw_face(std::ostringstream& out, const PartitionResult& r) {
  // i downwards (rows of C), j to the right (columns of C).
  const double scale = kDrawing / double(std::max(r.dims[0], r.dims[1]));
  for (std::size_t p = 0; p < r.pieces.size(); ++p)
    for (const partition::Box& b : r.pieces[p]) {
      out << "<rect x=\"" << 20 + b.lo[1] * scale << "\" y=\"" << kTop + b.lo[0] * scale
          << "\" width=\"" << (b.hi[1] - b.lo[1]) * scale << "\" height=\""
          << (b.hi[0] - b.lo[0]) * scale << "\" fill=\"" << colour(p)
          << "\" stroke=\"#222\" stroke-width=\"0.6\"/>\n";
    }
  out << "<text x=\"20\" y=\"" << kCaption
      << "\" font-size=\"12\">C face (i down, j right); every zone spans all of l</text>\n";
}

void draw_isometric(std::ostringstream& out, const PartitionResult& r) {
  const double m = double(r.dims[0]), n = double(r.dims[1]), k = double(r.dims[2]);
  const double c30 = std::cos(M_PI / 6), s30 = 0.5;
  const double explode = 0.12;
  // Screen coordinates before scaling; axis l points up.
  auto project = [&](double x, double y, double z) {
    return Point{(x - y) * c30, (x + y) * s30 - z};
  };
  // Fit the exploded cuboid into the drawing area.
  double min_x = 1e300, max_x = -1e300, min_y = 1e300, max_y = -1e300;
  for (double x : {-explode * m, m * (1 + explode)})
    for (double y : {-explode * n, n * (1 + explode)})
      for (double z : {-explode * k, k * (1 + explode)}) {
        const Point q = project(x, y, z);
        min_x = std::min(min_x, q.x);
        max_x = std::max(max_x, q.x);
        min_y = std::min(min_y, q.y);
        max_y = std::max(max_y, q.y);
      }
  const double scale = kDrawing / std::max(max_x - min_x, max_y - min_y);
  auto screen = [&](double x, double y, double z) {
    const Point q = project(x, y, z);
    return Point{20 + (q.x - min_x) * scale, kTop + (q.y - min_y) * scale};
  };
  struct Item {
    double depth;
    std::size_t owner;
    partition::Box box;
  };
  std::vector<Item> items;
  for (std::size_t p = 0; p < r.pieces.size(); ++p)
    for (const partition::Box& src : r.pieces[p]) {
      // Mirrored on every axis so that the corner (0,0,0), where the NRRP algorithms carve the
      // parts of the small processors, faces the viewer instead of hiding at the back.
      const partition::Box b = {{m - src.hi[0], n - src.hi[1], k - src.hi[2]},
                                {m - src.lo[0], n - src.lo[1], k - src.lo[2]}};
      // Pull each piece away from the centre in proportion to its offset.
      const double dx = explode * ((b.lo[0] + b.hi[0]) / 2 - m / 2);
      const double dy = explode * ((b.lo[1] + b.hi[1]) / 2 - n / 2);
      const double dz = explode * ((b.lo[2] + b.hi[2]) / 2 - k / 2);
      const partition::Box moved = {{b.lo[0] + dx, b.lo[1] + dy, b.lo[2] + dz},
                                    {b.hi[0] + dx, b.hi[1] + dy, b.hi[2] + dz}};
      // Painter's order: far (small i + j, low l) first.
      const double depth = (moved.lo[0] + moved.hi[0]) / m + (moved.lo[1] + moved.hi[1]) / n +
                           (moved.lo[2] + moved.hi[2]) / k;
      items.push_back({depth, p, moved});
    }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.depth < b.depth; });
  for (const Item& it : items) {
    const partition::Box& b = it.box;
    // Visible faces: top (l = hi), front-right (i = hi), front-left (j = hi).
    polygon(out,
            {screen(b.lo[0], b.lo[1], b.hi[2]), screen(b.hi[0], b.lo[1], b.hi[2]),
             screen(b.hi[0], b.hi[1], b.hi[2]), screen(b.lo[0], b.hi[1], b.hi[2])},
            colour(it.owner, 12));
    polygon(out,
            {screen(b.hi[0], b.lo[1], b.lo[2]), screen(b.hi[0], b.hi[1], b.lo[2]),
             screen(b.hi[0], b.hi[1], b.hi[2]), screen(b.hi[0], b.lo[1], b.hi[2])},
            colour(it.owner, -10));
    polygon(out,
            {screen(b.lo[0], b.hi[1], b.lo[2]), screen(b.hi[0], b.hi[1], b.lo[2]),
             screen(b.hi[0], b.hi[1], b.hi[2]), screen(b.lo[0], b.hi[1], b.hi[2])},
            colour(it.owner, 0));
  }
  out << "<text x=\"20\" y=\"" << kCaption
      << "\" font-size=\"12\">Isometric, exploded, seen from the corner (0,0,0):</text>\n"
      << "<text x=\"20\" y=\"" << kCaption + 16
      << "\" font-size=\"12\">i grows to the upper left, j to the upper right, l "
         "downwards</text>\n";
}

}  // namespace

std::string partition_to_svg(const PartitionResult& r, std::size_t max_pieces) {
  std::size_t count = 0;
  for (const auto& z : r.pieces) count += z.size();
  if (count > max_pieces)
    throw std::runtime_error("the picture would draw " + std::to_string(count) + " pieces (limit " +
                             std::to_string(max_pieces) +
                             "): use fewer processors or tiles for --svg");
  const std::size_t rows = std::min(r.pieces.size(), kLegendRows);
  const double height = std::max(kCaption + 30, kTop + 30 + 18.0 * double(rows + 2));
  std::ostringstream out;
  out.precision(5);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kDrawing + kLegendWidth + 40
      << "\" height=\"" << height << "\" font-family=\"sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (never_splits_l(r)) {
    draw_face(out, r);
  } else {
    draw_isometric(out, r);
  }
  // Legend and summary.
  double total_speed = 0.0;
  for (double s : r.speeds) total_speed += s;
  const double lx = kDrawing + 50;
  out << "<text x=\"20\" y=\"24\" font-size=\"14\" font-weight=\"bold\">"
      << partition::to_string(r.algorithm) << " / " << partition::to_string(r.discretization)
      << ", " << r.dims[0] << "x" << r.dims[1] << "x" << r.dims[2] << " tiles, " << r.speeds.size()
      << " processors</text>\n";
  std::size_t most_boxes = 0;
  for (const auto& z : r.pieces) most_boxes = std::max(most_boxes, z.size());
  out << "<text x=\"20\" y=\"44\" font-size=\"12\">sum Hs / sum L(V) = " << r.metrics.ratio
      << ", imbalance " << r.metrics.imbalance << ", at most " << most_boxes
      << " boxes per zone</text>\n";
  for (std::size_t p = 0; p < rows; ++p) {
    const double y = kTop + 12 + 18.0 * double(p);
    out << "<rect x=\"" << lx << "\" y=\"" << y - 11 << "\" width=\"12\" height=\"12\" fill=\""
        << colour(p) << "\" stroke=\"#222\" stroke-width=\"0.6\"/>\n";
    out << "<text x=\"" << lx + 18 << "\" y=\"" << y << "\" font-size=\"12\">P" << p << "  speed "
        << r.speeds[p] << "  share " << 100.0 * r.speeds[p] / total_speed << "%</text>\n";
  }
  if (r.pieces.size() > rows)
    out << "<text x=\"" << lx << "\" y=\"" << kTop + 12 + 18.0 * double(rows)
        << "\" font-size=\"12\">… and " << r.pieces.size() - rows << " more processors</text>\n";
  out << "</svg>\n";
  return out.str();
}

}  // namespace cuboid::report
