#pragma once
#include "exec/memory_meter.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::app {

// Kokkos for the lifetime of one command; only commands that need it start it.
class KokkosSession {
 public:
  KokkosSession() {
    if (!Kokkos::is_initialized()) {
      kokkos_ext::initialize();
      owner_ = true;
    }
    // The program counts what it allocates (the record's metered memory).
    exec::meter::install();
  }
  ~KokkosSession() {
    if (owner_) Kokkos::finalize();
  }
  KokkosSession(const KokkosSession&) = delete;
  KokkosSession& operator=(const KokkosSession&) = delete;

 private:
  bool owner_ = false;
};

}  // namespace cuboid::app
