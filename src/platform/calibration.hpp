#pragma once
// Processor speeds: measured GEMM rates, cached per host, build, processor and size.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "platform/processor.hpp"

namespace cuboid::platform {

struct Speed {
  double gflops = 0;
  std::string source;  // "measured", "cache" or "deck"
};

// The GEMM edge the calibration times: the run's tile, grown to at least 512 (where BLAS
// reaches its steady rate) but never beyond the problem.
std::int64_t calibration_size(std::int64_t tile, std::int64_t m, std::int64_t n, std::int64_t k);

// ${CUBOID_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cuboid}/speeds.json
std::string default_speed_cache_path();

// A string naming this build: a speed measured by another build is not reused.
std::string build_fingerprint();

class SpeedCache {
 public:
  explicit SpeedCache(std::string path);
  std::optional<double> find(const std::string& key) const;
  void store(const std::string& key, double gflops);
  void save() const;  // atomically; failures to write only warn
  const std::string& path() const { return path_; }
  static std::string key(const ProcessorSpec& p, const std::string& precision, std::int64_t size);

 private:
  std::string path_;
  std::vector<std::pair<std::string, double>> entries_;
};

using Measure = std::function<double(std::int64_t size, double max_seconds)>;

// Measures (or, unless `remeasure`, takes from the cache) each processor's rate; what is
// measured goes into the cache. `progress` gets one line per processor.
std::vector<Speed> calibrate(const std::vector<ProcessorSpec>& processors,
                             const std::vector<Measure>& measure, const std::string& precision,
                             std::int64_t size, SpeedCache* cache, bool remeasure,
                             std::ostream& progress);

}  // namespace cuboid::platform
