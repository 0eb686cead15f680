// The node agent's reading of nvidia-smi -q -x: the real H200 report, and variants derived from it
// (eight GPUs, ECC errors, a pending row remap, MIG enabled, a process), to the published
// gpusched.io/gpu-devices that gpusched itself reads back; the XML reader's own rules.
#include "gpusched/agent/nvidia_smi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpusched/agent/gpu_devices.h"
#include "gpusched/agent/xml_tree.h"
#include "gpusched/kubejson/objects.h"
#include "temp_dir.h"

namespace gpusched::agent {
namespace nvidia_smi_test {

using ::testing::HasSubstr;

// The saved report test/data/<dir>/nvidia-smi-q.xml.
std::string ReportXml(const std::string& dir) {
  std::ifstream in(std::string(GPUSCHED_TEST_DATA_DIR) + "/" + dir + "/nvidia-smi-q.xml");
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << dir;
  return s.str();
}

std::string H200Xml() { return ReportXml("nvidia-h200"); }

// `xml` with the first `from` replaced by `to`.
std::string With(std::string xml, const std::string& from, const std::string& to) {
  size_t at = xml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? xml : xml.replace(at, from.size(), to);
}

// The H200's report with its <gpu> element repeated `n` times, GPU i with minor number i, its own
// UUID and PCI bus id, in reverse order (nvidia-smi lists by bus id, not by index).
std::string EightGpus(int n = 8) {
  std::string xml = H200Xml();
  size_t begin = xml.find("\t<gpu id=");
  size_t end = xml.find("</gpu>") + 6;
  std::string gpu = xml.substr(begin, end - begin);
  std::string all;
  for (int i = n - 1; i >= 0; --i) {
    std::string g = With(gpu, "<minor_number>0</minor_number>", "<minor_number>" + std::to_string(i) + "</minor_number>");
    g = With(g, "2b3c-03d2db73746c", "2b3c-03d2db7374" + std::to_string(10 + i));
    g = With(g, "00000000:00:06.0\">", "00000000:0" + std::to_string(i) + ":00.0\">");
    all += g + "\n";
  }
  return xml.replace(begin, end - begin, all);
}

TEST(NvidiaSmi, TheRealH200ReportGivesOneHealthyGpu) {
  StatusOr<std::vector<PhysicalGpu>> gpus = ParseNvidiaSmiXml(H200Xml());
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 1u);
  const PhysicalGpu& g = (*gpus)[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.uuid, "GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c");
  EXPECT_EQ(g.product, "NVIDIA H200");
  EXPECT_EQ(g.memory_mib, 143771);
  EXPECT_EQ(g.used_mib, 0);
  EXPECT_EQ(g.pci_bus_id, "00000000:00:06.0");
  EXPECT_FALSE(g.mig_enabled);
  EXPECT_TRUE(g.healthy) << g.health_reason;  // its retired pages read N/A: no evidence
  EXPECT_TRUE(g.processes.empty());
  EXPECT_EQ(g.numa_node, -1);
}

TEST(NvidiaSmi, ThePublishedDescriptionIsWhatGpuschedReadsBack) {
  std::vector<PhysicalGpu> gpus = ParseNvidiaSmiXml(EightGpus()).value();
  std::string annotation = kubejson::EncodeGpuDevices(ToGpuDevices(gpus));
  EXPECT_THAT(annotation, HasSubstr(R"({"index":0,"uuid":"GPU-0fddc4db-fc26-aaba-2b3c-03d2db737410","model":"NVIDIA-H200",)"
                                    R"("memoryMiB":143771,"numa":-1,"health":"Healthy"})"));
  StatusOr<std::vector<GpuDevice>> back = kubejson::ParseGpuDevices(annotation);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, ToGpuDevices(gpus));
  ASSERT_EQ(back->size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ((*back)[i].index, i);  // by index, whatever the listing order
}

TEST(NvidiaSmi, UncorrectableErrorsAndPendingRemapsMakeAGpuUnhealthy) {
  std::string ecc = With(H200Xml(), "<dram_uncorrectable>0</dram_uncorrectable>", "<dram_uncorrectable>2</dram_uncorrectable>");
  PhysicalGpu e = ParseNvidiaSmiXml(ecc).value()[0];
  EXPECT_FALSE(e.healthy);
  EXPECT_EQ(e.health_reason, "2 volatile uncorrectable DRAM ECC errors");
  EXPECT_EQ(ToGpuDevices({e})[0].healthy, false);
  std::string remap = With(H200Xml(), "<remapped_row_pending>No</remapped_row_pending>", "<remapped_row_pending>Yes</remapped_row_pending>");
  EXPECT_EQ(ParseNvidiaSmiXml(remap).value()[0].health_reason, "a row remap is pending (reset the GPU)");
  // Correctable errors alone, and counters reported as N/A, leave it healthy.
  std::string correctable = With(H200Xml(), "<dram_correctable>0</dram_correctable>", "<dram_correctable>41</dram_correctable>");
  EXPECT_TRUE(ParseNvidiaSmiXml(correctable).value()[0].healthy);
}

// `xml` with the first volatile counter `tag` set to `value` (the volatile block comes before the
// aggregate one in every layout).
std::string WithVolatile(const std::string& xml, const std::string& tag, const std::string& value) {
  size_t block = xml.find("<volatile>");
  EXPECT_NE(block, std::string::npos);
  std::string head = xml.substr(0, block), rest = xml.substr(block);
  size_t open = rest.find("<" + tag + ">");
  size_t close = rest.find("</" + tag + ">", open);
  EXPECT_NE(close, std::string::npos) << tag;
  return head + rest.replace(open, close - open, "<" + tag + ">" + value);
}

// `xml` (DTD v11) with the children of its volatile double_bit counters replaced by `counters`.
std::string WithDoubleBit(std::string xml, const std::string& counters) {
  size_t open = xml.find("<double_bit>") + 12;
  return xml.replace(open, xml.find("</double_bit>", open) - open, counters);
}

// Driver 510 (DTD v11): uncorrectable errors are counted under double_bit, per memory.
TEST(NvidiaSmi, DoubleBitErrorsOfA510SeriesReportMakeAGpuUnhealthy) {
  std::string v11 = ReportXml("nvidia-v100-r510");
  PhysicalGpu clean = ParseNvidiaSmiXml(v11).value()[0];
  EXPECT_EQ(clean.product, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(clean.memory_mib, 32768);
  EXPECT_TRUE(clean.healthy) << clean.health_reason;
  // The total, as the driver writes it.
  std::string total = WithDoubleBit(v11, "<device_memory>2</device_memory><register_file>0</register_file><total>2</total>");
  EXPECT_EQ(ParseNvidiaSmiXml(total).value()[0].health_reason, "2 volatile double-bit (uncorrectable) ECC errors");
  // Single-bit errors are corrected.
  EXPECT_TRUE(ParseNvidiaSmiXml(WithVolatile(WithVolatile(v11, "device_memory", "7"), "total", "7")).value()[0].healthy);
  // No total, or N/A: the sum of the memories that report a count.
  std::string parts = "<device_memory>1</device_memory><register_file>N/A</register_file><l2_cache>2</l2_cache>";
  EXPECT_EQ(ParseNvidiaSmiXml(WithDoubleBit(v11, parts + "<total>N/A</total>")).value()[0].health_reason,
            "3 volatile double-bit (uncorrectable) ECC errors");
  EXPECT_FALSE(ParseNvidiaSmiXml(WithDoubleBit(v11, parts)).value()[0].healthy);
  // Every counter N/A is no evidence; aggregate (lifetime) counts alone leave it healthy.
  EXPECT_TRUE(ParseNvidiaSmiXml(WithDoubleBit(v11, "<device_memory>N/A</device_memory><total>N/A</total>")).value()[0].healthy);
  std::string lifetime = v11;
  lifetime.replace(lifetime.find("<total>0</total>", lifetime.find("<double_bit>", lifetime.find("<aggregate>"))), 16, "<total>5</total>");
  EXPECT_TRUE(ParseNvidiaSmiXml(lifetime).value()[0].healthy);
}

// Driver 535 (DTD v12): one sram_uncorrectable beside dram_uncorrectable.
TEST(NvidiaSmi, SramErrorsOfA535SeriesReportMakeAGpuUnhealthy) {
  std::string v12 = ReportXml("nvidia-a100-r535");
  PhysicalGpu clean = ParseNvidiaSmiXml(v12).value()[0];
  EXPECT_EQ(clean.product, "NVIDIA A100-SXM4-80GB");
  EXPECT_TRUE(clean.healthy) << clean.health_reason;
  EXPECT_EQ(ParseNvidiaSmiXml(WithVolatile(v12, "sram_uncorrectable", "4")).value()[0].health_reason,
            "4 volatile uncorrectable SRAM ECC errors");
  EXPECT_EQ(ParseNvidiaSmiXml(WithVolatile(v12, "dram_uncorrectable", "1")).value()[0].health_reason,
            "1 volatile uncorrectable DRAM ECC errors");
  EXPECT_TRUE(ParseNvidiaSmiXml(WithVolatile(v12, "sram_uncorrectable", "N/A")).value()[0].healthy);
  // The later split (the H200's driver 580): parity and SECDED add up.
  std::string split = WithVolatile(WithVolatile(H200Xml(), "sram_uncorrectable_parity", "1"), "sram_uncorrectable_secded", "N/A");
  EXPECT_EQ(ParseNvidiaSmiXml(split).value()[0].health_reason, "1 volatile uncorrectable SRAM ECC errors");
}

TEST(NvidiaSmi, MigModeAndProcessesAreRead) {
  std::string xml = With(H200Xml(), "<current_mig>Disabled</current_mig>", "<current_mig>Enabled</current_mig>");
  xml = With(xml, "<processes>\n\t\t</processes>",
             "<processes><process_info><gpu_instance_id>N/A</gpu_instance_id><pid>4242</pid><type>C</type>"
             "<process_name>python3 train.py</process_name><used_memory>81920 MiB</used_memory></process_info></processes>");
  PhysicalGpu g = ParseNvidiaSmiXml(xml).value()[0];
  EXPECT_TRUE(g.mig_enabled);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].pid, 4242);
  EXPECT_EQ(g.processes[0].name, "python3 train.py");
  EXPECT_EQ(g.processes[0].used_mib, 81920);
  // nvidia-smi writes N/A when it cannot tell a process's memory: unknown, not 0.
  std::string unknown = With(xml, "<used_memory>81920 MiB</used_memory>", "<used_memory>N/A</used_memory>");
  EXPECT_EQ(ParseNvidiaSmiXml(unknown).value()[0].processes[0].used_mib, std::nullopt);
}

TEST(NvidiaSmi, TheNumaNodeComesFromSysfsByPciBusId) {
  std::filesystem::path root = std::filesystem::path(testing::TestTempDir("files")) / "sysfs";
  std::filesystem::create_directories(root / "bus/pci/devices/0000:00:06.0");
  std::ofstream(root / "bus/pci/devices/0000:00:06.0/numa_node") << "1\n";
  EXPECT_EQ(PciDevicePath("00000000:00:06.0", root.string()), (root / "bus/pci/devices/0000:00:06.0").string());
  EXPECT_EQ(PciDevicePath("nonsense", "/sys"), "");
  std::vector<PhysicalGpu> gpus = ParseNvidiaSmiXml(EightGpus(2)).value();
  gpus.push_back(ParseNvidiaSmiXml(H200Xml()).value()[0]);
  ResolveNumaNodes(root.string(), &gpus);
  EXPECT_EQ(gpus[2].numa_node, 1);
  EXPECT_EQ(gpus[0].numa_node, -1);  // no such device under this root
}

TEST(NvidiaSmi, BadReportsAreNamed) {
  EXPECT_THAT(ParseNvidiaSmiXml("not xml").status().message(), HasSubstr("XML at byte 0: expected an element"));
  EXPECT_THAT(ParseNvidiaSmiXml("<other/>").status().message(), HasSubstr("want <nvidia_smi_log>"));
  std::string no_minor = With(H200Xml(), "<minor_number>0</minor_number>", "<minor_number>N/A</minor_number>");
  EXPECT_THAT(ParseNvidiaSmiXml(no_minor).status().message(), HasSubstr("GPU 00000000:00:06.0: minor_number \"N/A\""));
  EXPECT_THAT(ParseNvidiaSmiXml(H200Xml().substr(0, 5000)).status().message(), HasSubstr("expected"));
}

TEST(XmlTree, EntitiesAttributesCommentsAndMismatchedTags) {
  StatusOr<XmlElement> doc = ParseXml(
      "<?xml version=\"1.0\"?>\n<!-- c --><a x='1 &amp; 2' y=\"&#65;\"><b>T &lt;3&gt; &#x263A;</b><!-- d --><c/>tail</a>");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->attributes.at("x"), "1 & 2");
  EXPECT_EQ(doc->attributes.at("y"), "A");
  EXPECT_EQ(doc->Text({"b"}), "T <3> \u263A");
  EXPECT_NE(doc->Child("c"), nullptr);
  EXPECT_EQ(doc->text, "tail");
  EXPECT_THAT(ParseXml("<a><b></a>").status().message(), HasSubstr("expected </b>"));
  EXPECT_THAT(ParseXml("<a>&bogus;</a>").status().message(), HasSubstr("a known entity"));
  EXPECT_THAT(ParseXml("<a></a><b/>").status().message(), HasSubstr("the end of the document"));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "<a>";
  EXPECT_THAT(ParseXml(deep).status().message(), HasSubstr("nested elements"));
}

}  // namespace nvidia_smi_test
}  // namespace gpusched::agent
