#include "gpusched/dra/cel.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "gpusched/common/quantity.h"

namespace gpusched::dra::cel {

// ---------------------------------------------------------------------------------------------
// Syntax tree.

namespace {

enum class Op {
  kLiteral, kIdent, kSelect, kOptSelect, kIndex, kCall, kList, kMap, kNot, kNeg, kAnd, kOr, kTernary,
  kEq, kNe, kLt, kLe, kGt, kGe, kIn, kAdd, kSub, kMul, kDiv, kMod, kHas, kBind, kComprehension
};

enum class Macro { kExists, kAll, kExistsOne, kMap, kFilter };

}  // namespace

struct Value;
using ValueList = std::vector<Value>;

// A CEL value. Maps are either literals or views of the device (attributes/capacity by domain).
struct Value {
  enum class Type { kNull, kBool, kInt, kUint, kDouble, kString, kList, kMap, kQuantity, kSemver, kOptional, kError };
  enum class MapKind { kLiteral, kAttributeDomains, kCapacityDomains, kAttributes, kCapacities };
  Type type = Type::kNull;
  bool b = false;
  int64_t i = 0;  // kInt; kQuantity in milli-units
  uint64_t u = 0;
  double d = 0;
  std::string s;  // kString, kError message, domain of a device map
  std::shared_ptr<const ValueList> list;  // kList; kMap literal as k0, v0, k1, v1...; kOptional: 0 or 1 element
  MapKind map_kind = MapKind::kLiteral;
  std::shared_ptr<const Semver> semver;

  static Value Bool(bool v) { Value x; x.type = Type::kBool; x.b = v; return x; }
  static Value Int(int64_t v) { Value x; x.type = Type::kInt; x.i = v; return x; }
  static Value Uint(uint64_t v) { Value x; x.type = Type::kUint; x.u = v; return x; }
  static Value Double(double v) { Value x; x.type = Type::kDouble; x.d = v; return x; }
  static Value String(std::string v) { Value x; x.type = Type::kString; x.s = std::move(v); return x; }
  static Value Quantity(int64_t milli) { Value x; x.type = Type::kQuantity; x.i = milli; return x; }
  static Value Error(std::string m) { Value x; x.type = Type::kError; x.s = std::move(m); return x; }
  static Value List(ValueList v) { Value x; x.type = Type::kList; x.list = std::make_shared<const ValueList>(std::move(v)); return x; }
  static Value DeviceMap(MapKind kind, std::string domain = {}) {
    Value x; x.type = Type::kMap; x.map_kind = kind; x.s = std::move(domain); return x;
  }
  static Value Optional(std::optional<Value> v) {
    Value x; x.type = Type::kOptional;
    ValueList l;
    if (v) l.push_back(std::move(*v));
    x.list = std::make_shared<const ValueList>(std::move(l));
    return x;
  }
  static Value SemverValue(Semver v) { Value x; x.type = Type::kSemver; x.semver = std::make_shared<const Semver>(std::move(v)); return x; }
  bool error() const { return type == Type::kError; }
};

struct Node {
  Op op = Op::kLiteral;
  Value literal;                       // kLiteral
  std::string name;                    // kIdent, kSelect/kOptSelect field, kCall function, kBind/kComprehension var
  std::vector<std::unique_ptr<Node>> args;  // operands; kCall: target first if has_target
  bool has_target = false;
  Macro macro = Macro::kExists;
  std::unique_ptr<RE2> regex;          // kCall "matches" with a literal pattern, compiled once
};

class Program {
 public:
  std::unique_ptr<Node> root;
  std::string text;
};

namespace {

std::string_view TypeName(const Value& v) {
  switch (v.type) {
    case Value::Type::kNull: return "null_type";
    case Value::Type::kBool: return "bool";
    case Value::Type::kInt: return "int";
    case Value::Type::kUint: return "uint";
    case Value::Type::kDouble: return "double";
    case Value::Type::kString: return "string";
    case Value::Type::kList: return "list";
    case Value::Type::kMap: return "map";
    case Value::Type::kQuantity: return "kubernetes.Quantity";
    case Value::Type::kSemver: return "kubernetes.Semver";
    case Value::Type::kOptional: return "optional_type";
    case Value::Type::kError: return "error";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// Lexer and parser (recursive descent, CEL's precedence).

enum class Tok { kEnd, kIdent, kInt, kUint, kDouble, kString, kPunct };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, punctuation, or decoded string
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  size_t pos = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view src) : src_(src) {}

  StatusOr<std::unique_ptr<Node>> Parse() {
    Status s = Advance();
    if (!s.ok()) return s;
    auto e = Expr(0);
    if (!e.ok()) return e.status();
    if (tok_.kind != Tok::kEnd) return Fail(fmt::format("unexpected '{}'", tok_.text));
    return std::move(e).value();
  }

 private:
  static constexpr int kMaxDepth = 128;

  Status Fail(std::string what) const {
    return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: {}", tok_.pos, what));
  }

  bool IsPunct(std::string_view p) const { return tok_.kind == Tok::kPunct && tok_.text == p; }

  Status Expect(std::string_view p) {
    if (!IsPunct(p)) return Fail(fmt::format("expected '{}', got '{}'", p, tok_.kind == Tok::kEnd ? "end" : tok_.text));
    return Advance();
  }

  Status LexString(char quote, bool raw, Token* t) {
    bool triple = src_.substr(at_, 2) == std::string(2, quote);
    if (triple) at_ += 2;
    std::string out;
    while (true) {
      if (at_ >= src_.size()) return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: unterminated string", t->pos));
      char c = src_[at_];
      if (c == quote && (!triple || src_.substr(at_, 3) == std::string(3, quote))) {
        at_ += triple ? 3 : 1;
        break;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: newline in string", at_));
      }
      ++at_;
      if (c != '\\' || raw) {
        out.push_back(c);
        continue;
      }
      if (at_ >= src_.size()) return InvalidArgumentError("CEL syntax error: unterminated escape");
      char e = src_[at_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'v': out.push_back('\v'); break;
        case '\\': case '\'': case '"': case '`': case '?': out.push_back(e); break;
        case 'x': case 'u': case 'U': {
          size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (at_ + n > src_.size()) return InvalidArgumentError("CEL syntax error: short escape");
          uint32_t cp = 0;
          auto r = std::from_chars(src_.data() + at_, src_.data() + at_ + n, cp, 16);
          if (r.ptr != src_.data() + at_ + n) return InvalidArgumentError("CEL syntax error: bad escape");
          at_ += n;
          AppendUtf8(cp, &out);
          break;
        }
        default:
          if (e >= '0' && e <= '3' && at_ + 2 <= src_.size()) {
            uint32_t cp = 0;
            auto r = std::from_chars(src_.data() + at_ - 1, src_.data() + at_ + 2, cp, 8);
            if (r.ptr != src_.data() + at_ + 2) return InvalidArgumentError("CEL syntax error: bad octal escape");
            at_ += 2;
            out.push_back(static_cast<char>(cp));
            break;
          }
          return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: unknown escape \\{}", at_ - 1, e));
      }
    }
    t->kind = Tok::kString;
    t->text = std::move(out);
    return OkStatus();
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  Status Advance() {
    while (at_ < src_.size()) {
      char c = src_[at_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++at_;
      } else if (c == '/' && at_ + 1 < src_.size() && src_[at_ + 1] == '/') {
        while (at_ < src_.size() && src_[at_] != '\n') ++at_;
      } else {
        break;
      }
    }
    Token t;
    t.pos = at_;
    if (at_ >= src_.size()) {
      tok_ = std::move(t);
      return OkStatus();
    }
    char c = src_[at_];
    auto ident_char = [](char x) { return std::isalnum(static_cast<unsigned char>(x)) || x == '_'; };
    if ((c == 'r' || c == 'R') && at_ + 1 < src_.size() && (src_[at_ + 1] == '\'' || src_[at_ + 1] == '"')) {
      char q = src_[at_ + 1];
      at_ += 2;
      Status s = LexString(q, /*raw=*/true, &t);
      if (!s.ok()) return s;
    } else if (c == '\'' || c == '"') {
      ++at_;
      Status s = LexString(c, /*raw=*/false, &t);
      if (!s.ok()) return s;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = at_;
      while (at_ < src_.size() && ident_char(src_[at_])) ++at_;
      t.kind = Tok::kIdent;
      t.text = std::string(src_.substr(start, at_ - start));
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && at_ + 1 < src_.size() && std::isdigit(static_cast<unsigned char>(src_[at_ + 1])))) {
      Status s = LexNumber(&t);
      if (!s.ok()) return s;
    } else {
      static constexpr std::string_view kTwo[] = {"&&", "||", "==", "!=", "<=", ">=", ".?"};
      t.kind = Tok::kPunct;
      for (std::string_view p : kTwo) {
        if (src_.substr(at_, 2) == p) t.text = std::string(p);
      }
      if (t.text.empty()) {
        if (std::string_view("()[]{}.,:?!<>+-*/%").find(c) == std::string_view::npos) {
          return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: unexpected character '{}'", at_, c));
        }
        t.text = std::string(1, c);
      }
      at_ += t.text.size();
    }
    tok_ = std::move(t);
    return OkStatus();
  }

  Status LexNumber(Token* t) {
    size_t start = at_;
    if (src_.substr(at_, 2) == "0x" || src_.substr(at_, 2) == "0X") {
      at_ += 2;
      size_t digits = at_;
      while (at_ < src_.size() && std::isxdigit(static_cast<unsigned char>(src_[at_]))) ++at_;
      uint64_t v = 0;
      auto r = std::from_chars(src_.data() + digits, src_.data() + at_, v, 16);
      if (r.ec != std::errc()) return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: bad hex literal", start));
      return FinishInt(v, start, t);
    }
    bool is_double = false;
    while (at_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[at_]))) ++at_;
    if (at_ + 1 < src_.size() && src_[at_] == '.' && std::isdigit(static_cast<unsigned char>(src_[at_ + 1]))) {
      is_double = true;
      ++at_;
      while (at_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[at_]))) ++at_;
    }
    if (at_ < src_.size() && (src_[at_] == 'e' || src_[at_] == 'E')) {
      is_double = true;
      ++at_;
      if (at_ < src_.size() && (src_[at_] == '+' || src_[at_] == '-')) ++at_;
      while (at_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[at_]))) ++at_;
    }
    std::string text(src_.substr(start, at_ - start));
    if (is_double) {
      t->kind = Tok::kDouble;
      t->d = std::strtod(text.c_str(), nullptr);
      return OkStatus();
    }
    uint64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v, 10);
    if (r.ec != std::errc()) return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: integer out of range", start));
    return FinishInt(v, start, t);
  }

  Status FinishInt(uint64_t v, size_t start, Token* t) {
    if (at_ < src_.size() && (src_[at_] == 'u' || src_[at_] == 'U')) {
      ++at_;
      t->kind = Tok::kUint;
      t->u = v;
      return OkStatus();
    }
    // -9223372036854775808 is parsed as negation of a literal one past int64's max.
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: integer out of range", start));
    }
    t->kind = Tok::kInt;
    t->u = v;
    t->i = static_cast<int64_t>(v);
    return OkStatus();
  }

  static std::unique_ptr<Node> Make(Op op) {
    auto n = std::make_unique<Node>();
    n->op = op;
    return n;
  }

  // Precedence climbing: 0 ternary, 1 ||, 2 &&, 3 relations, 4 + -, 5 * / %.
  StatusOr<std::unique_ptr<Node>> Expr(int depth) {
    if (depth > kMaxDepth) return Fail("expression nests too deeply");
    auto cond = Binary(1, depth + 1);
    if (!cond.ok() || !IsPunct("?")) return cond;
    GPUSCHED_RETURN_IF_ERROR(Advance());
    auto yes = Binary(1, depth + 1);
    if (!yes.ok()) return yes;
    GPUSCHED_RETURN_IF_ERROR(Expect(":"));
    auto no = Expr(depth + 1);
    if (!no.ok()) return no;
    auto n = Make(Op::kTernary);
    n->args.push_back(std::move(cond).value());
    n->args.push_back(std::move(yes).value());
    n->args.push_back(std::move(no).value());
    return n;
  }

  std::optional<Op> BinaryOp(int level) const {
    if (tok_.kind == Tok::kIdent && level == 3 && tok_.text == "in") return Op::kIn;
    if (tok_.kind != Tok::kPunct) return std::nullopt;
    const std::string& p = tok_.text;
    switch (level) {
      case 1: if (p == "||") return Op::kOr; break;
      case 2: if (p == "&&") return Op::kAnd; break;
      case 3:
        if (p == "==") return Op::kEq;
        if (p == "!=") return Op::kNe;
        if (p == "<") return Op::kLt;
        if (p == "<=") return Op::kLe;
        if (p == ">") return Op::kGt;
        if (p == ">=") return Op::kGe;
        break;
      case 4:
        if (p == "+") return Op::kAdd;
        if (p == "-") return Op::kSub;
        break;
      case 5:
        if (p == "*") return Op::kMul;
        if (p == "/") return Op::kDiv;
        if (p == "%") return Op::kMod;
        break;
    }
    return std::nullopt;
  }

  StatusOr<std::unique_ptr<Node>> Binary(int level, int depth) {
    if (depth > kMaxDepth) return Fail("expression nests too deeply");
    if (level > 5) return Unary(depth + 1);
    auto left = Binary(level + 1, depth + 1);
    if (!left.ok()) return left;
    std::unique_ptr<Node> acc = std::move(left).value();
    while (std::optional<Op> op = BinaryOp(level)) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      auto right = Binary(level + 1, depth + 1);
      if (!right.ok()) return right;
      auto n = Make(*op);
      n->args.push_back(std::move(acc));
      n->args.push_back(std::move(right).value());
      acc = std::move(n);
    }
    return acc;
  }

  StatusOr<std::unique_ptr<Node>> Unary(int depth) {
    if (depth > kMaxDepth) return Fail("expression nests too deeply");
    if (IsPunct("!") || IsPunct("-")) {
      bool neg = IsPunct("-");
      GPUSCHED_RETURN_IF_ERROR(Advance());
      // A negative literal folds (so that int64's minimum is expressible).
      if (neg && tok_.kind == Tok::kInt) {
        uint64_t v = tok_.u;
        GPUSCHED_RETURN_IF_ERROR(Advance());
        auto n = Make(Op::kLiteral);
        n->literal = Value::Int(v == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1
                                    ? std::numeric_limits<int64_t>::min()
                                    : -static_cast<int64_t>(v));
        return Member(std::move(n), depth + 1);
      }
      auto operand = Unary(depth + 1);
      if (!operand.ok()) return operand;
      auto n = Make(neg ? Op::kNeg : Op::kNot);
      n->args.push_back(std::move(operand).value());
      return n;
    }
    auto primary = Primary(depth + 1);
    if (!primary.ok()) return primary;
    return Member(std::move(primary).value(), depth + 1);
  }

  StatusOr<std::vector<std::unique_ptr<Node>>> Args(std::string_view close, int depth) {
    std::vector<std::unique_ptr<Node>> out;
    if (IsPunct(close)) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      return out;
    }
    while (true) {
      auto e = Expr(depth + 1);
      if (!e.ok()) return e.status();
      out.push_back(std::move(e).value());
      if (IsPunct(",")) {
        GPUSCHED_RETURN_IF_ERROR(Advance());
        if (IsPunct(close)) break;  // trailing comma
        continue;
      }
      break;
    }
    GPUSCHED_RETURN_IF_ERROR(Expect(close));
    return out;
  }

  StatusOr<std::unique_ptr<Node>> Member(std::unique_ptr<Node> operand, int depth) {
    while (true) {
      if (IsPunct(".") || IsPunct(".?")) {
        bool optional = IsPunct(".?");
        GPUSCHED_RETURN_IF_ERROR(Advance());
        if (tok_.kind != Tok::kIdent) return Fail("expected a field name after '.'");
        std::string field = tok_.text;
        GPUSCHED_RETURN_IF_ERROR(Advance());
        if (!optional && IsPunct("(")) {
          GPUSCHED_RETURN_IF_ERROR(Advance());
          auto args = Args(")", depth + 1);
          if (!args.ok()) return args.status();
          auto call = MakeCall(std::move(field), std::move(operand), std::move(args).value());
          if (!call.ok()) return call;
          operand = std::move(call).value();
          continue;
        }
        auto n = Make(optional ? Op::kOptSelect : Op::kSelect);
        n->name = std::move(field);
        n->args.push_back(std::move(operand));
        operand = std::move(n);
      } else if (IsPunct("[")) {
        GPUSCHED_RETURN_IF_ERROR(Advance());
        auto index = Expr(depth + 1);
        if (!index.ok()) return index;
        GPUSCHED_RETURN_IF_ERROR(Expect("]"));
        auto n = Make(Op::kIndex);
        n->args.push_back(std::move(operand));
        n->args.push_back(std::move(index).value());
        operand = std::move(n);
      } else {
        return operand;
      }
    }
  }

  StatusOr<std::unique_ptr<Node>> Primary(int depth) {
    Token t = tok_;
    switch (t.kind) {
      case Tok::kEnd:
        return Fail("unexpected end of expression");
      case Tok::kInt: case Tok::kUint: case Tok::kDouble: case Tok::kString: {
        GPUSCHED_RETURN_IF_ERROR(Advance());
        auto n = Make(Op::kLiteral);
        if (t.kind == Tok::kInt) {
          if (t.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Fail("integer out of range");
          n->literal = Value::Int(t.i);
        }
        if (t.kind == Tok::kUint) n->literal = Value::Uint(t.u);
        if (t.kind == Tok::kDouble) n->literal = Value::Double(t.d);
        if (t.kind == Tok::kString) n->literal = Value::String(t.text);
        return n;
      }
      case Tok::kIdent: {
        GPUSCHED_RETURN_IF_ERROR(Advance());
        if (t.text == "true" || t.text == "false") {
          auto n = Make(Op::kLiteral);
          n->literal = Value::Bool(t.text == "true");
          return n;
        }
        if (t.text == "null") return Make(Op::kLiteral);
        if (IsPunct("(")) {
          GPUSCHED_RETURN_IF_ERROR(Advance());
          auto args = Args(")", depth + 1);
          if (!args.ok()) return args.status();
          return MakeCall(t.text, nullptr, std::move(args).value());
        }
        // cel.bind(...): a namespaced function.
        if (t.text == "cel" && IsPunct(".")) {
          GPUSCHED_RETURN_IF_ERROR(Advance());
          if (tok_.kind != Tok::kIdent || tok_.text != "bind") return Fail("only cel.bind is supported in the cel namespace");
          GPUSCHED_RETURN_IF_ERROR(Advance());
          GPUSCHED_RETURN_IF_ERROR(Expect("("));
          auto args = Args(")", depth + 1);
          if (!args.ok()) return args.status();
          std::vector<std::unique_ptr<Node>> a = std::move(args).value();
          if (a.size() != 3 || a[0]->op != Op::kIdent) return Fail("cel.bind wants (name, init, expression)");
          auto n = Make(Op::kBind);
          n->name = a[0]->name;
          n->args.push_back(std::move(a[1]));
          n->args.push_back(std::move(a[2]));
          return n;
        }
        auto n = Make(Op::kIdent);
        n->name = t.text;
        return n;
      }
      case Tok::kPunct:
        break;
    }
    if (IsPunct("(")) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      auto e = Expr(depth + 1);
      if (!e.ok()) return e;
      GPUSCHED_RETURN_IF_ERROR(Expect(")"));
      return e;
    }
    if (IsPunct("[")) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      auto elems = Args("]", depth + 1);
      if (!elems.ok()) return elems.status();
      auto n = Make(Op::kList);
      n->args = std::move(elems).value();
      return n;
    }
    if (IsPunct("{")) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      auto n = Make(Op::kMap);
      while (!IsPunct("}")) {
        auto k = Expr(depth + 1);
        if (!k.ok()) return k;
        GPUSCHED_RETURN_IF_ERROR(Expect(":"));
        auto v = Expr(depth + 1);
        if (!v.ok()) return v;
        n->args.push_back(std::move(k).value());
        n->args.push_back(std::move(v).value());
        if (!IsPunct(",")) break;
        GPUSCHED_RETURN_IF_ERROR(Advance());
      }
      GPUSCHED_RETURN_IF_ERROR(Expect("}"));
      return n;
    }
    return Fail(fmt::format("unexpected '{}'", t.text));
  }

  StatusOr<std::unique_ptr<Node>> MakeCall(std::string name, std::unique_ptr<Node> target,
                                           std::vector<std::unique_ptr<Node>> args) {
    // Macros.
    if (name == "has" && !target) {
      if (args.size() != 1 || args[0]->op != Op::kSelect) return Fail("has() wants a field selection, as in has(a.b)");
      auto n = Make(Op::kHas);
      n->args.push_back(std::move(args[0]));
      return n;
    }
    static const std::map<std::string, Macro, std::less<>> kMacros = {
        {"exists", Macro::kExists}, {"all", Macro::kAll}, {"exists_one", Macro::kExistsOne},
        {"map", Macro::kMap}, {"filter", Macro::kFilter}};
    if (auto m = kMacros.find(name); m != kMacros.end() && target) {
      if (args.size() != 2 || args[0]->op != Op::kIdent) return Fail(fmt::format("{}() wants (variable, expression)", name));
      auto n = Make(Op::kComprehension);
      n->macro = m->second;
      n->name = args[0]->name;
      n->args.push_back(std::move(target));
      n->args.push_back(std::move(args[1]));
      return n;
    }
    static const std::set<std::string, std::less<>> kFunctions = {
        "size", "int", "uint", "double", "string", "bool", "quantity", "isQuantity", "semver", "isSemver",
        "matches", "startsWith", "endsWith", "contains", "lowerAscii", "upperAscii", "trim", "indexOf",
        "lastIndexOf", "split", "substring", "replace", "join", "charAt", "compareTo", "isGreaterThan",
        "isLessThan", "add", "sub", "asInteger", "asApproximateFloat", "isInteger", "sign", "major", "minor",
        "patch", "orValue", "hasValue", "value", "includes"};
    if (!kFunctions.contains(name)) return Fail(fmt::format("undeclared reference to '{}'", name));
    auto n = Make(Op::kCall);
    n->name = std::move(name);
    n->has_target = target != nullptr;
    if (target) n->args.push_back(std::move(target));
    for (auto& a : args) n->args.push_back(std::move(a));
    // A literal pattern compiles once, here: a bad one is a compile error.
    const Node* pattern = n->args.size() == 2 ? n->args[1].get() : nullptr;
    if (n->name == "matches" && pattern && pattern->op == Op::kLiteral && pattern->literal.type == Value::Type::kString) {
      n->regex = std::make_unique<RE2>(pattern->literal.s, RE2::Quiet);
      if (!n->regex->ok()) return Fail(fmt::format("invalid regular expression '{}': {}", pattern->literal.s, n->regex->error()));
    }
    return n;
  }

  std::string_view src_;
  size_t at_ = 0;
  Token tok_;
};

// ---------------------------------------------------------------------------------------------
// Evaluation.

bool IsNumber(const Value& v) {
  return v.type == Value::Type::kInt || v.type == Value::Type::kUint || v.type == Value::Type::kDouble;
}

// Compares two numbers of any numeric types exactly. Returns -1, 0, 1 (2 for NaN).
int CompareNumbers(const Value& a, const Value& b) {
  using T = Value::Type;
  if (a.type == T::kDouble || b.type == T::kDouble) {
    double x = a.type == T::kDouble ? a.d : a.type == T::kInt ? static_cast<double>(a.i) : static_cast<double>(a.u);
    double y = b.type == T::kDouble ? b.d : b.type == T::kInt ? static_cast<double>(b.i) : static_cast<double>(b.u);
    if (std::isnan(x) || std::isnan(y)) return 2;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type == T::kInt && b.type == T::kInt) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  if (a.type == T::kUint && b.type == T::kUint) return a.u < b.u ? -1 : a.u > b.u ? 1 : 0;
  if (a.type == T::kInt) return a.i < 0 ? -1 : CompareNumbers(Value::Uint(static_cast<uint64_t>(a.i)), b);
  return b.i < 0 ? 1 : CompareNumbers(a, Value::Uint(static_cast<uint64_t>(b.i)));
}

class Evaluator {
 public:
  explicit Evaluator(const DeviceView& device) : device_(device) {}

  Value Eval(const Node& n) {
    if (++cost_ > kMaxCost) return Value::Error("operation cancelled: actual cost limit exceeded");
    switch (n.op) {
      case Op::kLiteral:
        return n.literal;
      case Op::kIdent:
        return Ident(n.name);
      case Op::kSelect:
      case Op::kOptSelect:
        return Select(n);
      case Op::kIndex: {
        Value base = Eval(*n.args[0]);
        if (base.error()) return base;
        Value key = Eval(*n.args[1]);
        if (key.error()) return key;
        return Index(base, key);
      }
      case Op::kCall:
        return Call(n);
      case Op::kList: {
        ValueList out;
        for (const auto& a : n.args) {
          Value v = Eval(*a);
          if (v.error()) return v;
          out.push_back(std::move(v));
        }
        return Value::List(std::move(out));
      }
      case Op::kMap: {
        ValueList kv;
        for (const auto& a : n.args) {
          Value v = Eval(*a);
          if (v.error()) return v;
          kv.push_back(std::move(v));
        }
        Value m;
        m.type = Value::Type::kMap;
        m.list = std::make_shared<const ValueList>(std::move(kv));
        return m;
      }
      case Op::kNot: {
        Value v = Eval(*n.args[0]);
        if (v.error()) return v;
        if (v.type != Value::Type::kBool) return NoOverload("!_", {v});
        return Value::Bool(!v.b);
      }
      case Op::kNeg: {
        Value v = Eval(*n.args[0]);
        if (v.error()) return v;
        if (v.type == Value::Type::kInt) {
          if (v.i == std::numeric_limits<int64_t>::min()) return Value::Error("integer overflow");
          return Value::Int(-v.i);
        }
        if (v.type == Value::Type::kDouble) return Value::Double(-v.d);
        return NoOverload("-_", {v});
      }
      case Op::kAnd:
      case Op::kOr:
        return Logical(n);
      case Op::kTernary: {
        Value c = Eval(*n.args[0]);
        if (c.error()) return c;
        if (c.type != Value::Type::kBool) return NoOverload("_?_:_", {c});
        return Eval(*n.args[c.b ? 1 : 2]);
      }
      case Op::kHas:
        return Has(*n.args[0]);
      case Op::kBind: {
        Value init = Eval(*n.args[0]);
        vars_.emplace_back(n.name, std::move(init));
        Value out = Eval(*n.args[1]);
        vars_.pop_back();
        return out;
      }
      case Op::kComprehension:
        return Comprehension(n);
      default:
        return Arithmetic(n);
    }
  }

 private:
  static Value NoOverload(std::string_view fn, std::initializer_list<Value> args) {
    std::vector<std::string_view> types;
    for (const Value& a : args) types.push_back(TypeName(a));
    return Value::Error(fmt::format("no matching overload for '{}' applied to '({})'", fn, fmt::join(types, ", ")));
  }

  Value Ident(const std::string& name) {
    for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    if (name == "device") {
      Value v;
      v.type = Value::Type::kMap;
      v.map_kind = Value::MapKind::kLiteral;
      v.s = "\x01" "device";  // the root object: fields resolve in Select
      return v;
    }
    return Value::Error(fmt::format("undeclared reference to '{}'", name));
  }

  static bool IsDeviceRoot(const Value& v) { return v.type == Value::Type::kMap && v.s == "\x01" "device" && !v.list; }

  // Looks `id` up in the attributes or capacities of `domain`: the fully qualified key wins,
  // then the bare key if the domain is the driver's.
  const AttributeValue* FindAttribute(const std::string& domain, const std::string& id) const {
    const auto& attrs = device_.device->attributes;
    if (auto it = attrs.find(domain + "/" + id); it != attrs.end()) return &it->second;
    if (domain == device_.driver) {
      if (auto it = attrs.find(id); it != attrs.end()) return &it->second;
    }
    return nullptr;
  }
  const Capacity* FindCapacity(const std::string& domain, const std::string& id) const {
    const auto& caps = device_.device->capacity;
    if (auto it = caps.find(domain + "/" + id); it != caps.end()) return &it->second;
    if (domain == device_.driver) {
      if (auto it = caps.find(id); it != caps.end()) return &it->second;
    }
    return nullptr;
  }

  static Value FromAttribute(const AttributeValue& a) {
    switch (a.kind) {
      case AttributeValue::Kind::kInt: return Value::Int(a.int_value);
      case AttributeValue::Kind::kBool: return Value::Bool(a.bool_value);
      case AttributeValue::Kind::kString: return Value::String(a.text);
      case AttributeValue::Kind::kVersion: {
        StatusOr<Semver> v = ParseSemver(a.text);
        if (!v.ok()) return Value::Error("unsupported attribute value");
        return Value::SemverValue(std::move(v).value());
      }
      case AttributeValue::Kind::kUnsupported: break;
    }
    return Value::Error("unsupported attribute value");
  }

  // Returns the entry `key` of `map`, or nullopt if it has none.
  std::optional<Value> Lookup(const Value& map, const Value& key) const {
    using K = Value::MapKind;
    if (IsDeviceRoot(map)) return std::nullopt;
    if (map.map_kind != K::kLiteral) {
      if (key.type != Value::Type::kString) return std::nullopt;
      switch (map.map_kind) {
        case K::kAttributeDomains: return Value::DeviceMap(K::kAttributes, key.s);  // any domain: a (maybe empty) map
        case K::kCapacityDomains: return Value::DeviceMap(K::kCapacities, key.s);
        case K::kAttributes:
          if (const AttributeValue* a = FindAttribute(map.s, key.s)) return FromAttribute(*a);
          return std::nullopt;
        case K::kCapacities:
          if (const Capacity* c = FindCapacity(map.s, key.s)) return Value::Quantity(c->value_milli);
          return std::nullopt;
        case K::kLiteral: break;
      }
      return std::nullopt;
    }
    const ValueList& kv = *map.list;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (Equal(kv[i], key)) return kv[i + 1];
    }
    return std::nullopt;
  }

  // The keys of a map (for comprehensions and size()).
  ValueList Keys(const Value& map) const {
    using K = Value::MapKind;
    ValueList out;
    auto add_domain_keys = [&](const auto& entries, bool domains_only) {
      std::set<std::string> seen;
      for (const auto& [key, unused] : entries) {
        size_t slash = key.find('/');
        std::string domain = slash == std::string::npos ? std::string(device_.driver) : key.substr(0, slash);
        std::string id = slash == std::string::npos ? key : key.substr(slash + 1);
        if (domains_only) {
          if (seen.insert(domain).second) out.push_back(Value::String(domain));
        } else if (domain == map.s && seen.insert(id).second) {
          out.push_back(Value::String(id));
        }
      }
    };
    switch (map.map_kind) {
      case K::kAttributeDomains: add_domain_keys(device_.device->attributes, true); break;
      case K::kCapacityDomains: add_domain_keys(device_.device->capacity, true); break;
      case K::kAttributes: add_domain_keys(device_.device->attributes, false); break;
      case K::kCapacities: add_domain_keys(device_.device->capacity, false); break;
      case K::kLiteral:
        if (map.list) {
          for (size_t i = 0; i < map.list->size(); i += 2) out.push_back((*map.list)[i]);
        }
        break;
    }
    return out;
  }

  Value Field(const Value& base, const std::string& field, bool optional) {
    if (IsDeviceRoot(base)) {
      if (field == "driver") return Value::String(std::string(device_.driver));
      if (field == "attributes") return Value::DeviceMap(Value::MapKind::kAttributeDomains);
      if (field == "capacity") return Value::DeviceMap(Value::MapKind::kCapacityDomains);
      if (field == "allowMultipleAllocations") return Value::Bool(device_.device->allow_multiple_allocations);
      return Value::Error(fmt::format("undefined field '{}'", field));
    }
    if (base.type != Value::Type::kMap) return Value::Error(fmt::format("type '{}' does not support field selection", TypeName(base)));
    std::optional<Value> v = Lookup(base, Value::String(field));
    if (optional) return Value::Optional(std::move(v));
    if (!v) return Value::Error(fmt::format("no such key: {}", field));
    return *v;
  }

  Value Select(const Node& n) {
    Value base = Eval(*n.args[0]);
    if (base.error()) return base;
    if (base.type == Value::Type::kOptional) {
      // a.?b.c and a.?b.?c chain through an empty optional.
      if (base.list->empty()) return base;
      Value inner = Field((*base.list)[0], n.name, true);
      return inner;
    }
    return Field(base, n.name, n.op == Op::kOptSelect);
  }

  Value Index(const Value& base, const Value& key) {
    if (base.type == Value::Type::kList) {
      int64_t i = 0;
      if (key.type == Value::Type::kInt) i = key.i;
      else if (key.type == Value::Type::kUint) i = static_cast<int64_t>(key.u);
      else return NoOverload("_[_]", {base, key});
      if (i < 0 || static_cast<size_t>(i) >= base.list->size()) return Value::Error(fmt::format("index out of range: {}", i));
      return (*base.list)[static_cast<size_t>(i)];
    }
    if (base.type == Value::Type::kMap) {
      if (IsDeviceRoot(base) && key.type == Value::Type::kString) return Field(base, key.s, false);
      std::optional<Value> v = Lookup(base, key);
      if (!v) return Value::Error(fmt::format("no such key: {}", key.type == Value::Type::kString ? key.s : TypeName(key)));
      return *v;
    }
    if (base.type == Value::Type::kOptional) {
      if (base.list->empty()) return base;
      return Index((*base.list)[0], key);
    }
    return NoOverload("_[_]", {base, key});
  }

  Value Has(const Node& select) {
    Value base = Eval(*select.args[0]);
    if (base.error()) return base;
    if (IsDeviceRoot(base)) {
      return Value::Bool(select.name == "driver" || select.name == "attributes" || select.name == "capacity" ||
                         select.name == "allowMultipleAllocations");
    }
    if (base.type != Value::Type::kMap) return Value::Error(fmt::format("invalid type for field selection: {}", TypeName(base)));
    return Value::Bool(Lookup(base, Value::String(select.name)).has_value());
  }

  Value Logical(const Node& n) {
    bool is_and = n.op == Op::kAnd;
    Value left = Eval(*n.args[0]);
    if (left.type == Value::Type::kBool && left.b != is_and) return left;  // false && _, true || _
    Value right = Eval(*n.args[1]);
    if (right.type == Value::Type::kBool && right.b != is_and) return right;  // _ && false, _ || true
    if (left.error()) return left;
    if (right.error()) return right;
    if (left.type != Value::Type::kBool || right.type != Value::Type::kBool) {
      return NoOverload(is_and ? "_&&_" : "_||_", {left, right});
    }
    return Value::Bool(is_and);
  }

  Value Comprehension(const Node& n) {
    Value range = Eval(*n.args[0]);
    if (range.error()) return range;
    ValueList items;
    if (range.type == Value::Type::kList) {
      items = *range.list;
    } else if (range.type == Value::Type::kMap && !IsDeviceRoot(range)) {
      items = Keys(range);
    } else {
      return Value::Error(fmt::format("expression of type '{}' cannot be range of a comprehension", TypeName(range)));
    }
    ValueList mapped;
    int64_t true_count = 0;
    std::optional<Value> first_error;
    for (const Value& item : items) {
      vars_.emplace_back(n.name, item);
      Value v = Eval(*n.args[1]);
      vars_.pop_back();
      if (n.macro == Macro::kMap) {
        if (v.error()) return v;
        mapped.push_back(std::move(v));
        continue;
      }
      if (v.error()) {
        if (n.macro == Macro::kFilter || n.macro == Macro::kExistsOne) return v;
        if (!first_error) first_error = v;
        continue;
      }
      if (v.type != Value::Type::kBool) return NoOverload("comprehension", {v});
      switch (n.macro) {
        case Macro::kExists: if (v.b) return Value::Bool(true); break;
        case Macro::kAll: if (!v.b) return Value::Bool(false); break;
        case Macro::kExistsOne: true_count += v.b ? 1 : 0; break;
        case Macro::kFilter: if (v.b) mapped.push_back(item); break;
        case Macro::kMap: break;
      }
    }
    switch (n.macro) {
      case Macro::kExists: return first_error ? *first_error : Value::Bool(false);
      case Macro::kAll: return first_error ? *first_error : Value::Bool(true);
      case Macro::kExistsOne: return Value::Bool(true_count == 1);
      case Macro::kMap: case Macro::kFilter: return Value::List(std::move(mapped));
    }
    return Value::Error("unreachable");
  }

  static bool Equal(const Value& a, const Value& b) {
    using T = Value::Type;
    if (IsNumber(a) && IsNumber(b)) return CompareNumbers(a, b) == 0;
    if (a.type != b.type) return false;
    switch (a.type) {
      case T::kNull: return true;
      case T::kBool: return a.b == b.b;
      case T::kString: return a.s == b.s;
      case T::kQuantity: return a.i == b.i;
      case T::kSemver: return a.semver->Compare(*b.semver) == 0;
      case T::kList: case T::kOptional: {
        if (a.list->size() != b.list->size()) return false;
        for (size_t i = 0; i < a.list->size(); ++i) {
          if (!Equal((*a.list)[i], (*b.list)[i])) return false;
        }
        return true;
      }
      case T::kMap: return a.map_kind == b.map_kind && a.s == b.s && a.list == b.list;
      default: return false;
    }
  }

  Value Arithmetic(const Node& n) {
    Value a = Eval(*n.args[0]);
    if (a.error()) return a;
    Value b = Eval(*n.args[1]);
    if (b.error()) return b;
    using T = Value::Type;
    switch (n.op) {
      case Op::kEq: return Value::Bool(Equal(a, b));
      case Op::kNe: return Value::Bool(!Equal(a, b));
      case Op::kIn:
        if (b.type == T::kList) {
          for (const Value& x : *b.list) {
            if (Equal(x, a)) return Value::Bool(true);
          }
          return Value::Bool(false);
        }
        if (b.type == T::kMap && !IsDeviceRoot(b)) return Value::Bool(Lookup(b, a).has_value());
        return NoOverload("@in", {a, b});
      case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: {
        int c;
        if (IsNumber(a) && IsNumber(b)) {
          c = CompareNumbers(a, b);
          if (c == 2) return Value::Bool(false);
        } else if (a.type == b.type && a.type == T::kString) {
          c = a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
        } else if (a.type == b.type && a.type == T::kBool) {
          c = a.b == b.b ? 0 : a.b ? 1 : -1;
        } else {
          static constexpr std::string_view kNames[] = {"_<_", "_<=_", "_>_", "_>=_"};
          return NoOverload(kNames[static_cast<int>(n.op) - static_cast<int>(Op::kLt)], {a, b});
        }
        switch (n.op) {
          case Op::kLt: return Value::Bool(c < 0);
          case Op::kLe: return Value::Bool(c <= 0);
          case Op::kGt: return Value::Bool(c > 0);
          default: return Value::Bool(c >= 0);
        }
      }
      default:
        break;
    }
    if (n.op == Op::kAdd && a.type == b.type) {
      if (a.type == T::kString) return Value::String(a.s + b.s);
      if (a.type == T::kList) {
        ValueList out = *a.list;
        out.insert(out.end(), b.list->begin(), b.list->end());
        return Value::List(std::move(out));
      }
    }
    if (a.type == T::kInt && b.type == T::kInt) {
      int64_t r = 0;
      switch (n.op) {
        case Op::kAdd: if (__builtin_add_overflow(a.i, b.i, &r)) return Value::Error("integer overflow"); return Value::Int(r);
        case Op::kSub: if (__builtin_sub_overflow(a.i, b.i, &r)) return Value::Error("integer overflow"); return Value::Int(r);
        case Op::kMul: if (__builtin_mul_overflow(a.i, b.i, &r)) return Value::Error("integer overflow"); return Value::Int(r);
        case Op::kDiv: case Op::kMod:
          if (b.i == 0) return Value::Error(n.op == Op::kDiv ? "division by zero" : "modulus by zero");
          if (a.i == std::numeric_limits<int64_t>::min() && b.i == -1) return Value::Error("integer overflow");
          return Value::Int(n.op == Op::kDiv ? a.i / b.i : a.i % b.i);
        default: break;
      }
    }
    if (a.type == T::kUint && b.type == T::kUint) {
      uint64_t r = 0;
      switch (n.op) {
        case Op::kAdd: if (__builtin_add_overflow(a.u, b.u, &r)) return Value::Error("unsigned integer overflow"); return Value::Uint(r);
        case Op::kSub: if (__builtin_sub_overflow(a.u, b.u, &r)) return Value::Error("unsigned integer overflow"); return Value::Uint(r);
        case Op::kMul: if (__builtin_mul_overflow(a.u, b.u, &r)) return Value::Error("unsigned integer overflow"); return Value::Uint(r);
        case Op::kDiv: case Op::kMod:
          if (b.u == 0) return Value::Error(n.op == Op::kDiv ? "division by zero" : "modulus by zero");
          return Value::Uint(n.op == Op::kDiv ? a.u / b.u : a.u % b.u);
        default: break;
      }
    }
    if (a.type == T::kDouble && b.type == T::kDouble) {
      switch (n.op) {
        case Op::kAdd: return Value::Double(a.d + b.d);
        case Op::kSub: return Value::Double(a.d - b.d);
        case Op::kMul: return Value::Double(a.d * b.d);
        case Op::kDiv: return Value::Double(a.d / b.d);
        default: break;
      }
    }
    static constexpr std::string_view kNames[] = {"_+_", "_-_", "_*_", "_/_", "_%_"};
    return NoOverload(kNames[static_cast<int>(n.op) - static_cast<int>(Op::kAdd)], {a, b});
  }

  Value Call(const Node& n) {
    ValueList args;
    args.reserve(n.args.size());
    for (const auto& a : n.args) {
      Value v = Eval(*a);
      if (v.error()) return v;
      args.push_back(std::move(v));
    }
    const std::string& f = n.name;
    using T = Value::Type;
    auto arity = [&](size_t want) { return args.size() == want; };
    auto is = [&](size_t i, T t) { return i < args.size() && args[i].type == t; };

    if (f == "size" && arity(1)) {
      if (is(0, T::kString)) {
        int64_t chars = 0;
        for (unsigned char c : args[0].s) chars += (c & 0xC0) != 0x80;
        return Value::Int(chars);
      }
      if (is(0, T::kList)) return Value::Int(static_cast<int64_t>(args[0].list->size()));
      if (is(0, T::kMap) && !IsDeviceRoot(args[0])) return Value::Int(static_cast<int64_t>(Keys(args[0]).size()));
    }
    if (f == "quantity" && arity(1) && is(0, T::kString)) {
      StatusOr<int64_t> q = ParseQuantityMilli(args[0].s);
      if (!q.ok()) return Value::Error(fmt::format("quantities must match the regular expression: {}", q.status().message()));
      return Value::Quantity(*q);
    }
    if (f == "isQuantity" && arity(1) && is(0, T::kString)) return Value::Bool(ParseQuantityMilli(args[0].s).ok());
    if ((f == "semver" || f == "isSemver") && (arity(1) || (arity(2) && is(1, T::kBool))) && is(0, T::kString)) {
      StatusOr<Semver> v = ParseSemver(args[0].s, arity(2) && args[1].b);
      if (f == "isSemver") return Value::Bool(v.ok());
      if (!v.ok()) return Value::Error(std::string(v.status().message()));
      return Value::SemverValue(std::move(v).value());
    }
    if (is(0, T::kQuantity)) {
      if ((f == "compareTo" || f == "isGreaterThan" || f == "isLessThan") && arity(2) && is(1, T::kQuantity)) {
        int c = args[0].i < args[1].i ? -1 : args[0].i > args[1].i ? 1 : 0;
        if (f == "compareTo") return Value::Int(c);
        return Value::Bool(f == "isGreaterThan" ? c > 0 : c < 0);
      }
      if ((f == "add" || f == "sub") && arity(2) && (is(1, T::kQuantity) || is(1, T::kInt))) {
        int64_t other = args[1].i;
        if (is(1, T::kInt) && __builtin_mul_overflow(args[1].i, int64_t{1000}, &other)) return Value::Error("quantity overflow");
        int64_t r = 0;
        bool overflow = f == "add" ? __builtin_add_overflow(args[0].i, other, &r) : __builtin_sub_overflow(args[0].i, other, &r);
        if (overflow) return Value::Error("quantity overflow");
        return Value::Quantity(r);
      }
      if (f == "asInteger" && arity(1)) {
        if (args[0].i % 1000 != 0) return Value::Error("cannot convert value to integer");
        return Value::Int(args[0].i / 1000);
      }
      if (f == "isInteger" && arity(1)) return Value::Bool(args[0].i % 1000 == 0);
      if (f == "asApproximateFloat" && arity(1)) return Value::Double(static_cast<double>(args[0].i) / 1000.0);
      if (f == "sign" && arity(1)) return Value::Int(args[0].i < 0 ? -1 : args[0].i > 0 ? 1 : 0);
    }
    if (is(0, T::kSemver)) {
      if ((f == "compareTo" || f == "isGreaterThan" || f == "isLessThan") && arity(2) && is(1, T::kSemver)) {
        int c = args[0].semver->Compare(*args[1].semver);
        if (f == "compareTo") return Value::Int(c);
        return Value::Bool(f == "isGreaterThan" ? c > 0 : c < 0);
      }
      if (f == "major" && arity(1)) return Value::Int(static_cast<int64_t>(args[0].semver->major));
      if (f == "minor" && arity(1)) return Value::Int(static_cast<int64_t>(args[0].semver->minor));
      if (f == "patch" && arity(1)) return Value::Int(static_cast<int64_t>(args[0].semver->patch));
    }
    if (is(0, T::kOptional)) {
      const ValueList& inner = *args[0].list;
      if (f == "orValue" && arity(2)) return inner.empty() ? args[1] : inner[0];
      if (f == "hasValue" && arity(1)) return Value::Bool(!inner.empty());
      if (f == "value" && arity(1)) return inner.empty() ? Value::Error("optional.none() dereference") : inner[0];
    }
    if (f == "includes" && arity(2) && n.has_target) {
      if (is(0, T::kList)) {
        if (args[0].list->size() > 48) return Value::Error("includes: list longer than 48 entries");
        for (const Value& x : *args[0].list) {
          if (Equal(x, args[1])) return Value::Bool(true);
        }
        return Value::Bool(false);
      }
      return Value::Bool(Equal(args[0], args[1]));
    }
    if (f == "matches" && arity(2) && is(0, T::kString) && is(1, T::kString)) {
      if (n.regex) return Value::Bool(RE2::PartialMatch(args[0].s, *n.regex));
      RE2 re(args[1].s, RE2::Quiet);
      if (!re.ok()) return Value::Error(fmt::format("invalid regular expression '{}': {}", args[1].s, re.error()));
      return Value::Bool(RE2::PartialMatch(args[0].s, re));
    }
    if (is(0, T::kString)) {
      const std::string& s = args[0].s;
      if (arity(2) && is(1, T::kString)) {
        const std::string& t = args[1].s;
        if (f == "startsWith") return Value::Bool(s.starts_with(t));
        if (f == "endsWith") return Value::Bool(s.ends_with(t));
        if (f == "contains") return Value::Bool(s.find(t) != std::string::npos);
        if (f == "indexOf") return Value::Int(s.find(t) == std::string::npos ? -1 : static_cast<int64_t>(s.find(t)));
        if (f == "lastIndexOf") return Value::Int(s.rfind(t) == std::string::npos ? -1 : static_cast<int64_t>(s.rfind(t)));
        if (f == "split") {
          ValueList parts;
          if (t.empty()) {
            for (char c : s) parts.push_back(Value::String(std::string(1, c)));
          } else {
            size_t start = 0;
            for (size_t at = s.find(t); at != std::string::npos; at = s.find(t, start)) {
              parts.push_back(Value::String(s.substr(start, at - start)));
              start = at + t.size();
            }
            parts.push_back(Value::String(s.substr(start)));
          }
          return Value::List(std::move(parts));
        }
      }
      if (arity(1) && (f == "lowerAscii" || f == "upperAscii")) {
        std::string out = s;
        for (char& c : out) {
          if (f == "lowerAscii" && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
          if (f == "upperAscii" && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
        return Value::String(std::move(out));
      }
      if (arity(1) && f == "trim") {
        size_t b = s.find_first_not_of(" \t\n\r\f\v");
        if (b == std::string::npos) return Value::String("");
        return Value::String(s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1));
      }
      if (f == "replace" && arity(3) && is(1, T::kString) && is(2, T::kString)) {
        const std::string& from = args[1].s;
        std::string out;
        if (from.empty()) return args[0];
        size_t start = 0;
        for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
          out += s.substr(start, at - start);
          out += args[2].s;
          start = at + from.size();
        }
        out += s.substr(start);
        return Value::String(std::move(out));
      }
      if ((f == "substring" || f == "charAt") && args.size() >= 2 && is(1, T::kInt)) {
        int64_t b = args[1].i;
        int64_t e = f == "charAt" ? b + 1 : arity(3) && is(2, T::kInt) ? args[2].i : static_cast<int64_t>(s.size());
        if (f == "charAt" && b == static_cast<int64_t>(s.size())) return Value::String("");
        if (b < 0 || e < b || e > static_cast<int64_t>(s.size())) return Value::Error(fmt::format("index out of range: {}", b));
        return Value::String(s.substr(static_cast<size_t>(b), static_cast<size_t>(e - b)));
      }
    }
    if (f == "join" && is(0, T::kList) && (arity(1) || (arity(2) && is(1, T::kString)))) {
      std::string out;
      for (size_t i = 0; i < args[0].list->size(); ++i) {
        const Value& x = (*args[0].list)[i];
        if (x.type != T::kString) return NoOverload("join", {args[0]});
        if (i > 0 && arity(2)) out += args[1].s;
        out += x.s;
      }
      return Value::String(std::move(out));
    }
    if (!n.has_target && arity(1)) {
      const Value& x = args[0];
      if (f == "string") {
        switch (x.type) {
          case T::kString: return x;
          case T::kInt: return Value::String(std::to_string(x.i));
          case T::kUint: return Value::String(std::to_string(x.u));
          case T::kDouble: return Value::String(fmt::format("{}", x.d));
          case T::kBool: return Value::String(x.b ? "true" : "false");
          default: break;
        }
      }
      if (f == "int") {
        if (x.type == T::kInt) return x;
        if (x.type == T::kUint) {
          if (x.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Value::Error("integer overflow");
          return Value::Int(static_cast<int64_t>(x.u));
        }
        if (x.type == T::kDouble) {
          if (!(x.d > -9.2233720368547758e18 && x.d < 9.2233720368547758e18)) return Value::Error("integer overflow");
          return Value::Int(static_cast<int64_t>(x.d));
        }
        if (x.type == T::kString) {
          int64_t v = 0;
          auto r = std::from_chars(x.s.data(), x.s.data() + x.s.size(), v);
          if (r.ec != std::errc() || r.ptr != x.s.data() + x.s.size()) return Value::Error(fmt::format("cannot convert '{}' to int", x.s));
          return Value::Int(v);
        }
      }
      if (f == "uint") {
        if (x.type == T::kUint) return x;
        if (x.type == T::kInt) {
          if (x.i < 0) return Value::Error("unsigned integer overflow");
          return Value::Uint(static_cast<uint64_t>(x.i));
        }
      }
      if (f == "double") {
        if (x.type == T::kDouble) return x;
        if (x.type == T::kInt) return Value::Double(static_cast<double>(x.i));
        if (x.type == T::kUint) return Value::Double(static_cast<double>(x.u));
        if (x.type == T::kString) return Value::Double(std::strtod(x.s.c_str(), nullptr));
      }
      if (f == "bool") {
        if (x.type == T::kBool) return x;
        if (x.type == T::kString && (x.s == "true" || x.s == "false")) return Value::Bool(x.s == "true");
      }
    }
    std::vector<std::string_view> types;
    for (const Value& a : args) types.push_back(TypeName(a));
    return Value::Error(fmt::format("no matching overload for '{}' applied to '({})'", f, fmt::join(types, ", ")));
  }

  const DeviceView& device_;
  int64_t cost_ = 0;
  std::vector<std::pair<std::string, Value>> vars_;
};

bool ParseNumber(std::string_view text, bool normalize, uint64_t* out) {
  if (text.empty()) return false;
  if (!normalize && text.size() > 1 && text[0] == '0') return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), *out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

int Semver::Compare(const Semver& o) const {
  if (major != o.major) return major < o.major ? -1 : 1;
  if (minor != o.minor) return minor < o.minor ? -1 : 1;
  if (patch != o.patch) return patch < o.patch ? -1 : 1;
  if (pre.empty() || o.pre.empty()) return pre.empty() == o.pre.empty() ? 0 : pre.empty() ? 1 : -1;
  for (size_t i = 0; i < pre.size() && i < o.pre.size(); ++i) {
    uint64_t a = 0, b = 0;
    bool an = ParseNumber(pre[i], true, &a), bn = ParseNumber(o.pre[i], true, &b);
    if (an && bn) {
      if (a != b) return a < b ? -1 : 1;
    } else if (an != bn) {
      return an ? -1 : 1;
    } else if (pre[i] != o.pre[i]) {
      return pre[i] < o.pre[i] ? -1 : 1;
    }
  }
  if (pre.size() == o.pre.size()) return 0;
  return pre.size() < o.pre.size() ? -1 : 1;
}

StatusOr<Semver> ParseSemver(std::string_view text, bool normalize) {
  auto bad = [&] { return InvalidArgumentError(fmt::format("invalid semver: '{}'", text)); };
  std::string_view s = text;
  if (normalize && !s.empty() && (s[0] == 'v' || s[0] == 'V')) s.remove_prefix(1);
  std::string_view core = s.substr(0, s.find_first_of("-+"));
  std::string_view rest = s.substr(core.size());
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t dot = core.find('.', start);
    parts.push_back(core.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.size() > 3 || (!normalize && parts.size() != 3)) return bad();
  Semver v;
  uint64_t* fields[] = {&v.major, &v.minor, &v.patch};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!ParseNumber(parts[i], normalize, fields[i])) return bad();
  }
  if (!rest.empty() && rest[0] == '-') {
    std::string_view pre = rest.substr(1, rest.find('+') == std::string_view::npos ? std::string_view::npos : rest.find('+') - 1);
    rest.remove_prefix(1 + pre.size());
    for (size_t start = 0;;) {
      size_t dot = pre.find('.', start);
      std::string_view id = pre.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
      if (id.empty()) return bad();
      for (char c : id) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return bad();
      }
      bool numeric = std::all_of(id.begin(), id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      if (numeric && id.size() > 1 && id[0] == '0') return bad();
      v.pre.emplace_back(id);
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
  }
  if (!rest.empty()) {
    if (rest[0] != '+' || rest.size() == 1) return bad();
    for (char c : rest.substr(1)) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return bad();
    }
  }
  return v;
}

StatusOr<ProgramPtr> Compile(std::string_view expression) {
  if (expression.size() > kMaxExpressionBytes) {
    return InvalidArgumentError(fmt::format("CEL expression is {} bytes, more than the limit of {}", expression.size(),
                                            kMaxExpressionBytes));
  }
  Parser parser(expression);
  StatusOr<std::unique_ptr<Node>> root = parser.Parse();
  if (!root.ok()) return root.status();
  auto program = std::make_shared<Program>();
  program->root = std::move(root).value();
  program->text = std::string(expression);
  return ProgramPtr(std::move(program));
}

StatusOr<bool> Evaluate(const Program& program, const DeviceView& device) {
  for (const auto& [key, value] : device.device->attributes) {
    if (value.kind == AttributeValue::Kind::kUnsupported ||
        (value.kind == AttributeValue::Kind::kVersion && !ParseSemver(value.text).ok())) {
      return InvalidArgumentError(fmt::format("attribute {}: unsupported attribute value", key));
    }
  }
  Evaluator evaluator(device);
  Value v = evaluator.Eval(*program.root);
  if (v.error()) return InvalidArgumentError(std::move(v.s));
  if (v.type != Value::Type::kBool) {
    return InvalidArgumentError(fmt::format("expression must evaluate to bool, got {}", TypeName(v)));
  }
  return v.b;
}

StatusOr<ProgramPtr> ProgramCache::Get(const std::string& expression) {
  {
    MutexLock lock(&mu_);
    if (auto it = programs_.find(expression); it != programs_.end()) return it->second;
  }
  StatusOr<ProgramPtr> compiled = Compile(expression);
  MutexLock lock(&mu_);
  return programs_.emplace(expression, std::move(compiled)).first->second;
}

size_t ProgramCache::size() const {
  MutexLock lock(&mu_);
  return programs_.size();
}

}  // namespace gpusched::dra::cel
