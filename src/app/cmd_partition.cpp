#include "app/commands.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "partition/speeds.hpp"
#include "report/partition_json.hpp"
#include "report/partition_svg.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"

namespace cuboid::app {
namespace {

using Options = PartitionOptions;

std::vector<std::string> split_numbers(const std::string& text) {
  std::string s = text;
  for (char& c : s)
    if (c == ',' || c == ';') c = ' ';
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string tok; in >> tok;) out.push_back(tok);
  return out;
}

double parse_double(const std::string& tok, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(tok, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != tok.size()) throw std::runtime_error(what + ": '" + clip(tok) + "' is not a number");
  return v;
}

std::array<std::int64_t, 3> parse_dims(const std::string& text) {
  const auto toks = split_numbers(text);
  if (toks.size() != 3)
    throw std::runtime_error("--dims wants three tile counts M,N,K, got '" + clip(text) + "'");
  std::array<std::int64_t, 3> d{};
  for (int i = 0; i < 3; ++i) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(toks[std::size_t(i)], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != toks[std::size_t(i)].size() || v < 1)
      throw std::runtime_error("--dims: '" + clip(toks[std::size_t(i)]) +
                               "' is not a positive whole number of tiles");
    d[std::size_t(i)] = v;
  }
  return d;
}

std::vector<double> parse_speeds(const std::string& arg) {
  std::string text = arg;
  if (!arg.empty() && arg[0] == '@')
    text = read_input_file(arg.substr(1), std::size_t(256) << 20, "the speeds (--speeds @FILE)");
  std::vector<double> out;
  for (const auto& tok : split_numbers(text)) out.push_back(parse_double(tok, "--speeds"));
  if (out.empty()) throw std::runtime_error("--speeds: no speed given");
  return out;
}

void print_table(const report::PartitionResult& r, std::int64_t rows, std::ostream& out) {
  const auto& m = r.metrics;
  out << fmt::format("cuboid {}x{}x{} tiles, {} processors, {} / {}\n", r.dims[0], r.dims[1],
                     r.dims[2], r.speeds.size(), partition::to_string(r.algorithm),
                     partition::to_string(r.discretization));
  out << fmt::format("{:>7} {:>10} {:>13} {:>13} {:>7} {:>12} {:>12} {:>7}\n", "proc", "speed",
                     "target", "volume", "pieces", "Hs", "L(V)", "Hs/L");
  for (std::size_t p = 0; p < r.speeds.size() && std::int64_t(p) < rows; ++p) {
    const auto& z = m.zones[p];
    out << fmt::format("{:>7} {:>10.4g} {:>13.1f} {:>13.1f} {:>7} {:>12.1f} {:>12.1f} {:>7.3f}\n",
                       p, z.speed, z.target_volume, z.volume, r.pieces[p].size(), z.hs,
                       z.lower_bound, z.lower_bound > 0 ? z.hs / z.lower_bound : 0.0);
  }
  if (std::int64_t(r.speeds.size()) > rows)
    out << fmt::format("{:>7} ({} more processors not shown; --rows or --json for all)\n", "...",
                       std::int64_t(r.speeds.size()) - rows);
  out << fmt::format(
      "total: Hs {:.1f}, L {:.1f}, Hs/L {:.4f}, Hs/3V^(2/3) {:.4f}, imbalance {:.3g}, worst zone "
      "Hs/L {:.4f}\n",
      m.hs_total, m.lower_bound_total, m.ratio, m.ratio_plain, m.imbalance, m.worst_zone_ratio);
}

std::string names(const std::vector<std::string_view>& v) {
  std::string s;
  for (auto n : v) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

void run(const Options& o) {
  // Output paths first: a bad one must not cost the partition.
  if (o.json_given) check_output_path("--json", o.json);
  if (o.svg_given) check_output_path("--svg", o.svg);
  if (o.json_given && o.svg_given && o.json == o.svg)
    throw std::runtime_error("--json and --svg name the same file '" + clip(o.json) + "'");
  const auto dims = parse_dims(o.dims);
  const auto speeds = parse_speeds(o.speeds);
  const auto alg = partition::parse_algorithm(o.algorithm);
  if (!alg)
    throw std::runtime_error("--algorithm: unknown algorithm '" + clip(o.algorithm) +
                             "' (choose from: " + names(partition::algorithm_names()) + ")");
  const auto disc = partition::parse_discretization(o.discretize);
  if (!disc)
    throw std::runtime_error("--discretize: unknown discretization '" + clip(o.discretize) +
                             "' (choose from: " + names(partition::discretization_names()) + ")");
  const std::string speeds_flag = "--speeds " + clip(o.speeds, 60);
  if (const auto problem = partition::speed_problem(speeds))
    throw std::runtime_error(speeds_flag + ": " + *problem);
  const auto tasks = checked_product({dims[0], dims[1], dims[2]}, std::int64_t(4e18));
  if (!tasks) throw std::runtime_error("--dims " + clip(o.dims) + ": more than 4e18 tile tasks");
  if (std::int64_t(speeds.size()) > *tasks && *disc != partition::Discretization::none)
    throw std::runtime_error(speeds_flag + ": " + std::to_string(speeds.size()) +
                             " processors but only " + std::to_string(*tasks) +
                             " tile tasks in --dims " + clip(o.dims));
  report::PartitionResult result;
  try {
    result = report::compute_partition(dims, *alg, *disc, speeds);
  } catch (const partition::TooLarge& e) {
    throw std::runtime_error("--discretize " + o.discretize + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("--algorithm " + clip(o.algorithm) + " on --dims " + clip(o.dims) +
                             ": " + e.what());
  }
  // Everything is rendered before any file is touched.
  std::vector<OutputFile> files;
  if (o.json_given)
    files.push_back({"--json", o.json, report::partition_to_json(result).dump() + "\n"});
  if (o.svg_given) {
    try {
      files.push_back({"--svg", o.svg, report::partition_to_svg(result)});
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("--svg: ") + e.what());
    }
  }
  write_outputs(files);
  print_table(result, o.rows, std::cout);
}

}  // namespace

void partition_command(const PartitionOptions& options) { run(options); }

}  // namespace cuboid::app
