#include "gpusched/extender/preemption.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>


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

bool HoldsGpusOn(const placement::NodeState& node, std::string_view uid) {
  return std::any_of(node.allocations.begin(), node.allocations.end(), [&](const Allocation& a) { return a.pod_uid == uid; });
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

// Appends to *victims those kube-scheduler offered beyond gpusched's choice (the first `chosen`
// of *victims) that its own checks need: each is given back, in decreasing priority, if the pod
// still fits the node's other resources without it. Where the node's allocatable is not known,
// those holding GPUs on the node are dropped (they free nothing the pod needs) and the rest kept;
// where even all of them gone leave no room (gpusched's view differs from kube-scheduler's), all
// are kept. One gpusched does not see on the node is kept as offered. `none_needed`: the pod
// fits the rest with the chosen gone (or as the node is), so every offered victim gpusched sees
// is given back (the loop below would give each back in turn).
void AddNeededOffered(const PreemptionCandidate& c, const placement::NodeState& node, size_t chosen, bool none_needed,
                      placement::ResourceFit* fit, std::vector<Victim>* victims) {
  auto is_chosen = [&](std::string_view uid) {
    return std::any_of(victims->begin(), victims->begin() + static_cast<std::ptrdiff_t>(chosen), [&](const Victim& v) { return v.uid == uid; });
  };
  std::vector<Victim> seen;
  for (size_t i = 0; i < c.victim_uids.size(); ++i) {
    std::string_view uid = c.victim_uids[i];
    const PodUse* use = fit->Find(uid);
    if (use != nullptr && none_needed) continue;  // given back, chosen or not
    if (is_chosen(uid)) continue;
    std::optional<int32_t> p = use != nullptr ? std::optional<int32_t>(use->priority)
                               : i < c.victim_priorities.size() ? c.victim_priorities[i] : std::nullopt;
    (use != nullptr ? seen : *victims).push_back(Victim{.priority = p, .uid = uid, .offered_at = i, .use = use});
    if (use != nullptr) fit->Remove(*use);
  }
  if (none_needed) return;
  if (!fit->known()) {
    std::erase_if(seen, [&](const Victim& v) { return HoldsGpusOn(node, v.uid); });
  } else if (fit->Fits()) {
    std::sort(seen.begin(), seen.end(), Before);
    std::erase_if(seen, [&](const Victim& v) {
      fit->Restore(*v.use);
      if (fit->Fits()) return true;  // not needed
      fit->Remove(*v.use);
      return false;
    });
  }
  victims->insert(victims->end(), seen.begin(), seen.end());
}

// The answer on `node` given gpusched's `choice` there: its victims, and those of kube-scheduler's
// `c` that its own checks need; nullopt drops the node.
std::optional<MetaVictims> Finish(const placement::VictimChoice& choice, const PreemptionCandidate& c, const placement::NodeState& node,
                                  placement::ResourceFit* fit, const Budgets& budgets) {
  if (!choice.helps) return std::nullopt;
  std::vector<Victim> victims;
  victims.reserve(choice.victims.size() + c.victim_uids.size());
  // Where the pod fits the rest as the node is, taking the chosen off changes nothing asked.
  bool fits_already = fit->known() && fit->Fits();
  for (const Allocation* a : choice.victims) {
    victims.push_back(Victim{.priority = a->priority, .uid = a->pod_uid});
    if (fits_already) continue;
    if (const PodUse* use = fit->Find(a->pod_uid)) fit->Remove(*use);
  }
  bool none_needed = fits_already || (fit->known() && fit->Fits());
  AddNeededOffered(c, node, choice.victims.size(), none_needed, fit, &victims);
  if (victims.empty()) return std::nullopt;  // it fits as the node is: nothing to answer
  return Answer(c.node, std::move(victims), *fit, budgets);
}

}  // namespace

std::optional<MetaVictims> DecideCandidate(const PreemptionCandidate& c, const placement::NodeState* node, const Pod& pod,
                                           const ResourceList& other, const Budgets& budgets, VictimChooser& chooser) {
  if (node == nullptr) return std::nullopt;
  placement::ResourceFit fit(*node, other);
  DisruptionCounter counter(budgets);
  placement::VictimChoice choice = chooser.Choose(*node, PreemptionRules(pod, fit, budgets ? &counter : nullptr));
  return Finish(choice, c, *node, &fit, budgets);
}

int64_t CountViolations(std::span<const std::string_view> uids, const placement::ResourceFit& fit, const Budgets& budgets) {
  if (budgets == nullptr) return 0;
  DisruptionCounter counter(budgets);
  int64_t violations = 0;
  for (std::string_view uid : uids) {
    const PodUse* use = fit.Find(uid);
    if (use != nullptr && counter.Evict(use->name, use->labels.get())) ++violations;
  }
  return violations;
}

placement::VictimRules PreemptionRules(const Pod& pod, const placement::ResourceFit& fit, DisruptionCounter* counter) {
  placement::VictimRules rules{.priority = pod.priority, .pod_uid = pod.uid, .known_only = true};
  if (counter != nullptr) {
    rules.violates_pdb = [&fit, counter](const Allocation& a) {
      const PodUse* use = fit.Find(a.pod_uid);
      return use != nullptr && counter->Evict(use->name, use->labels.get());
    };
  }
  return rules;
}

VictimChooser::VictimChooser(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& in)
    : request_(request), in_(in), finder_(in.options->placement), extended_(pod, in) {
  if (request.kind == RequestKind::kNone) dra_.emplace(in.snapshot->dra(), pod, in.programs, in.options->dra);
}

placement::VictimChoice VictimChooser::Choose(const placement::NodeState& node, const placement::VictimRules& rules) {
  if (dra_) return placement::ChooseDraVictims(*dra_, in_.snapshot->dra(), node, rules);
  if (const placement::DraPlanner* special = extended_.For(node)) return placement::ChooseDraVictims(*special, in_.snapshot->dra(), node, rules);
  return finder_.Choose(request_, node, rules);
}

PreemptionPath ChoosePath(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs) {
  if (request.kind == RequestKind::kNone && pod.resource_claims.empty()) return PreemptionPath::kPassThrough;  // no GPU
  if (!request.schedulable()) return PreemptionPath::kNowhere;
  if (!VictimChooser(pod, request, inputs).problem().empty()) return PreemptionPath::kNowhere;  // its claims are not there yet
  return PreemptionPath::kByNode;
}

PreemptionDecider::PreemptionDecider(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs)
    : pod_(pod), request_(request), inputs_(inputs), other_(EffectiveRequests(pod)), work_([this] { Work(); }) {
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
    case PreemptionPath::kPassThrough:
      for (const PreemptionCandidate& c : args.candidates) {
        if (std::optional<MetaVictims> kept = Offered(c)) out.push_back(std::move(*kept));
      }
      return out;  // kube-scheduler's word
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
