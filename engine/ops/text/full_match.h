// Note [full match]: RegexFullMatch's patterns, matched by dnnx itself rather than std::regex.
// libstdc++'s std::regex died compiling any pattern with a class ("[a-z]+", "\w+") on the GPU
// machine's Ubuntu 24.04 build (GCC 13.3; a segfault inside the compiler, 2026-12-05), and its
// ECMAScript grammar is not RE2's. This is a Thompson NFA over code points, run as a Pike VM: the
// time is linear in the input times the program, nothing recurses per input character, and the
// parser's recursion is bounded by the pattern's nesting (kMaxNesting). It reads RE2's syntax that
// onnxruntime's patterns use: literals and escapes, `.` (any code point but \n), classes with
// ranges, negation, \d \w \s (ASCII, as RE2) and their negations and [:alpha:]-style names, groups
// (capturing, (?:...), (?P<name>...)), alternation, * + ? {n} {n,} {n,m} (and their lazy forms,
// the same for a full match), ^ $ \A \z \b \B. Input is UTF-8 (an invalid byte is one code point).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dnnx {

class FullMatchPattern {
 public:
  // Compiles `pattern`; throws std::invalid_argument saying what it cannot read.
  explicit FullMatchPattern(const std::string& pattern);

  // Whether the pattern matches all of `text`.
  bool matches(std::string_view text) const;

  struct Range {
    uint32_t lo, hi;
  };
  struct CharClass {
    std::vector<Range> ranges;
    bool negated = false;
    bool contains(uint32_t c) const;
  };
  enum class Op : uint8_t { Char, Class, Any, Split, Jump, Match, Begin, End, WordBoundary, NotWordBoundary };
  struct Inst {
    Op op;
    uint32_t c = 0;    // Char: the code point; Class: the class index
    int32_t x = 0, y = 0;  // Jump: x; Split: x then y
  };

 private:
  std::vector<Inst> program_;
  std::vector<CharClass> classes_;
};

}  // namespace dnnx
