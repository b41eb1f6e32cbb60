#include "backends/cuda/search/plan_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dnnx::cuda {

namespace {

constexpr const char* kFormat = "dnnx plan cache 1";

using nlohmann::json;

json entry_to_json(const PlanRecord& e) {
  json rejected = json::array(), times = json::array();
  for (const TimedRejected& r : e.rejected) {
    rejected.push_back(json::array({r.algorithm, r.reason}));
    times.push_back(r.time_ms);
  }
  return {{"algo", e.algo},       {"math_type", e.math_type}, {"workspace", e.workspace_bytes},
          {"time_ms", e.time_ms}, {"algorithm", e.algorithm}, {"math", e.math},
          {"rejected", std::move(rejected)}, {"rejected_ms", std::move(times)}};
}

std::string string_or_empty(const json& v, const char* key) {
  auto it = v.find(key);
  return it != v.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The time of a rejected candidate in an entry written before "rejected_ms" (plan_cache.h): the
// number its reason starts with, "0.00844480023 ms, faster than ...", as the writers of those
// files read it back; -1 for a reason that starts with no time. Only this reader parses times.
double legacy_time(const std::string& reason) {
  char* end = nullptr;
  const double ms = std::strtod(reason.c_str(), &end);
  const bool timed = end != reason.c_str() && ms >= 0 && std::string(end).rfind(" ms", 0) == 0;
  return timed ? ms : -1;
}

// nullopt when a field is missing or of the wrong kind (an entry from another version).
std::optional<PlanRecord> entry_from_json(const json& v) {
  if (!v.is_object()) return std::nullopt;
  for (const char* key : {"algo", "math_type", "workspace", "time_ms"}) {
    auto it = v.find(key);
    if (it == v.end() || !it->is_number()) return std::nullopt;
  }
  PlanRecord e;
  e.algo = v["algo"].get<int>();
  e.math_type = v["math_type"].get<int>();
  e.workspace_bytes = v["workspace"].get<size_t>();
  e.time_ms = v["time_ms"].get<double>();
  e.algorithm = string_or_empty(v, "algorithm");
  e.math = string_or_empty(v, "math");
  auto rejected = v.find("rejected");
  if (rejected != v.end() && rejected->is_array()) {
    // The numbers, when the entry has one for each pair; else every time is derived.
    auto times = v.find("rejected_ms");
    const bool numbered = times != v.end() && times->is_array() && times->size() == rejected->size();
    for (size_t i = 0; i < rejected->size(); ++i) {
      const json& pair = (*rejected)[i];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) continue;
      const std::string reason = pair[1].get<std::string>();
      const bool number = numbered && (*times)[i].is_number();
      e.rejected.emplace_back(pair[0].get<std::string>(), reason,
                              number ? (*times)[i].get<double>() : numbered ? -1 : legacy_time(reason));
    }
  }
  return e;
}

// A name no other writer uses at the same time: this process and a counter.
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

PlanCache::PlanCache(std::string path, PlannerStats& stats) : path_(std::move(path)), stats_(stats) {
  entries_ = read_entries(true);
}

json PlanCache::read_entries(bool warn) const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return json::object();  // no file yet
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  try {
    json doc = json::parse(text.str());
    if (doc.is_object() && doc.value("format", std::string()) == kFormat && doc.contains("entries") &&
        doc["entries"].is_object()) {
      return doc["entries"];
    }
    why = std::string("not a '") + kFormat + "' file";
  } catch (const json::exception& e) {
    why = e.what();
  }
  if (warn) stats_.warn("plan cache " + path_ + " was ignored (" + why + "); it is rewritten on the next store");
  return json::object();
}

std::vector<Rejected> plain(const std::vector<TimedRejected>& rejected) {
  return std::vector<Rejected>(rejected.begin(), rejected.end());
}

std::optional<PlanRecord> PlanCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto entry = entries_.find(key);
  return entry != entries_.end() ? entry_from_json(*entry) : std::nullopt;
}

void PlanCache::store(const std::string& key, const PlanRecord& entry) {
  const json value = entry_to_json(entry);
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[key] = value;
  write_through(key, &value);
}

void PlanCache::drop(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(key);
  write_through(key, nullptr);
}

namespace {

// Note [plan cache lock]: processes planning at once (Ray actors, pytest-xdist workers, two CLI
// commands) each re-read, merge and rename; without a lock two of them can read the same old
// file and the later rename drops the earlier writer's entry. So the whole read-merge-write runs
// under an exclusive flock on a sidecar file, "<path>.lock" (never the cache file itself, which
// the rename replaces, nor removed afterwards: a removed lock file lets a third process lock a
// new inode while a second still holds the old one). flock locks belong to the open file, so two
// models of one process that share a path exclude each other as well. Readers take no lock: a
// rename is atomic, so a reader sees the old file or the new one, never a part. Where the lock
// file cannot be had (a read-only folder), the store goes on unlocked: the cache only saves time.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace

std::string PlanCache::lock_path() const { return path_ + ".lock"; }

void PlanCache::write_through(const std::string& key, const json* entry) {
  try {
    const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
  } catch (const std::exception&) {
    // the write below fails and says why
  }
  const FileLock lock(lock_path());  // Note [plan cache lock]
  json merged = read_entries(false);  // other processes' entries survive
  if (entry) {
    merged[key] = *entry;
  } else {
    merged.erase(key);
  }
  const json doc = {{"entries", std::move(merged)}, {"format", kFormat}};
  const std::string tmp = temporary_name(path_);
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << doc.dump(1) << '\n';  // one member per line: readable diffs
      out.flush();
      if (!out) throw std::runtime_error("cannot write " + tmp);
    }
    std::filesystem::rename(tmp, path_);  // atomic on one file system: readers see old or new
  } catch (const std::exception& e) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    stats_.warn("plan cache " + path_ + " could not be written (" + e.what() + ")");
  }
}

}  // namespace dnnx::cuda
