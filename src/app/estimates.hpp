#pragma once
// Memory a command will need, estimated before it allocates, so that an input too large for
// the machine is an error that names what to change instead of std::bad_alloc or the OOM killer.
#include <cstdint>
#include <string>

namespace cuboid::app {

// Bytes the rank partition needs for P ranks on an M x N x K cuboid of tiles: every candidate
// holds a zone list per rank and its traffic per rank (block-cyclic: up to 8 candidates; aligned:
// one per factorisation P = a b c that fits the tiles, plus one), and the aligned layout keeps
// the users of every tile of A, B and C. Measured at about 0.6 KiB per rank and 100 bytes per rank
// and candidate.
double rank_partition_bytes(std::int64_t P, std::int64_t M, std::int64_t N, std::int64_t K,
                            bool aligned, bool automatic);

// Throws cuboid::Error "WHERE: WHAT needs X of host memory, but only Y is available: ADVICE" when
// `need` exceeds 90 % of the available host memory.
void require_host_memory(double need, const std::string& where, const std::string& what,
                         const std::string& advice);

}  // namespace cuboid::app
