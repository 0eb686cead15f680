// File: xml_tree.h
//
// A small XML reader for the documents the node agent reads (nvidia-smi -q -x): elements with
// attributes and text, nested. It skips the prolog, DOCTYPE, comments and processing
// instructions, and decodes the five predefined entities and numeric character references. It
// does not validate against a DTD, resolve other entities or keep namespaces apart.
//
// Pure: no I/O.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"

namespace gpusched::agent {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string, std::less<>> attributes;
  std::string text;  // the character data directly inside, trimmed of surrounding whitespace
  std::vector<XmlElement> children;

  // The first child named `name`, or nullptr.
  const XmlElement* Child(std::string_view name) const;
  // The children named `name`, in document order.
  std::vector<const XmlElement*> Children(std::string_view name) const;
  // The text of the element at `path` (child names, e.g. {"fb_memory_usage", "total"}), or "" if
  // there is none.
  std::string Text(std::initializer_list<std::string_view> path) const;
};

// Parses `text` into its root element. Errors: InvalidArgument naming the byte offset and what
// was expected there (an unclosed or mismatched tag, a bad attribute, trailing content).
StatusOr<XmlElement> ParseXml(std::string_view text);

}  // namespace gpusched::agent
