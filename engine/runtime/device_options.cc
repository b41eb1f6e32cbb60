// The names and defaults of DeviceOptions (device_options.h): the one list every front door
// (dnnx.load, the CLI, the onnx backend) reads through the bindings, so that no other layer
// keeps a copy of the allowed values.
#include "runtime/device_options.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "ir/errors.h"

namespace dnnx {

namespace {

const std::vector<std::pair<std::string, Precision>>& precision_table() {
  static const std::vector<std::pair<std::string, Precision>> t = {
      {"fp32", Precision::Fp32}, {"tf32", Precision::Tf32}, {"fp16", Precision::Fp16}, {"bf16", Precision::Bf16}};
  return t;
}

const std::vector<std::pair<std::string, AlgoSearch>>& algo_search_table() {
  static const std::vector<std::pair<std::string, AlgoSearch>> t = {
      {"auto", AlgoSearch::Auto}, {"heuristic", AlgoSearch::Heuristic}, {"exhaustive", AlgoSearch::Exhaustive},
      {"background", AlgoSearch::Background}};
  return t;
}

template <class E>
E from_name(const std::vector<std::pair<std::string, E>>& table, const std::string& name, const char* what) {
  std::string allowed;
  for (const auto& [n, value] : table) {
    if (n == name) return value;
    allowed += (allowed.empty() ? "" : ", ") + n;
  }
  throw InputError(std::string(what) + " must be one of " + allowed + ", got '" + name + "'");
}

template <class E>
std::vector<std::string> names(const std::vector<std::pair<std::string, E>>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.push_back(entry.first);
  return out;
}

template <class E>
std::string name_of(const std::vector<std::pair<std::string, E>>& table, E value) {
  for (const auto& [n, v] : table) {
    if (v == value) return n;
  }
  return "?";
}

}  // namespace

std::atomic<int>& foreground_runs() {
  static std::atomic<int> count{0};
  return count;
}

std::atomic<uint64_t>& foreground_starts() {
  static std::atomic<uint64_t> count{0};
  return count;
}

namespace {
thread_local bool search_thread = false;
}  // namespace

void set_search_thread(bool on) { search_thread = on; }
bool on_search_thread() { return search_thread; }

Precision parse_precision(const std::string& name) { return from_name(precision_table(), name, "precision"); }

AlgoSearch parse_algo_search(const std::string& name) {
  return from_name(algo_search_table(), name, "algo_search");
}

std::vector<std::string> precision_names() { return names(precision_table()); }
std::vector<std::string> algo_search_names() { return names(algo_search_table()); }

std::string precision_name(Precision p) { return name_of(precision_table(), p); }
std::string algo_search_name(AlgoSearch a) { return name_of(algo_search_table(), a); }

namespace {

std::string trimmed(const std::string& text) {
  const size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

DeviceKind parse_device(const std::string& text) {
  std::string lower;
  for (char c : trimmed(text)) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t colon = lower.find(':');
  const std::string name = lower.substr(0, colon);
  const std::string index = colon == std::string::npos ? "0" : lower.substr(colon + 1);
  if (all_digits(index) && index.size() < 6) {
    const int n = std::atoi(index.c_str());
    if (name == "cuda") return {true, n};
    if (name == "cpu" && n == 0) return {false, 0};
  }
  throw DeviceError("device '" + text + "' is not supported ('cpu', 'cuda' or 'cuda:N')");
}

size_t parse_byte_size(const std::string& text, const std::string& what) {
  // "256MiB", "1.5 GB", "0": a number and an optional unit, decimal (KB) or binary (KiB).
  static const std::vector<std::pair<std::string, double>> units = {
      {"", 1},       {"B", 1},         {"KB", 1e3},       {"MB", 1e6},        {"GB", 1e9},
      {"KIB", 1024}, {"MIB", 1048576}, {"GIB", 1073741824.0}};
  const std::string t = trimmed(text);
  size_t end = 0;
  while (end < t.size() && std::isdigit(static_cast<unsigned char>(t[end]))) ++end;
  const size_t int_digits = end;
  if (end < t.size() && t[end] == '.') {
    ++end;
    while (end < t.size() && std::isdigit(static_cast<unsigned char>(t[end]))) ++end;
  }
  std::string unit = trimmed(t.substr(end));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (int_digits > 0) {
    for (const auto& [name, scale] : units) {
      if (name == unit) return static_cast<size_t>(std::strtod(t.substr(0, end).c_str(), nullptr) * scale);
    }
  }
  throw InputError(what + ": expected bytes as an int or a string like '256MiB', got '" + text + "'");
}

std::string default_plan_cache_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::filesystem::path base = xdg && *xdg ? std::filesystem::path(xdg)
                                                 : std::filesystem::path(home ? home : ".") / ".cache";
  return (base / "dnnx" / "plan-cache.json").string();
}

std::string plan_cache_file(const std::string& path) {
  if (path.empty()) throw InputError("plan_cache: expected a file path, True (the default file) or False/None (off), got ''");
  std::string expanded = path;
  if (expanded[0] == '~' && (expanded.size() == 1 || expanded[1] == '/')) {
    const char* home = std::getenv("HOME");
    expanded = std::string(home ? home : "") + expanded.substr(1);
  }
  return std::filesystem::absolute(expanded).lexically_normal().string();
}

}  // namespace dnnx
