// File: node_names_memo.cc
//
// The NodeNames memo: remembered lists with their exact JSON text (only names Go writes unescaped),
// matched by prefix and kept most recently used last, each with its positions in a snapshot's name
// index computed once.
#include "gpusched/extender/node_names_memo.h"

#include <algorithm>

#include "gpusched/json/writer.h"

namespace gpusched::extender {
namespace {

// Returns true if Go's encoding/json writes `name` as it is between quotes: printable ASCII
// without '"', '\\', '<', '>' or '&' (which Go writes as \u003c and friends).
bool Verbatim(std::string_view name) {
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&') return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const std::vector<size_t>> NodeNamesMemo::List::PositionsIn(
    const std::shared_ptr<const inventory::NameIndex>& in) const {
  MutexLock lock(&mu);
  if (index != in) {
    auto fresh = std::make_shared<std::vector<size_t>>();
    fresh->reserve(names.size());
    for (std::string_view name : names) fresh->push_back(in->Find(name));
    index = in;
    positions = std::move(fresh);
  }
  return positions;
}

std::shared_ptr<const NodeNamesMemo::List> NodeNamesMemo::Match(std::string_view text) const {
  std::vector<std::shared_ptr<const List>> lists;
  {
    MutexLock lock(&mu_);
    lists = lists_;
  }
  for (auto it = lists.rbegin(); it != lists.rend(); ++it) {
    if (!text.starts_with((*it)->json)) continue;
    Touch(*it);
    return *it;
  }
  return nullptr;
}

void NodeNamesMemo::Touch(const std::shared_ptr<const List>& list) const {
  // Most recently used last: the list of every node, used by every filter, is never the one to go.
  MutexLock lock(&mu_);
  auto at = std::find(lists_.begin(), lists_.end(), list);
  if (at != lists_.end()) std::rotate(at, at + 1, lists_.end());
}

void NodeNamesMemo::Remember(std::span<const std::string_view> names) {
  auto list = std::make_shared<List>();
  size_t total = 0;
  for (std::string_view n : names) {
    if (!Verbatim(n)) return;
    total += n.size();
  }
  list->bytes.reserve(total);
  // The list as Go's encoding/json writes it, to be found again in later bodies: every name is
  // Verbatim, so none is escaped.
  json::Writer w(total + 3 * names.size() + 2);
  w.StartArray();
  for (std::string_view n : names) {
    w.CheckedString(n);
    list->bytes.append(n);
  }
  w.EndArray();
  list->json = w.Take();
  size_t offset = 0;
  for (std::string_view n : names) {
    list->names.emplace_back(list->bytes.data() + offset, n.size());
    offset += n.size();
  }
  MutexLock lock(&mu_);
  for (const auto& held : lists_) {
    if (held->json == list->json) return;
  }
  lists_.push_back(std::move(list));
  if (lists_.size() > capacity_) lists_.erase(lists_.begin());
}

}  // namespace gpusched::extender
