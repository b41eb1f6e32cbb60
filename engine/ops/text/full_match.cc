// Note [full match] (full_match.h): parse to a tree, emit a Thompson NFA program, run it as a Pike VM.
#include "ops/text/full_match.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace dnnx {

namespace {

using Op = FullMatchPattern::Op;
using Inst = FullMatchPattern::Inst;
using CharClass = FullMatchPattern::CharClass;

constexpr int kMaxNesting = 1000;     // groups inside groups: the parser's recursion
constexpr int kMaxRepeat = 1000;      // RE2's bound on {n,m}
constexpr size_t kMaxProgram = 1 << 20;  // instructions, after counted repeats are unrolled

[[noreturn]] void refuse(const std::string& why) { throw std::invalid_argument(why); }

// One code point of UTF-8 `s` at `i` (advancing i); an invalid byte is a code point of its own.
uint32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len <= 1 || i + len > s.size()) {
    ++i;
    return b0;
  }
  uint32_t c = b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return b0;
    }
    c = (c << 6) | (b & 0x3F);
  }
  i += len;
  return c;
}

bool is_word(uint32_t c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

struct Node {
  enum Kind { Char, Class, Any, Concat, Alt, Repeat, Assert } kind;
  uint32_t c = 0;        // Char: code point; Class: class index
  Op assert_op = Op::Begin;
  int min = 0, max = -1;  // Repeat: max -1 = unbounded
  std::vector<std::unique_ptr<Node>> kids;
};
using NodePtr = std::unique_ptr<Node>;

NodePtr make(Node::Kind kind) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  return n;
}

// The RE2 syntax of full_match.h, recursive descent: alternation > concatenation > repetition > atom.
class Parser {
 public:
  Parser(const std::string& p, std::vector<CharClass>& classes) : p_(p), classes_(classes) {}

  NodePtr parse() {
    NodePtr n = alternation(0);
    if (i_ < p_.size()) refuse(p_[i_] == ')' ? "unexpected )" : "unexpected character");
    return n;
  }

 private:
  bool at(char c) const { return i_ < p_.size() && p_[i_] == c; }

  NodePtr alternation(int depth) {
    if (depth > kMaxNesting) refuse("groups nested deeper than " + std::to_string(kMaxNesting));
    NodePtr first = concatenation(depth);
    if (!at('|')) return first;
    NodePtr alt = make(Node::Alt);
    alt->kids.push_back(std::move(first));
    while (at('|')) {
      ++i_;
      alt->kids.push_back(concatenation(depth));
    }
    return alt;
  }

  NodePtr concatenation(int depth) {
    NodePtr cat = make(Node::Concat);
    while (i_ < p_.size() && !at('|') && !at(')')) cat->kids.push_back(repetition(depth));
    return cat;
  }

  NodePtr repetition(int depth) {
    if (at('*') || at('+') || at('?')) refuse("missing argument to repetition operator");
    NodePtr atom_node = atom(depth);
    for (;;) {
      int min = 0, max = -1;
      if (at('*')) {
        ++i_;
      } else if (at('+')) {
        min = 1, ++i_;
      } else if (at('?')) {
        max = 1, ++i_;
      } else if (!counted(min, max)) {
        return atom_node;
      }
      if (at('?')) ++i_;  // lazy: the same for a full match
      if (at('*') || at('+')) refuse("bad repetition operator");
      NodePtr rep = make(Node::Repeat);
      rep->min = min, rep->max = max;
      rep->kids.push_back(std::move(atom_node));
      atom_node = std::move(rep);
    }
  }

  // {n}, {n,}, {n,m} at i_ (then consumed); false, and nothing consumed, for a literal '{'.
  bool counted(int& min, int& max) {
    if (!at('{')) return false;
    size_t j = i_ + 1;
    auto number = [&](int& out) {
      const size_t from = j;
      long v = 0;
      while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9' && v <= kMaxRepeat) v = v * 10 + (p_[j++] - '0');
      out = static_cast<int>(v);
      return j > from;
    };
    if (!number(min)) return false;
    max = min;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      max = -1;
      if (j < p_.size() && p_[j] != '}' && !number(max)) return false;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    if (min > kMaxRepeat || max > kMaxRepeat || (max >= 0 && max < min)) refuse("bad repetition operator");
    i_ = j + 1;
    return true;
  }

  NodePtr atom(int depth) {
    const char ch = p_[i_];
    if (ch == '(') {
      ++i_;
      if (at('?')) {  // (?:...), (?P<name>...), (?<name>...); flags are not read
        if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
          i_ += 2;
        } else if (p_.compare(i_, 3, "?P<") == 0 || p_.compare(i_, 2, "?<") == 0) {
          const size_t close = p_.find('>', i_);
          if (close == std::string::npos) refuse("invalid named capture group");
          i_ = close + 1;
        } else {
          refuse("(?flags) groups are not supported");
        }
      }
      NodePtr inner = alternation(depth + 1);
      if (!at(')')) refuse("missing )");
      ++i_;
      return inner;
    }
    ++i_;
    switch (ch) {
      case '.': return make(Node::Any);
      case '^': return assertion(Op::Begin);
      case '$': return assertion(Op::End);
      case '[': return char_class();
      case '\\': return escape();
      default: break;
    }
    --i_;
    return literal(next_code_point(p_, i_));
  }

  NodePtr literal(uint32_t c) {
    NodePtr n = make(Node::Char);
    n->c = c;
    return n;
  }

  NodePtr assertion(Op op) {
    NodePtr n = make(Node::Assert);
    n->assert_op = op;
    return n;
  }

  NodePtr class_node(CharClass cls) {
    classes_.push_back(std::move(cls));
    NodePtr n = make(Node::Class);
    n->c = static_cast<uint32_t>(classes_.size() - 1);
    return n;
  }

  // \d \w \s (and their upper-case negations) into `cls`; false for another letter.
  static bool perl_class(char e, CharClass& cls, bool& negated) {
    negated = e == 'D' || e == 'W' || e == 'S';
    switch (e) {
      case 'd': case 'D': cls.ranges.push_back({'0', '9'}); return true;
      case 'w': case 'W':
        cls.ranges.insert(cls.ranges.end(), {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}, {'_', '_'}});
        return true;
      case 's': case 'S':  // RE2: [\t\n\f\r ]
        cls.ranges.insert(cls.ranges.end(), {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}});
        return true;
      default: return false;
    }
  }

  // The code point an escape names (\n, \x41, \x{263a}, \., ...) after the backslash.
  uint32_t escaped_code_point() {
    if (i_ >= p_.size()) refuse("trailing \\");
    const char e = p_[i_++];
    switch (e) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'a': return '\a';
      case 'x': {
        const bool braced = at('{');
        if (braced) ++i_;
        uint32_t v = 0;
        int digits = 0;
        while (i_ < p_.size() && std::isxdigit(static_cast<unsigned char>(p_[i_])) && (braced || digits < 2)) {
          const char h = static_cast<char>(std::tolower(static_cast<unsigned char>(p_[i_++])));
          v = v * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : h - 'a' + 10);
          if (++digits > 8) refuse("invalid escape sequence");
        }
        if (digits == 0 || (!braced && digits != 2) || (braced && !at('}'))) refuse("invalid escape sequence");
        if (braced) ++i_;
        return v;
      }
      default:
        if (std::isalnum(static_cast<unsigned char>(e))) refuse(std::string("invalid escape sequence \\") + e);
        return static_cast<unsigned char>(e);  // an escaped punctuation character stands for itself
    }
  }

  NodePtr escape() {
    if (i_ >= p_.size()) refuse("trailing \\");
    const char e = p_[i_];
    CharClass cls;
    bool negated = false;
    if (perl_class(e, cls, negated)) {
      ++i_;
      cls.negated = negated;
      return class_node(std::move(cls));
    }
    switch (e) {
      case 'b': ++i_; return assertion(Op::WordBoundary);
      case 'B': ++i_; return assertion(Op::NotWordBoundary);
      case 'A': ++i_; return assertion(Op::Begin);
      case 'z': ++i_; return assertion(Op::End);
      default: return literal(escaped_code_point());
    }
  }

  // [:alpha:] and its kin at i_ (consumed) into `cls`; false when i_ is not at one.
  bool posix_class(CharClass& cls) {
    if (p_.compare(i_, 2, "[:") != 0) return false;
    const size_t close = p_.find(":]", i_ + 2);
    if (close == std::string::npos) return false;
    std::string name = p_.substr(i_ + 2, close - i_ - 2);
    const bool negated = !name.empty() && name[0] == '^';
    if (negated) name = name.substr(1);
    std::vector<FullMatchPattern::Range> r;
    if (name == "alpha") r = {{'A', 'Z'}, {'a', 'z'}};
    else if (name == "digit") r = {{'0', '9'}};
    else if (name == "alnum") r = {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}};
    else if (name == "upper") r = {{'A', 'Z'}};
    else if (name == "lower") r = {{'a', 'z'}};
    else if (name == "space") r = {{'\t', '\r'}, {' ', ' '}};
    else if (name == "xdigit") r = {{'0', '9'}, {'A', 'F'}, {'a', 'f'}};
    else if (name == "word") r = {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}, {'_', '_'}};
    else if (name == "punct") r = {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}};
    else if (name == "blank") r = {{'\t', '\t'}, {' ', ' '}};
    else if (name == "cntrl") r = {{0, 31}, {127, 127}};
    else if (name == "print") r = {{' ', '~'}};
    else if (name == "graph") r = {{'!', '~'}};
    else refuse("invalid character class range [:" + name + ":]");
    if (negated) r = complement(r);
    cls.ranges.insert(cls.ranges.end(), r.begin(), r.end());
    i_ = close + 2;
    return true;
  }

  static std::vector<FullMatchPattern::Range> complement(std::vector<FullMatchPattern::Range> r) {
    std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.lo < b.lo; });
    std::vector<FullMatchPattern::Range> out;
    uint32_t next = 0;
    for (const auto& x : r) {
      if (x.lo > next) out.push_back({next, x.lo - 1});
      next = std::max(next, x.hi + 1);
    }
    out.push_back({next, 0x10FFFF});
    return out;
  }

  NodePtr char_class() {
    CharClass cls;
    if (at('^')) cls.negated = true, ++i_;
    bool first = true;
    while (i_ < p_.size() && (first || !at(']'))) {
      first = false;
      if (posix_class(cls)) continue;
      uint32_t lo = 0;
      if (at('\\')) {
        ++i_;
        CharClass perl;
        bool negated = false;
        if (i_ < p_.size() && perl_class(p_[i_], perl, negated)) {
          ++i_;
          if (negated) perl.ranges = complement(std::move(perl.ranges));
          cls.ranges.insert(cls.ranges.end(), perl.ranges.begin(), perl.ranges.end());
          continue;
        }
        lo = escaped_code_point();
      } else {
        lo = next_code_point(p_, i_);
      }
      uint32_t hi = lo;
      if (at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        ++i_;
        if (at('\\')) {
          ++i_;
          hi = escaped_code_point();
        } else {
          hi = next_code_point(p_, i_);
        }
        if (hi < lo) refuse("invalid character class range");
      }
      cls.ranges.push_back({lo, hi});
    }
    if (!at(']')) refuse("missing ]");
    ++i_;
    return class_node(std::move(cls));
  }

  const std::string& p_;
  std::vector<CharClass>& classes_;
  size_t i_ = 0;
};

// Emits the program of a tree (Thompson's construction; counted repeats unrolled).
class Emitter {
 public:
  explicit Emitter(std::vector<Inst>& program) : prog_(program) {}

  void emit(const Node& n) {
    if (prog_.size() > kMaxProgram) refuse("the pattern is too large (its counted repeats unrolled)");
    switch (n.kind) {
      case Node::Char: push({Op::Char, n.c}); return;
      case Node::Class: push({Op::Class, n.c}); return;
      case Node::Any: push({Op::Any}); return;
      case Node::Assert: push({n.assert_op}); return;
      case Node::Concat:
        for (const auto& k : n.kids) emit(*k);
        return;
      case Node::Alt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k + 1 < n.kids.size(); ++k) {
          const size_t split = push({Op::Split});
          prog_[split].x = here();
          emit(*n.kids[k]);
          jumps.push_back(push({Op::Jump}));
          prog_[split].y = here();
        }
        emit(*n.kids.back());
        for (size_t j : jumps) prog_[j].x = here();
        return;
      }
      case Node::Repeat: {
        const Node& body = *n.kids[0];
        for (int k = 0; k < n.min; ++k) emit(body);
        if (n.max < 0) {  // L: split body, out; body; jump L
          const size_t split = push({Op::Split});
          prog_[split].x = here();
          emit(body);
          Inst back{Op::Jump};
          back.x = static_cast<int32_t>(split);
          push(back);
          prog_[split].y = here();
        } else {
          std::vector<size_t> splits;
          for (int k = n.min; k < n.max; ++k) {  // each optional copy: split body, out
            const size_t split = push({Op::Split});
            prog_[split].x = here();
            splits.push_back(split);
            emit(body);
          }
          for (size_t s : splits) prog_[s].y = here();
        }
        return;
      }
    }
  }

 private:
  size_t push(Inst inst) {
    prog_.push_back(inst);
    return prog_.size() - 1;
  }
  int32_t here() const { return static_cast<int32_t>(prog_.size()); }

  std::vector<Inst>& prog_;
};

}  // namespace

bool FullMatchPattern::CharClass::contains(uint32_t c) const {
  bool in = false;
  for (const Range& r : ranges) {
    if (c >= r.lo && c <= r.hi) {
      in = true;
      break;
    }
  }
  return in != negated;
}

FullMatchPattern::FullMatchPattern(const std::string& pattern) {
  NodePtr tree = Parser(pattern, classes_).parse();
  Emitter(program_).emit(*tree);
  program_.push_back({Op::Match});
}

bool FullMatchPattern::matches(std::string_view text) const {
  // The Pike VM: `now` holds the program counters alive before the code point at `pos`; `add`
  // follows the empty transitions (splits, jumps, assertions) once per pc and position. The
  // assertions read the code points on either side of `pos` (have_*: false at the ends).
  const size_t n = program_.size();
  std::vector<int32_t> now, next, stack;
  std::vector<size_t> seen(n, SIZE_MAX);
  now.reserve(n), next.reserve(n), stack.reserve(n);
  size_t pos = 0, step = 0;  // step: a stamp per position for `seen`
  uint32_t before = 0, after = 0;
  bool have_before = false, have_after = false;
  const auto look_after = [&] {
    size_t j = pos;
    have_after = pos < text.size();
    if (have_after) after = next_code_point(text, j);
  };
  auto add = [&](std::vector<int32_t>& list, int32_t pc) {
    stack.push_back(pc);
    while (!stack.empty()) {
      const int32_t p = stack.back();
      stack.pop_back();
      if (seen[static_cast<size_t>(p)] == step) continue;
      seen[static_cast<size_t>(p)] = step;
      const Inst& inst = program_[static_cast<size_t>(p)];
      switch (inst.op) {
        case Op::Jump: stack.push_back(inst.x); break;
        case Op::Split:
          stack.push_back(inst.y);
          stack.push_back(inst.x);
          break;
        case Op::Begin:
          if (pos == 0) stack.push_back(p + 1);
          break;
        case Op::End:
          if (pos == text.size()) stack.push_back(p + 1);
          break;
        case Op::WordBoundary:
        case Op::NotWordBoundary: {
          const bool boundary = (have_before && is_word(before)) != (have_after && is_word(after));
          if (boundary == (inst.op == Op::WordBoundary)) stack.push_back(p + 1);
          break;
        }
        default: list.push_back(p); break;  // consumes a code point, or Match
      }
    }
  };
  look_after();
  add(now, 0);
  while (pos < text.size()) {
    if (now.empty()) return false;
    const uint32_t c = next_code_point(text, pos);  // pos moves past c: the threads added stand after it
    before = c, have_before = true;
    look_after();
    ++step;
    next.clear();
    for (int32_t p : now) {
      const Inst& inst = program_[static_cast<size_t>(p)];
      const bool ok = (inst.op == Op::Char && inst.c == c) || (inst.op == Op::Class && classes_[inst.c].contains(c)) ||
                      (inst.op == Op::Any && c != '\n');
      if (ok) add(next, p + 1);
    }
    std::swap(now, next);
  }
  for (int32_t p : now) {
    if (program_[static_cast<size_t>(p)].op == Op::Match) return true;
  }
  return false;
}

}  // namespace dnnx
