// Do two host-side processors overlap inside the BLAS? Two callers (threads of our own, like the
// engine's lanes) each run `reps` dgemm of size^3 with `threads` OpenMP threads each, started
// together, against one caller alone. Inside OpenBLAS's OpenMP build a multi-threaded call
// takes one of NUM_PARALLEL (by default 1) server slots, and a second concurrent caller spins
// until the first is done: then one caller finishes at the alone time and the other at twice
// it, and the spinning burns a core. "split" runs each GEMM as our own OpenMP team of
// single-threaded calls on column slabs of C (what kokkos_ext::gemm does on host spaces), which
// needs no server slot.
//
//   cuboid-bench-blas-concurrency [size=1024] [reps=4]
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

extern "C" void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const double* alpha, const double* a, const int* lda,
                       const double* b, const int* ldb, const double* beta, double* c,
                       const int* ldc);

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Matrices {
  int s;
  std::vector<double> a, b, c;
  explicit Matrices(int n) : s(n), a(std::size_t(n) * n, 0.5), b(a.size(), 0.25), c(a.size()) {}
};

void gemm(Matrices& m, int threads, bool split) {
  const double one = 1, zero = 0;
  const int s = m.s;
  if (!split) {
    dgemm_("N", "N", &s, &s, &s, &one, m.a.data(), &s, m.b.data(), &s, &zero, m.c.data(), &s);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    // Inside a parallel region OpenBLAS runs single-threaded, without its server.
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int j0 = int(std::int64_t(s) * t / nt), j1 = int(std::int64_t(s) * (t + 1) / nt);
    const int cols = j1 - j0;
    if (cols > 0)
      dgemm_("N", "N", &s, &cols, &s, &one, m.a.data(), &s, m.b.data() + std::size_t(j0) * s, &s,
             &zero, m.c.data() + std::size_t(j0) * s, &s);
  }
}

struct Result {
  std::vector<double> finish;  // per caller, from the common start
  double wall = 0, cpu = 0;
};

Result run(int callers, int threads, bool split, int size, int reps) {
  std::vector<Matrices> mats;
  for (int i = 0; i < callers; ++i) mats.emplace_back(size);
  // Warm-up: each caller's OpenMP team and OpenBLAS buffers.
  std::vector<std::thread> ts;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Result r;
  r.finish.assign(std::size_t(callers), 0);
  double start = 0;
  for (int i = 0; i < callers; ++i)
    ts.emplace_back([&, i] {
      omp_set_num_threads(threads);
      gemm(mats[std::size_t(i)], threads, split);
      ++ready;
      while (!go) std::this_thread::yield();
      for (int k = 0; k < reps; ++k) gemm(mats[std::size_t(i)], threads, split);
      r.finish[std::size_t(i)] = now();
    });
  while (ready < callers) std::this_thread::yield();
  const double cpu0 = cpu_seconds();
  start = now();
  go = true;
  for (auto& t : ts) t.join();
  r.cpu = cpu_seconds() - cpu0;
  for (auto& f : r.finish) f -= start;
  r.wall = *std::max_element(r.finish.begin(), r.finish.end());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int size = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 4;
  std::printf("dgemm %d^3 x %d per caller, %u hardware threads\n", size, reps,
              std::thread::hardware_concurrency());
  std::printf("%-6s %7s %-7s %9s %24s %9s %9s\n", "mode", "threads", "callers", "wall s",
              "finish s (per caller)", "cpu s", "GFLOP/s");
  for (bool split : {false, true})
    for (int threads : {1, 2})
      for (int callers : {1, 2}) {
        if (split && threads == 1) continue;  // the same as a plain single-threaded call
        const Result r = run(callers, threads, split, size, reps);
        std::string fin;
        for (double f : r.finish) fin += std::to_string(f).substr(0, 6) + " ";
        const double flops = 2.0 * size * double(size) * size * reps * callers;
        std::printf("%-6s %7d %-7d %9.3f %24s %9.3f %9.2f\n", split ? "split" : "blas", threads,
                    callers, r.wall, fin.c_str(), r.cpu, flops / r.wall / 1e9);
      }
  return 0;
}
