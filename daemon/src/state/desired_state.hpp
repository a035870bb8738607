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
#include "state/reconciler.hpp"
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

  // What a manager's Reconcilable::reconcile() does around its own step: on start, reads
  // the stored document; a refused file throws kFailedPrecondition (the board is left
  // alone); `apply(doc)` makes the board hold the document and says what it did; a pending
  // change is then finished. Returns, and keeps for summary(), "revision N: what it did".
  template <typename Apply>
  std::string reconcile(ReconcileCause cause, Apply&& apply) {
    if (cause == ReconcileCause::kStart) load();
    if (refused_) {
      last_restore_ = "refused";
      throw Error(ErrorCode::kFailedPrecondition, *refused_);
    }
    if (!doc_) {
      last_restore_ = "nothing configured";
      return "nothing configured; the board is left as it is";
    }
    std::string did = apply(*doc_);
    if (header_.pending) {
      commit();
      did = "finished a change an earlier asnd had not confirmed: " + did;
    }
    last_restore_ = fmt::format("revision {}: {}", revision(), did);
    return last_restore_;
  }

  // "in force", "change pending", "nothing configured" or "refused: why".
  std::string status() const {
    if (refused_) return "refused: " + *refused_;
    if (!doc_) return "nothing configured";
    return header_.pending ? "change pending" : "in force";
  }
  // The manager's line of `asnctl info` and `asnctl status`.
  ManagerSummary summary(std::string manager) const {
    ManagerSummary s;
    s.manager = std::move(manager);
    s.revision = revision();
    s.last_restore = last_restore_;
    s.status = status();
    s.problem = refused_.has_value();
    s.in_force = !refused_ && doc_ && !header_.pending;
    return s;
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
    last_restore_ = "none since the last change";
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
  std::string last_restore_;  // what the last reconciliation did
};

}  // namespace asn
