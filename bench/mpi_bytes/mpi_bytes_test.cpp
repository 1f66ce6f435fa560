// Test of the byte-counting interposer: three ranks exchange messages of known sizes through
// the calls cuboid and BLACS use (and a few more), each rank writes down what the interposer
// should count, and after MPI_Finalize rank 0 compares the interposer's file with that.
//   mpirun -np 3 -x LD_PRELOAD=libcuboid_mpi_bytes.so -x CUBOID_MPI_BYTES_OUT=f.json test f.json
#include <mpi.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

namespace {

constexpr int P = 3;
using Matrix = std::array<std::array<std::uint64_t, P>, P>;  // [from][to]

struct Expected {
  Matrix p2p_bytes{}, p2p_msgs{}, coll_bytes{}, coll_msgs{};
  void p2p(int from, int to, std::uint64_t bytes, std::uint64_t msgs = 1) {
    p2p_bytes[from][to] += bytes, p2p_msgs[from][to] += msgs;
  }
  void coll(int from, int to, std::uint64_t bytes) {
    coll_bytes[from][to] += bytes, coll_msgs[from][to] += 1;
  }
};

void exchange(int me, Expected& e) {
  MPI_Comm world = MPI_COMM_WORLD;
  // 1. A plain send of 1000 doubles, 0 -> 1.
  std::vector<double> d(1000, 1.0);
  if (me == 0) MPI_Send(d.data(), 1000, MPI_DOUBLE, 1, 1, world);
  if (me == 1) MPI_Recv(d.data(), 1000, MPI_DOUBLE, 0, 1, world, MPI_STATUS_IGNORE);
  e.p2p(0, 1, 8000);

  // 2. A strided type: its size (120 bytes), not its extent, is what moves. 1 -> 2, twice.
  MPI_Datatype strided;
  MPI_Type_vector(10, 3, 5, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  std::vector<int> v(200, 7);
  if (me == 1) {
    MPI_Request r;
    MPI_Isend(v.data(), 2, strided, 2, 2, world, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  if (me == 2) {
    MPI_Request r;
    MPI_Irecv(v.data(), 2, strided, 1, 2, world, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  MPI_Type_free(&strided);
  e.p2p(1, 2, 240);

  // 3. A synchronous send of 7 chars, 2 -> 0.
  char c[7] = {};
  if (me == 2) MPI_Ssend(c, 7, MPI_CHAR, 0, 3, world);
  if (me == 0) MPI_Recv(c, 7, MPI_CHAR, 2, 3, world, MPI_STATUS_IGNORE);
  e.p2p(2, 0, 7);

  // 4. A message to oneself: not counted.
  std::vector<char> self(4096), back(4096);
  {
    MPI_Request r;
    MPI_Isend(self.data(), 4096, MPI_BYTE, me, 4, world, &r);
    MPI_Recv(back.data(), 4096, MPI_BYTE, me, 4, world, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }

  // 5. A ring of sendrecvs, 100 bytes each.
  std::vector<char> out(100), in(100);
  MPI_Sendrecv(out.data(), 100, MPI_BYTE, (me + 1) % P, 5, in.data(), 100, MPI_BYTE,
               (me + P - 1) % P, 5, world, MPI_STATUS_IGNORE);
  for (int r = 0; r < P; ++r) e.p2p(r, (r + 1) % P, 100);

  // 6. A sub-communicator of ranks 2 and 1, in that order: its ranks are not world ranks.
  MPI_Comm sub;
  MPI_Comm_split(world, me == 0 ? MPI_UNDEFINED : 1, -me, &sub);
  if (sub != MPI_COMM_NULL) {
    int sr = -1;
    MPI_Comm_rank(sub, &sr);
    char s[50] = {};
    if (sr == 0) MPI_Send(s, 50, MPI_CHAR, 1, 6, sub);  // world 2 -> world 1
    if (sr == 1) MPI_Recv(s, 50, MPI_CHAR, 0, 6, sub, MPI_STATUS_IGNORE);
    MPI_Bcast(s, 11, MPI_CHAR, 1, sub);  // root: world 1
    MPI_Comm_free(&sub);
  }
  e.p2p(2, 1, 50);
  e.coll(1, 2, 11);

  // 7. A broadcast from rank 1 of 333 bytes.
  std::vector<char> b(333);
  MPI_Bcast(b.data(), 333, MPI_BYTE, 1, world);
  e.coll(1, 0, 333), e.coll(1, 2, 333);

  // 8. An allreduce of 10 doubles: every contribution to every other rank.
  double x[10] = {}, y[10] = {};
  MPI_Allreduce(x, y, 10, MPI_DOUBLE, MPI_SUM, world);
  for (int f = 0; f < P; ++f)
    for (int t = 0; t < P; ++t)
      if (f != t) e.coll(f, t, 80);

  // 9. A reduction of 4 ints to rank 2.
  int xi[4] = {}, yi[4] = {};
  MPI_Reduce(xi, yi, 4, MPI_INT, MPI_SUM, 2, world);
  e.coll(0, 2, 16), e.coll(1, 2, 16);

  // 10. An all-to-all with pairwise counts (from+1)*(to+1) ints.
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  int st = 0, rt = 0;
  for (int q = 0; q < P; ++q) {
    sc[q] = (me + 1) * (q + 1), sd[q] = st, st += sc[q];
    rc[q] = (q + 1) * (me + 1), rd[q] = rt, rt += rc[q];
  }
  std::vector<int> sa(static_cast<std::size_t>(st), 1), ra(static_cast<std::size_t>(rt));
  MPI_Alltoallv(sa.data(), sc.data(), sd.data(), MPI_INT, ra.data(), rc.data(), rd.data(), MPI_INT,
                world);
  for (int f = 0; f < P; ++f)
    for (int t = 0; t < P; ++t)
      if (f != t) e.coll(f, t, std::uint64_t(4 * (f + 1) * (t + 1)));

  // 11. A send to MPI_PROC_NULL: nothing moves.
  MPI_Send(b.data(), 333, MPI_BYTE, MPI_PROC_NULL, 11, world);

  // 12. A persistent send of 64 bytes started twice, 0 -> 2.
  std::vector<char> p(64);
  if (me == 0) {
    MPI_Request r;
    MPI_Send_init(p.data(), 64, MPI_BYTE, 2, 12, world, &r);
    for (int i = 0; i < 2; ++i) {
      MPI_Start(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&r);
  }
  if (me == 2)
    for (int i = 0; i < 2; ++i) MPI_Recv(p.data(), 64, MPI_BYTE, 0, 12, world, MPI_STATUS_IGNORE);
  e.p2p(0, 2, 128, 2);

  // 13. A gatherv to rank 0: rank r contributes r+1 doubles.
  std::vector<double> g(std::size_t(me + 1)), all(6);
  int gc[P] = {1, 2, 3}, gd[P] = {0, 1, 3};
  MPI_Gatherv(g.data(), me + 1, MPI_DOUBLE, all.data(), gc, gd, MPI_DOUBLE, 0, world);
  e.coll(1, 0, 16), e.coll(2, 0, 24);

  // 14. A receive buffer larger than the message: 40 bytes are delivered, not 400.
  std::vector<int> big(100);
  if (me == 0) MPI_Send(big.data(), 10, MPI_INT, 2, 14, world);
  if (me == 2) MPI_Recv(big.data(), 100, MPI_INT, 0, 14, world, MPI_STATUS_IGNORE);
  e.p2p(0, 2, 40);

  MPI_Barrier(world);
}

int compare(const char* path, const Expected& e) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "FAIL: no report at %s (was the interposer preloaded?)\n", path);
    return 1;
  }
  const auto j = nlohmann::json::parse(in);
  int failures = 0;
  auto expect = [&](const char* what, int r, std::uint64_t got, std::uint64_t want) {
    if (got != want) {
      std::fprintf(stderr, "FAIL: rank %d %s: got %llu, expected %llu\n", r, what,
                   (unsigned long long)got, (unsigned long long)want);
      ++failures;
    }
  };
  if (j.at("ranks").get<int>() != P) {
    std::fprintf(stderr, "FAIL: report has %d ranks\n", j.at("ranks").get<int>());
    return 1;
  }
  for (int r = 0; r < P; ++r) {
    const auto& pr = j.at("per_rank").at(std::size_t(r));
    std::uint64_t w[8] = {};  // p2p recv/sent bytes/msgs, then coll
    for (int q = 0; q < P; ++q) {
      w[0] += e.p2p_bytes[q][r], w[1] += e.p2p_bytes[r][q];
      w[2] += e.p2p_msgs[q][r], w[3] += e.p2p_msgs[r][q];
      w[4] += e.coll_bytes[q][r], w[5] += e.coll_bytes[r][q];
      w[6] += e.coll_msgs[q][r], w[7] += e.coll_msgs[r][q];
    }
    const char* keys[4] = {"recv_bytes", "sent_bytes", "recv_msgs", "sent_msgs"};
    for (int k = 0; k < 4; ++k) {
      expect((std::string("p2p.") + keys[k]).c_str(), r, pr.at("p2p").at(keys[k]), w[k]);
      expect((std::string("coll.") + keys[k]).c_str(), r, pr.at("coll").at(keys[k]), w[4 + k]);
      expect(keys[k], r, pr.at(keys[k]), w[k] + w[4 + k]);
    }
    for (int q = 0; q < P; ++q)
      expect(("bytes_from_to[.][" + std::to_string(q) + "]").c_str(), r,
             j.at("bytes_from_to").at(std::size_t(r)).at(std::size_t(q)),
             e.p2p_bytes[r][q] + e.coll_bytes[r][q]);
  }
  expect("calls MPI_Alltoallv (all ranks)", 0, j.at("calls").value("MPI_Alltoallv", 0ull), P);
  expect("calls MPI_Start (all ranks)", 0, j.at("calls").value("MPI_Start", 0ull), 2);
  if (failures == 0) std::printf("mpi_bytes_test: every count as expected\n");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != P || argc != 2) {
    if (me == 0) std::fprintf(stderr, "usage: mpirun -np 3 %s REPORT.json\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  // A report left by an earlier run must not pass for this one's.
  if (me == 0) std::remove(argv[1]);
  MPI_Barrier(MPI_COMM_WORLD);
  Expected e;
  exchange(me, e);
  MPI_Finalize();  // the interposer writes its report here
  return me == 0 ? compare(argv[1], e) : 0;
}
