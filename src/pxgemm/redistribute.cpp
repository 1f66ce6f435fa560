#include "pxgemm/redistribute.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "mpi/communicator.hpp"

namespace cuboid::pxgemm {
namespace {

template <class T>
T conjugate(const T& v) {
  return v;
}
template <class T>
std::complex<T> conjugate(const std::complex<T>& v) {
  return std::conj(v);
}

// Every cut of one axis of the sub-matrix: the block boundaries of both layouts, merged.
std::vector<std::int64_t> cuts(std::int64_t extent, const Axis& a, const Axis& b) {
  std::vector<std::int64_t> out{0};
  for (std::int64_t x = 0; x < extent;) {
    const std::int64_t next = std::min({extent, a.next_cut(x), b.next_cut(x)});
    out.push_back(next);
    x = next;
  }
  return out;
}

int to_int(std::int64_t bytes) {
  if (bytes > INT_MAX)
    throw std::runtime_error("redistribution: a message of " + std::to_string(bytes) +
                             " bytes exceeds what one MPI_Alltoallv count can say");
  return int(bytes);
}

}  // namespace

template <class Scalar>
double redistribute(const Grid& grid, std::int64_t rows, std::int64_t cols,
                    const Side<const Scalar>& from, const Side<Scalar>& to, Map map) {
  const bool transposed = map != Map::same, conj = map == Map::conjugate_transpose;
  // The target's axis that runs along the sub-matrix's rows, and the one along its columns.
  const Axis& to_along_rows = transposed ? to.cols : to.rows;
  const Axis& to_along_cols = transposed ? to.rows : to.cols;
  const auto xs = cuts(rows, from.rows, to_along_rows);
  const auto ys = cuts(cols, from.cols, to_along_cols);
  const int P = grid.rows * grid.cols, me = grid.me;
  auto rank = [&](int prow, int pcol) { return prow * grid.cols + pcol; };

  struct Piece {
    std::int64_t x0, x1, y0, y1;
    int src, dst;
  };
  // The pieces this rank sends or receives, in the order both ends enumerate them.
  std::vector<Piece> mine;
  std::vector<std::int64_t> send(std::size_t(P), 0), recv(std::size_t(P), 0);
  // A replicated target axis: every coordinate along it receives the piece. A replicated source
  // axis: the copy on the receiver's coordinate is read, so that the move stays within its
  // process row or column. Both ends make the same choice.
  auto coords = [](int p, int procs) {
    std::vector<int> c;
    if (p >= 0)
      c.push_back(p);
    else
      for (int q = 0; q < procs; ++q) c.push_back(q);
    return c;
  };
  for (std::size_t b = 0; b + 1 < ys.size(); ++b)
    for (std::size_t a = 0; a + 1 < xs.size(); ++a) {
      const std::int64_t x0 = xs[a], y0 = ys[b];
      const int to_row = transposed ? to.rows.proc(y0) : to.rows.proc(x0);
      const int to_col = transposed ? to.cols.proc(x0) : to.cols.proc(y0);
      for (int dr : coords(to_row, grid.rows))
        for (int dc : coords(to_col, grid.cols)) {
          const int sr = from.rows.replicated() ? dr : from.rows.proc(x0);
          const int sc = from.cols.replicated() ? dc : from.cols.proc(y0);
          const int src = rank(sr, sc), dst = rank(dr, dc);
          if (src != me && dst != me) continue;
          const Piece p{x0, xs[a + 1], y0, ys[b + 1], src, dst};
          const std::int64_t n = (p.x1 - p.x0) * (p.y1 - p.y0);
          if (src == me && dst != me) send[std::size_t(dst)] += n;
          if (dst == me && src != me) recv[std::size_t(src)] += n;
          mine.push_back(p);
        }
    }

  auto source_at = [&](const Piece& p, std::int64_t x, std::int64_t y) {
    return from
        .data[from.rows.local(p.x0) + (x - p.x0) + (from.cols.local(p.y0) + (y - p.y0)) * from.ld];
  };
  auto target_at = [&](const Piece& p, std::int64_t x, std::int64_t y) -> Scalar& {
    if (transposed)
      return to.data[to.rows.local(p.y0) + (y - p.y0) + (to.cols.local(p.x0) + (x - p.x0)) * to.ld];
    return to.data[to.rows.local(p.x0) + (x - p.x0) + (to.cols.local(p.y0) + (y - p.y0)) * to.ld];
  };
  auto put = [&](Scalar& t, const Scalar& v) { t = conj ? conjugate(v) : v; };

  std::vector<int> scount(static_cast<std::size_t>(P)), sdispl(static_cast<std::size_t>(P)),
      rcount(static_cast<std::size_t>(P)), rdispl(static_cast<std::size_t>(P));
  std::int64_t stotal = 0, rtotal = 0;
  const std::int64_t elem = std::int64_t(sizeof(Scalar));
  for (int r = 0; r < P; ++r) {
    scount[std::size_t(r)] = to_int(send[std::size_t(r)] * elem);
    sdispl[std::size_t(r)] = to_int(stotal * elem);
    rcount[std::size_t(r)] = to_int(recv[std::size_t(r)] * elem);
    rdispl[std::size_t(r)] = to_int(rtotal * elem);
    stotal += send[std::size_t(r)], rtotal += recv[std::size_t(r)];
  }
  std::vector<Scalar> out(std::size_t(std::max<std::int64_t>(stotal, 1))),
      in(std::size_t(std::max<std::int64_t>(rtotal, 1)));
  std::vector<std::int64_t> cursor(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) cursor[std::size_t(r)] = sdispl[std::size_t(r)] / elem;
  for (const Piece& p : mine) {
    if (p.src != me) continue;
    if (p.dst == me) {  // stays on this rank: copied in place
      for (std::int64_t y = p.y0; y < p.y1; ++y)
        for (std::int64_t x = p.x0; x < p.x1; ++x) put(target_at(p, x, y), source_at(p, x, y));
      continue;
    }
    std::int64_t& at = cursor[std::size_t(p.dst)];
    for (std::int64_t y = p.y0; y < p.y1; ++y)
      for (std::int64_t x = p.x0; x < p.x1; ++x) out[std::size_t(at++)] = source_at(p, x, y);
  }
  if (P > 1)
    mpi::Communicator(grid.comm).alltoallv_bytes(out.data(), scount, sdispl, in.data(), rcount,
                                                 rdispl);
  for (int r = 0; r < P; ++r) cursor[std::size_t(r)] = rdispl[std::size_t(r)] / elem;
  for (const Piece& p : mine) {
    if (p.dst != me || p.src == me) continue;
    std::int64_t& at = cursor[std::size_t(p.src)];
    for (std::int64_t y = p.y0; y < p.y1; ++y)
      for (std::int64_t x = p.x0; x < p.x1; ++x) put(target_at(p, x, y), in[std::size_t(at++)]);
  }
  return double(rtotal * elem);
}

#define CUBOID_REDISTRIBUTE(T)                                                                   \
  template double redistribute<T>(const Grid&, std::int64_t, std::int64_t, const Side<const T>&, \
                                  const Side<T>&, Map);
CUBOID_REDISTRIBUTE(float)
CUBOID_REDISTRIBUTE(double)
CUBOID_REDISTRIBUTE(std::complex<float>)
CUBOID_REDISTRIBUTE(std::complex<double>)
#undef CUBOID_REDISTRIBUTE

}  // namespace cuboid::pxgemm
