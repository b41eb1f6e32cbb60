// A small JSON value, reader and writer: enough for the plan cache file (plan_cache.h), which
// holds objects, arrays, strings and numbers. Objects keep their keys sorted (std::map), so a
// file written twice from the same entries is byte-identical.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace dnnx::cuda {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  static JsonValue of(double n) { JsonValue v; v.kind = Kind::Number; v.number = n; return v; }
  static JsonValue of(std::string s) { JsonValue v; v.kind = Kind::String; v.string = std::move(s); return v; }
  static JsonValue new_array() { JsonValue v; v.kind = Kind::Array; return v; }
  static JsonValue new_object() { JsonValue v; v.kind = Kind::Object; return v; }

  // The member `key` of an object, or nullptr (also when this is no object).
  const JsonValue* find(const std::string& key) const;
};

struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses one JSON document; JsonError with the byte offset when the text is not JSON.
JsonValue parse_json(const std::string& text);
// Writes `value` as JSON, one object member per line at the top level (readable diffs).
std::string dump_json(const JsonValue& value);

}  // namespace dnnx::cuda
