#include "bus/kernel_bus.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "asn_genl.h"
#include "error.hpp"

extern "C" {
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
}

namespace asn {

namespace {

// What one request brought back: its error and extended-ACK message, or its data.
struct Reply {
  int error = 0;
  std::string message;
  std::vector<uint32_t> values;
  struct Dev {
    uint32_t index = 0;
    std::string name, pci;
  };
  std::vector<Dev> devs;
};

std::string extack_message(nlmsghdr* hdr, nlmsgerr* err) {
  if (!(hdr->nlmsg_flags & NLM_F_ACK_TLVS)) return {};
  size_t off = sizeof(*err);
  if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) off += err->msg.nlmsg_len - sizeof(err->msg);
  auto* attrs = reinterpret_cast<nlattr*>(reinterpret_cast<char*>(err) + NLMSG_ALIGN(off));
  int len = static_cast<int>(hdr->nlmsg_len) - static_cast<int>(NLMSG_HDRLEN + NLMSG_ALIGN(off));
  nlattr* tb[NLMSGERR_ATTR_MAX + 1] = {};
  if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, len, nullptr) < 0) return {};
  if (!tb[NLMSGERR_ATTR_MSG]) return {};
  return nla_get_string(tb[NLMSGERR_ATTR_MSG]);
}

int on_error(sockaddr_nl*, nlmsgerr* err, void* arg) {
  auto* reply = static_cast<Reply*>(arg);
  auto* hdr = reinterpret_cast<nlmsghdr*>(reinterpret_cast<char*>(err) - NLMSG_HDRLEN);
  reply->error = err->error;
  reply->message = extack_message(hdr, err);
  return NL_STOP;
}

int on_ack(nl_msg*, void* arg) {
  static_cast<Reply*>(arg)->error = 0;
  return NL_STOP;
}

int on_valid(nl_msg* msg, void* arg) {
  auto* reply = static_cast<Reply*>(arg);
  nlattr* tb[ASN_ATTR_MAX + 1] = {};
  if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ASN_ATTR_MAX, nullptr) < 0) return NL_SKIP;
  if (tb[ASN_ATTR_VALUES]) {
    size_t n = static_cast<size_t>(nla_len(tb[ASN_ATTR_VALUES])) / 4;
    reply->values.resize(n);
    std::memcpy(reply->values.data(), nla_data(tb[ASN_ATTR_VALUES]), n * 4);
  }
  if (tb[ASN_ATTR_DEV_INDEX]) {
    Reply::Dev dev;
    dev.index = nla_get_u32(tb[ASN_ATTR_DEV_INDEX]);
    if (tb[ASN_ATTR_DEV_NAME]) dev.name = nla_get_string(tb[ASN_ATTR_DEV_NAME]);
    if (tb[ASN_ATTR_PCI_ADDR]) dev.pci = nla_get_string(tb[ASN_ATTR_PCI_ADDR]);
    reply->devs.push_back(std::move(dev));
  }
  return NL_OK;
}

// Sends msg (consumed) and collects the answer until the ACK, the error or NLMSG_DONE.
Reply transact(nl_sock* sock, nl_msg* msg) {
  Reply reply;
  reply.error = 1;  // until an ACK, an error or DONE arrives
  nl_cb* cb = nl_cb_alloc(NL_CB_CUSTOM);
  if (!cb) {
    nlmsg_free(msg);
    throw Error(ErrorCode::kInternal, "libnl: out of memory");
  }
  nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &reply);
  nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &reply);
  nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_ack, &reply);
  nl_cb_err(cb, NL_CB_CUSTOM, on_error, &reply);
  int err = nl_send_auto(sock, msg);
  nlmsg_free(msg);
  while (err >= 0 && reply.error > 0) err = nl_recvmsgs(sock, cb);
  nl_cb_put(cb);
  if (err < 0 && reply.error > 0) {
    throw Error(ErrorCode::kUnavailable, fmt::format("netlink: {}", nl_geterror(err)));
  }
  return reply;
}

nl_msg* new_request(int family, uint8_t cmd, int flags) {
  nl_msg* msg = nlmsg_alloc();
  if (!msg) throw Error(ErrorCode::kInternal, "libnl: out of memory");
  if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd, ASN_GENL_VERSION)) {
    nlmsg_free(msg);
    throw Error(ErrorCode::kInternal, "libnl: cannot build the message header");
  }
  return msg;
}

}  // namespace

KernelBus::KernelBus(const KernelBusOptions& options) {
  sock_ = nl_socket_alloc();
  if (!sock_) throw Error(ErrorCode::kInternal, "libnl: out of memory");
  try {
    if (int err = genl_connect(sock_); err < 0) {
      throw Error(ErrorCode::kUnavailable,
                  fmt::format("kernel backend: cannot open a generic netlink socket: {}",
                              nl_geterror(err)));
    }
    // Extended ACKs (the driver's reason for a refusal) and capped ACKs (no echo of the
    // request); libnl 3.7 has no setter for either.
    int one = 1;
    setsockopt(nl_socket_get_fd(sock_), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
    setsockopt(nl_socket_get_fd(sock_), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
    family_ = genl_ctrl_resolve(sock_, ASN_GENL_NAME);
    if (family_ >= 0) {
      events_group_ = genl_ctrl_resolve_grp(sock_, ASN_GENL_NAME, ASN_GENL_MCGRP_EVENTS);
    }
    if (family_ < 0) {
      throw Error(ErrorCode::kUnavailable,
                  "kernel backend: no driver: the generic netlink family \"asn\" does not exist "
                  "(load asn.ko: modprobe asn)");
    }
    Reply reply = transact(sock_, new_request(family_, ASN_CMD_DEV_GET, NLM_F_DUMP));
    if (reply.error < 0) {
      throw Error(ErrorCode::kUnavailable,
                  fmt::format("kernel backend: listing boards failed: {} {}",
                              std::strerror(-reply.error), reply.message));
    }
    if (reply.devs.empty()) {
      throw Error(ErrorCode::kUnavailable,
                  "kernel backend: no board: asn.ko is loaded but bound to no board (see "
                  "dmesg for boards it refused; `asnd --list-boards`)");
    }
    std::string found;
    for (const auto& dev : reply.devs) found += (found.empty() ? "" : ", ") + dev.pci;
    const Reply::Dev* chosen = nullptr;
    if (options.device.empty()) {
      if (reply.devs.size() > 1) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("kernel backend: asn.ko drives several boards ({}): choose one "
                                "with --device or backend.kernel.device",
                                found));
      }
      chosen = &reply.devs.front();
    } else {
      for (const auto& dev : reply.devs) {
        if (dev.pci == options.device) chosen = &dev;
      }
    }
    if (!chosen) {
      throw Error(
          ErrorCode::kNotFound,
          fmt::format("kernel backend: no board at {}: asn.ko drives {}", options.device, found));
    }
    dev_index_ = chosen->index;
    name_ = chosen->name;
    bdf_ = chosen->pci;
  } catch (...) {
    nl_socket_free(sock_);
    throw;
  }
}

KernelBus::~KernelBus() {
  stop_events();
  nl_socket_free(sock_);
}

std::string KernelBus::describe() const {
  return fmt::format("kernel board '{}' ({})", name_, bdf_);
}

BoardIdentity KernelBus::identity() const { return {"kernel", name_, "", bdf_}; }

void KernelBus::run(std::span<BusOp> ops, bool write) {
  std::vector<uint32_t> offsets, values;
  for (const auto& op : ops) {
    offsets.push_back(op.offset);
    values.push_back(op.value);
  }
  nl_msg* msg = new_request(family_, write ? ASN_CMD_REG_WRITE : ASN_CMD_REG_READ, 0);
  if (nla_put_u32(msg, ASN_ATTR_DEV_INDEX, dev_index_) < 0 ||
      nla_put(msg, ASN_ATTR_OFFSETS, static_cast<int>(offsets.size() * 4), offsets.data()) < 0 ||
      (write &&
       nla_put(msg, ASN_ATTR_VALUES, static_cast<int>(values.size() * 4), values.data()) < 0)) {
    nlmsg_free(msg);
    throw Error(ErrorCode::kInternal, "kernel backend: batch does not fit one message");
  }
  Reply reply = transact(sock_, msg);
  if (reply.error < 0) {
    int err = -reply.error;
    std::string what =
        fmt::format("{}: {} of {} register(s) from 0x{:x} refused: {}{}{}", describe(),
                    write ? "write" : "read", ops.size(), ops.front().offset, std::strerror(err),
                    reply.message.empty() ? "" : ": ", reply.message);
    if (err == EPERM) {
      throw Error(ErrorCode::kPermissionDenied,
                  what + " (writes need CAP_NET_ADMIN: run asnd as root or grant it)");
    }
    if (err == ENODEV) throw Error(ErrorCode::kUnavailable, what + " (the board went away)");
    throw Error(ErrorCode::kHardware, what);
  }
  if (!write) {
    if (reply.values.size() != ops.size()) {
      throw Error(ErrorCode::kHardware, fmt::format("{}: read of {} returned {} values", describe(),
                                                    ops.size(), reply.values.size()));
    }
    for (size_t i = 0; i < ops.size(); ++i) ops[i].value = reply.values[i];
  }
}

void KernelBus::execute(std::span<BusOp> ops) {
  std::lock_guard lock(mu_);
  size_t begin = 0;
  while (begin < ops.size()) {
    size_t end = begin + 1;
    while (end < ops.size() && end - begin < ASN_MAX_BATCH && ops[end].kind == ops[begin].kind) {
      ++end;
    }
    run(ops.subspan(begin, end - begin), ops[begin].kind == BusOp::Kind::kWrite);
    begin = end;
  }
}

uint32_t KernelBus::read32(uint32_t offset) {
  BusOp op = BusOp::read(offset);
  execute(std::span<BusOp>(&op, 1));
  return op.value;
}

void KernelBus::write32(uint32_t offset, uint32_t value) {
  BusOp op = BusOp::write(offset, value);
  execute(std::span<BusOp>(&op, 1));
}

void KernelBus::set_event_handler(std::function<void(const BusEvent&)> handler) {
  stop_events();
  handler_ = std::move(handler);
  if (!handler_) return;
  if (events_group_ < 0) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: asn.ko has no \"events\" group (an older driver?)", describe()));
  }
  events_sock_ = nl_socket_alloc();
  if (!events_sock_) throw Error(ErrorCode::kInternal, "libnl: out of memory");
  nl_socket_disable_seq_check(events_sock_);
  int err = genl_connect(events_sock_);
  if (err >= 0) err = nl_socket_add_membership(events_sock_, events_group_);
  if (err < 0 || pipe(stop_pipe_) != 0) {
    nl_socket_free(events_sock_);
    events_sock_ = nullptr;
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: cannot join the events group: {}", describe(),
                            err < 0 ? nl_geterror(err) : std::strerror(errno)));
  }
  events_thread_ = std::thread([this] { event_loop(); });
}

void KernelBus::stop_events() {
  if (!events_thread_.joinable()) return;
  char byte = 0;
  if (write(stop_pipe_[1], &byte, 1) != 1) {
    // the thread also stops when the socket fails; nothing else to do
  }
  events_thread_.join();
  close(stop_pipe_[0]);
  close(stop_pipe_[1]);
  stop_pipe_[0] = stop_pipe_[1] = -1;
  nl_socket_free(events_sock_);
  events_sock_ = nullptr;
}

namespace {

int on_event(nl_msg* msg, void* arg) {
  auto* deliver = static_cast<std::function<void(const BusEvent&)>*>(arg);
  nlattr* tb[ASN_ATTR_MAX + 1] = {};
  if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ASN_ATTR_MAX, nullptr) < 0) return NL_SKIP;
  if (!tb[ASN_ATTR_EVENT]) return NL_SKIP;
  BusEvent event{};
  switch (nla_get_u32(tb[ASN_ATTR_EVENT])) {
    case ASN_EVENT_BANK_SWAPPED:
      event.kind = BusEvent::Kind::kBankSwapped;
      break;
    case ASN_EVENT_COMPLETIONS:
      event.kind = BusEvent::Kind::kCompletionsAvailable;
      break;
    case ASN_EVENT_LINK_CHANGE:
      event.kind = BusEvent::Kind::kLinkChange;
      break;
    case ASN_EVENT_GENERATION_CHANGED:
      event.kind = BusEvent::Kind::kGenerationChanged;
      break;
    default:
      return NL_SKIP;
  }
  if (tb[ASN_ATTR_BLOCK_TYPE]) {
    event.block_type = static_cast<uint16_t>(nla_get_u32(tb[ASN_ATTR_BLOCK_TYPE]));
  }
  if (tb[ASN_ATTR_GENERATION]) event.generation = nla_get_u32(tb[ASN_ATTR_GENERATION]);
  (*deliver)(event);
  return NL_OK;
}

}  // namespace

void KernelBus::event_loop() {
  // Every device's events arrive on the group; keep this board's.
  struct Filter {
    uint32_t index;
    std::function<void(const BusEvent&)>* deliver;
  } filter{dev_index_, &handler_};
  nl_cb* cb = nl_cb_alloc(NL_CB_CUSTOM);
  if (!cb) return;
  // Notifications carry sequence number 0: no sequence check on this callback set (the
  // socket's own setting does not apply to a callback set of our own).
  nl_cb_set(
      cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, [](nl_msg*, void*) -> int { return NL_OK; }, nullptr);
  nl_cb_set(
      cb, NL_CB_VALID, NL_CB_CUSTOM,
      [](nl_msg* msg, void* arg) -> int {
        auto* f = static_cast<Filter*>(arg);
        nlattr* tb[ASN_ATTR_MAX + 1] = {};
        if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ASN_ATTR_MAX, nullptr) < 0) return NL_SKIP;
        if (!tb[ASN_ATTR_DEV_INDEX] || nla_get_u32(tb[ASN_ATTR_DEV_INDEX]) != f->index) {
          return NL_SKIP;
        }
        return on_event(msg, f->deliver);
      },
      &filter);
  pollfd fds[2] = {{nl_socket_get_fd(events_sock_), POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    if (fds[0].revents && nl_recvmsgs(events_sock_, cb) < 0 && errno != EINTR) {
      // A lost notification (ENOBUFS) is not fatal: keep listening.
      if (fds[0].revents & (POLLERR | POLLHUP)) break;
    }
  }
  nl_cb_put(cb);
}

}  // namespace asn
