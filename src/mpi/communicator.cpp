#include "mpi/communicator.hpp"

#include <cuboid/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "layout/rank_partition.hpp"

namespace cuboid::mpi {
using layout::NoCandidateFits;
namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(what) + ": " + std::string(text, std::size_t(len)));
  }
}

constexpr std::size_t kMaxMessage = std::size_t(1) << 30;

}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

MpiSession::MpiSession() {
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owner_ = true;
  }
  // Errors come back as codes and become exceptions (then agreement or abort), rather than
  // killing the job with MPI's own message.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiSession::~MpiSession() {
  if (owner_) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
  }
}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Communicator::barrier() const { check(MPI_Barrier(comm_), "MPI_Barrier"); }

std::vector<double> Communicator::allgather(double mine) const {
  std::vector<double> all(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm_), "MPI_Allgather");
  return all;
}

std::vector<double> Communicator::gather(const std::vector<double>& mine, int root) const {
  std::vector<double> all(rank_ == root ? mine.size() * std::size_t(size_) : 0);
  check(MPI_Gather(mine.data(), int(mine.size()), MPI_DOUBLE, all.data(), int(mine.size()),
                   MPI_DOUBLE, root, comm_),
        "MPI_Gather");
  return all;
}

std::vector<std::string> Communicator::gather(const std::string& mine, int root) const {
  int len = int(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size_)), offs(static_cast<std::size_t>(size_));
  check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
  std::string all;
  if (rank_ == root) {
    int total = 0;
    for (int r = 0; r < size_; ++r) offs[std::size_t(r)] = total, total += lens[std::size_t(r)];
    all.resize(std::size_t(total));
  }
  check(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR,
                    root, comm_),
        "MPI_Gatherv");
  std::vector<std::string> out;
  if (rank_ == root)
    for (int r = 0; r < size_; ++r)
      out.push_back(
          all.substr(std::size_t(offs[std::size_t(r)]), std::size_t(lens[std::size_t(r)])));
  return out;
}

double Communicator::allreduce_max(double v) const {
  double out = 0;
  check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return out;
}

double Communicator::allreduce_min(double v) const {
  double out = 0;
  check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MIN, comm_), "MPI_Allreduce");
  return out;
}

double Communicator::allreduce_sum(double v) const {
  double out = 0;
  check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
  return out;
}

void Communicator::allreduce_sum(std::vector<double>& v) const {
  check(MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, comm_),
        "MPI_Allreduce");
}

void Communicator::allreduce_max(std::vector<double>& v) const {
  check(MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_MAX, comm_),
        "MPI_Allreduce");
}

void Communicator::broadcast(std::vector<std::int64_t>& v, int root) const {
  std::int64_t n = std::int64_t(v.size());
  check(MPI_Bcast(&n, 1, MPI_INT64_T, root, comm_), "MPI_Bcast");
  v.resize(std::size_t(n));
  for (std::int64_t done = 0; done < n;) {  // counts are int: large vectors go in parts
    const int part = int(std::min<std::int64_t>(n - done, 1 << 28));
    check(MPI_Bcast(v.data() + done, part, MPI_INT64_T, root, comm_), "MPI_Bcast");
    done += part;
  }
}

void Communicator::broadcast(std::string& s, int root) const {
  int n = int(s.size());
  check(MPI_Bcast(&n, 1, MPI_INT, root, comm_), "MPI_Bcast");
  s.resize(std::size_t(n));
  check(MPI_Bcast(s.data(), n, MPI_CHAR, root, comm_), "MPI_Bcast");
}

void Communicator::agree(std::exception_ptr local) const {
  std::string message, key;
  int kind = int(FailureKind::error);
  if (local) {
    try {
      std::rethrow_exception(local);
    } catch (const Unsupported& e) {
      message = e.what(), key = e.key, kind = int(FailureKind::unsupported);
    } catch (const KeyedError& e) {
      message = e.what(), key = e.key, kind = int(FailureKind::keyed);
    } catch (const NoCandidateFits& e) {
      message = e.what(), kind = int(FailureKind::no_candidate);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "unknown error";
    }
  }
  int mine = local ? rank_ : size_, first = size_;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
  if (first == size_) return;
  check(MPI_Bcast(&kind, 1, MPI_INT, first, comm_), "MPI_Bcast");
  broadcast(message, first);
  broadcast(key, first);
  throw CollectiveFailure(first, message, FailureKind(kind), key);
}

void Communicator::allreduce_sum(double* v, std::size_t count) const {
  check(MPI_Allreduce(MPI_IN_PLACE, v, int(count), MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
}

void Communicator::alltoallv_bytes(const void* send, const std::vector<int>& send_counts,
                                   const std::vector<int>& send_displs, void* recv,
                                   const std::vector<int>& recv_counts,
                                   const std::vector<int>& recv_displs) const {
  check(MPI_Alltoallv(send, send_counts.data(), send_displs.data(), MPI_BYTE, recv,
                      recv_counts.data(), recv_displs.data(), MPI_BYTE, comm_),
        "MPI_Alltoallv");
}

std::vector<int> world_ranks(MPI_Comm comm, const std::vector<int>& ranks) {
  std::vector<int> world(ranks.size(), MPI_UNDEFINED);
  MPI_Group group = MPI_GROUP_NULL, world_group = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_translate_ranks(group, int(ranks.size()), ranks.data(), world_group, world.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  for (int w : world)
    if (w == MPI_UNDEFINED) throw Error("some of the processes are not in MPI_COMM_WORLD");
  return world;
}

MPI_Comm communicator_over(const std::vector<int>& world_ranks, int tag) {
  MPI_Group world_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, int(world_ranks.size()), world_ranks.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  if (rc != MPI_SUCCESS || comm == MPI_COMM_NULL) throw Error("MPI_Comm_create_group failed");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return comm;
}

void free_communicator(MPI_Comm& comm) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

MPI_Comm from_fortran(MPI_Fint comm) { return MPI_Comm_f2c(comm); }

void end_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return
}

void Communicator::abort(const std::string& message) const {
  std::cerr << "cuboid: error (rank " << rank_ << " of " << size_ << "): " << message << std::endl;
  MPI_Abort(comm_, 1);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

namespace {

// Posts `bytes` from `p` as messages of at most kMaxMessage bytes (MPI counts are int), one at
// least (an empty message for zero bytes): post(pointer, count, request) for each.
template <class Byte, class Post>
void post_in_pieces(Byte* p, std::size_t bytes, std::vector<MPI_Request>& out, Post post) {
  do {
    const std::size_t n = std::min(bytes, kMaxMessage);
    MPI_Request r;
    post(p, int(n), &r);
    out.push_back(r);
    p += n, bytes -= n;
  } while (bytes > 0);
}

}  // namespace

void Communicator::isend(const void* buf, std::size_t bytes, int dest, int tag,
                         std::vector<MPI_Request>& out) const {
  post_in_pieces(static_cast<const char*>(buf), bytes, out,
                 [&](const char* p, int n, MPI_Request* r) {
                   check(MPI_Isend(p, n, MPI_BYTE, dest, tag, comm_, r), "MPI_Isend");
                 });
}

std::vector<std::vector<Communicator::Block>> cut_into_messages(
    const std::vector<Communicator::Block>& blocks, std::size_t max_bytes) {
  std::vector<std::vector<Communicator::Block>> out(1);
  std::size_t size = 0;  // bytes of the message being gathered
  for (const auto& b : blocks) {
    const char* p = static_cast<const char*>(b.data);
    std::size_t left = b.bytes;
    while (left > 0) {
      if (size == max_bytes) out.emplace_back(), size = 0;
      const std::size_t n = std::min(left, max_bytes - size);
      out.back().push_back({p, n});
      size += n, p += n, left -= n;
    }
  }
  return out;
}

std::vector<Communicator::Block> merge_adjacent(const std::vector<Communicator::Block>& blocks) {
  std::vector<Communicator::Block> out;
  for (const auto& b : blocks) {
    if (b.bytes == 0) continue;
    if (!out.empty() && static_cast<const char*>(out.back().data) + out.back().bytes == b.data) {
      out.back().bytes += b.bytes;
      continue;
    }
    out.push_back(b);
  }
  return out;
}

void Communicator::isend_blocks(const std::vector<Block>& blocks, int dest, int tag,
                                std::vector<MPI_Request>& out) const {
  // A message that is one range of memory is sent as bytes, which MPI moves without packing
  // (a single copy between processes of a node).
  for (const auto& message : cut_into_messages(merge_adjacent(blocks), kMaxMessage)) {
    MPI_Request r;
    if (message.empty()) {  // an empty message, as irecv posts one for zero bytes
      check(MPI_Isend(nullptr, 0, MPI_BYTE, dest, tag, comm_, &r), "MPI_Isend");
      out.push_back(r);
      continue;
    }
    if (message.size() == 1) {
      check(MPI_Isend(message[0].data, int(message[0].bytes), MPI_BYTE, dest, tag, comm_, &r),
            "MPI_Isend");
      out.push_back(r);
      continue;
    }
    std::vector<int> lengths;
    std::vector<MPI_Aint> addresses;
    for (const auto& b : message) {
      MPI_Aint address;
      check(MPI_Get_address(b.data, &address), "MPI_Get_address");
      lengths.push_back(int(b.bytes)), addresses.push_back(address);
    }
    MPI_Datatype type;
    check(MPI_Type_create_hindexed(int(lengths.size()), lengths.data(), addresses.data(), MPI_BYTE,
                                   &type),
          "MPI_Type_create_hindexed");
    check(MPI_Type_commit(&type), "MPI_Type_commit");
    const int rc = MPI_Isend(MPI_BOTTOM, 1, type, dest, tag, comm_, &r);
    // Freeing a type in use by a pending send is allowed: the send completes normally.
    MPI_Type_free(&type);
    check(rc, "MPI_Isend");
    out.push_back(r);
  }
}

void Communicator::irecv(void* buf, std::size_t bytes, int source, int tag,
                         std::vector<MPI_Request>& out) const {
  post_in_pieces(static_cast<char*>(buf), bytes, out, [&](char* p, int n, MPI_Request* r) {
    check(MPI_Irecv(p, n, MPI_BYTE, source, tag, comm_, r), "MPI_Irecv");
  });
}

void Communicator::wait_all(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return;
  check(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  requests.clear();
}

double Communicator::wait_all_received(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return 0;
  std::vector<MPI_Status> status(requests.size());
  check(MPI_Waitall(int(requests.size()), requests.data(), status.data()), "MPI_Waitall");
  double bytes = 0;
  for (auto& st : status) {
    int count = 0;
    check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
    bytes += double(count);
  }
  requests.clear();
  return bytes;
}

bool Communicator::test_all(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return true;
  int done = 0;
  check(MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
  if (done) requests.clear();
  return done != 0;
}

bool Communicator::test_all_received(std::vector<MPI_Request>& requests, double& bytes) {
  if (requests.empty()) return true;
  std::vector<MPI_Status> status(requests.size());
  int done = 0;
  check(MPI_Testall(int(requests.size()), requests.data(), &done, status.data()), "MPI_Testall");
  if (!done) return false;
  for (auto& st : status) {
    int count = 0;
    check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
    bytes += double(count);
  }
  requests.clear();
  return true;
}

void Communicator::progress() const {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &st), "MPI_Iprobe");
}

}  // namespace cuboid::mpi
