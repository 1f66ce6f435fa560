#include "app/estimates.hpp"

#include <algorithm>
#include "layout/rank_partition.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"

namespace cuboid::app {

double rank_partition_bytes(std::int64_t P, std::int64_t M, std::int64_t N, std::int64_t K,
                            bool aligned, bool automatic) {
  double candidates = 1;
  // Block-cyclic: the structured candidates, nrrp3d and grid, and the 2.5D bands the rank
  // partition builds within its cap of rank zones (taken as at most 100 here).
  if (automatic && !aligned)
    candidates = std::max(8.0, std::min(108.0, layout::kCandidateRankZones / double(P)));
  if (automatic && aligned) {
    for (std::int64_t a = 1; a <= P && a <= M; ++a) {
      if (P % a) continue;
      for (std::int64_t b = 1; b <= P / a && b <= N; ++b)
        if ((P / a) % b == 0 && P / a / b <= K) candidates += 1;
    }
  }
  // Measured peak resident memory of `cuboid simulate` on 10^9 tiles, 2500 to 10^5 ranks: about
  // 0.6 KiB per rank and 100 bytes per rank and candidate (10^4 ranks with 88 candidates: 90 MB).
  const double per_rank = 512.0 + 160.0 * candidates;
  const double tiles =
      aligned ? 64.0 * (double(M) * double(K) + double(K) * double(N) + double(M) * double(N))
              : 16.0 * (double(M) + double(N) + double(K));
  return double(P) * per_rank + tiles;
}

void require_host_memory(double need, const std::string& where, const std::string& what,
                         const std::string& advice) {
  const double have = double(host_memory_available());
  if (have > 0 && need > 0.9 * have)
    throw Error(where + ": " + what + " needs " + human_bytes(need) + " of host memory, but only " +
                human_bytes(have) + " is available: " + advice);
}

}  // namespace cuboid::app
