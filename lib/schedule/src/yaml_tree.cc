#include "asn/schedule/detail/yaml_tree.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cstring>
#include <istream>
#include <streambuf>

#include "prescan.hpp"
#include "text.hpp"

namespace asn::schedule::detail {
namespace {

Mark to_mark(const YAML::Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return {};
  return {static_cast<uint32_t>(mark.line) + 1, static_cast<uint32_t>(mark.column) + 1};
}

// An istream over the text without copying it.
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // read-only: no put area is set
    setg(begin, begin, begin + text.size());
  }
};

class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(const std::string& file, const ParseLimits& limits) : file_(file), limits_(limits) {}

  YamlNode take_root() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_++ > 0) {
      fail(file_, to_mark(mark), "a plan file holds one YAML document; remove the second ('---')");
    }
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { add(YamlNode::Kind::kNull, mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    fail(file_, to_mark(mark),
         "aliases (*name) are not supported in plan files: write the value out, or use "
         "'defaults:' for settings shared by phases");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                const std::string& value) override {
    if (value.size() > limits_.max_scalar_bytes) {
      fail(file_, to_mark(mark),
           cat("a value of ", value.size(), " bytes is longer than the limit of ",
               limits_.max_scalar_bytes, " bytes (max_scalar_bytes)"));
    }
    YamlNode& node = add(YamlNode::Kind::kScalar, mark);
    node.scalar = value;
    node.quoted = tag == "!";  // yaml-cpp's non-specific tag of a quoted scalar
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(YamlNode::Kind::kSequence, mark);
  }
  void OnSequenceEnd() override { stack_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(YamlNode::Kind::kMap, mark);
  }
  void OnMapEnd() override {
    if (stack_.back()->children.size() % 2 != 0) {  // cannot happen with yaml-cpp's events
      fail(file_, stack_.back()->mark, "a key without a value");
    }
    stack_.pop_back();
  }

 private:
  // Checked before yaml-cpp goes any deeper: it recurses per level of nesting.
  void open(YamlNode::Kind kind, const YAML::Mark& mark) {
    if (stack_.size() >= limits_.max_depth) {
      fail(file_, to_mark(mark),
           cat("nested more than ", limits_.max_depth, " levels deep (max_depth); a plan needs 7"));
    }
    stack_.push_back(&add(kind, mark));
  }

  YamlNode& add(YamlNode::Kind kind, const YAML::Mark& mark) {
    if (++nodes_ > limits_.max_nodes) {
      fail(file_, to_mark(mark),
           cat("more than ", limits_.max_nodes,
               " YAML values (max_nodes); describe large patterns with generators such as "
               "'all_to_all: {ports: 64}'"));
    }
    YamlNode* node;
    if (stack_.empty()) {
      root_ = YamlNode{};
      node = &root_;
    } else {
      YamlNode& parent = *stack_.back();
      bool is_key = parent.is_map() && parent.children.size() % 2 == 0;
      if (is_key && kind != YamlNode::Kind::kScalar) {
        fail(file_, to_mark(mark), "a key must be a plain name such as 'slot_length'");
      }
      parent.children.emplace_back();
      node = &parent.children.back();
    }
    node->kind = kind;
    node->mark = to_mark(mark);
    return *node;
  }

  const std::string& file_;
  const ParseLimits& limits_;
  YamlNode root_;
  std::vector<YamlNode*> stack_;  // the open sequences and maps, innermost last
  size_t nodes_ = 0;
  int documents_ = 0;
};

}  // namespace

YamlNode read_yaml(std::string_view text, const std::string& file, const ParseLimits& limits) {
  prescan(text, file, limits);
  ViewBuffer buffer(text);
  std::istream in(&buffer);
  TreeBuilder builder(file, limits);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::ParserException& e) {
    fail(file, to_mark(e.mark), cat("not valid YAML: ", e.msg));
  } catch (const YAML::Exception& e) {
    fail(file, to_mark(e.mark), cat("not valid YAML: ", e.msg));
  }
  return builder.take_root();
}

}  // namespace asn::schedule::detail
