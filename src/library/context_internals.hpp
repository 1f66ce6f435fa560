#pragma once
// What the library's other entries (the distributed call) need of a Context beyond its public
// members: its lock, its report and its local multiply per scalar type. Internal: not installed.
#include <cuboid/cuboid.hpp>

#include <Kokkos_Core.hpp>

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/local_multiply.hpp"
#include "platform/calibration.hpp"

namespace cuboid {

// What the pipeline cannot compute (today: negative extents; every type and op is computed).
void require_supported_call(const GemmShape& shape, ScalarType type);

// The tile of a call: about a twelfth of its largest edge, a power of two in [32, 512], so that
// the partition has room to follow the speeds without making GEMMs too small to run at rate.
std::int64_t tile_for(std::int64_t m, std::int64_t n, std::int64_t k);

// A caller's complex matrix (rows x cols, leading dimension ld) as Kokkos::complex. Callers'
// arrays are aligned as their reals (std::complex, Fortran's COMPLEX*16), Kokkos::complex as the
// pair: the caller's memory when aligned for it, else (with `copy`) a packed aligned copy made
// with memcpy, so that no complex load meets the caller's alignment; write_back() returns a
// copy's contents. A leading dimension below the rows is left for the call's own check.
template <class T>
class KokkosComplexMatrix {
 public:
  using K = Kokkos::complex<T>;
  KokkosComplexMatrix(const std::complex<T>* p, std::int64_t rows, std::int64_t cols,
                      std::int64_t ld, bool copy)
      : data_(reinterpret_cast<K*>(const_cast<std::complex<T>*>(p))),
        rows_(rows),
        cols_(cols),
        ld_(ld) {
    if (!copy || !p || reinterpret_cast<std::uintptr_t>(p) % alignof(K) == 0 || rows <= 0 ||
        cols <= 0 || ld < rows)
      return;
    buffer_.resize(std::size_t(rows * cols));
    copy_columns(buffer_.data(), rows, p, ld, rows, cols);
    data_ = buffer_.data(), ld_ = rows;
  }
  // data() may point into the buffer: never copied.
  KokkosComplexMatrix(const KokkosComplexMatrix&) = delete;
  KokkosComplexMatrix& operator=(const KokkosComplexMatrix&) = delete;
  K* data() const { return data_; }
  std::int64_t ld() const { return ld_; }
  void write_back(std::complex<T>* dst, std::int64_t ld) const {
    if (!buffer_.empty()) copy_columns(dst, ld, buffer_.data(), rows_, rows_, cols_);
  }

 private:
  static void copy_columns(void* dst, std::int64_t ld_dst, const void* src, std::int64_t ld_src,
                           std::int64_t rows, std::int64_t cols) {
    for (std::int64_t j = 0; j < cols; ++j)
      std::memcpy(static_cast<char*>(dst) + std::size_t(j * ld_dst) * sizeof(K),
                  static_cast<const char*>(src) + std::size_t(j * ld_src) * sizeof(K),
                  std::size_t(rows) * sizeof(K));
  }
  std::vector<K> buffer_;
  K* data_;
  std::int64_t rows_, cols_, ld_;
};

struct ContextInternals {
  static std::mutex& mutex(Context& c);
  static CallReport& report(Context& c);
  static const ContextOptions& options(const Context& c);
  // A slot the context keeps for another entry of the library, created empty on first use.
  static std::shared_ptr<void>& extension(Context& c, const std::string& name);
  // The context's local multiply for Scalar, its processors calibrated (on m x n x k, each edge
  // capped, when nothing is given or cached) on first use; `calibration_s` is what that took.
  template <class Scalar>
  static pipeline::LocalMultiply<Scalar>& local(Context& c, std::int64_t m, std::int64_t n,
                                                std::int64_t k, double& calibration_s);
  template <class Scalar>
  static const std::vector<platform::Speed>& speeds(Context& c);
};

}  // namespace cuboid
