// A PMPI interposer (LD_PRELOAD) that counts, per rank, the bytes every rank delivers to every
// other rank, and at MPI_Finalize writes one JSON file for the whole job (rank 0 writes it, to
// the path in $CUBOID_MPI_BYTES_OUT; nothing is written when that is unset).
//
// What is counted (bench/mpi_bytes/README.md has the details):
// - point-to-point: every send (blocking, non-blocking, synchronous, buffered, ready,
//   persistent at each start, sendrecv) credits count x MPI_Type_size(type) bytes and one
//   message to the pair (sender, receiver). Counting at the sender is exact for the receiver
//   too as long as every message is received, and it needs no request tracking: a receive's
//   status may be MPI_STATUS_IGNORE, a send's size never is unknown. The job-wide matrix is
//   assembled at MPI_Finalize, so each rank's received bytes are its column of that matrix.
// - collectives: what the operation's definition moves between ranks, as a direct algorithm
//   would (no forwarding through other ranks, no combining on the way): a broadcast delivers
//   the buffer to every non-root, gathers/scatters/all-to-alls the pairwise blocks, a reduction
//   every non-root's contribution to the root, an allreduce every contribution to every other
//   rank, a scan every contribution to every higher rank. Exact for the data-movement
//   collectives whatever algorithm MPI picks; for reductions at more than two ranks a tree or
//   ring algorithm moves less, and the two kinds are reported apart.
// - ranks are world ranks: sub-communicators (BLACS makes row and column ones) are translated
//   once and the table cached on the communicator as an attribute.
// - messages from a rank to itself and to MPI_PROC_NULL are not counted.
// Not intercepted: one-sided communication, neighbour collectives, and Fortran MPI calls
// (Open MPI's Fortran bindings call PMPI directly); neither cuboid nor BLACS uses them.
#include <mpi.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

enum Kind { kP2P = 0, kColl = 1, kKinds = 2 };

// Call counters, reported summed over ranks: they show which operations a program used.
enum Function {
  f_Send,
  f_Bsend,
  f_Ssend,
  f_Rsend,
  f_Isend,
  f_Ibsend,
  f_Issend,
  f_Irsend,
  f_Sendrecv,
  f_Sendrecv_replace,
  f_Start,
  f_Barrier,
  f_Bcast,
  f_Gather,
  f_Gatherv,
  f_Scatter,
  f_Scatterv,
  f_Allgather,
  f_Allgatherv,
  f_Alltoall,
  f_Alltoallv,
  f_Alltoallw,
  f_Reduce,
  f_Allreduce,
  f_Reduce_scatter,
  f_Reduce_scatter_block,
  f_Scan,
  f_Exscan,
  f_Ibarrier,
  f_Ibcast,
  f_Igather,
  f_Igatherv,
  f_Iscatter,
  f_Iscatterv,
  f_Iallgather,
  f_Iallgatherv,
  f_Ialltoall,
  f_Ialltoallv,
  f_Ialltoallw,
  f_Ireduce,
  f_Iallreduce,
  f_Ireduce_scatter,
  f_Ireduce_scatter_block,
  f_Iscan,
  f_Iexscan,
  kFunctions
};
const char* const kFunctionNames[] = {"MPI_Send",
                                      "MPI_Bsend",
                                      "MPI_Ssend",
                                      "MPI_Rsend",
                                      "MPI_Isend",
                                      "MPI_Ibsend",
                                      "MPI_Issend",
                                      "MPI_Irsend",
                                      "MPI_Sendrecv",
                                      "MPI_Sendrecv_replace",
                                      "MPI_Start",
                                      "MPI_Barrier",
                                      "MPI_Bcast",
                                      "MPI_Gather",
                                      "MPI_Gatherv",
                                      "MPI_Scatter",
                                      "MPI_Scatterv",
                                      "MPI_Allgather",
                                      "MPI_Allgatherv",
                                      "MPI_Alltoall",
                                      "MPI_Alltoallv",
                                      "MPI_Alltoallw",
                                      "MPI_Reduce",
                                      "MPI_Allreduce",
                                      "MPI_Reduce_scatter",
                                      "MPI_Reduce_scatter_block",
                                      "MPI_Scan",
                                      "MPI_Exscan",
                                      "MPI_Ibarrier",
                                      "MPI_Ibcast",
                                      "MPI_Igather",
                                      "MPI_Igatherv",
                                      "MPI_Iscatter",
                                      "MPI_Iscatterv",
                                      "MPI_Iallgather",
                                      "MPI_Iallgatherv",
                                      "MPI_Ialltoall",
                                      "MPI_Ialltoallv",
                                      "MPI_Ialltoallw",
                                      "MPI_Ireduce",
                                      "MPI_Iallreduce",
                                      "MPI_Ireduce_scatter",
                                      "MPI_Ireduce_scatter_block",
                                      "MPI_Iscan",
                                      "MPI_Iexscan"};
static_assert(sizeof(kFunctionNames) / sizeof(kFunctionNames[0]) == kFunctions);

struct Persistent {  // a persistent send, counted at each MPI_Start
  MPI_Comm comm;
  int dest;
  std::uint64_t bytes;
};

struct State {
  std::mutex mu;
  bool ready = false;
  int rank = -1, size = 0;
  int keyval = MPI_KEYVAL_INVALID;
  // Indexed by world destination.
  std::vector<std::uint64_t> bytes[kKinds], msgs[kKinds];
  std::uint64_t calls[kFunctions] = {};
  std::uint64_t uncounted_intercomm_collectives = 0;
  std::map<MPI_Request, Persistent> persistent;
};

State& state() {
  static State s;
  return s;
}

int drop_table(MPI_Comm, int, void* table, void*) {
  delete static_cast<std::vector<int>*>(table);
  return MPI_SUCCESS;
}

void setup() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.ready) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &s.size);
  for (int k = 0; k < kKinds; ++k) {
    s.bytes[k].assign(std::size_t(s.size), 0);
    s.msgs[k].assign(std::size_t(s.size), 0);
  }
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop_table, &s.keyval, nullptr);
  s.ready = true;
}

// Communicator rank -> world rank (the remote group's ranks for an inter-communicator, which is
// what a point-to-point destination names there).
const std::vector<int>* world_ranks(MPI_Comm comm) {
  State& s = state();
  void* cached = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, s.keyval, &cached, &found) == MPI_SUCCESS && found)
    return static_cast<std::vector<int>*>(cached);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  MPI_Group group, world;
  if (inter)
    PMPI_Comm_remote_group(comm, &group);
  else
    PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> mine(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) mine[std::size_t(i)] = i;
  auto* table = new std::vector<int>(std::size_t(n), MPI_UNDEFINED);
  PMPI_Group_translate_ranks(group, n, mine.data(), world, table->data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  PMPI_Comm_set_attr(comm, s.keyval, table);
  return table;
}

std::uint64_t type_bytes(int count, MPI_Datatype type) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  MPI_Count size = 0;
  PMPI_Type_size_x(type, &size);
  return std::uint64_t(count) * std::uint64_t(size > 0 ? size : 0);
}

// Credits `bytes` from this rank to `dest` (a rank of `comm`).
void note(Kind kind, MPI_Comm comm, int dest, std::uint64_t bytes) {
  if (dest == MPI_PROC_NULL || dest < 0) return;
  State& s = state();
  if (!s.ready) return;
  std::lock_guard<std::mutex> lock(s.mu);
  int w = dest;
  if (comm != MPI_COMM_WORLD) {
    const std::vector<int>* table = world_ranks(comm);
    if (std::size_t(dest) >= table->size()) return;  // MPI reports the bad rank itself
    w = (*table)[std::size_t(dest)];
  }
  if (w < 0 || w >= s.size || w == s.rank) return;
  s.bytes[kind][std::size_t(w)] += bytes;
  s.msgs[kind][std::size_t(w)] += 1;
}

void called(Function f) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.calls[f] += 1;
}

// The calling rank and size of an intra-communicator; false (and the call is noted as not
// modelled) for an inter-communicator, whose collectives have other semantics.
bool intra(MPI_Comm comm, int& me, int& n) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.uncounted_intercomm_collectives += 1;
    return false;
  }
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &n);
  return true;
}

void p2p(Function f, int rc, MPI_Comm comm, int dest, int count, MPI_Datatype type) {
  called(f);
  if (rc == MPI_SUCCESS) note(kP2P, comm, dest, type_bytes(count, type));
}

// --- collective models ------------------------------------------------------------------------
void bcast(int count, MPI_Datatype type, int root, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n) || me != root) return;
  const std::uint64_t b = type_bytes(count, type);
  for (int q = 0; q < n; ++q) note(kColl, comm, q, b);
}

void gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int root, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n) || me == root || sendbuf == MPI_IN_PLACE) return;
  note(kColl, comm, root, type_bytes(sendcount, sendtype));
}

void scatter(const int* sendcounts, int sendcount, MPI_Datatype sendtype, int root, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n) || me != root) return;
  for (int q = 0; q < n; ++q)
    note(kColl, comm, q, type_bytes(sendcounts ? sendcounts[q] : sendcount, sendtype));
}

void allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const int* recvcounts,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n)) return;
  const std::uint64_t b = sendbuf == MPI_IN_PLACE
                              ? type_bytes(recvcounts ? recvcounts[me] : recvcount, recvtype)
                              : type_bytes(sendcount, sendtype);
  for (int q = 0; q < n; ++q) note(kColl, comm, q, b);
}

void alltoall(const void* sendbuf, const int* sendcounts, int sendcount,
              const MPI_Datatype* sendtypes, MPI_Datatype sendtype, const int* recvcounts,
              int recvcount, const MPI_Datatype* recvtypes, MPI_Datatype recvtype, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n)) return;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  for (int q = 0; q < n; ++q) {
    const int c = in_place ? (recvcounts ? recvcounts[q] : recvcount)
                           : (sendcounts ? sendcounts[q] : sendcount);
    const MPI_Datatype t =
        in_place ? (recvtypes ? recvtypes[q] : recvtype) : (sendtypes ? sendtypes[q] : sendtype);
    note(kColl, comm, q, type_bytes(c, t));
  }
}

void reduce(int count, MPI_Datatype type, int root, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n) || me == root) return;
  note(kColl, comm, root, type_bytes(count, type));
}

void allreduce(int count, MPI_Datatype type, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n)) return;
  const std::uint64_t b = type_bytes(count, type);
  for (int q = 0; q < n; ++q) note(kColl, comm, q, b);
}

void reduce_scatter(const int* recvcounts, int recvcount, MPI_Datatype type, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n)) return;
  for (int q = 0; q < n; ++q)
    note(kColl, comm, q, type_bytes(recvcounts ? recvcounts[q] : recvcount, type));
}

// Inclusive or exclusive, the ranks above me are the ones whose result uses my contribution.
void scan(int count, MPI_Datatype type, MPI_Comm comm) {
  int me, n;
  if (!intra(comm, me, n)) return;
  const std::uint64_t b = type_bytes(count, type);
  for (int q = me + 1; q < n; ++q) note(kColl, comm, q, b);
}

// --- the report -------------------------------------------------------------------------------
struct Totals {
  std::uint64_t sent_bytes = 0, recv_bytes = 0, sent_msgs = 0, recv_msgs = 0;
};

void write_report() {
  State& s = state();
  if (!s.ready) return;
  const char* path = std::getenv("CUBOID_MPI_BYTES_OUT");
  const int P = s.size;
  // Rows: [kind][bytes|msgs][destination] of every rank, then the call counters.
  const std::size_t row = std::size_t(kKinds) * 2 * std::size_t(P) + kFunctions + 1;
  std::vector<std::uint64_t> mine(row), all(s.rank == 0 ? row * std::size_t(P) : 0);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    std::size_t o = 0;
    for (int k = 0; k < kKinds; ++k) {
      for (int q = 0; q < P; ++q) mine[o++] = s.bytes[k][std::size_t(q)];
      for (int q = 0; q < P; ++q) mine[o++] = s.msgs[k][std::size_t(q)];
    }
    for (int f = 0; f < kFunctions; ++f) mine[o++] = s.calls[f];
    mine[o++] = s.uncounted_intercomm_collectives;
  }
  // Every rank takes part whether or not a file is wanted: the environment may differ by rank.
  PMPI_Gather(mine.data(), int(row), MPI_UINT64_T, all.data(), int(row), MPI_UINT64_T, 0,
              MPI_COMM_WORLD);
  if (s.rank != 0 || path == nullptr || *path == '\0') return;

  auto at = [&](int from, int kind, int what, int to) {
    return all[std::size_t(from) * row +
               (std::size_t(kind) * 2 + std::size_t(what)) * std::size_t(P) + std::size_t(to)];
  };
  std::vector<Totals> per[kKinds + 1];
  for (auto& v : per) v.assign(std::size_t(P), Totals{});
  for (int from = 0; from < P; ++from)
    for (int to = 0; to < P; ++to)
      for (int k = 0; k < kKinds; ++k)
        for (int sum : {k, int(kKinds)}) {
          Totals& a = per[sum][std::size_t(from)];
          Totals& b = per[sum][std::size_t(to)];
          a.sent_bytes += at(from, k, 0, to), a.sent_msgs += at(from, k, 1, to);
          b.recv_bytes += at(from, k, 0, to), b.recv_msgs += at(from, k, 1, to);
        }

  const std::string tmp = std::string(path) + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cuboid-mpi-bytes: cannot write %s: %s\n", tmp.c_str(),
                 std::strerror(errno));
    return;
  }
  auto totals = [&](const Totals& t) {
    std::fprintf(f,
                 "{\"recv_bytes\": %llu, \"sent_bytes\": %llu, \"recv_msgs\": %llu, "
                 "\"sent_msgs\": %llu}",
                 (unsigned long long)t.recv_bytes, (unsigned long long)t.sent_bytes,
                 (unsigned long long)t.recv_msgs, (unsigned long long)t.sent_msgs);
  };
  std::fprintf(f, "{\n  \"tool\": \"cuboid-mpi-bytes\",\n  \"ranks\": %d,\n", P);
  std::fprintf(f,
               "  \"model\": \"p2p: count x MPI_Type_size of each send to another rank; "
               "collectives: direct transfers of the operation's definition; self-messages not "
               "counted\",\n");
  std::fprintf(f, "  \"per_rank\": [\n");
  for (int r = 0; r < P; ++r) {
    const Totals& t = per[kKinds][std::size_t(r)];
    std::fprintf(f,
                 "    {\"rank\": %d, \"recv_bytes\": %llu, \"sent_bytes\": %llu, \"recv_msgs\": "
                 "%llu, \"sent_msgs\": %llu, \"p2p\": ",
                 r, (unsigned long long)t.recv_bytes, (unsigned long long)t.sent_bytes,
                 (unsigned long long)t.recv_msgs, (unsigned long long)t.sent_msgs);
    totals(per[kP2P][std::size_t(r)]);
    std::fprintf(f, ", \"coll\": ");
    totals(per[kColl][std::size_t(r)]);
    std::fprintf(f, "}%s\n", r + 1 < P ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"bytes_from_to\": [\n");
  for (int from = 0; from < P; ++from) {
    std::fprintf(f, "    [");
    for (int to = 0; to < P; ++to)
      std::fprintf(f, "%s%llu", to ? ", " : "",
                   (unsigned long long)(at(from, kP2P, 0, to) + at(from, kColl, 0, to)));
    std::fprintf(f, "]%s\n", from + 1 < P ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"calls\": {");
  bool first = true;
  for (int fn = 0; fn < kFunctions; ++fn) {
    std::uint64_t n = 0;
    for (int r = 0; r < P; ++r)
      n += all[std::size_t(r) * row + std::size_t(kKinds) * 2 * std::size_t(P) + std::size_t(fn)];
    if (n == 0) continue;
    std::fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", kFunctionNames[fn], (unsigned long long)n);
    first = false;
  }
  std::uint64_t uncounted = 0;
  for (int r = 0; r < P; ++r) uncounted += all[std::size_t(r) * row + row - 1];
  std::fprintf(f, "},\n  \"uncounted_intercomm_collectives\": %llu\n}\n",
               (unsigned long long)uncounted);
  const bool ok = std::fclose(f) == 0;
  if (!ok || std::rename(tmp.c_str(), path) != 0) {
    std::fprintf(stderr, "cuboid-mpi-bytes: cannot write %s: %s\n", path, std::strerror(errno));
    std::remove(tmp.c_str());
  }
}

}  // namespace

extern "C" {

// --- setup and teardown -------------------------------------------------------------------------
int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) setup();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) setup();
  return rc;
}

int MPI_Finalize(void) {
  write_report();
  return PMPI_Finalize();
}

// --- point-to-point -----------------------------------------------------------------------------
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const int rc = PMPI_Send(buf, count, type, dest, tag, comm);
  p2p(f_Send, rc, comm, dest, count, type);
  return rc;
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const int rc = PMPI_Bsend(buf, count, type, dest, tag, comm);
  p2p(f_Bsend, rc, comm, dest, count, type);
  return rc;
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
  p2p(f_Ssend, rc, comm, dest, count, type);
  return rc;
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const int rc = PMPI_Rsend(buf, count, type, dest, tag, comm);
  p2p(f_Rsend, rc, comm, dest, count, type);
  return rc;
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, request);
  p2p(f_Isend, rc, comm, dest, count, type);
  return rc;
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  const int rc = PMPI_Ibsend(buf, count, type, dest, tag, comm, request);
  p2p(f_Ibsend, rc, comm, dest, count, type);
  return rc;
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  const int rc = PMPI_Issend(buf, count, type, dest, tag, comm, request);
  p2p(f_Issend, rc, comm, dest, count, type);
  return rc;
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  const int rc = PMPI_Irsend(buf, count, type, dest, tag, comm, request);
  p2p(f_Irsend, rc, comm, dest, count, type);
  return rc;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  const int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, status);
  p2p(f_Sendrecv, rc, comm, dest, sendcount, sendtype);
  return rc;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status* status) {
  const int rc =
      PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  p2p(f_Sendrecv_replace, rc, comm, dest, count, type);
  return rc;
}

namespace {
void remember(int rc, MPI_Request* request, MPI_Comm comm, int dest, int count, MPI_Datatype type) {
  if (rc != MPI_SUCCESS) return;
  State& s = state();
  const std::uint64_t b = type_bytes(count, type);
  std::lock_guard<std::mutex> lock(s.mu);
  s.persistent[*request] = Persistent{comm, dest, b};
}
void started(MPI_Request request) {
  State& s = state();
  Persistent p;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.calls[f_Start] += 1;
    auto it = s.persistent.find(request);
    if (it == s.persistent.end()) return;  // a persistent receive
    p = it->second;
  }
  note(kP2P, p.comm, p.dest, p.bytes);
}
}  // namespace

int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  const int rc = PMPI_Send_init(buf, count, type, dest, tag, comm, request);
  remember(rc, request, comm, dest, count, type);
  return rc;
}

int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  const int rc = PMPI_Bsend_init(buf, count, type, dest, tag, comm, request);
  remember(rc, request, comm, dest, count, type);
  return rc;
}

int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  const int rc = PMPI_Ssend_init(buf, count, type, dest, tag, comm, request);
  remember(rc, request, comm, dest, count, type);
  return rc;
}

int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  const int rc = PMPI_Rsend_init(buf, count, type, dest, tag, comm, request);
  remember(rc, request, comm, dest, count, type);
  return rc;
}

int MPI_Start(MPI_Request* request) {
  const MPI_Request r = *request;
  const int rc = PMPI_Start(request);
  if (rc == MPI_SUCCESS) started(r);
  return rc;
}

int MPI_Startall(int count, MPI_Request requests[]) {
  std::vector<MPI_Request> r(requests, requests + (count > 0 ? count : 0));
  const int rc = PMPI_Startall(count, requests);
  if (rc == MPI_SUCCESS)
    for (MPI_Request q : r) started(q);
  return rc;
}

int MPI_Request_free(MPI_Request* request) {
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.persistent.erase(*request);
  }
  return PMPI_Request_free(request);
}

// --- collectives
// ----------------------------------------------------------------------------------
#define CUBOID_COLL(f, pcall, model) \
  const int rc = pcall;              \
  called(f);                         \
  if (rc == MPI_SUCCESS) model;      \
  return rc

int MPI_Barrier(MPI_Comm comm) { CUBOID_COLL(f_Barrier, PMPI_Barrier(comm), (void)0); }

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Ibarrier, PMPI_Ibarrier(comm, request), (void)0);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  CUBOID_COLL(f_Bcast, PMPI_Bcast(buffer, count, type, root, comm), bcast(count, type, root, comm));
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request* request) {
  CUBOID_COLL(f_Ibcast, PMPI_Ibcast(buffer, count, type, root, comm, request),
              bcast(count, type, root, comm));
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  CUBOID_COLL(f_Gather,
              PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              gather(sendbuf, sendcount, sendtype, root, comm));
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  CUBOID_COLL(
      f_Igather,
      PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request),
      gather(sendbuf, sendcount, sendtype, root, comm));
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  CUBOID_COLL(
      f_Gatherv,
      PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
      gather(sendbuf, sendcount, sendtype, root, comm));
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Igatherv,
              PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm, request),
              gather(sendbuf, sendcount, sendtype, root, comm));
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  CUBOID_COLL(f_Scatter,
              PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              scatter(nullptr, sendcount, sendtype, root, comm));
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  CUBOID_COLL(f_Iscatter,
              PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request),
              scatter(nullptr, sendcount, sendtype, root, comm));
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  CUBOID_COLL(f_Scatterv,
              PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                            root, comm),
              scatter(sendcounts, 0, sendtype, root, comm));
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Iscatterv,
              PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                             root, comm, request),
              scatter(sendcounts, 0, sendtype, root, comm));
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  CUBOID_COLL(f_Allgather,
              PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
              allgather(sendbuf, sendcount, sendtype, nullptr, recvcount, recvtype, comm));
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(
      f_Iallgather,
      PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request),
      allgather(sendbuf, sendcount, sendtype, nullptr, recvcount, recvtype, comm));
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  CUBOID_COLL(
      f_Allgatherv,
      PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
      allgather(sendbuf, sendcount, sendtype, recvcounts, 0, recvtype, comm));
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Iallgatherv,
              PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, request),
              allgather(sendbuf, sendcount, sendtype, recvcounts, 0, recvtype, comm));
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  CUBOID_COLL(f_Alltoall,
              PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
              alltoall(sendbuf, nullptr, sendcount, nullptr, sendtype, nullptr, recvcount, nullptr,
                       recvtype, comm));
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(
      f_Ialltoall,
      PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request),
      alltoall(sendbuf, nullptr, sendcount, nullptr, sendtype, nullptr, recvcount, nullptr,
               recvtype, comm));
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  CUBOID_COLL(
      f_Alltoallv,
      PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                     comm),
      alltoall(sendbuf, sendcounts, 0, nullptr, sendtype, recvcounts, 0, nullptr, recvtype, comm));
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  CUBOID_COLL(
      f_Ialltoallv,
      PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype, comm, request),
      alltoall(sendbuf, sendcounts, 0, nullptr, sendtype, recvcounts, 0, nullptr, recvtype, comm));
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  CUBOID_COLL(f_Alltoallw,
              PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                             recvtypes, comm),
              alltoall(sendbuf, sendcounts, 0, sendtypes, MPI_DATATYPE_NULL, recvcounts, 0,
                       recvtypes, MPI_DATATYPE_NULL, comm));
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  CUBOID_COLL(f_Ialltoallw,
              PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, request),
              alltoall(sendbuf, sendcounts, 0, sendtypes, MPI_DATATYPE_NULL, recvcounts, 0,
                       recvtypes, MPI_DATATYPE_NULL, comm));
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  CUBOID_COLL(f_Reduce, PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm),
              reduce(count, type, root, comm));
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Ireduce, PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request),
              reduce(count, type, root, comm));
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  CUBOID_COLL(f_Allreduce, PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm),
              allreduce(count, type, comm));
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Iallreduce, PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request),
              allreduce(count, type, comm));
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  CUBOID_COLL(f_Reduce_scatter, PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm),
              reduce_scatter(recvcounts, 0, type, comm));
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Ireduce_scatter,
              PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request),
              reduce_scatter(recvcounts, 0, type, comm));
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  CUBOID_COLL(f_Reduce_scatter_block,
              PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm),
              reduce_scatter(nullptr, recvcount, type, comm));
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Ireduce_scatter_block,
              PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request),
              reduce_scatter(nullptr, recvcount, type, comm));
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm) {
  CUBOID_COLL(f_Scan, PMPI_Scan(sendbuf, recvbuf, count, type, op, comm), scan(count, type, comm));
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Iscan, PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request),
              scan(count, type, comm));
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
  CUBOID_COLL(f_Exscan, PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm),
              scan(count, type, comm));
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  CUBOID_COLL(f_Iexscan, PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request),
              scan(count, type, comm));
}

#undef CUBOID_COLL

}  // extern "C"
