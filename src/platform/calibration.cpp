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

#include "kokkos_ext/compat.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"

namespace cuboid::platform {

std::int64_t calibration_size(std::int64_t tile, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::int64_t s = tile;
  while (s < 512) s *= 2;
  return std::max<std::int64_t>(1, std::min({s, std::max({m, n, k})}));
}

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
  return std::string("cuboid-") + CUBOID_VERSION + "-" + CUBOID_GIT_REVISION + "|kokkos-" +
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
                            std::int64_t size) {
  std::ostringstream os;
  os << hostname() << "|" << build_fingerprint() << "|" << p.name << "|threads=" << p.threads << "|"
     << precision << "|gemm=" << size;
  return os.str();
}

std::vector<Speed> calibrate(const std::vector<ProcessorSpec>& processors,
                             const std::vector<Measure>& measure, const std::string& precision,
                             std::int64_t size, SpeedCache* cache, bool remeasure,
                             std::ostream& progress) {
  std::vector<Speed> out;
  bool changed = false;
  for (std::size_t q = 0; q < processors.size(); ++q) {
    const ProcessorSpec& p = processors[q];
    const std::string key = SpeedCache::key(p, precision, size);
    if (cache && !remeasure) {
      if (auto v = cache->find(key)) {
        // Beyond 10^9 GFLOP/s (a zettaflop) no processor measures: the file was edited.
        if (!std::isfinite(*v) || !(*v > 0) || *v > 1e9)
          throw Error("speed cache '" + cache->path() + "': the entry for " + p.name + " (" +
                      precision + ", " + std::to_string(size) + "^3) is " +
                      [&] {
                        std::ostringstream os;
                        os << *v;
                        return os.str();
                      }() +
                      " GFLOP/s, not a measured speed: delete the file or run `cuboid calibrate " +
                      "--fresh`");
        progress << "calibrate: " << p.name << " " << *v << " GFLOP/s (cached, " << size << "^3 "
                 << precision << " gemm)\n";
        out.push_back(Speed{*v, "cache"});
        continue;
      }
    }
    progress << "calibrate: " << p.name << " timing " << size << "^3 " << precision << " gemm ... "
             << std::flush;
    const double g = measure[q](size, 0.25);
    progress << g << " GFLOP/s\n";
    if (!(g > 0)) throw std::runtime_error("calibration of " + p.name + " measured no speed");
    out.push_back(Speed{g, "measured"});
    if (cache) cache->store(key, g), changed = true;
  }
  if (cache && changed) cache->save();
  return out;
}

}  // namespace cuboid::platform
