// Feature check: Kokkos::InitializationSettings (Kokkos 3.7 on; InitArguments is gone in 4.0).
#include <Kokkos_Core.hpp>

int main() {
  Kokkos::InitializationSettings s;
  s.set_disable_warnings(true);
  return 0;
}
