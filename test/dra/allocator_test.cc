// The structured allocator against upstream's own cases (dra.md §4): the ten worked examples of
// §4.3 with their expected results, and at least one case of every category of §4.2.
#include "gpusched/dra/allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::dra {
namespace allocator_test {

using ::testing::HasSubstr;
using Kind = AllocatorOutcome::Kind;

constexpr int64_t kGi = int64_t{1} << 30;

// Upstream's harness conventions (§4.1).
DeviceClass Class(std::string name, std::string driver, std::string extra = "") {
  return DeviceClass{.name = std::move(name), .selectors = {"device.driver == \"" + driver + "\"" + extra}};
}

ResourceSlice Slice(std::string name, std::string node, std::string pool, std::string driver, std::vector<Device> devices) {
  return ResourceSlice{.name = std::move(name), .driver = std::move(driver), .pool = std::move(pool), .generation = 1,
                       .slice_count = 1, .node_name = std::move(node), .devices = std::move(devices)};
}

Device Dev(std::string name) { return Device{.name = std::move(name)}; }

Device WithMemory(std::string name, int64_t gi) {
  Device d{.name = std::move(name)};
  d.capacity["memory"] = Capacity{.value_milli = gi * kGi * 1000};
  return d;
}

Device WithAttrs(std::string name, std::map<std::string, AttributeValue> attrs) {
  return Device{.name = std::move(name), .attributes = std::move(attrs)};
}

AttributeValue S(std::string v) { return {.kind = AttributeValue::Kind::kString, .text = std::move(v)}; }
AttributeValue V(std::string v) { return {.kind = AttributeValue::Kind::kVersion, .text = std::move(v)}; }
AttributeValue I(int64_t v) { return {.kind = AttributeValue::Kind::kInt, .int_value = v}; }

DeviceRequest Req(std::string name, std::string cls, int64_t count, std::vector<std::string> selectors = {}) {
  return DeviceRequest{.name = std::move(name),
                       .exactly = ExactRequest{.device_class = std::move(cls), .selectors = std::move(selectors), .count = count}};
}

DeviceRequest AllOf(std::string name, std::string cls) {
  DeviceRequest r = Req(std::move(name), std::move(cls), 1);
  r.exactly->allocation_mode = "All";
  return r;
}

ResourceClaim Claim(std::string name, std::vector<DeviceRequest> requests, std::vector<DeviceConstraint> constraints = {}) {
  return ResourceClaim{.namespace_name = "default", .name = std::move(name), .uid = "uid-" + name,
                       .requests = std::move(requests), .constraints = std::move(constraints)};
}

std::string Mem(int64_t gi) { return "device.capacity[\"driver-a\"].memory.compareTo(quantity(\"" + std::to_string(gi) + "Gi\")) >= 0"; }

struct Case {
  std::vector<ResourceSlice> slices;
  std::vector<DeviceClass> classes = {Class("class-a", "driver-a"), Class("class-b", "driver-b")};
  std::vector<ResourceClaim> claims;
  AllocatedDevices allocated;
  std::map<std::string, std::string, std::less<>> labels = {{"region", "region-1"}, {"planet", "earth"}};
  NodeInfo node{.name = "node-1", .labels = &labels};
  Features features;
  int64_t max_steps = 200'000;

  AllocatorOutcome Run() {
    index = std::make_unique<SliceIndex>(slices);
    for (const DeviceClass& c : classes) class_map[c.name] = c;
    AllocatorInput in{.node = &node, .slices = index.get(), .classes = &class_map, .allocated = &allocated,
                      .programs = &programs, .features = features, .max_steps = max_steps,
                      .new_share_id = [] { return std::string("share"); }};
    for (const ResourceClaim& c : claims) in.claims.push_back(&c);
    return Allocate(in);
  }

  std::unique_ptr<SliceIndex> index;
  std::map<std::string, DeviceClass, std::less<>> class_map;
  cel::ProgramCache programs;
};

// "req → pool/device" per result, in allocation order.
std::vector<std::string> Picks(const AllocationResult& r) {
  std::vector<std::string> out;
  for (const DeviceResult& d : r.results) out.push_back(d.request + " -> " + d.id.pool + "/" + d.id.device);
  return out;
}

NodeSelector Local(std::string node) {
  return NodeSelector{.terms = {NodeSelectorTerm{.match_fields = {{.key = "metadata.name", .op = "In", .values = {std::move(node)}}}}}};
}

TEST(DraAllocatorExamples, E1Simple) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1"));
  EXPECT_EQ(out.results[0].node_selector, Local("node-1"));
  EXPECT_TRUE(out.results[0].config.empty());
}

TEST(DraAllocatorExamples, E2SmallAndLargeBacktrackRequests) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {WithMemory("device-2", 2), WithMemory("device-1", 1)})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {Mem(1)}), Req("req-1", "class-a", 1, {Mem(2)})})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1", "req-1 -> pool-1/device-2"));
}

TEST(DraAllocatorExamples, E3AllDevicesSomeAllocatedAndAdminAccess) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1"), Dev("device-2")})};
  c.allocated.exclusive.insert(DeviceId{"driver-a", "pool-1", "device-1"});
  c.claims = {Claim("claim-0", {AllOf("req-0", "class-a")})};
  AllocatorOutcome out = c.Run();
  EXPECT_EQ(out.kind, Kind::kUnschedulable);
  EXPECT_THAT(out.reason, HasSubstr("request req-0: wants all 2 devices of class class-a, 1 of them are free"));

  c.claims[0].requests[0].exactly->admin_access = true;
  out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1", "req-0 -> pool-1/device-2"));
  EXPECT_TRUE(out.results[0].results[0].admin_access && out.results[0].results[1].admin_access);
  // The feature off: a hard error.
  c.features.admin_access = false;
  EXPECT_EQ(c.Run().kind, Kind::kError);
}

TEST(DraAllocatorExamples, E4WithConstraintForRequestRetry) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a",
                    {WithAttrs("device-1", {{"driverVersion", V("1.0.0")}, {"stringAttribute", S("a")}}),
                     WithAttrs("device-2", {{"driverVersion", V("2.0.0")}, {"stringAttribute", S("b")}}),
                     WithAttrs("device-3", {{"driverVersion", V("3.0.0")}, {"stringAttribute", S("b")}})})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1), Req("req-1", "class-a", 1)},
                    {DeviceConstraint{.requests = {"req-0"}, .match_attribute = "driver-a/driverVersion"},
                     DeviceConstraint{.match_attribute = "driver-a/stringAttribute"}})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-2", "req-1 -> pool-1/device-3"));
}

TEST(DraAllocatorExamples, E5PrioritizedListSubrequestsWithExpressions) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a",
                    {WithMemory("device-1", 2), WithMemory("device-2", 2), WithMemory("device-3", 1)})};
  DeviceRequest first{.name = "req-1",
                      .first_available = {ExactRequest{.name = "subReq-0", .device_class = "class-a", .selectors = {Mem(4)}, .count = 1},
                                          ExactRequest{.name = "subReq-1", .device_class = "class-a", .selectors = {Mem(2)}, .count = 2}}};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {Mem(1)}), first})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-3", "req-1/subReq-1 -> pool-1/device-1",
                                                            "req-1/subReq-1 -> pool-1/device-2"));
  c.features.prioritized_list = false;
  EXPECT_THAT(c.Run().reason, HasSubstr("DRAPrioritizedList feature is disabled"));
}

ResourceSlice CounterSlice(std::string name, std::string pool, int64_t count, std::vector<CounterSet> sets) {
  ResourceSlice s = Slice(std::move(name), "node-1", std::move(pool), "driver-a", {});
  s.slice_count = count;
  s.shared_counters = std::move(sets);
  return s;
}

Device Consuming(std::string name, int64_t gi, std::string set = "counter-set-1") {
  Device d = WithMemory(std::move(name), gi);
  d.consumes_counters = {CounterConsumption{.counter_set = std::move(set), .counters_milli = {{"memory", gi * kGi * 1000}}}};
  return d;
}

TEST(DraAllocatorExamples, E6PartitionableDevicesMultipleDevices) {
  Case c;
  ResourceSlice devices = Slice("slice-1", "node-1", "pool-1", "driver-a",
                                {Consuming("device-1", 4), Consuming("device-2", 6), Consuming("device-3", 4)});
  devices.slice_count = 2;
  c.slices = {devices, CounterSlice("slice-2", "pool-1", 2, {CounterSet{.name = "counter-set-1", .counters_milli = {{"memory", 8 * kGi * 1000}}}})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1), Req("req-1", "class-a", 1)})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1", "req-1 -> pool-1/device-3"));
  // Counters consumed by allocated devices count: with device-1 allocated, 4Gi are left.
  c.allocated.exclusive.insert(DeviceId{"driver-a", "pool-1", "device-1"});
  out = c.Run();
  EXPECT_EQ(out.kind, Kind::kUnschedulable);
  EXPECT_THAT(out.reason, HasSubstr("no combination satisfies shared counters"));
}

TEST(DraAllocatorExamples, E7TaintedTwoDevicesTolerated) {
  Case c;
  Device d1 = Dev("device-1"), d2 = Dev("device-2");
  d1.taints = {DeviceTaint{.key = "taint-key", .value = "taint-value", .effect = "NoSchedule"}};
  d2.taints = {DeviceTaint{.key = "taint-key", .value = "taint-value-2", .effect = "NoExecute"}};
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {d1, d2})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = c.Run();  // tainted-two-devices
  EXPECT_EQ(out.kind, Kind::kUnschedulable);
  EXPECT_THAT(out.reason, HasSubstr("request req-0: 0 of 1 device available (2 of 2 devices match class class-a, 2 of those "
                                    "free, the others tainted or short of capacity)"));
  DeviceToleration tol{.key = "taint-key", .op = "Equal", .value = "taint-value-2", .effect = "NoExecute"};
  c.claims[0].requests[0].exactly->tolerations = {tol};
  out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-2"));
  EXPECT_EQ(out.results[0].results[0].tolerations, std::vector<DeviceToleration>{tol});
  // tainted-no-effect: effect None never blocks.
  c.claims[0].requests[0].exactly->tolerations = {};
  c.slices[0].devices[0].taints[0].effect = "None";
  EXPECT_THAT(Picks(c.Run().results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1"));
  // tainted-disabled.
  c.slices[0].devices[0].taints[0].effect = "NoSchedule";
  c.features.device_taints = false;
  EXPECT_EQ(c.Run().kind, Kind::kAllocated);
}

TEST(DraAllocatorExamples, E8ManyNetworkAttachedDevices) {
  Case c;
  auto sel = [](std::vector<NodeSelectorRequirement> exprs, std::vector<NodeSelectorRequirement> fields) {
    return NodeSelector{.terms = {NodeSelectorTerm{.match_expressions = std::move(exprs), .match_fields = std::move(fields)}}};
  };
  NodeSelectorRequirement region{.key = "region", .op = "In", .values = {"region-1"}};
  NodeSelectorRequirement planet{.key = "planet", .op = "In", .values = {"earth"}};
  NodeSelectorRequirement name{.key = "metadata.name", .op = "In", .values = {"node-1"}};
  ResourceSlice s1 = Slice("slice-1", "", "pool-1", "driver-a", {Dev("device-1")});
  s1.node_selector = sel({region}, {});
  ResourceSlice s2 = Slice("slice-1", "", "pool-2", "driver-a", {Dev("device-1")});
  s2.all_nodes = true;
  ResourceSlice s3 = Slice("slice-1", "", "pool-3", "driver-a", {Dev("device-1")});
  s3.node_selector = sel({planet}, {});
  ResourceSlice s4 = Slice("slice-1", "", "pool-4", "driver-a", {Dev("device-1")});
  s4.node_selector = sel({}, {name});
  c.slices = {s1, s2, s3, s4};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 4)})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1", "req-0 -> pool-2/device-1",
                                                            "req-0 -> pool-3/device-1", "req-0 -> pool-4/device-1"));
  EXPECT_EQ(out.results[0].node_selector, sel({region, planet}, {name}));
  // local-and-network-attached-devices: a node-local device pins the node.
  c.slices.push_back(Slice("slice-local", "node-1", "pool-5", "driver-a", {Dev("device-1")}));
  c.claims[0].requests[0].exactly->count = 5;
  EXPECT_EQ(c.Run().results[0].node_selector, Local("node-1"));
  // unsuccessful-allocation-network-attached-device: the selector does not match this node.
  Case other;
  other.slices = {s1};
  other.labels["region"] = "region-2";
  other.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  EXPECT_EQ(other.Run().kind, Kind::kUnschedulable);
}

TEST(DraAllocatorExamples, E9CheckCombinationsWithBacktrackingCountsSteps) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a",
                    {WithAttrs("device-1", {{"type", S("X")}}), WithAttrs("device-2", {{"type", S("Y")}}),
                     WithAttrs("device-3", {{"type", S("Y")}})})};
  c.claims = {Claim("claim-0", {Req("req-1", "class-a", 2), Req("req-2", "class-a", 1, {"device.attributes[\"driver-a\"].type == \"X\""})})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]),
              ::testing::ElementsAre("req-1 -> pool-1/device-2", "req-1 -> pool-1/device-3", "req-2 -> pool-1/device-1"));
  EXPECT_EQ(out.steps, 12);
}

TEST(DraAllocatorExamples, E10ConsumableCapacityRangePolicy) {
  Case c;
  c.classes = {Class("class-a", "driver-a", " && device.allowMultipleAllocations == true")};
  Device d{.name = "device-1", .allow_multiple_allocations = true};
  d.capacity["capacity-0"] = Capacity{.value_milli = 4000,
                                      .policy = {.default_milli = 2000, .range_min_milli = 2000, .range_max_milli = 4000, .range_step_milli = 2000}};
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {d})};
  DeviceRequest r = Req("req-0", "class-a", 1);
  r.exactly->capacity_requests_milli = {{"capacity-0", 1000}};
  c.claims = {Claim("claim-0", {r}), Claim("claim-1", {r})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  ASSERT_EQ(out.results.size(), 2u);
  for (const AllocationResult& a : out.results) {
    ASSERT_EQ(a.results.size(), 1u);
    EXPECT_EQ(a.results[0].id.device, "device-1");
    EXPECT_EQ(a.results[0].share_id, "share");
    EXPECT_EQ(a.results[0].consumed_capacity_milli, (std::map<std::string, int64_t>{{"capacity-0", 2000}}));
  }
  // The -step variant: 3 rounds up to 4; a second claim no longer fits.
  c.claims[0].requests[0].exactly->capacity_requests_milli["capacity-0"] = 3000;
  c.claims.pop_back();
  out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_EQ(out.results[0].results[0].consumed_capacity_milli.at("capacity-0"), 4000);
  // Over the policy's max: no fit.
  c.claims[0].requests[0].exactly->capacity_requests_milli["capacity-0"] = 6000;
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
  // Already consumed by allocated claims: 2 of 4 held, a request of 3 (→4) does not fit.
  c.claims[0].requests[0].exactly->capacity_requests_milli["capacity-0"] = 3000;
  c.allocated.shared.insert(DeviceId{"driver-a", "pool-1", "device-1"});
  c.allocated.consumed_capacity_milli[DeviceId{"driver-a", "pool-1", "device-1"}]["capacity-0"] = 2000;
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
}

// --- Categories of §4.2 not covered above ---------------------------------------------------

TEST(DraAllocatorCases, BasicsSmallAndLargeBacktrackClaimsAndOtherNode) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {WithMemory("device-2", 2), WithMemory("device-1", 1)})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {Mem(1)})}), Claim("claim-1", {Req("req-0", "class-a", 1, {Mem(2)})})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1"));
  EXPECT_THAT(Picks(out.results[1]), ::testing::ElementsAre("req-0 -> pool-1/device-2"));
  // other-node: a slice of another node is invisible.
  Case other;
  other.slices = {Slice("slice-1", "node-2", "pool-1", "driver-a", {Dev("device-1")})};
  other.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  EXPECT_EQ(other.Run().kind, Kind::kUnschedulable);
  // not-enough-suitable-devices names the request and the numbers.
  Case few;
  few.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")})};
  few.claims = {Claim("claim-0", {Req("gpu", "class-a", 2)})};
  EXPECT_THAT(few.Run().reason, HasSubstr("claim default/claim-0: request gpu: 1 of 2 devices available (1 of 1 devices match class class-a"));
}

TEST(DraAllocatorCases, PoolsObsoleteDuplicateAndIncomplete) {
  // obsolete-slice: the newer generation replaces the older.
  Case c;
  ResourceSlice old_slice = Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-old")});
  ResourceSlice new_slice = Slice("slice-2", "node-1", "pool-1", "driver-a", {Dev("device-new")});
  new_slice.generation = 2;
  c.slices = {old_slice, new_slice};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  EXPECT_THAT(Picks(c.Run().results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-new"));
  // invalid-pool-is-ok-if-devices-can-be-allocated-from-other / -is-error-if-no-other-device-...
  Case dup;
  ResourceSlice a = Slice("slice-a", "node-1", "pool-1", "driver-a", {Dev("device-1")});
  ResourceSlice b = Slice("slice-b", "node-1", "pool-1", "driver-a", {Dev("device-1")});
  a.slice_count = b.slice_count = 2;
  dup.slices = {a, b, Slice("slice-c", "node-1", "pool-2", "driver-a", {Dev("device-2")})};
  dup.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = dup.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-2/device-2"));
  dup.allocated.exclusive.insert(DeviceId{"driver-a", "pool-2", "device-2"});
  out = dup.Run();
  EXPECT_EQ(out.kind, Kind::kUnschedulable);
  EXPECT_THAT(out.reason, HasSubstr("invalid resource pools were encountered"));
  // all-devices-of-the-incomplete-pool: an error naming the pool.
  Case incomplete;
  ResourceSlice half = Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")});
  half.slice_count = 2;
  incomplete.slices = {half};
  incomplete.claims = {Claim("claim-0", {AllOf("req-0", "class-a")})};
  out = incomplete.Run();
  EXPECT_EQ(out.kind, Kind::kError);
  EXPECT_EQ(out.reason, "claim default/claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated");
  // no-allocation-from-incomplete-pools (ExactCount): simply no fit.
  incomplete.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  EXPECT_EQ(incomplete.Run().kind, Kind::kUnschedulable);
  // multi-host-resource-pool-with-stale-slice-for-current-node: a newer slice elsewhere obsoletes the pool.
  Case stale;
  ResourceSlice mine = Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")});
  ResourceSlice theirs = Slice("slice-2", "node-2", "pool-1", "driver-a", {Dev("device-2")});
  mine.slice_count = theirs.slice_count = 2;
  theirs.generation = 2;
  stale.slices = {mine, theirs};
  stale.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  EXPECT_EQ(stale.Run().kind, Kind::kUnschedulable);
}

TEST(DraAllocatorCases, AllModeManyPlusAnotherAndNoSolution) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1"), Dev("device-2")}),
              Slice("slice-2", "node-1", "pool-2", "driver-b", {Dev("device-1")})};
  c.claims = {Claim("claim-0", {AllOf("req-0", "class-a"), Req("req-1", "class-b", 1)})};
  AllocatorOutcome out = c.Run();  // all-devices-plus-another
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1", "req-0 -> pool-1/device-2", "req-1 -> pool-2/device-1"));
  // all-devices-no-solution: another request of the same class needs one of them.
  c.claims = {Claim("claim-0", {AllOf("req-0", "class-a"), Req("req-1", "class-a", 1)})};
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
  // all-devices-no-slices: zero devices is a failure, not success.
  Case none;
  none.claims = {Claim("claim-0", {AllOf("req-0", "class-a")})};
  EXPECT_EQ(none.Run().kind, Kind::kUnschedulable);
}

TEST(DraAllocatorCases, AdminAccessIgnoresOtherClaimsButNotItsOwn) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")})};
  c.allocated.exclusive.insert(DeviceId{"driver-a", "pool-1", "device-1"});
  DeviceRequest admin = Req("req-0", "class-a", 1);
  admin.exactly->admin_access = true;
  c.claims = {Claim("claim-0", {admin})};
  AllocatorOutcome out = c.Run();  // count-devices-some-allocated-admin-access
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_TRUE(out.results[0].results[0].admin_access);
  admin.exactly->count = 2;  // the same device twice within one claim: never
  c.claims = {Claim("claim-0", {admin})};
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
  // Admission's rule: the namespace must carry the admin-access label.
  std::set<std::string, std::less<>> none;
  Case gated;
  gated.slices = c.slices;
  admin.exactly->count = 1;
  gated.claims = {Claim("claim-0", {admin})};
  gated.index = std::make_unique<SliceIndex>(gated.slices);
  for (const DeviceClass& k : gated.classes) gated.class_map[k.name] = k;
  AllocatorInput in{.node = &gated.node, .claims = {&gated.claims[0]}, .slices = gated.index.get(), .classes = &gated.class_map,
                    .allocated = &gated.allocated, .programs = &gated.programs, .admin_namespaces = &none};
  EXPECT_THAT(Allocate(in).reason, HasSubstr("requires namespace default to be labelled resource.kubernetes.io/admin-access=true"));
}

TEST(DraAllocatorCases, MatchAttributeMismatchesAndAllModeError) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a",
                    {WithAttrs("device-1", {{"numa", I(0)}}), WithAttrs("device-2", {{"numa", I(1)}})})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 2)}, {DeviceConstraint{.match_attribute = "driver-a/numa"}})};
  AllocatorOutcome out = c.Run();  // with-constraint-not-matching-int-attribute
  EXPECT_EQ(out.kind, Kind::kUnschedulable);
  EXPECT_THAT(out.reason, HasSubstr("no combination satisfies matchAttribute driver-a/numa"));
  c.claims[0].constraints[0].match_attribute = "driver-a/missing";  // with-constraint-non-existent-attribute
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
  // ...-all-devices: in All mode a violated constraint is an error.
  c.claims = {Claim("claim-0", {AllOf("req-0", "class-a")}, {DeviceConstraint{.match_attribute = "driver-a/numa"}})};
  out = c.Run();
  EXPECT_EQ(out.kind, Kind::kError);
  EXPECT_THAT(out.reason, HasSubstr("cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied"));
}

TEST(DraAllocatorCases, DistinctAttributeNeedsDifferentValues) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a",
                    {WithAttrs("device-1", {{"root", S("a")}}), WithAttrs("device-2", {{"root", S("a")}}),
                     WithAttrs("device-3", {{"root", S("b")}})})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 2)}, {DeviceConstraint{.distinct_attribute = "driver-a/root"}})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1", "req-0 -> pool-1/device-3"));
  c.claims[0].requests[0].exactly->count = 3;
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
}

TEST(DraAllocatorCases, ConfigFromClassesAndClaim) {
  // with-class-device-config-with-multiple-request-and-configs (Kubernetes ≤ 1.36 rules).
  Case c;
  c.classes[0].configs = {OpaqueConfig{.driver = "driver-a", .parameters_json = R"({"classAttribute-A":"classAttribute-AValue"})"}};
  c.classes[1].configs = {OpaqueConfig{.driver = "driver-b", .parameters_json = R"({"classAttribute-B":"classAttribute-BValue"})"}};
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-0"), Dev("device-1")}),
              Slice("slice-2", "node-1", "pool-1", "driver-b", {Dev("device-1")})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1), Req("req-1", "class-a", 1), Req("req-2", "class-b", 1)})};
  c.claims[0].configs = {ClaimConfig{.requests = {"req-2"}, .opaque = {.driver = "driver-b", .parameters_json = "{}"}}};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-0", "req-1 -> pool-1/device-1", "req-2 -> pool-1/device-1"));
  ASSERT_EQ(out.results[0].config.size(), 3u);
  EXPECT_EQ(out.results[0].config[0],
            (ResultConfig{.source = "FromClass", .requests = {"req-0", "req-1"}, .opaque = c.classes[0].configs[0]}));
  EXPECT_EQ(out.results[0].config[1], (ResultConfig{.source = "FromClass", .requests = {"req-2"}, .opaque = c.classes[1].configs[0]}));
  EXPECT_EQ(out.results[0].config[2].source, "FromClaim");
}

TEST(DraAllocatorCases, InputErrorsAbortThePod) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")})};
  c.claims = {Claim("claim-0", {Req("req-0", "no-such-class", 1)})};  // unknown-class
  AllocatorOutcome out = c.Run();
  EXPECT_EQ(out.kind, Kind::kError);
  EXPECT_THAT(out.reason, HasSubstr("could not retrieve device class no-such-class"));
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {"device.attributes[\"driver-a\"].missing == 1"})})};  // invalid-CEL-one-device
  EXPECT_THAT(c.Run().reason, HasSubstr("claim default/claim-0: selector #0: CEL runtime error: no such key: missing"));
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {"device.driver =="})})};
  EXPECT_THAT(c.Run().reason, HasSubstr("CEL compile error"));
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {""})})};  // unknown-selector
  EXPECT_THAT(c.Run().reason, HasSubstr("CEL expression empty"));
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  c.claims[0].requests[0].exactly->allocation_mode = "Some";  // unknown-allocation-mode
  EXPECT_THAT(c.Run().reason, HasSubstr("unsupported count mode Some"));
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)}, {DeviceConstraint{}})};  // unknown-constraint
  EXPECT_THAT(c.Run().reason, HasSubstr("empty constraint"));
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 33)})};  // too-many-devices-single-request
  EXPECT_THAT(c.Run().reason, HasSubstr("number of requested devices 33 exceeds the claim limit of 32"));
  // A CEL error on a device the search never reaches is no error (upstream evaluates lazily).
  Case lazy;
  lazy.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {WithAttrs("device-1", {{"ok", I(1)}}), Dev("device-2")})};
  lazy.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {"device.attributes[\"driver-a\"].ok == 1"})})};
  EXPECT_EQ(lazy.Run().kind, Kind::kAllocated);
}

TEST(DraAllocatorCases, PrioritizedListFallsBackAndMaxSizeTriesTheNext) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1"), Dev("device-2")})};
  DeviceRequest r{.name = "req-0",
                  .first_available = {ExactRequest{.name = "sub-0", .device_class = "class-a", .count = 33},
                                      ExactRequest{.name = "sub-1", .device_class = "class-a", .count = 2}}};
  c.claims = {Claim("claim-0", {r})};  // prioritized-list-too-many-in-first-subrequest
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0/sub-1 -> pool-1/device-1", "req-0/sub-1 -> pool-1/device-2"));
}

TEST(DraAllocatorCases, PartitionableCountersAcrossNodesAndUnknownCounters) {
  // partitionable-devices-devices-on-different-nodes-consume-same-counter-set
  Case c;
  ResourceSlice counters = CounterSlice("slice-0", "pool-1", 3, {CounterSet{.name = "counter-set-1", .counters_milli = {{"memory", 8 * kGi * 1000}}}});
  counters.node_name = "";
  counters.all_nodes = true;
  ResourceSlice here = Slice("slice-1", "node-1", "pool-1", "driver-a", {Consuming("device-1", 6)});
  ResourceSlice there = Slice("slice-2", "node-2", "pool-1", "driver-a", {Consuming("device-2", 6)});
  here.slice_count = there.slice_count = 3;
  c.slices = {counters, here, there};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  ASSERT_EQ(c.Run().kind, Kind::kAllocated);
  c.allocated.exclusive.insert(DeviceId{"driver-a", "pool-1", "device-2"});  // 6Gi used on node-2
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
  // ...-references-unknown-counter-set: the pool is invalid.
  Case bad;
  bad.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Consuming("device-1", 1, "nope")})};
  bad.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = bad.Run();
  EXPECT_TRUE(out.invalid_pools);
  EXPECT_EQ(out.kind, Kind::kUnschedulable);
}

TEST(DraAllocatorCases, ASharedClaimIsAllocatedOnceAndItsDevicesStayTaken) {
  // A claim already allocated (shared by two pods) holds its devices; the next claim gets others.
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1"), Dev("device-2")})};
  AllocationResult shared{.results = {DeviceResult{.request = "req-0", .id = {"driver-a", "pool-1", "device-1"}}}};
  c.allocated.Add(shared);
  c.claims = {Claim("claim-1", {Req("req-0", "class-a", 1)})};
  EXPECT_THAT(Picks(c.Run().results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-2"));
}

TEST(DraAllocatorCases, TheSearchIsBoundedAndSaysSo) {
  // 16 devices with 8 distinct values, a claim for 9 distinct ones: no solution, and the
  // search would explore every combination before saying so.
  Case c;
  std::vector<Device> devices;
  for (int i = 0; i < 16; ++i) devices.push_back(WithAttrs("device-" + std::to_string(i), {{"v", I(i % 8)}}));
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", devices)};
  c.claims = {Claim("claim-0", {Req("b", "class-a", 9)}, {DeviceConstraint{.distinct_attribute = "driver-a/v"}})};
  c.max_steps = 5000;
  AllocatorOutcome out = c.Run();
  EXPECT_EQ(out.kind, Kind::kUnschedulable);
  EXPECT_THAT(out.reason, HasSubstr("gave up after 5001 allocation steps"));
}


TEST(DraAllocatorCases, BindingConditionsAreCopiedAndBindsToNodePinsTheNode) {
  // device-binding-conditions / node-restriction (category 11).
  Case c;
  Device d = Dev("device-1");
  d.binding_conditions = {"attached"};
  d.binding_failure_conditions = {"failed"};
  d.binds_to_node = true;
  ResourceSlice s = Slice("slice-1", "", "pool-1", "driver-a", {d});
  s.all_nodes = true;
  c.slices = {s};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_EQ(out.results[0].results[0].binding_conditions, std::vector<std::string>{"attached"});
  EXPECT_EQ(out.results[0].results[0].binding_failure_conditions, std::vector<std::string>{"failed"});
  EXPECT_EQ(out.results[0].node_selector, Local("node-1"));  // allNodes, but bindsToNode pins it
  // binding-conditions-without-feature-gate: such a device is not selectable.
  c.features.binding_conditions = false;
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
}

TEST(DraAllocatorCases, ListTypedAttributesAreUnsupportedValuesAsWithTheGateOff) {
  // list-attributes-disabled-* (category 14, Kubernetes 1.36 with DRAListTypeAttributes off): a
  // device publishing a list attribute makes any selector on it an error.
  Case c;
  Device d = Dev("device-1");
  d.attributes["models"] = AttributeValue{};  // {"strings": [...]}: no scalar value key
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {d})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = c.Run();
  EXPECT_EQ(out.kind, Kind::kError);
  EXPECT_THAT(out.reason, HasSubstr("unsupported attribute value"));
}


// Cases from an independent review against upstream's code.
TEST(DraAllocatorCases, APoolCompleteOnThisNodeIgnoresTheOtherNodesSlices) {
  Case c;
  ResourceSlice mine = Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")});
  ResourceSlice theirs = Slice("slice-2", "node-2", "pool-1", "driver-a", {Dev("device-1")});
  theirs.generation = 2;  // a newer generation elsewhere: upstream only looks when short locally
  c.slices = {mine, theirs};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-1"));
}

TEST(DraAllocatorCases, PoolsWithBindingConditionsComeLast) {
  Case c;
  Device waits = Dev("device-1");
  waits.binding_conditions = {"attached"};
  c.slices = {Slice("slice-a", "node-1", "pool-a", "driver-a", {waits}), Slice("slice-b", "node-1", "pool-b", "driver-a", {Dev("device-1")})};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  EXPECT_THAT(Picks(c.Run().results[0]), ::testing::ElementsAre("req-0 -> pool-b/device-1"));
}

TEST(DraAllocatorCases, AnOverCommittedCounterSetBlocksThePool) {
  Case c;
  ResourceSlice s = Slice("slice-1", "node-1", "pool-1", "driver-a", {Consuming("device-1", 1, "set-a"), Consuming("device-2", 6, "set-b")});
  s.shared_counters = {CounterSet{.name = "set-a", .counters_milli = {{"memory", 4 * kGi * 1000}}},
                       CounterSet{.name = "set-b", .counters_milli = {{"memory", 4 * kGi * 1000}}}};
  c.slices = {s};
  c.allocated.exclusive.insert(DeviceId{"driver-a", "pool-1", "device-2"});  // set-b: 6 of 4 used
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)})};
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
}

TEST(DraAllocatorCases, ASelectorThatDoesNotCompileFailsOnlyWhenADeviceIsTested) {
  Case c;
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {Dev("device-1")})};
  c.allocated.exclusive.insert(DeviceId{"driver-a", "pool-1", "device-1"});  // nothing gets tested
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1, {"device.driver =="})})};
  EXPECT_EQ(c.Run().kind, Kind::kUnschedulable);
  c.allocated = {};
  EXPECT_EQ(c.Run().kind, Kind::kError);
}

TEST(DraAllocatorCases, AllModeLeavesOutDevicesWhosePolicyForbidsTheRequest) {
  Case c;
  Device shared{.name = "device-1", .allow_multiple_allocations = true};
  shared.capacity["mem"] = Capacity{.value_milli = 10000, .policy = {.range_min_milli = 2000, .range_max_milli = 4000, .range_step_milli = 2000}};
  Device plain{.name = "device-2"};
  plain.capacity["mem"] = Capacity{.value_milli = 10000};
  c.slices = {Slice("slice-1", "node-1", "pool-1", "driver-a", {shared, plain})};
  DeviceRequest all = AllOf("req-0", "class-a");
  all.exactly->capacity_requests_milli = {{"mem", 6000}};
  c.claims = {Claim("claim-0", {all})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_THAT(Picks(out.results[0]), ::testing::ElementsAre("req-0 -> pool-1/device-2"));
}


TEST(DraAllocatorCases, ASharedDeviceWithoutCapacitiesConsumesItsCountersOnce) {
  Case c;
  c.classes = {Class("class-a", "driver-a", " && device.allowMultipleAllocations == true")};
  Device d{.name = "device-1", .allow_multiple_allocations = true};
  d.consumes_counters = {CounterConsumption{.counter_set = "set", .counters_milli = {{"slots", 4000}}}};
  ResourceSlice s = Slice("slice-1", "node-1", "pool-1", "driver-a", {d});
  s.shared_counters = {CounterSet{.name = "set", .counters_milli = {{"slots", 4000}}}};
  c.slices = {s};
  c.claims = {Claim("claim-0", {Req("req-0", "class-a", 1)}), Claim("claim-1", {Req("req-0", "class-a", 1)})};
  AllocatorOutcome out = c.Run();
  ASSERT_EQ(out.kind, Kind::kAllocated) << out.reason;
  EXPECT_EQ(out.results[1].results[0].id.device, "device-1");
}

}  // namespace allocator_test
}  // namespace gpusched::dra
