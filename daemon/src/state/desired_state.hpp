// One manager's desired state, as the store keeps it: the document, its revision, whether a
// change is still pending, and whether the stored file was refused (damaged or newer), in
// which case the manager leaves the board alone and refuses changes until an operator acts.
//
// A change goes: begin(next) stores `next` marked pending (the intent), the manager programs
// the board (shadow banks, verify, commit), then commit() clears the mark. A crash in
// between leaves a pending document that the reconciler finishes on the next start. A change
// the board refused (an error before its commit) is undone with rollback(): the previous
// document is stored again, so nothing will ever finish it.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>

#include "error.hpp"
#include "state/store.hpp"

namespace asn {

template <typename Document>
class DesiredState {
 public:
  DesiredState(const StateStore& store, std::string kind, uint32_t schema)
      : store_(store), kind_(std::move(kind)), schema_(schema) {}

  // Reads the stored document. A refused file is remembered, not thrown: asnd runs on.
  void load() {
    refused_.reset();
    Document doc;
    try {
      auto header = store_.load(kind_, schema_, doc);
      if (header) {
        doc_ = std::move(doc);
        header_ = *header;
      } else {
        doc_.reset();
        header_ = {};
      }
    } catch (const Error& e) {
      refused_ = e.what();
      doc_.reset();
    }
  }

  const std::string& kind() const { return kind_; }
  bool configured() const { return doc_.has_value(); }
  const std::optional<Document>& doc() const { return doc_; }
  uint64_t revision() const { return header_.revision; }
  bool pending() const { return header_.pending; }
  const std::optional<std::string>& refused() const { return refused_; }

  // Throws kFailedPrecondition while the stored file is refused.
  void require_usable() const {
    if (refused_) {
      throw Error(ErrorCode::kFailedPrecondition,
                  fmt::format("the {} state cannot be changed: {}", kind_, *refused_));
    }
  }

  // Stores `next` as the pending change (the intent record).
  void begin(const Document& next) {
    require_usable();
    previous_doc_ = doc_;
    previous_header_ = header_;
    StoredHeader header{schema_, header_.revision + 1, true};
    store_.save(kind_, header, next);
    doc_ = next;
    header_ = header;
  }
  // The change did not reach the board: back to the document before begin().
  void rollback() {
    if (!header_.pending) return;
    if (previous_doc_) {
      store_.save(kind_, previous_header_, *previous_doc_);
    } else {
      store_.remove(kind_);
    }
    doc_ = previous_doc_;
    header_ = previous_header_;
  }
  // The board holds the pending change: clear the mark.
  void commit() {
    if (!doc_ || !header_.pending) return;
    StoredHeader header = header_;
    header.pending = false;
    store_.save(kind_, header, *doc_);
    header_ = header;
  }

 private:
  const StateStore& store_;
  std::string kind_;
  uint32_t schema_;
  std::optional<Document> doc_;
  StoredHeader header_;
  std::optional<Document> previous_doc_;
  StoredHeader previous_header_;
  std::optional<std::string> refused_;
};

}  // namespace asn
