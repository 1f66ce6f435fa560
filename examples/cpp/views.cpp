// cuboid from C++ on Kokkos views (<cuboid/kokkos.hpp>): C <- alpha A B + beta C with column-major
// (LayoutLeft) and row-major (LayoutRight) views, and into a block of a larger C, none of them
// copied; each checked against a naive loop. With a device among the processors (the default
// processors of a CUDA or HIP build), also on views in the device's memory.
//   cuboid-example-cpp-views [PROCESSORS [M N K]]     e.g. cuboid-example-cpp-views host,staged
// Exits 1 when a product is wrong, 2 when cuboid reports an error.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuboid/kokkos.hpp>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace {

using Range = std::pair<std::int64_t, std::int64_t>;

// Element (i, j) of matrix `id`, in [-1, 1): the same matrices whatever the layout.
double value(int id, std::int64_t i, std::int64_t j) {
  return std::sin(double(id) * 0.7 + double(i) * 0.37 + double(j) * 0.11);
}

template <class View>
void fill(const View& v, int id) {
  for (std::int64_t j = 0; j < std::int64_t(v.extent(1)); ++j)
    for (std::int64_t i = 0; i < std::int64_t(v.extent(0)); ++i) v(i, j) = value(id, i, j);
}

// How many elements of C differ from alpha A B + beta C0 (A, B, C0 filled as matrices 1, 2, 3)
// by more than the rounding of either computation allows: (2k + 2) eps (|alpha| |A||B| + |beta|
// |C0|).
template <class View>
std::int64_t wrong_elements(std::int64_t k, double alpha, double beta, const View& C) {
  const double eps = std::numeric_limits<double>::epsilon();
  std::int64_t wrong = 0;
  for (std::int64_t j = 0; j < std::int64_t(C.extent(1)); ++j)
    for (std::int64_t i = 0; i < std::int64_t(C.extent(0)); ++i) {
      double ab = 0, ab_abs = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        const double p = value(1, i, l) * value(2, l, j);
        ab += p;
        ab_abs += std::fabs(p);
      }
      const double c0 = value(3, i, j), want = alpha * ab + beta * c0;
      const double bound =
          double(2 * k + 2) * eps * (std::fabs(alpha) * ab_abs + std::fabs(beta * c0));
      if (!(std::fabs(C(i, j) - want) <= bound)) ++wrong;
    }
  return wrong;
}

// One product on views of `Layout` (host memory), the views as given or a block of a larger C.
template <class Layout>
std::int64_t multiply(cuboid::Context& context, std::int64_t m, std::int64_t n, std::int64_t k,
                      bool block) {
  const double alpha = 1.5, beta = -0.5;
  Kokkos::View<double**, Layout, Kokkos::HostSpace> A("A", m, k), B("B", k, n),
      bigC("C", m + (block ? 7 : 0), n + (block ? 5 : 0));
  const auto C = Kokkos::subview(bigC, Range(block ? 3 : 0, (block ? 3 : 0) + m),
                                 Range(block ? 2 : 0, (block ? 2 : 0) + n));
  fill(A, 1), fill(B, 2), fill(C, 3);
  cuboid::gemm(context, Kokkos::DefaultHostExecutionSpace(), cuboid::Op::none, cuboid::Op::none,
               alpha, A, B, beta, C);
  return wrong_elements(k, alpha, beta, C);
}

// The same on views in the memory of Kokkos' default execution space (a device's), multiplied
// where they lie; C comes back to the host only to be checked.
std::int64_t multiply_on_device(cuboid::Context& context, std::int64_t m, std::int64_t n,
                                std::int64_t k) {
  using Space = Kokkos::DefaultExecutionSpace;
  const double alpha = 1.5, beta = -0.5;
  Kokkos::View<double**, Kokkos::LayoutLeft, Space::memory_space> A("A", m, k), B("B", k, n),
      C("C", m, n);
  auto hA = Kokkos::create_mirror_view(A), hB = Kokkos::create_mirror_view(B),
       hC = Kokkos::create_mirror_view(C);
  fill(hA, 1), fill(hB, 2), fill(hC, 3);
  Kokkos::deep_copy(A, hA), Kokkos::deep_copy(B, hB), Kokkos::deep_copy(C, hC);
  cuboid::gemm(context, Space(), cuboid::Op::none, cuboid::Op::none, alpha, A, B, beta, C);
  Kokkos::deep_copy(hC, C);
  return wrong_elements(k, alpha, beta, hC);
}

int run(const std::string& processors, std::int64_t m, std::int64_t n, std::int64_t k) {
  cuboid::ContextOptions options;
  std::stringstream list(processors);
  for (std::string name; std::getline(list, name, ',');) options.processors.push_back(name);
  cuboid::Context context(options);
  std::int64_t wrong = 0;
  wrong += multiply<Kokkos::LayoutLeft>(context, m, n, k, false);
  wrong += multiply<Kokkos::LayoutRight>(context, m, n, k, false);
  wrong += multiply<Kokkos::LayoutLeft>(context, m, n, k, true);
  wrong += multiply<Kokkos::LayoutRight>(context, m, n, k, true);
  std::string where = "LayoutLeft, LayoutRight and blocks of larger views in host memory";
  constexpr bool device_memory =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                  Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  bool device = false;
  for (const auto& name : context.processor_names())
    device = device || (name != "host" && name.rfind("staged", 0) != 0);
  if (device_memory && device) {
    wrong += multiply_on_device(context, m, n, k);
    where += ", and LayoutLeft views in " +
             std::string(Kokkos::DefaultExecutionSpace::memory_space::name()) + " memory";
  }
  std::printf("cuboid-example-cpp-views: %lldx%lldx%lld on %s: %s\n", (long long)m, (long long)n,
              (long long)k, processors.c_str(), where.c_str());
  if (wrong > 0) {
    std::printf("cuboid-example-cpp-views: WRONG: %lld elements outside the rounding bound\n",
                (long long)wrong);
    return 1;
  }
  std::printf("cuboid-example-cpp-views: correct: every element within the rounding bound\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string processors = argc > 1 ? argv[1] : "";
  const std::int64_t m = argc > 4 ? std::atoll(argv[2]) : 300;
  const std::int64_t n = argc > 4 ? std::atoll(argv[3]) : 260;
  const std::int64_t k = argc > 4 ? std::atoll(argv[4]) : 280;
  if (m <= 0 || n <= 0 || k <= 0) {
    std::fprintf(stderr, "usage: %s [PROCESSORS [M N K]] (positive sizes)\n", argv[0]);
    return 2;
  }
  // An application that uses Kokkos initialises it (cuboid then uses it) and finalises it
  // after its contexts and views are gone.
  Kokkos::initialize();
  int status = 2;
  try {
    status = run(processors, m, n, k);
  } catch (const cuboid::KeyedError& e) {
    std::fprintf(stderr, "cuboid-example-cpp-views: %s (argument %s)\n", e.what(), e.key.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuboid-example-cpp-views: %s\n", e.what());
  }
  Kokkos::finalize();
  return status;
}
