#pragma once
// The only MPI surface of cuboid: a session, a communicator with the few collectives the MPI
// layer needs, and the rule for failures -- every rank learns that some rank failed, and why,
// instead of waiting forever in a collective the failed rank never reaches.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuboid::mpi {

// True when the process was started by mpirun/mpiexec/srun (Open MPI, MPICH/Hydra, PMIx):
// `cuboid run` then takes the distributed path, even at one rank.
bool launched_by_mpi();

// MPI for the lifetime of one command. The engine's worker threads never call MPI, so
// MPI_THREAD_FUNNELED is all that is asked for.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owner_ = false;
};

// What a rank failed with, carried to every rank so that each can act on it (rethrow the same
// type, retry with other settings) without reading the message.
enum class FailureKind : int {
  error = 0,         // any other exception
  keyed = 1,         // cuboid::KeyedError: a setting refused, named by `key`
  unsupported = 2,   // cuboid::Unsupported: a valid request this version does not compute
  no_candidate = 3,  // layout's NoCandidateFits: no rank partition gives every rank work
};

// Thrown on every rank when some rank failed; `what()` is the failing rank's message, so that
// rank 0 can print it. `origin` is the lowest failing rank; `kind` and `key` say what failed.
struct CollectiveFailure : std::runtime_error {
  CollectiveFailure(int rank, const std::string& msg, FailureKind k = FailureKind::error,
                    std::string setting = {})
      : std::runtime_error(msg), origin(rank), kind(k), key(std::move(setting)) {}
  int origin;
  FailureKind kind;
  std::string key;
};

class Communicator {
 public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD);
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm raw() const { return comm_; }

  void barrier() const;
  std::vector<double> allgather(double mine) const;
  // Every rank gives the same number of values; the root gets them rank by rank.
  std::vector<double> gather(const std::vector<double>& mine, int root) const;
  std::vector<std::string> gather(const std::string& mine, int root) const;
  double allreduce_max(double v) const;
  double allreduce_min(double v) const;
  double allreduce_sum(double v) const;
  void allreduce_sum(std::vector<double>& v) const;        // in place
  void allreduce_sum(double* v, std::size_t count) const;  // in place
  void allreduce_max(std::vector<double>& v) const;        // in place
  // Root's values (and size) to every rank.
  void broadcast(std::vector<std::int64_t>& v, int root) const;
  void broadcast(std::string& s, int root) const;

  // Collective: returns when no rank failed; otherwise throws CollectiveFailure on every rank
  // with the message of the lowest failing rank. `local` is this rank's failure (or null).
  void agree(std::exception_ptr local) const;

  // For failures in the middle of point-to-point traffic, where agreeing is impossible: prints
  // the message with the rank and ends every process.
  [[noreturn]] void abort(const std::string& message) const;

  // Non-blocking byte transfers, split into messages of at most 1 GiB (MPI counts are int);
  // the pieces keep their order since they share source, tag and communicator.
  void isend(const void* buf, std::size_t bytes, int dest, int tag,
             std::vector<MPI_Request>& out) const;
  void irecv(void* buf, std::size_t bytes, int source, int tag,
             std::vector<MPI_Request>& out) const;
  // A send gathered from `blocks` in order, read where they lie (a derived datatype per message,
  // or plain bytes where the blocks make one range of memory): no packing buffer. It matches an
  // irecv of the blocks' total bytes, split the same way. The blocks must stay unchanged until
  // the requests complete.
  struct Block {
    const void* data = nullptr;
    std::size_t bytes = 0;
  };
  void isend_blocks(const std::vector<Block>& blocks, int dest, int tag,
                    std::vector<MPI_Request>& out) const;
  static void wait_all(std::vector<MPI_Request>& requests);
  // The same for receives, returning the bytes they delivered (MPI_Get_count): what MPI
  // measured, to set beside what the plan expected.
  static double wait_all_received(std::vector<MPI_Request>& requests);
  // Non-blocking forms: true (and the requests cleared, a receive's bytes added to `bytes`)
  // when every request has completed.
  static bool test_all(std::vector<MPI_Request>& requests);
  static bool test_all_received(std::vector<MPI_Request>& requests, double& bytes);
  // MPI_Alltoallv on bytes: counts and displacements per rank, in bytes. Throws Error when MPI
  // fails (errors come back on communicators whose handler returns them).
  void alltoallv_bytes(const void* send, const std::vector<int>& send_counts,
                       const std::vector<int>& send_displs, void* recv,
                       const std::vector<int>& recv_counts,
                       const std::vector<int>& recv_displs) const;
  // Gives MPI a chance to move pending messages (a non-blocking probe: any MPI call progresses
  // the library, and a probe has no side effects).
  void progress() const;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

// Communicators made from groups, for a caller whose processes are named elsewhere (a BLACS grid):
// the ranks in MPI_COMM_WORLD of the processes numbered `ranks` in `comm` (Error when one is not
// in MPI_COMM_WORLD); a new communicator over the processes with these world ranks, ranked in
// this order (collective over them; Error when MPI cannot make it), its errors returned as codes.
std::vector<int> world_ranks(MPI_Comm comm, const std::vector<int>& ranks);
MPI_Comm communicator_over(const std::vector<int>& world_ranks, int tag);
// Frees a communicator cuboid made, unless MPI has finalised (which freed it); leaves it NULL.
void free_communicator(MPI_Comm& comm);
// A Fortran handle (MPI_Fint) as a C communicator.
MPI_Comm from_fortran(MPI_Fint comm);
// Ends every process of the job with `code` (MPI_Abort on MPI_COMM_WORLD).
[[noreturn]] void end_job(int code);

// The messages a gathered send is cut into, cut where irecv cuts a receive of the same total:
// every message but the last carries exactly `max_bytes`, a block may be split between two, and
// nothing to send is one empty message.
std::vector<std::vector<Communicator::Block>> cut_into_messages(
    const std::vector<Communicator::Block>& blocks, std::size_t max_bytes);
// The same bytes in the same order as the fewest blocks: a block that starts where the one
// before it ends joins it; empty blocks are dropped.
std::vector<Communicator::Block> merge_adjacent(const std::vector<Communicator::Block>& blocks);

}  // namespace cuboid::mpi
