#include "backends/cuda/search/plan_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dnnx::cuda {

namespace {

constexpr const char* kFormat = "dnnx plan cache 1";

JsonValue to_json(const CachedConvAlgo& e) {
  JsonValue v = JsonValue::new_object();
  v.object["algo"] = JsonValue::of(e.algo);
  v.object["math_type"] = JsonValue::of(e.math_type);
  v.object["workspace"] = JsonValue::of(static_cast<double>(e.workspace_bytes));
  v.object["time_ms"] = JsonValue::of(e.time_ms);
  v.object["algorithm"] = JsonValue::of(e.algorithm);
  v.object["math"] = JsonValue::of(e.math);
  JsonValue rejected = JsonValue::new_array();
  for (const Rejected& r : e.rejected) {
    JsonValue pair = JsonValue::new_array();
    pair.array.push_back(JsonValue::of(r.algorithm));
    pair.array.push_back(JsonValue::of(r.reason));
    rejected.array.push_back(pair);
  }
  v.object["rejected"] = rejected;
  return v;
}

// nullopt when a field is missing or of the wrong kind (an entry from another version).
std::optional<CachedConvAlgo> from_json(const JsonValue& v) {
  const JsonValue* algo = v.find("algo");
  const JsonValue* math_type = v.find("math_type");
  const JsonValue* workspace = v.find("workspace");
  const JsonValue* time_ms = v.find("time_ms");
  for (const JsonValue* n : {algo, math_type, workspace, time_ms}) {
    if (!n || n->kind != JsonValue::Kind::Number) return std::nullopt;
  }
  CachedConvAlgo e;
  e.algo = static_cast<int>(algo->number);
  e.math_type = static_cast<int>(math_type->number);
  e.workspace_bytes = static_cast<size_t>(workspace->number);
  e.time_ms = time_ms->number;
  if (const JsonValue* s = v.find("algorithm")) e.algorithm = s->string;
  if (const JsonValue* s = v.find("math")) e.math = s->string;
  if (const JsonValue* rejected = v.find("rejected")) {
    for (const JsonValue& pair : rejected->array) {
      if (pair.array.size() == 2) e.rejected.push_back({pair.array[0].string, pair.array[1].string});
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

JsonValue PlanCache::read_entries(bool warn) const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return JsonValue::new_object();  // no file yet
  std::stringstream text;
  text << in.rdbuf();
  try {
    JsonValue doc = parse_json(text.str());
    const JsonValue* format = doc.find("format");
    const JsonValue* entries = doc.find("entries");
    if (!format || format->string != kFormat || !entries || entries->kind != JsonValue::Kind::Object) {
      throw JsonError(std::string("not a '") + kFormat + "' file");
    }
    return *entries;
  } catch (const JsonError& e) {
    if (warn) stats_.warn("plan cache " + path_ + " was ignored (" + e.what() + "); it is rewritten on the next store");
    return JsonValue::new_object();
  }
}

std::optional<CachedConvAlgo> PlanCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const JsonValue* entry = entries_.find(key);
  return entry ? from_json(*entry) : std::nullopt;
}

void PlanCache::store(const std::string& key, const CachedConvAlgo& entry) {
  const JsonValue value = to_json(entry);
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.object[key] = value;
  write_through(key, &value);
}

void PlanCache::drop(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.object.erase(key);
  write_through(key, nullptr);
}

void PlanCache::write_through(const std::string& key, const JsonValue* entry) {
  JsonValue merged = read_entries(false);  // other processes' entries survive
  if (entry) {
    merged.object[key] = *entry;
  } else {
    merged.object.erase(key);
  }
  JsonValue doc = JsonValue::new_object();
  doc.object["format"] = JsonValue::of(kFormat);
  doc.object["entries"] = merged;
  const std::string tmp = temporary_name(path_);
  try {
    const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << dump_json(doc);
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
