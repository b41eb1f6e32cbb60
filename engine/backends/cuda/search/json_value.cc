#include "backends/cuda/search/json_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dnnx::cuda {

const JsonValue* JsonValue::find(const std::string& key) const {
  if (kind != Kind::Object) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  JsonValue document() {
    JsonValue v = value();
    skip_space();
    if (pos_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw JsonError(what + " at byte " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  bool take_word(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }

  JsonValue value() {
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    const char c = s_[pos_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return JsonValue::of(string());
    JsonValue v;
    if (take_word("null")) return v;
    const bool is_true = take_word("true");
    if (is_true || take_word("false")) {
      v.kind = JsonValue::Kind::Bool;
      v.boolean = is_true;
      return v;
    }
    return JsonValue::of(number());
  }

  JsonValue object() {
    expect('{');
    JsonValue v = JsonValue::new_object();
    if (take('}')) return v;
    do {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
      std::string key = string();
      expect(':');
      v.object[key] = value();
    } while (take(','));
    expect('}');
    return v;
  }

  JsonValue array() {
    expect('[');
    JsonValue v = JsonValue::new_array();
    if (take(']')) return v;
    do {
      v.array.push_back(value());
    } while (take(','));
    expect(']');
    return v;
  }

  double number() {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    const double n = std::strtod(begin, &end);
    if (end == begin) fail("expected a value");
    pos_ += static_cast<size_t>(end - begin);
    return n;
  }

  void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("short \\u escape");
    unsigned cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return cp;
  }

  std::string string() {
    ++pos_;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {  // a surrogate pair
            pos_ += 2;
            const unsigned low = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

void dump_string(const std::string& s, std::string& out) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof(esc), "\\u%04x", static_cast<unsigned>(c));
          out += esc;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void dump(const JsonValue& v, std::string& out, int depth) {
  switch (v.kind) {
    case JsonValue::Kind::Null: out += "null"; break;
    case JsonValue::Kind::Bool: out += v.boolean ? "true" : "false"; break;
    case JsonValue::Kind::Number: {
      if (!std::isfinite(v.number)) {
        out += "null";
        break;
      }
      char text[32];
      std::snprintf(text, sizeof(text), "%.17g", v.number);
      out += text;
      break;
    }
    case JsonValue::Kind::String: dump_string(v.string, out); break;
    case JsonValue::Kind::Array: {
      out += '[';
      for (size_t i = 0; i < v.array.size(); ++i) {
        if (i) out += ", ";
        dump(v.array[i], out, depth + 1);
      }
      out += ']';
      break;
    }
    case JsonValue::Kind::Object: {
      out += '{';
      bool first = true;
      for (const auto& kv : v.object) {
        out += first ? "" : ",";
        if (depth < 2) out += "\n" + std::string(static_cast<size_t>(2 * (depth + 1)), ' ');
        else if (!first) out += ' ';
        first = false;
        dump_string(kv.first, out);
        out += ": ";
        dump(kv.second, out, depth + 1);
      }
      if (depth < 2 && !v.object.empty()) out += "\n" + std::string(static_cast<size_t>(2 * depth), ' ');
      out += '}';
      break;
    }
  }
}

}  // namespace

JsonValue parse_json(const std::string& text) { return Parser(text).document(); }

std::string dump_json(const JsonValue& value) {
  std::string out;
  dump(value, out, 0);
  out += '\n';
  return out;
}

}  // namespace dnnx::cuda
