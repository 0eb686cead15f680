// File: parser.cc
//
// CEL parsing by precedence climbing with a nesting limit: member and index chains, list and map
// literals, the macros (has, comprehensions, cel.bind) as nodes of their own, and every other call
// resolved to its builtin overload set at parse time.
#include "gpusched/dra/cel/parser.h"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <optional>

#include "gpusched/dra/cel/lexer.h"

namespace gpusched::dra::cel {
namespace {

using NodePtr = std::unique_ptr<Node>;
using NodeList = std::vector<NodePtr>;

NodePtr Make(Op op) {
  auto n = std::make_unique<Node>();
  n->op = op;
  return n;
}

NodePtr MakeLiteral(Value v) {
  NodePtr n = Make(Op::kLiteral);
  n->literal = std::move(v);
  return n;
}

class Parser {
 public:
  explicit Parser(std::string_view src) : lexer_(src) {}

  StatusOr<NodePtr> Parse() {
    GPUSCHED_RETURN_IF_ERROR(Advance());
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
  Status Advance() { return lexer_.Next(&tok_); }
  bool IsPunct(std::string_view p) const { return tok_.kind == Tok::kPunct && tok_.text == p; }
  Status Expect(std::string_view p) {
    if (!IsPunct(p)) return Fail(fmt::format("expected '{}', got '{}'", p, tok_.kind == Tok::kEnd ? "end" : tok_.text));
    return Advance();
  }

  // Precedence climbing: 0 ternary, 1 ||, 2 &&, 3 relations, 4 + -, 5 * / %.
  StatusOr<NodePtr> Expr(int depth) {
    if (depth > kMaxDepth) return Fail("expression nests too deeply");
    auto cond = Binary(1, depth + 1);
    if (!cond.ok() || !IsPunct("?")) return cond;
    GPUSCHED_RETURN_IF_ERROR(Advance());
    auto yes = Binary(1, depth + 1);
    if (!yes.ok()) return yes;
    GPUSCHED_RETURN_IF_ERROR(Expect(":"));
    auto no = Expr(depth + 1);
    if (!no.ok()) return no;
    NodePtr n = Make(Op::kTernary);
    n->args.push_back(std::move(cond).value());
    n->args.push_back(std::move(yes).value());
    n->args.push_back(std::move(no).value());
    return n;
  }

  std::optional<Op> BinaryOp(int level) const {
    if (tok_.kind == Tok::kIdent && level == 3 && tok_.text == "in") return Op::kIn;
    if (tok_.kind != Tok::kPunct) return std::nullopt;
    static const std::map<std::string, std::pair<int, Op>, std::less<>> kOps = {
        {"||", {1, Op::kOr}}, {"&&", {2, Op::kAnd}}, {"==", {3, Op::kEq}}, {"!=", {3, Op::kNe}},
        {"<", {3, Op::kLt}},  {"<=", {3, Op::kLe}},  {">", {3, Op::kGt}},  {">=", {3, Op::kGe}},
        {"+", {4, Op::kAdd}}, {"-", {4, Op::kSub}},  {"*", {5, Op::kMul}}, {"/", {5, Op::kDiv}},
        {"%", {5, Op::kMod}}};
    auto it = kOps.find(tok_.text);
    if (it == kOps.end() || it->second.first != level) return std::nullopt;
    return it->second.second;
  }

  StatusOr<NodePtr> Binary(int level, int depth) {
    if (depth > kMaxDepth) return Fail("expression nests too deeply");
    if (level > 5) return Unary(depth + 1);
    auto left = Binary(level + 1, depth + 1);
    if (!left.ok()) return left;
    NodePtr acc = std::move(left).value();
    while (std::optional<Op> op = BinaryOp(level)) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      auto right = Binary(level + 1, depth + 1);
      if (!right.ok()) return right;
      NodePtr n = Make(*op);
      n->args.push_back(std::move(acc));
      n->args.push_back(std::move(right).value());
      acc = std::move(n);
    }
    return acc;
  }

  StatusOr<NodePtr> Unary(int depth) {
    if (depth > kMaxDepth) return Fail("expression nests too deeply");
    if (IsPunct("!") || IsPunct("-")) {
      bool neg = IsPunct("-");
      GPUSCHED_RETURN_IF_ERROR(Advance());
      // A negative literal folds (so that int64's minimum is expressible).
      if (neg && tok_.kind == Tok::kInt) {
        uint64_t v = tok_.u;
        GPUSCHED_RETURN_IF_ERROR(Advance());
        int64_t value = v == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1 ? std::numeric_limits<int64_t>::min()
                                                                                            : -static_cast<int64_t>(v);
        return Member(MakeLiteral(Value::Int(value)), depth + 1);
      }
      auto operand = Unary(depth + 1);
      if (!operand.ok()) return operand;
      NodePtr n = Make(neg ? Op::kNeg : Op::kNot);
      n->args.push_back(std::move(operand).value());
      return n;
    }
    auto primary = Primary(depth + 1);
    if (!primary.ok()) return primary;
    return Member(std::move(primary).value(), depth + 1);
  }

  // Comma-separated expressions up to `close` (a trailing comma allowed); consumes `close`.
  StatusOr<NodeList> Args(std::string_view close, int depth) {
    NodeList out;
    if (IsPunct(close)) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      return out;
    }
    while (true) {
      auto e = Expr(depth + 1);
      if (!e.ok()) return e.status();
      out.push_back(std::move(e).value());
      if (!IsPunct(",")) break;
      GPUSCHED_RETURN_IF_ERROR(Advance());
      if (IsPunct(close)) break;
    }
    GPUSCHED_RETURN_IF_ERROR(Expect(close));
    return out;
  }

  // operand.field, operand.?field, operand.f(...), operand[index], repeated.
  StatusOr<NodePtr> Member(NodePtr operand, int depth) {
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
        NodePtr n = Make(optional ? Op::kOptSelect : Op::kSelect);
        n->name = std::move(field);
        n->args.push_back(std::move(operand));
        operand = std::move(n);
      } else if (IsPunct("[")) {
        GPUSCHED_RETURN_IF_ERROR(Advance());
        auto index = Expr(depth + 1);
        if (!index.ok()) return index;
        GPUSCHED_RETURN_IF_ERROR(Expect("]"));
        NodePtr n = Make(Op::kIndex);
        n->args.push_back(std::move(operand));
        n->args.push_back(std::move(index).value());
        operand = std::move(n);
      } else {
        return operand;
      }
    }
  }

  StatusOr<NodePtr> Primary(int depth) {
    switch (tok_.kind) {
      case Tok::kEnd: return Fail("unexpected end of expression");
      case Tok::kInt: case Tok::kUint: case Tok::kDouble: case Tok::kString: return Literal();
      case Tok::kIdent: return Identifier(depth);
      case Tok::kPunct: break;
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
      NodePtr n = Make(Op::kList);
      n->args = std::move(elems).value();
      return n;
    }
    if (IsPunct("{")) return MapLiteral(depth);
    return Fail(fmt::format("unexpected '{}'", tok_.text));
  }

  StatusOr<NodePtr> Literal() {
    Token t = tok_;
    GPUSCHED_RETURN_IF_ERROR(Advance());
    switch (t.kind) {
      case Tok::kInt:
        if (t.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Fail("integer out of range");
        return MakeLiteral(Value::Int(t.i));
      case Tok::kUint: return MakeLiteral(Value::Uint(t.u));
      case Tok::kDouble: return MakeLiteral(Value::Double(t.d));
      default: return MakeLiteral(Value::String(std::move(t.text)));
    }
  }

  // true, false, null, a global call f(...), cel.bind(...), or a variable.
  StatusOr<NodePtr> Identifier(int depth) {
    std::string name = tok_.text;
    GPUSCHED_RETURN_IF_ERROR(Advance());
    if (name == "true" || name == "false") return MakeLiteral(Value::Bool(name == "true"));
    if (name == "null") return Make(Op::kLiteral);
    if (IsPunct("(")) {
      GPUSCHED_RETURN_IF_ERROR(Advance());
      auto args = Args(")", depth + 1);
      if (!args.ok()) return args.status();
      return MakeCall(std::move(name), nullptr, std::move(args).value());
    }
    if (name == "cel" && IsPunct(".")) return Bind(depth);
    NodePtr n = Make(Op::kIdent);
    n->name = std::move(name);
    return n;
  }

  // After "cel": .bind(name, init, expression), the one function of the cel namespace.
  StatusOr<NodePtr> Bind(int depth) {
    GPUSCHED_RETURN_IF_ERROR(Advance());
    if (tok_.kind != Tok::kIdent || tok_.text != "bind") return Fail("only cel.bind is supported in the cel namespace");
    GPUSCHED_RETURN_IF_ERROR(Advance());
    GPUSCHED_RETURN_IF_ERROR(Expect("("));
    auto args = Args(")", depth + 1);
    if (!args.ok()) return args.status();
    NodeList a = std::move(args).value();
    if (a.size() != 3 || a[0]->op != Op::kIdent) return Fail("cel.bind wants (name, init, expression)");
    NodePtr n = Make(Op::kBind);
    n->name = a[0]->name;
    n->args.push_back(std::move(a[1]));
    n->args.push_back(std::move(a[2]));
    return n;
  }

  StatusOr<NodePtr> MapLiteral(int depth) {
    GPUSCHED_RETURN_IF_ERROR(Advance());
    NodePtr n = Make(Op::kMap);
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

  // has(a.b), and x.exists(v, e) and the other comprehensions; nullopt for any other call.
  std::optional<StatusOr<NodePtr>> MakeMacro(const std::string& name, NodePtr* target, NodeList* args) {
    if (name == "has" && *target == nullptr) {
      if (args->size() != 1 || (*args)[0]->op != Op::kSelect) return Fail("has() wants a field selection, as in has(a.b)");
      NodePtr n = Make(Op::kHas);
      n->args.push_back(std::move((*args)[0]));
      return n;
    }
    static const std::map<std::string, Macro, std::less<>> kMacros = {
        {"exists", Macro::kExists}, {"all", Macro::kAll}, {"exists_one", Macro::kExistsOne},
        {"map", Macro::kMap}, {"filter", Macro::kFilter}};
    auto m = kMacros.find(name);
    if (m == kMacros.end() || *target == nullptr) return std::nullopt;
    if (args->size() != 2 || (*args)[0]->op != Op::kIdent) return Fail(fmt::format("{}() wants (variable, expression)", name));
    NodePtr n = Make(Op::kComprehension);
    n->macro = m->second;
    n->name = (*args)[0]->name;
    n->args.push_back(std::move(*target));
    n->args.push_back(std::move((*args)[1]));
    return n;
  }

  StatusOr<NodePtr> MakeCall(std::string name, NodePtr target, NodeList args) {
    if (auto macro = MakeMacro(name, &target, &args)) return std::move(*macro);
    std::span<const Builtin> builtins = FindBuiltins(name);
    if (builtins.empty()) return Fail(fmt::format("undeclared reference to '{}'", name));
    NodePtr n = Make(Op::kCall);
    n->name = std::move(name);
    n->builtins = builtins;
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

  Lexer lexer_;
  Token tok_;
};

}  // namespace

StatusOr<std::unique_ptr<Node>> Parse(std::string_view expression) { return Parser(expression).Parse(); }

}  // namespace gpusched::dra::cel
