// File: preemption.cc
//
// The preempt decision per candidate: offered victims split into kept and returnable, gpusched's
// own choice made with those leaving, returnable ones kept where other resources need them, budget
// violations counted; candidates decided while the body parses.
#include "gpusched/extender/preemption.h"

#include <algorithm>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/pod_relations.h"


namespace gpusched::extender {
namespace {

using Budgets = std::shared_ptr<const std::vector<DisruptionBudget>>;

// One victim answered, with what orders it.
struct Victim {
  std::optional<int32_t> priority;  // nullopt: not known, listed last
  std::string_view uid;  // into the request or the snapshot, both alive while deciding
  size_t offered_at = 0;  // position in kube-scheduler's list (order among unknown priorities)
  const PodUse* use = nullptr;  // its use of the node, when gpusched sees it there
};

// Decreasing priority, then UID; unknown priorities last, in the order offered.
bool Before(const Victim& a, const Victim& b) {
  if (a.priority.has_value() != b.priority.has_value()) return a.priority.has_value();
  if (!a.priority) return a.offered_at < b.offered_at;
  return std::tie(*b.priority, a.uid) < std::tie(*a.priority, b.uid);
}

// The answer for `node`: the victims in kube-scheduler's order, and the budget violations of
// evicting exactly them (in that order, as kube-scheduler counts them).
MetaVictims Answer(std::string_view node, std::vector<Victim> victims, const placement::ResourceFit& fit,
                   const Budgets& budgets) {
  std::sort(victims.begin(), victims.end(), Before);  // a total order: no ties
  MetaVictims out{.node = node};
  out.uids.reserve(victims.size());
  for (const Victim& v : victims) out.uids.push_back(v.uid);
  if (budgets != nullptr) out.pdb_violations = CountViolations(out.uids, fit, budgets);
  return out;
}

// kube-scheduler's own victims, unchanged; nullopt for a placeholder.
std::optional<MetaVictims> Offered(const PreemptionCandidate& c) {
  if (c.victim_uids.empty()) return std::nullopt;
  return MetaVictims{.node = c.node, .uids = {c.victim_uids.begin(), c.victim_uids.end()}, .pdb_violations = c.pdb_violations};
}

// True if gpusched may give back offered victim `uid`: a pod it sees on the node, holding GPUs of
// kind `mode` there, that nothing ties to `pod` through a filter gpusched does not model
// (pod_relations.h). Reads the victim's use and labels only where either pod has constraints
// that could tie them (a preempt asks this of thousands of victims).
bool MayGiveBack(const Pod& pod, NodeMode mode, const placement::NodeState& node, std::string_view uid) {
  uint8_t flags = 0;
  const DeviceKind* kind = KindServing(mode);
  if (kind == nullptr || node.uses == nullptr || !node.uses->Has(uid, &flags) || node.mode != mode) return false;
  bool holds = PodUse::PluginKind(flags) == kind->request;
  if (HasPayload(mode, Payload::kDevices) && (flags & PodUse::kDevices) != 0) {
    const Allocation* a = node.FindAllocation(uid);  // its claims' devices are GPUs only if the ledger books them
    holds = a != nullptr && a->mode == mode;
  }
  if (!holds) return false;
  if ((flags & PodUse::kTies) == 0 && !pod.constraints.TiedBy()) return true;
  const PodUse* use = node.uses->Find(uid);
  static const PodLabels kNone;
  return placement::UnmodeledRelation(pod, use->labels != nullptr ? *use->labels : kNone).empty();
}

// Fills in what v's answer and ResourceFit read of it (its use there, its priority) once it is
// known to be needed: reading it for every victim offered would miss the cache at each.
void Resolve(const PreemptionCandidate& c, const placement::ResourceFit& fit, Victim* v) {
  if (v->use == nullptr) v->use = fit.Find(v->uid);
  if (v->priority) return;
  if (v->use != nullptr) {
    v->priority = v->use->priority;
  } else if (v->offered_at < c.victim_priorities.size()) {
    v->priority = c.victim_priorities[v->offered_at];
  }
}

// Gives back, in decreasing priority, each of `offered` the pod still fits the node's other
// resources without (fit: with every victim already gone); the others join *victims. Where the
// node's allocatable is not known they are all given back; where the pod does not fit even with
// all of them gone (gpusched's view differs from kube-scheduler's), none is.
void GiveBack(const PreemptionCandidate& c, std::vector<Victim> offered, placement::ResourceFit* fit, std::vector<Victim>* victims) {
  for (Victim& v : offered) Resolve(c, *fit, &v);
  if (fit->known() && !fit->Fits()) {
    victims->insert(victims->end(), offered.begin(), offered.end());
    return;
  }
  if (!fit->known()) return;
  std::sort(offered.begin(), offered.end(), Before);
  for (const Victim& v : offered) {
    fit->Restore(*v.use);
    if (fit->Fits()) continue;  // not needed
    fit->Remove(*v.use);
    victims->push_back(v);
  }
}

// kube-scheduler's victims on a node, split: those that stay in the answer whatever gpusched
// chooses, and those gpusched may give back (MayGiveBack).
struct OfferedVictims {
  std::vector<Victim> staying;
  std::vector<Victim> droppable;
};

OfferedVictims SplitOffered(const PreemptionCandidate& c, const placement::NodeState& node, const Pod& pod, NodeMode mode) {
  OfferedVictims out;
  for (size_t i = 0; i < c.victim_uids.size(); ++i) {
    std::string_view uid = c.victim_uids[i];
    Victim v{.uid = uid, .offered_at = i};
    if (MayGiveBack(pod, mode, node, uid)) {
      out.droppable.push_back(v);
    } else {
      out.staying.push_back(v);
    }
  }
  return out;
}

// The offered victims of `droppable` that the node's other resources still need with the pods
// `gone` and the others of `droppable` gone (GiveBack); those of `gone` are victims already.
std::vector<Victim> Needed(const PreemptionCandidate& c, std::vector<Victim> droppable, const std::vector<Victim>& gone,
                           placement::ResourceFit fit) {
  auto is_gone = [&](const Victim& v) {
    return std::any_of(gone.begin(), gone.end(), [&](const Victim& g) { return g.uid == v.uid; });
  };
  std::erase_if(droppable, is_gone);
  for (const Victim& v : gone) {
    if (const PodUse* use = fit.Find(v.uid)) fit.Remove(*use);
  }
  if (!fit.known() || fit.Fits()) return {};  // every one given back (the loop below would give each back in turn)
  for (Victim& v : droppable) {
    Resolve(c, fit, &v);
    fit.Remove(*v.use);  // MayGiveBack saw it on the node
  }
  std::vector<Victim> needed;
  GiveBack(c, std::move(droppable), &fit, &needed);
  return needed;
}

// Chooses gpusched's victims with `leaving` gone already, and returns `leaving` and the choice's
// victims, each UID viewing the node's state (a victim the DRA choice made for itself dies with
// it); nullopt if no eviction makes room.
std::optional<std::vector<Victim>> ChooseWith(VictimChooser& chooser, const placement::NodeState& node,
                                              const placement::ResourceFit& fit, placement::VictimRules rules,
                                              const std::vector<Victim>& leaving) {
  std::set<std::string_view> uids;
  for (const Victim& v : leaving) uids.insert(v.uid);
  if (!uids.empty()) rules.leaving = [&uids](std::string_view uid) { return uids.contains(uid); };
  placement::VictimChoice choice = chooser.Choose(node, rules);
  if (!choice.helps) return std::nullopt;
  std::vector<Victim> out = leaving;
  for (const Allocation* a : choice.victims) {
    std::string_view uid = a->pod_uid;
    if (!choice.owned.empty()) {
      const PodUse* use = fit.Find(uid);
      const Allocation* held = use == nullptr ? node.FindAllocation(uid) : nullptr;
      if (use == nullptr && held == nullptr) continue;  // not kube-scheduler's to resolve
      uid = use != nullptr ? std::string_view(use->uid) : std::string_view(held->pod_uid);
    }
    out.push_back(Victim{.priority = a->priority, .uid = uid});
  }
  return out;
}

}  // namespace

std::optional<MetaVictims> DecideCandidate(const PreemptionCandidate& c, const placement::NodeState* node, const Pod& pod,
                                           const ResourceList& other, const Budgets& budgets, VictimChooser& chooser) {
  if (node == nullptr || !placement::NodeSelectionProblem(pod.constraints, node->node).empty()) return std::nullopt;
  placement::ResourceFit fit(*node, other);
  fit.CountNominated(pod.uid, pod.priority);
  OfferedVictims offered = SplitOffered(c, *node, pod, chooser.ModeOn(*node));
  DisruptionCounter counter(budgets);
  placement::VictimRules rules = PreemptionRules(pod, fit, budgets ? &counter : nullptr);
  std::vector<Victim> leaving = std::move(offered.staying);
  for (Victim& v : leaving) Resolve(c, fit, &v);
  // gpusched's choice is made with the victims that leave anyway gone; where some that it could
  // give back must go for the node's other resources, they leave too and the choice is made again
  // (it may need fewer), until the other resources need no more of them. `leaving` only grows.
  for (;;) {
    counter = DisruptionCounter(budgets);
    for (const Victim& v : leaving) {
      if (v.use != nullptr) counter.Evict(v.use->name, v.use->labels.get());  // their allowance is used first
    }
    std::optional<std::vector<Victim>> gone = ChooseWith(chooser, *node, fit, rules, leaving);
    if (!gone) return std::nullopt;
    std::erase_if(offered.droppable, [&](const Victim& v) {
      return std::any_of(leaving.begin(), leaving.end(), [&](const Victim& l) { return l.uid == v.uid; });
    });
    std::vector<Victim> needed = Needed(c, offered.droppable, *gone, fit);
    if (needed.empty()) {
      if (gone->empty()) return std::nullopt;  // it fits as the node is: nothing to answer
      return Answer(c.node, std::move(*gone), fit, budgets);
    }
    leaving.insert(leaving.end(), needed.begin(), needed.end());
  }
}

PreemptionPath ChoosePath(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs) {
  if (!request.asks_gpu()) return PreemptionPath::kPassThrough;
  if (!request.schedulable() || pod.never_preempts) return PreemptionPath::kNowhere;
  if (!VictimChooser(pod, request, inputs).Problem().ok()) return PreemptionPath::kNowhere;  // its claims are not there yet
  return PreemptionPath::kByNode;
}

PreemptionDecider::PreemptionDecider(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs)
    : pod_(pod), request_(request), inputs_(inputs), other_(EffectiveRequests(pod)), kept_off_(KeptOffDomain(pod, inputs)),
      work_([this] { Work(); }) {
  helping_ = inputs.helper != nullptr && std::thread::hardware_concurrency() >= 2 && inputs.helper->Start(work_);
}

PreemptionDecider::~PreemptionDecider() { Stop(); }

void PreemptionDecider::Read(const PreemptionCandidate& candidate) {
  answers_.emplace_back();
  {
    MutexLock lock(&mu_);
    queue_.push_back(Item{.candidate = &candidate, .answer = &answers_.back()});
  }
  ready_.Signal();
}

void PreemptionDecider::Abandon() {
  {
    MutexLock lock(&mu_);
    abandoned_ = true;
  }
  Stop();
}

void PreemptionDecider::Stop() {
  {
    MutexLock lock(&mu_);
    closed_ = true;
  }
  ready_.SignalAll();
  if (helping_) inputs_.helper->Wait();
  helping_ = false;
}

size_t PreemptionDecider::Take(std::array<Item, kBatch>& out) {
  MutexLock lock(&mu_);
  while (taken_ == queue_.size() && !closed_) ready_.Wait();
  if (abandoned_) return 0;
  size_t n = std::min(kBatch, queue_.size() - taken_);
  std::copy_n(queue_.begin() + static_cast<std::ptrdiff_t>(taken_), n, out.begin());
  taken_ += n;
  return n;
}

void PreemptionDecider::Work() {
  VictimChooser chooser(pod_, request_, inputs_);
  std::array<Item, kBatch> items;
  for (size_t n = Take(items); n > 0; n = Take(items)) {
    // Each node is looked up one ahead, and what victim choice reads of it fetched meanwhile.
    const placement::NodeState* next = inputs_.snapshot->FindNode(items[0].candidate->node);
    for (size_t i = 0; i < n; ++i) {
      const placement::NodeState* node = next;
      next = i + 1 < n ? inputs_.snapshot->FindNode(items[i + 1].candidate->node) : nullptr;
      if (next != nullptr) placement::PrefetchForVictims(*next);
      if (InKeptDomain(node, kept_off_, *inputs_.options)) continue;  // the answer stays nullopt: dropped
      *items[i].answer = DecideCandidate(*items[i].candidate, node, pod_, other_, inputs_.snapshot->budgets(), chooser);
    }
  }
}

std::vector<MetaVictims> PreemptionDecider::Finish() {
  {
    MutexLock lock(&mu_);
    closed_ = true;
  }
  ready_.SignalAll();
  Work();
  Stop();
  std::vector<MetaVictims> out;
  for (std::optional<MetaVictims>& kept : answers_) {
    if (kept) out.push_back(std::move(*kept));
  }
  return out;
}

std::vector<MetaVictims> DecidePreemption(const PreemptionArgs& args, const placement::PodRequest& request,
                                          const EvaluationInputs& inputs) {
  std::vector<MetaVictims> out;
  switch (ChoosePath(args.pod, request, inputs)) {
    case PreemptionPath::kPassThrough: {
      std::string kept_off = KeptOffDomain(args.pod, inputs);
      for (const PreemptionCandidate& c : args.candidates) {
        if (InKeptDomain(inputs.snapshot->FindNode(c.node), kept_off, *inputs.options)) continue;
        if (std::optional<MetaVictims> kept = Offered(c)) out.push_back(std::move(*kept));
      }
      return out;  // kube-scheduler's word, but for the domain kept for a gang
    }
    case PreemptionPath::kNowhere:
      return out;
    case PreemptionPath::kByNode:
      break;
  }
  PreemptionDecider decider(args.pod, request, inputs);
  for (const PreemptionCandidate& c : args.candidates) decider.Read(c);
  return decider.Finish();
}

}  // namespace gpusched::extender
