// cuboid from C++: C <- alpha A B + beta C with a cuboid::Context, checked against a naive loop.
//   cuboid-example-cpp [PROCESSORS [M N K]]     e.g. cuboid-example-cpp host,staged 512 448 384
// Prints the time of the first call (which measures the processors' speeds when there is more
// than one and none are cached) and of a second one; exits 1 when the product is wrong, 2 when
// cuboid reports an error.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuboid/cuboid.hpp>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Values in [-1, 1) from a fixed linear congruential sequence: the same matrices every run.
std::vector<double> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::vector<double> x(std::size_t(rows * cols));
  for (auto& v : x) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    v = double(seed >> 11) / double(1ULL << 52) - 1.0;
  }
  return x;
}

// How many elements of C differ from alpha A B + beta C0, computed by a naive loop, by more than
// the rounding of either computation allows: (2k + 2) eps (|alpha| |A||B| + |beta| |C0|).
std::int64_t wrong_elements(std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                            const std::vector<double>& A, const std::vector<double>& B, double beta,
                            const std::vector<double>& C0, const std::vector<double>& C) {
  const double eps = std::numeric_limits<double>::epsilon();
  std::int64_t wrong = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double ab = 0, ab_abs = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        const double p = A[std::size_t(i + l * m)] * B[std::size_t(l + j * k)];
        ab += p;
        ab_abs += std::fabs(p);
      }
      const std::size_t at = std::size_t(i + j * m);
      const double want = alpha * ab + beta * C0[at];
      const double bound =
          double(2 * k + 2) * eps * (std::fabs(alpha) * ab_abs + std::fabs(beta * C0[at]));
      if (!(std::fabs(C[at] - want) <= bound)) ++wrong;
    }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string processors = argc > 1 ? argv[1] : "host";
  const std::int64_t m = argc > 4 ? std::atoll(argv[2]) : 512;
  const std::int64_t n = argc > 4 ? std::atoll(argv[3]) : 448;
  const std::int64_t k = argc > 4 ? std::atoll(argv[4]) : 384;
  if (m <= 0 || n <= 0 || k <= 0) {
    std::fprintf(stderr, "usage: %s [PROCESSORS [M N K]] (positive sizes)\n", argv[0]);
    return 2;
  }
  const double alpha = 1.5, beta = -0.5;
  const auto A = random_matrix(m, k, 1), B = random_matrix(k, n, 2), C0 = random_matrix(m, n, 3);

  cuboid::ContextOptions options;
  std::stringstream list(processors);
  for (std::string name; std::getline(list, name, ',');) options.processors.push_back(name);
  try {
    cuboid::Context context(options);
    double seconds[2], calibration_s = 0;
    std::int64_t wrong = 0;
    for (int call = 0; call < 2; ++call) {
      std::vector<double> C = C0;
      const auto t0 = std::chrono::steady_clock::now();
      context.gemm(cuboid::Op::none, cuboid::Op::none, m, n, k, alpha, A.data(), m, B.data(), k,
                   beta, C.data(), m);
      seconds[call] = seconds_since(t0);
      if (call == 0) calibration_s = context.last_call().calibration_s;
      wrong += wrong_elements(m, n, k, alpha, A, B, beta, C0, C);
    }
    const double gflops = cuboid::gemm_flops(cuboid::ScalarType::float64, m, n, k) * 1e-9;
    std::printf(
        "cuboid-example-cpp: %lldx%lldx%lld on %s: first call %.4f s (%.4f s of it "
        "calibrating), second %.4f s (%.2f GFLOP/s, %s)\n",
        (long long)m, (long long)n, (long long)k, processors.c_str(), seconds[0], calibration_s,
        seconds[1], gflops / seconds[1],
        context.last_call().direct ? "one GEMM on the host" : "partitioned");
    if (wrong > 0) {
      std::printf("cuboid-example-cpp: WRONG: %lld elements outside the rounding bound\n",
                  (long long)wrong);
      return 1;
    }
    std::printf("cuboid-example-cpp: correct: every element within the rounding bound\n");
  } catch (const cuboid::KeyedError& e) {
    std::fprintf(stderr, "cuboid-example-cpp: %s (argument %s)\n", e.what(), e.key.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuboid-example-cpp: %s\n", e.what());
    return 2;
  }
  return 0;
}
