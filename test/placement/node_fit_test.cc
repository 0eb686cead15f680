// Node fit: kube-scheduler's NodeUnschedulable, TaintToleration and NodeAffinity as gpusched
// judges them, from Node and Pod JSON shaped as the API server writes them.
#include "gpusched/placement/node_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/kubejson/objects.h"

namespace gpusched::placement {
namespace node_fit_test {

using ::testing::HasSubstr;

Node NodeOf(const std::string& json) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(json, &d).ok());
  StatusOr<Node> n = kubejson::DecodeNode(d, "Node");
  EXPECT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n->spec_error, "");
  return *n;
}

PodConstraints ConstraintsOf(const std::string& spec) {
  std::string json = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":)" + spec + "}";
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(json, &d).ok());
  StatusOr<Pod> p = kubejson::DecodePod(d, "Pod");
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p->spec_error, "");
  return p->constraints;
}

// gpu-a: labelled pool=a, gpus=8, a NoSchedule taint gpu=broken and a PreferNoSchedule one.
const char* kNode = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-a","uid":"n1","resourceVersion":"9",
  "labels":{"pool":"a","gpus":"8","kubernetes.io/hostname":"gpu-a"}},
  "spec":{"taints":[{"key":"gpu","value":"broken","effect":"NoSchedule"},{"key":"soft","effect":"PreferNoSchedule"}]},
  "status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}],"allocatable":{"cpu":"8","pods":"110"}}})";

TEST(NodeFit, AnUntoleratedNoScheduleTaintRefusesAndPreferNoScheduleNever) {
  Node node = NodeOf(kNode);
  EXPECT_EQ(NodeSelectionProblem(ConstraintsOf(R"({"containers":[]})"), node), "taint gpu=broken:NoSchedule is not tolerated");
  EXPECT_EQ(NodeSelectionProblem(ConstraintsOf(R"({"tolerations":[{"key":"gpu","operator":"Equal","value":"broken","effect":"NoSchedule"}]})"), node), "");
  EXPECT_EQ(NodeSelectionProblem(ConstraintsOf(R"({"tolerations":[{"key":"gpu","operator":"Exists"}]})"), node), "");
  EXPECT_EQ(NodeSelectionProblem(ConstraintsOf(R"({"tolerations":[{"operator":"Exists"}]})"), node), "");  // empty key: every taint
  EXPECT_NE(NodeSelectionProblem(ConstraintsOf(R"({"tolerations":[{"key":"gpu","value":"ok","effect":"NoSchedule"}]})"), node), "");
  EXPECT_NE(NodeSelectionProblem(ConstraintsOf(R"({"tolerations":[{"key":"gpu","operator":"Exists","effect":"NoExecute"}]})"), node), "");
  // An operator gpusched does not know (the alpha Gt/Lt) tolerates nothing.
  EXPECT_NE(NodeSelectionProblem(ConstraintsOf(R"({"tolerations":[{"key":"gpu","operator":"Gt","value":"1"}]})"), node), "");
}

TEST(NodeFit, ACordonedNodeRefusesUnlessTheUnschedulableTaintIsTolerated) {
  Node node = NodeOf(R"({"kind":"Node","metadata":{"name":"c"},"spec":{"unschedulable":true,
    "taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule","timeAdded":"2026-12-01T10:00:00Z"}]}})");
  EXPECT_TRUE(node.schedulability.unschedulable);
  EXPECT_EQ(NodeSelectionProblem(ConstraintsOf(R"({})"), node), "node is cordoned (spec.unschedulable)");
  EXPECT_EQ(NodeSelectionProblem(ConstraintsOf(R"({"tolerations":[{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoSchedule"}]})"), node), "");
}

TEST(NodeFit, NodeSelectorAndRequiredNodeAffinityMatchAsUpstream) {
  Node node = NodeOf(kNode);
  PodConstraints tolerant = ConstraintsOf(R"({"tolerations":[{"operator":"Exists"}],"nodeSelector":{"pool":"b"}})");
  EXPECT_EQ(NodeSelectionProblem(tolerant, node), "nodeSelector pool=b does not match (pool=a)");
  auto affinity = [](const std::string& terms) {
    return ConstraintsOf(R"({"tolerations":[{"operator":"Exists"}],"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)" +
                         terms + "}}}}");
  };
  auto fits = [&](const std::string& terms) { return NodeSelectionProblem(affinity(terms), node).empty(); };
  EXPECT_TRUE(fits(R"([{"matchExpressions":[{"key":"pool","operator":"In","values":["a","c"]}]}])"));
  EXPECT_FALSE(fits(R"([{"matchExpressions":[{"key":"pool","operator":"NotIn","values":["a"]}]}])"));
  EXPECT_TRUE(fits(R"([{"matchExpressions":[{"key":"zone","operator":"NotIn","values":["z1"]}]}])"));  // absent: not in
  EXPECT_TRUE(fits(R"([{"matchExpressions":[{"key":"pool","operator":"Exists"},{"key":"zone","operator":"DoesNotExist"}]}])"));
  EXPECT_FALSE(fits(R"([{"matchExpressions":[{"key":"pool","operator":"Exists"},{"key":"gpus","operator":"DoesNotExist"}]}])"));
  EXPECT_TRUE(fits(R"([{"matchExpressions":[{"key":"gpus","operator":"Gt","values":["4"]}]}])"));
  EXPECT_FALSE(fits(R"([{"matchExpressions":[{"key":"gpus","operator":"Lt","values":["8"]}]}])"));
  EXPECT_FALSE(fits(R"([{"matchExpressions":[{"key":"pool","operator":"Gt","values":["1"]}]}])"));  // not an integer
  EXPECT_TRUE(fits(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["gpu-a"]}]}])"));
  EXPECT_FALSE(fits(R"([{"matchFields":[{"key":"metadata.name","operator":"NotIn","values":["gpu-a"]}]}])"));
  // Terms are ORed; an empty term matches nothing; an unknown operator matches nothing.
  EXPECT_TRUE(fits(R"([{"matchExpressions":[{"key":"pool","operator":"In","values":["z"]}]},{"matchExpressions":[{"key":"pool","operator":"In","values":["a"]}]}])"));
  EXPECT_FALSE(fits(R"([{}])"));
  EXPECT_FALSE(fits(R"([{"matchExpressions":[{"key":"pool","operator":"Like","values":["a"]}]}])"));
}

TEST(NodeFit, PodRelationsAreNamedAsNotJudged) {
  PodConstraints c = ConstraintsOf(R"({"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
      {"labelSelector":{"matchLabels":{"app":"x"}},"topologyKey":"kubernetes.io/hostname"}]}},
    "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{}}]})");
  EXPECT_TRUE(c.HasPodRelations());
  EXPECT_EQ(UnjudgedRelations(c), "required pod anti-affinity");  // ScheduleAnyway never filters
  EXPECT_FALSE(ConstraintsOf(R"({"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"}]})").HasPodRelations());
}

TEST(NodeFit, TheReadyConditionAndHostPortsAndVolumesAreRead) {
  EXPECT_EQ(NodeOf(kNode).schedulability.ready, true);
  Node not_ready = NodeOf(R"({"kind":"Node","metadata":{"name":"n"},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}})");
  EXPECT_EQ(not_ready.schedulability.ready, false);
  PodConstraints c = ConstraintsOf(R"({"containers":[{"name":"c","ports":[{"containerPort":80,"hostPort":8080},{"containerPort":9090}]}],
    "volumes":[{"name":"kube-api-access-x","projected":{"sources":[]}},{"name":"cfg","configMap":{"name":"c"}}]})");
  ASSERT_EQ(c.host_ports.size(), 1u);
  EXPECT_EQ(c.host_ports[0].port, 8080);
  EXPECT_EQ(c.host_ports[0].protocol, "TCP");
  EXPECT_FALSE(c.filter_volumes);  // no volume filter reads these
  EXPECT_TRUE(ConstraintsOf(R"({"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"d"}}]})").filter_volumes);
}

}  // namespace node_fit_test
}  // namespace gpusched::placement
