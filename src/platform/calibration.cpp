#include "platform/calibration.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "kokkos_ext/compat.hpp"
#include "util/build_info.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"

namespace cuboid::platform {

std::string default_speed_cache_path() {
  if (const char* d = std::getenv("CUBOID_CACHE_DIR"); d && *d)
    return std::string(d) + "/speeds.json";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/cuboid/speeds.json";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/cuboid/speeds.json";
  return ".cuboid-speeds.json";
}

std::string build_fingerprint() {
  return std::string("cuboid-") + CUBOID_VERSION + "-" + build_info().git_describe + "|kokkos-" +
         kokkos_ext::kokkos_version_string() + "|" + CUBOID_COMPILER + "|" + CUBOID_BUILD_TYPE;
}

SpeedCache::SpeedCache(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return;
  try {
    // A cache is a few kilobytes; a FIFO or a huge file at its path is not one.
    nlohmann::json j =
        nlohmann::json::parse(read_input_file(path_, std::size_t(16) << 20, "the speed cache"));
    for (auto& [k, v] : j.at("speeds").items()) entries_.emplace_back(k, v.get<double>());
  } catch (const std::exception& e) {
    std::cerr << "cuboid: warning: ignoring unreadable speed cache " << clip(path_, 200) << " ("
              << clip(e.what(), 200) << ")\n";
    entries_.clear();
  }
}

std::optional<double> SpeedCache::find(const std::string& key) const {
  for (const auto& [k, v] : entries_)
    if (k == key) return v;
  return std::nullopt;
}

void SpeedCache::store(const std::string& key, double gflops) {
  for (auto& [k, v] : entries_)
    if (k == key) {
      v = gflops;
      return;
    }
  entries_.emplace_back(key, gflops);
}

void SpeedCache::save() const {
  nlohmann::json j;
  j["format"] = "cuboid speed cache 1";
  j["speeds"] = nlohmann::json::object();
  for (const auto& [k, v] : entries_) j["speeds"][k] = v;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  const std::string tmp = path_ + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) {
      std::cerr << "cuboid: warning: could not write the speed cache " << path_ << "\n";
      return;
    }
  }
  std::filesystem::rename(tmp, path_, ec);
  if (ec)
    std::cerr << "cuboid: warning: could not write the speed cache " << path_ << ": "
              << ec.message() << "\n";
}

std::string SpeedCache::key(const ProcessorSpec& p, const std::string& precision,
                            const std::string& context) {
  std::ostringstream os;
  os << hostname() << "|" << build_fingerprint() << "|" << p.name << "|threads=" << p.threads;
  if (p.link_gbs > 0) os << "|link=" << p.link_gbs;
  if (p.copy_jitter_us > 0) os << "|jitter=" << p.copy_jitter_us;
  if (p.kind != ProcessorKind::host && !p.register_host) os << "|staging-only";
  if (p.emulated_gflops > 0) os << "|timing=" << p.emulated_gflops;
  os << "|" << precision << "|" << context;
  return os.str();
}

std::vector<Speed> calibrate(const std::vector<ProcessorSpec>& processors,
                             const std::string& precision, const std::string& context,
                             const MeasureAll& measure, SpeedCache* cache, bool remeasure,
                             std::ostream& progress) {
  // Rates measured together belong together: the cache answers for all or for none.
  std::string together = "with=";
  for (const auto& p : processors) together += p.name + ",";
  const std::string ctx = together + "|" + context;
  std::vector<Speed> out;
  // Speeds are kept in the plan's unit, 2mnk per second whatever the type; a complex GEMM's
  // rate is shown as LAPACK counts it, 8mnk.
  const double shown = precision.rfind("complex", 0) == 0 ? 4.0 : 1.0;
  if (cache && !remeasure) {
    for (const auto& p : processors)
      if (auto v = cache->find(SpeedCache::key(p, precision, ctx))) {
        // Beyond 10^9 GFLOP/s (a zettaflop) no processor measures: the file was edited.
        if (!std::isfinite(*v) || !(*v > 0) || *v > 1e9) {
          std::ostringstream os;
          os << *v;
          throw Error("speed cache '" + cache->path() + "': the entry for " + p.name + " (" +
                      precision + ") is " + os.str() +
                      " GFLOP/s, not a measured speed: delete the file or run `cuboid calibrate "
                      "--fresh`");
        }
        out.push_back(Speed{*v, "cache"});
      }
    if (out.size() == processors.size()) {
      for (std::size_t q = 0; q < out.size(); ++q)
        progress << "calibrate: " << processors[q].name << " " << shown * out[q].gflops
                 << " GFLOP/s (cached)\n";
      return out;
    }
    out.clear();
  }
  progress << "calibrate: timing the processors together through the engine (" << precision
           << ") ..." << std::flush;
  const std::vector<double> g = measure();
  progress << "\n";
  if (g.size() != processors.size())
    throw std::logic_error("calibration returned " + std::to_string(g.size()) + " rates for " +
                           std::to_string(processors.size()) + " processors");
  for (std::size_t q = 0; q < processors.size(); ++q) {
    if (!(g[q] > 0))
      throw std::runtime_error("calibration of " + processors[q].name + " measured no speed");
    progress << "calibrate: " << processors[q].name << " " << shown * g[q]
             << " GFLOP/s (measured)\n";
    out.push_back(Speed{g[q], "measured"});
    if (cache) cache->store(SpeedCache::key(processors[q], precision, ctx), g[q]);
  }
  if (cache) cache->save();
  return out;
}

}  // namespace cuboid::platform
