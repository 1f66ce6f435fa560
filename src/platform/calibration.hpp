#pragma once
// Processor speeds: measured GEMM rates, cached per host, build, processor and what they were
// measured on.
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
  // The processor (with its threads and link), the precision and `context`: what was measured
  // with it (the problem, the other processors).
  static std::string key(const ProcessorSpec& p, const std::string& precision,
                         const std::string& context);

 private:
  std::string path_;
  std::vector<std::pair<std::string, double>> entries_;
};

// Measures all processors at once (they are timed running together): GFLOP/s, one per processor.
using MeasureAll = std::function<std::vector<double>()>;

// Takes every processor's rate from the cache (unless `remeasure`) when all are there;
// otherwise measures them together and stores what was measured. `progress` gets one line per
// processor.
std::vector<Speed> calibrate(const std::vector<ProcessorSpec>& processors,
                             const std::string& precision, const std::string& context,
                             const MeasureAll& measure, SpeedCache* cache, bool remeasure,
                             std::ostream& progress);

}  // namespace cuboid::platform
