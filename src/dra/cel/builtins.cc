// File: builtins.cc
//
// The builtin table: the libraries' functions (standard.cc, strings.cc, quantity.cc, semver.cc)
// merged once into overload sets by name, in that order, for the parser to resolve calls against;
// the functions themselves live in the library files.
#include "gpusched/dra/cel/builtins.h"

#include <map>
#include <string>

#include "gpusched/dra/cel/quantity.h"
#include "gpusched/dra/cel/semver.h"

namespace gpusched::dra::cel {
namespace {

using Table = std::map<std::string, std::vector<Builtin>, std::less<>>;

Table MakeTable() {
  Table table;
  for (std::span<const NamedBuiltin> library : {StandardFunctions(), StringFunctions(), QuantityFunctions(), SemverFunctions()}) {
    for (const NamedBuiltin& f : library) table[std::string(f.name)].push_back(f.fn);
  }
  return table;
}

}  // namespace

std::span<const Builtin> FindBuiltins(std::string_view name) {
  static const Table table = MakeTable();
  auto it = table.find(name);
  if (it == table.end()) return {};
  return it->second;
}

}  // namespace gpusched::dra::cel
