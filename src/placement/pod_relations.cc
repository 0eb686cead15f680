// File: pod_relations.cc
//
// Relations gpusched does not model, tested between a pod and one neighbour: conflicting host ports
// (wildcard addresses included), affinity or anti-affinity terms selecting the other, DoNotSchedule
// spread counting it, volumes a volume filter reads.
#include "gpusched/placement/pod_relations.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpusched::placement {
namespace {

bool AnySelects(const std::vector<PodTerm>& terms, std::string_view owner_ns, std::string_view ns, const Labels& labels) {
  return std::any_of(terms.begin(), terms.end(), [&](const PodTerm& t) { return Selects(t, owner_ns, ns, labels); });
}

bool Wildcard(std::string_view ip) { return ip.empty() || ip == "0.0.0.0" || ip == "::"; }

}  // namespace

bool Selects(const PodTerm& term, std::string_view owner_ns, std::string_view ns, const Labels& labels) {
  if (!term.selector) return false;
  bool in_namespace = term.namespace_selector ||
                      (term.namespaces.empty() ? ns == owner_ns
                                               : std::find(term.namespaces.begin(), term.namespaces.end(), ns) != term.namespaces.end());
  return in_namespace && term.selector->Matches(labels);
}

bool PortsConflict(const std::vector<HostPort>& a, const std::vector<HostPort>& b) {
  for (const HostPort& x : a) {
    for (const HostPort& y : b) {
      if (x.port == y.port && x.protocol == y.protocol && (Wildcard(x.host_ip) || Wildcard(y.host_ip) || x.host_ip == y.host_ip)) {
        return true;
      }
    }
  }
  return false;
}

std::string UnmodeledRelation(const Pod& pod, const PodLabels& other) {
  const PodConstraints& mine = pod.constraints;
  const PodConstraints& theirs = other.constraints;
  for (const HostPort& p : mine.host_ports) {
    if (PortsConflict({p}, theirs.host_ports)) return fmt::format("host port {}/{}", p.port, p.protocol);
  }
  const std::string& ns = pod.namespace_name;
  if (AnySelects(mine.affinity, ns, other.namespace_name, other.labels)) return "required pod affinity";
  if (AnySelects(mine.anti_affinity, ns, other.namespace_name, other.labels)) return "required pod anti-affinity";
  if (AnySelects(theirs.anti_affinity, other.namespace_name, ns, pod.labels)) return "its required pod anti-affinity";
  if (AnySelects(theirs.affinity, other.namespace_name, ns, pod.labels)) return "its required pod affinity";
  for (const SpreadConstraint& c : mine.spread) {
    if (c.Filters() && c.selector && other.namespace_name == ns && c.selector->Matches(other.labels)) {
      return "topology spread";
    }
  }
  if (theirs.filter_volumes) return "volumes";
  return "";
}

bool RequiredNeighbour(const Pod& pod, const PodLabels& other) {
  return AnySelects(pod.constraints.affinity, pod.namespace_name, other.namespace_name, other.labels);
}

}  // namespace gpusched::placement
