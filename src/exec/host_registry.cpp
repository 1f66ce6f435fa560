#include "exec/host_registry.hpp"

#include <algorithm>
#include <utility>

namespace cuboid::exec {

namespace {
// Runtimes lock whole pages: two ranges on one page overlap for them.
constexpr std::uintptr_t kPage = 4096;
}  // namespace

PinLease::PinLease(HostRegistry& registry, std::vector<ByteRange> wanted) : r_(&registry) {
  wanted.erase(
      std::remove_if(wanted.begin(), wanted.end(), [](const ByteRange& b) { return b.hi <= b.lo; }),
      wanted.end());
  std::sort(wanted.begin(), wanted.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.lo < b.lo; });
  // The union, in whole pages, each with the bytes actually wanted at its ends.
  std::vector<Span> spans;
  for (const ByteRange& b : wanted) {
    const std::uintptr_t lo = b.lo / kPage * kPage, hi = (b.hi + kPage - 1) / kPage * kPage;
    if (!spans.empty() && lo <= spans.back().hi) {
      spans.back().hi = std::max(spans.back().hi, hi);
      spans.back().last = std::max(spans.back().last, b.hi);
    } else {
      spans.push_back(Span{lo, hi, b.lo, b.hi});
    }
  }
  try {
    acquire(spans);
  } catch (...) {
    release();  // what was registered before the failure
    throw;
  }
}

void PinLease::acquire(const std::vector<Span>& spans) {
  HostRegistry& r = *r_;
  std::lock_guard<std::mutex> lock(r.m_);
  for (const Span& s : spans) {
    auto it = r.pieces_.lower_bound(s.lo);
    if (it != r.pieces_.begin() && std::prev(it)->second.hi > s.lo) --it;
    const bool ours = it != r.pieces_.end() && it->first < s.hi;
    // Pinned by someone else (allocated pinned, or registered by the caller): as it is.
    if (!ours && r.hooks_.host_pinned(reinterpret_cast<const void*>(s.first)) &&
        r.hooks_.host_pinned(reinterpret_cast<const void*>(s.last - 1))) {
      usable_.push_back(ByteRange{s.first, s.last});
      continue;
    }
    // Registers the gaps between the pieces already held and takes a reference on each. A copy
    // is page-locked only within one registration: each piece is a usable range of its own.
    std::uintptr_t at = s.lo;
    auto use = [&](std::uintptr_t lo, std::uintptr_t hi) {
      usable_.push_back(ByteRange{std::max(lo, s.lo), std::min(hi, s.hi)});
    };
    auto take = [&](std::uintptr_t lo, std::uintptr_t hi) {
      if (r.hooks_.register_host(reinterpret_cast<void*>(lo), std::size_t(hi - lo))) {
        r.pieces_[lo] = HostRegistry::Piece{hi, 1};
        held_.push_back(lo);
        ++registrations_;
        registered_bytes_ += double(hi - lo);
        use(lo, hi);
      } else {
        ++refused_;
      }
    };
    for (; it != r.pieces_.end() && it->first < s.hi; ++it) {
      if (it->first > at) take(at, it->first);
      ++it->second.refs;
      held_.push_back(it->first);
      use(it->first, it->second.hi);
      at = std::max(at, it->second.hi);
    }
    if (at < s.hi) take(at, s.hi);
  }
}

PinLease& PinLease::operator=(PinLease&& o) noexcept {
  if (this != &o) {
    release();
    r_ = std::exchange(o.r_, nullptr);
    held_ = std::move(o.held_);
    usable_ = std::move(o.usable_);
    registrations_ = o.registrations_, refused_ = o.refused_;
    registered_bytes_ = o.registered_bytes_;
    o.held_.clear(), o.usable_.clear();
  }
  return *this;
}

bool PinLease::covers(const void* first, const void* end) const {
  const auto a = reinterpret_cast<std::uintptr_t>(first), b = reinterpret_cast<std::uintptr_t>(end);
  auto it = std::upper_bound(usable_.begin(), usable_.end(), a,
                             [](std::uintptr_t x, const ByteRange& r) { return x < r.lo; });
  if (it == usable_.begin()) return false;
  --it;
  return a >= it->lo && b <= it->hi;
}

void PinLease::release() {
  if (r_ == nullptr) return;
  std::lock_guard<std::mutex> lock(r_->m_);
  for (const std::uintptr_t lo : held_) {
    auto it = r_->pieces_.find(lo);
    if (it == r_->pieces_.end()) continue;
    if (--it->second.refs == 0) {
      r_->hooks_.unregister_host(reinterpret_cast<void*>(lo));
      r_->pieces_.erase(it);
    }
  }
  held_.clear();
  usable_.clear();
  r_ = nullptr;
}

}  // namespace cuboid::exec
