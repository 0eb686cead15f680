// The CEL selector engine: the 23 real selectors of dra.md §3.4 and upstream's semantics.
#include "gpusched/dra/cel.h"

#include "gpusched/dra/cel/builtins.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::dra::cel {
namespace cel_test {

using ::testing::HasSubstr;

AttributeValue Str(std::string s) { return {.kind = AttributeValue::Kind::kString, .text = std::move(s)}; }
AttributeValue Ver(std::string s) { return {.kind = AttributeValue::Kind::kVersion, .text = std::move(s)}; }
AttributeValue Int(int64_t v) { return {.kind = AttributeValue::Kind::kInt, .int_value = v}; }
AttributeValue Bool(bool v) { return {.kind = AttributeValue::Kind::kBool, .bool_value = v}; }

Device H100() {
  Device d{.name = "gpu-0"};
  d.attributes = {{"type", Str("gpu")},
                  {"productName", Str("NVIDIA H100 80GB HBM3")},
                  {"architecture", Str("Hopper")},
                  {"driverVersion", Ver("570.124.6")},
                  {"cudaComputeCapability", Ver("9.0.0")},
                  {"resource.kubernetes.io/pcieRoot", Str("pci0000:15")}};
  d.capacity = {{"memory", Capacity{.value_milli = int64_t{81559} * 1024 * 1024 * 1000, .text = "81559Mi"}}};
  return d;
}

Device Mig() {
  Device d{.name = "gpu-0-mig-1g10gb-19-0"};
  d.attributes = {{"type", Str("mig")}, {"profile", Str("1g.10gb")}, {"productName", Str("NVIDIA A100-SXM4-80GB")}};
  d.capacity = {{"multiprocessors", Capacity{.value_milli = 16000}}, {"memory", Capacity{.value_milli = int64_t{9856} << 20 * 1}}};
  d.capacity["memory"].value_milli = int64_t{9856} * 1024 * 1024 * 1000;
  return d;
}

StatusOr<bool> Run(std::string_view expr, const Device& d, std::string_view driver = "gpu.nvidia.com") {
  StatusOr<ProgramPtr> p = Compile(expr);
  if (!p.ok()) return p.status();
  return Evaluate(**p, DeviceView{.driver = driver, .device = &d});
}

bool True(std::string_view expr, const Device& d, std::string_view driver = "gpu.nvidia.com") {
  StatusOr<bool> r = Run(expr, d, driver);
  EXPECT_TRUE(r.ok()) << expr << ": " << r.status().message();
  return r.ok() && *r;
}

std::string Error(std::string_view expr, const Device& d, std::string_view driver = "gpu.nvidia.com") {
  StatusOr<bool> r = Run(expr, d, driver);
  EXPECT_FALSE(r.ok()) << expr;
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(CelSelectors, TheNvidiaDriversClassesSelectByDriverAndType) {
  Device gpu = H100(), mig = Mig();
  EXPECT_TRUE(True("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", gpu));       // 1
  EXPECT_FALSE(True("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", gpu));      // 2
  EXPECT_TRUE(True("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", mig));
  EXPECT_FALSE(True("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'", gpu));     // 3
  Device channel{.name = "channel-0", .attributes = {{"type", Str("channel")}, {"id", Int(0)}}};
  EXPECT_TRUE(True("device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == "
                   "'channel' && device.attributes['compute-domain.nvidia.com'].id == 0",
                   channel, "compute-domain.nvidia.com"));  // 4
  EXPECT_FALSE(True("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
                    "device.attributes['gpu.nvidia.com'].profile == '1g.12gb'",
                    mig));  // 5
  EXPECT_FALSE(True("device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", mig));  // 6
}

TEST(CelSelectors, AMissingKeyIsAnErrorUnlessAFalseClauseAbsorbsIt) {
  // 7: `index` is no longer published. On an A100 the first clause is true: "no such key".
  std::string seven = "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$') && "
                      "(device.attributes['gpu.nvidia.com'].index == 0 || device.attributes['gpu.nvidia.com'].index == 2 || "
                      "device.attributes['gpu.nvidia.com'].index == 4 || device.attributes['gpu.nvidia.com'].index == 6)";
  EXPECT_THAT(Error(seven, Mig()), HasSubstr("no such key: index"));
  EXPECT_FALSE(True(seven, H100()));  // not an A100: false absorbs the error
  // The other order absorbs it too: && is commutative with errors.
  EXPECT_FALSE(True("device.attributes['gpu.nvidia.com'].index == 0 && device.driver == 'x'", H100()));
  EXPECT_TRUE(True("device.attributes['gpu.nvidia.com'].index == 0 || device.driver == 'gpu.nvidia.com'", H100()));
  // An unknown domain is an empty map, not an error.
  EXPECT_FALSE(True("'x' in device.attributes['other.example.com']", H100()));
  EXPECT_FALSE(True("has(device.attributes['gpu.nvidia.com'].index)", H100()));
  EXPECT_TRUE(True("has(device.attributes['gpu.nvidia.com'].productName)", H100()));
  EXPECT_TRUE(True("device.attributes['gpu.nvidia.com'].?index.orValue(7) == 7", H100()));
}

TEST(CelSelectors, TemplatedE2eSelectorsCompareVersionsMemoryAndNames) {
  Device gpu = H100();
  EXPECT_TRUE(True("device.attributes[\"gpu.nvidia.com\"].driverVersion.compareTo(semver(\"570.0.0\")) >= 0", gpu));  // 8
  EXPECT_FALSE(True("device.attributes[\"gpu.nvidia.com\"].driverVersion.compareTo(semver(\"575.1.0\")) >= 0", gpu));
  EXPECT_TRUE(True("device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"79Gi\")) >= 0", gpu));  // 9
  EXPECT_FALSE(True("device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"80Gi\")) >= 0", gpu));  // 81559Mi < 80Gi
  EXPECT_TRUE(True("device.attributes[\"gpu.nvidia.com\"].productName.lowerAscii().matches(\"^.*h100.*$\")", gpu));  // 10
  EXPECT_TRUE(True("device.attributes[\"gpu.nvidia.com\"].architecture == \"Hopper\"", gpu));  // 13
  EXPECT_FALSE(True("device.attributes[\"gpu.nvidia.com\"].productName == \"NONEXISTENT-GPU-XYZ\"", gpu));  // 14
}

TEST(CelSelectors, MigSelectorsCompareQuantities) {
  Device mig = Mig();
  EXPECT_TRUE(True("device.capacity['gpu.nvidia.com'].multiprocessors.isLessThan(quantity(\"30\"))", mig));  // 11
  EXPECT_FALSE(True("device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"10\")) && "
                    "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"10Gi\"))",
                    mig));  // 12: 9856Mi is not more than 10Gi
}

TEST(CelSelectors, OtherDriversSelectors) {
  Device example{.name = "gpu-1", .attributes = {{"model", Str("LATEST-GPU-MODEL")}},
                 .capacity = {{"memory", Capacity{.value_milli = int64_t{80} << 30}}}};
  example.capacity["memory"].value_milli = (int64_t{80} << 30) * 1000;
  EXPECT_TRUE(True("device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'", example, "gpu.example.com"));  // 15
  EXPECT_TRUE(True("device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0", example, "gpu.example.com"));
  EXPECT_FALSE(True("device.capacity['gpu.example.com'].memory.compareTo(quantity('1Ti')) >= 0", example, "gpu.example.com"));  // 16
  Device nic{.name = "eth0", .attributes = {{"ifName", Str("dummy-pair-1")}, {"type", Str("fake_iface")}}};
  EXPECT_TRUE(True("device.attributes[\"dra.net\"].ifName == \"dummy-pair-0\" || device.attributes[\"dra.net\"].ifName == "
                   "\"dummy-pair-1\"",
                   nic, "dra.net"));  // 17
  EXPECT_TRUE(True("device.attributes[\"dra.net\"].type == \"fake_iface\"", nic, "dra.net"));  // 18
  EXPECT_TRUE(True("device.driver == \"gpu.intel.com\"", nic, "gpu.intel.com"));  // 19
  Device test{.name = "d", .attributes = {{"driverVersion", Ver("1.2.0")}}, .capacity = {{"memory", Capacity{.value_milli = 2'000'000'000}}}};
  test.capacity["memory"].value_milli = int64_t{2} * 1024 * 1024 * 1000;
  EXPECT_TRUE(True("device.attributes[\"test-driver.cdi.k8s.io\"].driverVersion.major() >= 1 && "
                   "device.capacity[\"test-driver.cdi.k8s.io\"].memory.isGreaterThan(quantity(\"1Mi\"))",
                   test, "test-driver.cdi.k8s.io"));  // 20
  Device a{.name = "device-1", .attributes = {{"type", Str("X")}}, .capacity = {{"memory", Capacity{}}, {"capacity-0", Capacity{}}}};
  a.capacity["memory"].value_milli = (int64_t{1} << 30) * 1000;
  a.capacity["capacity-0"].value_milli = 4000;
  a.allow_multiple_allocations = true;
  EXPECT_TRUE(True("device.capacity[\"driver-a\"].memory.compareTo(quantity(\"1Gi\")) >= 0", a, "driver-a"));  // 21
  EXPECT_TRUE(True("device.attributes[\"driver-a\"].type == \"X\"", a, "driver-a"));
  EXPECT_TRUE(True("device.driver == \"driver-a\" && device.allowMultipleAllocations == true", a, "driver-a"));
  EXPECT_TRUE(True("device.capacity[\"driver-a\"][\"capacity-0\"].compareTo(quantity(\"4\")) >= 0", a, "driver-a"));
  Device ex{.name = "e", .attributes = {{"someBool", Bool(true)}, {"anotherBool", Bool(false)}, {"models", Str("some-model")}}};
  EXPECT_FALSE(True("cel.bind(dra, device.attributes[\"dra.example.com\"], dra.someBool && dra.anotherBool)", ex,
                    "dra.example.com"));  // 22
  EXPECT_TRUE(True("device.attributes[\"dra.example.com\"].models.includes(\"some-model\")", ex, "dra.example.com"));
  Device kep{.name = "k", .capacity = {{"memory", Capacity{.value_milli = int64_t{8} * 1000 * 1000 * 1000 * 1000}}}};
  EXPECT_TRUE(True("device.capacity[\"dra.example.com\"].memory.isGreaterThan(quantity(\"4G\"))", kep, "dra.example.com"));  // 23
}

TEST(CelSemantics, ComparisonsTypesAndMacros) {
  Device gpu = H100();
  EXPECT_FALSE(True("device.attributes['gpu.nvidia.com'].type == 1", gpu));  // heterogeneous: false
  EXPECT_TRUE(True("1 == 1.0 && 2u > 1 && -1 < 1u", gpu));
  EXPECT_TRUE(True("'resource.kubernetes.io' in device.attributes && 'memory' in device.capacity['gpu.nvidia.com']", gpu));
  EXPECT_TRUE(True("device.attributes['resource.kubernetes.io'].pcieRoot.startsWith('pci0000')", gpu));
  EXPECT_TRUE(True("device.attributes['gpu.nvidia.com'].exists(k, k == 'architecture')", gpu));
  EXPECT_TRUE(True("[1, 2, 3].all(x, x > 0) && [1, 2, 3].exists_one(x, x == 2) && [1, 2].map(x, x * 2) == [2, 4]", gpu));
  EXPECT_TRUE(True("size(device.attributes['gpu.nvidia.com'].productName) == 21 && 'a,b'.split(',').size() == 2", gpu));
  EXPECT_TRUE(True("semver('v1.2', true).compareTo(semver('1.2.0')) == 0 && semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", gpu));
  EXPECT_TRUE(True("quantity('1Gi').add(quantity('1Gi')).compareTo(quantity('2Gi')) == 0 && quantity('500m').isInteger() == false", gpu));
  EXPECT_TRUE(True("true ? true : 1/0 == 1", gpu));
  EXPECT_TRUE(True(R"(r'\d'.size() == 2 && '''multi
line'''.contains('\n'))", gpu));
}

TEST(CelSemantics, RuntimeErrorsNameWhatFailed) {
  Device gpu = H100();
  EXPECT_THAT(Error("device.attributes['gpu.nvidia.com'].productName", gpu), HasSubstr("must evaluate to bool"));
  EXPECT_THAT(Error("device.capacity['gpu.nvidia.com'].memory >= quantity('1Gi')", gpu), HasSubstr("no matching overload"));
  EXPECT_THAT(Error("device.nothing == 1", gpu), HasSubstr("undefined field 'nothing'"));
  EXPECT_THAT(Error("1 / 0 == 1", gpu), HasSubstr("division by zero"));
  EXPECT_THAT(Error("quantity('12 apples').sign() == 1", gpu), HasSubstr("quantities must match"));
  EXPECT_THAT(Error("semver('1.2').major() == 1", gpu), HasSubstr("invalid semver"));
  Device odd = gpu;
  odd.attributes["weird"] = AttributeValue{};  // published with no known value key
  EXPECT_THAT(Error("device.driver == 'gpu.nvidia.com'", odd), HasSubstr("unsupported attribute value"));
}

TEST(CelCompile, SyntaxErrorsAndUnknownFunctionsAreCompileErrors) {
  EXPECT_THAT(Compile("device.driver ==").status().message(), HasSubstr("unexpected end"));
  EXPECT_THAT(Compile("device.driver == 'x").status().message(), HasSubstr("unterminated string"));
  EXPECT_THAT(Compile("frobnicate(device)").status().message(), HasSubstr("undeclared reference to 'frobnicate'"));
  EXPECT_THAT(Compile("'a'.matches('(')").status().message(), HasSubstr("invalid regular expression"));
  EXPECT_THAT(Compile(std::string(11 * 1024, ' ') + "true").status().message(), HasSubstr("more than the limit"));
  EXPECT_THAT(Compile(std::string(500, '(') + "true" + std::string(500, ')')).status().message(), HasSubstr("nests too deeply"));
}

TEST(CelCompile, TheCacheCompilesEachExpressionOnce) {
  ProgramCache cache;
  StatusOr<ProgramPtr> a = cache.Get("device.driver == 'x'");
  StatusOr<ProgramPtr> b = cache.Get("device.driver == 'x'");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_FALSE(cache.Get("device.driver ==").ok());
  EXPECT_EQ(cache.size(), 2u);
}

TEST(CelSemantics, CostIsBounded) {
  Device gpu = H100();
  std::string big = "[";
  for (int i = 0; i < 1000; ++i) big += (i ? ",1" : "1");
  big += "]";
  EXPECT_THAT(Error(big + ".all(x, " + big + ".all(y, " + big + ".all(z, z == 1)))", gpu), HasSubstr("cost limit"));
}

TEST(CelFunctions, ANameResolvesAtCompileTimeToEveryLibraryThatDeclaresIt) {
  EXPECT_EQ(FindBuiltins("compareTo").size(), 2u);  // Quantity and Semver
  EXPECT_EQ(FindBuiltins("startsWith").size(), 1u);
  EXPECT_TRUE(FindBuiltins("frobnicate").empty());
  Device gpu = H100();
  EXPECT_THAT(Error("device.driver.frobnicate()", gpu), HasSubstr("undeclared reference to 'frobnicate'"));
  EXPECT_THAT(Error("has(device.driver) && exists(device)", gpu), HasSubstr("undeclared reference to 'exists'"));
  // Declared, but no overload takes these arguments: a runtime error naming both types.
  EXPECT_EQ(Error("quantity('1').compareTo(semver('1.0.0')) == 0", gpu),
            "no matching overload for 'compareTo' applied to '(kubernetes.Quantity, kubernetes.Semver)'");
  EXPECT_EQ(Error("device.driver.startsWith(1)", gpu), "no matching overload for 'startsWith' applied to '(string, int)'");
}

}  // namespace cel_test
}  // namespace gpusched::dra::cel
