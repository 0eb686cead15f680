// File: xml_tree.cc
//
// The XML reader: recursive descent over one document that skips the prolog, DOCTYPE, comments and
// processing instructions, decodes the five entities and numeric references, limits nesting to 64,
// and builds the element tree with its child and text lookups.
#include "gpusched/agent/xml_tree.h"

#include <fmt/format.h>

#include <cctype>

#include "gpusched/common/utf8.h"

namespace gpusched::agent {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == ':';
}

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Reads one document: a cursor over the text and a parser per construct.
class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  StatusOr<XmlElement> Document() {
    GPUSCHED_RETURN_IF_ERROR(SkipMisc());
    if (!Starts("<")) return Error("an element");
    XmlElement root;
    GPUSCHED_RETURN_IF_ERROR(Element(&root, 0));
    GPUSCHED_RETURN_IF_ERROR(SkipMisc());
    if (pos_ != s_.size()) return Error("the end of the document");
    return root;
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool Starts(std::string_view p) const { return s_.substr(pos_).starts_with(p); }
  Status Error(std::string_view expected) const {
    return InvalidArgumentError(fmt::format("XML at byte {}: expected {}", pos_, expected));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])) != 0) ++pos_;
  }
  // Skips whitespace, comments, processing instructions and a DOCTYPE (without an internal subset).
  Status SkipMisc() {
    for (;;) {
      SkipSpace();
      std::string_view end = Starts("<!--") ? "-->" : Starts("<?") ? "?>" : Starts("<!DOCTYPE") ? ">" : "";
      if (end.empty()) return OkStatus();
      size_t at = s_.find(end, pos_);
      if (at == std::string_view::npos) return Error(fmt::format("\"{}\"", end));
      pos_ = at + end.size();
    }
  }
  std::string Name() {
    size_t b = pos_;
    while (pos_ < s_.size() && IsNameChar(s_[pos_])) ++pos_;
    return std::string(s_.substr(b, pos_ - b));
  }
  // Decodes the entities of `raw` into *out. Returns false for an unknown or unterminated one.
  static bool Decode(std::string_view raw, std::string* out) {
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        out->push_back(raw[i]);
        continue;
      }
      size_t semi = raw.find(';', i);
      if (semi == std::string_view::npos) return false;
      std::string_view e = raw.substr(i + 1, semi - i - 1);
      if (e == "amp") out->push_back('&');
      else if (e == "lt") out->push_back('<');
      else if (e == "gt") out->push_back('>');
      else if (e == "quot") out->push_back('"');
      else if (e == "apos") out->push_back('\'');
      else if (e.size() > 1 && e[0] == '#') {
        bool hex = e[1] == 'x';
        std::string digits(e.substr(hex ? 2 : 1));
        char* end = nullptr;
        unsigned long cp = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
        if (digits.empty() || *end != '\0' || cp > 0x10FFFF) return false;
        AppendUtf8(static_cast<uint32_t>(cp), out);
      } else {
        return false;
      }
      i = semi;
    }
    return true;
  }
  Status Attributes(XmlElement* e) {
    for (;;) {
      SkipSpace();
      if (Starts("/>") || Starts(">")) return OkStatus();
      std::string key = Name();
      if (key.empty()) return Error("an attribute name, \">\" or \"/>\"");
      SkipSpace();
      if (!Starts("=")) return Error(fmt::format("\"=\" after attribute {}", key));
      ++pos_;
      SkipSpace();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) return Error("a quoted attribute value");
      char quote = s_[pos_++];
      size_t end = s_.find(quote, pos_);
      if (end == std::string_view::npos) return Error("the closing quote");
      std::string value;
      if (!Decode(s_.substr(pos_, end - pos_), &value)) return Error("a known entity");
      e->attributes[key] = std::move(value);
      pos_ = end + 1;
    }
  }
  // Reads an element starting at "<" into *e.
  Status Element(XmlElement* e, int depth) {
    if (depth > kMaxDepth) return Error(fmt::format("at most {} nested elements", kMaxDepth));
    ++pos_;  // '<'
    e->name = Name();
    if (e->name.empty()) return Error("an element name");
    GPUSCHED_RETURN_IF_ERROR(Attributes(e));
    if (Starts("/>")) {
      pos_ += 2;
      return OkStatus();
    }
    ++pos_;  // '>'
    return Content(e, depth);
  }
  // Reads an element's content and its end tag.
  Status Content(XmlElement* e, int depth) {
    std::string text;
    for (;;) {
      size_t lt = s_.find('<', pos_);
      if (lt == std::string_view::npos) return Error(fmt::format("</{}>", e->name));
      if (!Decode(s_.substr(pos_, lt - pos_), &text)) return Error("a known entity");
      pos_ = lt;
      if (Starts("</")) {
        pos_ += 2;
        if (Name() != e->name) return Error(fmt::format("</{}>", e->name));
        SkipSpace();
        if (!Starts(">")) return Error("\">\"");
        ++pos_;
        e->text = std::string(Trim(text));
        return OkStatus();
      }
      if (Starts("<!--") || Starts("<?")) {
        GPUSCHED_RETURN_IF_ERROR(SkipMisc());
        continue;
      }
      e->children.emplace_back();
      GPUSCHED_RETURN_IF_ERROR(Element(&e->children.back(), depth + 1));
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

const XmlElement* XmlElement::Child(std::string_view child) const {
  for (const XmlElement& c : children) {
    if (c.name == child) return &c;
  }
  return nullptr;
}

std::vector<const XmlElement*> XmlElement::Children(std::string_view child) const {
  std::vector<const XmlElement*> out;
  for (const XmlElement& c : children) {
    if (c.name == child) out.push_back(&c);
  }
  return out;
}

std::string XmlElement::Text(std::initializer_list<std::string_view> path) const {
  const XmlElement* e = this;
  for (std::string_view p : path) {
    e = e->Child(p);
    if (e == nullptr) return "";
  }
  return e->text;
}

StatusOr<XmlElement> ParseXml(std::string_view text) { return Reader(text).Document(); }

}  // namespace gpusched::agent
