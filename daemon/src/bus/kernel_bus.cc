#include "bus/kernel_bus.hpp"

#include <fcntl.h>
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
#include <netlink/genl/family.h>
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
    uint32_t kind = 0, owner_pid = 0;
    uint64_t serial = 0, binding = 0;
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
    if (tb[ASN_ATTR_BOARD_KIND]) dev.kind = nla_get_u32(tb[ASN_ATTR_BOARD_KIND]);
    if (tb[ASN_ATTR_SERIAL]) dev.serial = nla_get_u64(tb[ASN_ATTR_SERIAL]);
    if (tb[ASN_ATTR_BINDING]) dev.binding = nla_get_u64(tb[ASN_ATTR_BINDING]);
    if (tb[ASN_ATTR_OWNER_PID]) dev.owner_pid = nla_get_u32(tb[ASN_ATTR_OWNER_PID]);
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

// The driver, or the board, is not there: asn.ko refused before touching the board, so the
// request wrote nothing and may be sent again once the board is found again.
//   ENOENT: no such family (asn.ko unloaded; its family id is gone)
//   EOPNOTSUPP, EPROTONOSUPPORT: the id names another family now
//   ENODEV: no board at the address, or it was removed while the request waited
//   ESTALE: the board was bound again since we looked it up (ASN_ATTR_BINDING)
bool board_gone(int err) {
  return err == ENOENT || err == EOPNOTSUPP || err == EPROTONOSUPPORT || err == ENODEV ||
         err == ESTALE;
}

std::string board_words(uint32_t kind, uint64_t serial) {
  return serial ? fmt::format("board kind 0x{:x}, serial {:016x}", kind, serial)
                : fmt::format("board kind 0x{:x}, no serial", kind);
}

// The family's version as the controller reports it; 0 if it cannot be read.
uint32_t family_version(nl_sock* sock) {
  nl_cache* cache = nullptr;
  if (genl_ctrl_alloc_cache(sock, &cache) < 0) return 0;
  uint32_t version = 0;
  if (genl_family* family = genl_ctrl_search_by_name(cache, ASN_GENL_NAME)) {
    version = static_cast<uint32_t>(genl_family_get_version(family));
    genl_family_put(family);
  }
  nl_cache_free(cache);
  return version;
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
    const std::vector<Board> boards = list_boards();
    if (boards.empty()) {
      throw Error(ErrorCode::kUnavailable,
                  "kernel backend: no board: asn.ko is loaded but bound to no board (see "
                  "dmesg for boards it refused; `asnd --list-boards`)");
    }
    std::string found;
    for (const auto& board : boards) found += (found.empty() ? "" : ", ") + board.pci;
    const Board* chosen = nullptr;
    if (options.device.empty()) {
      if (boards.size() > 1) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("kernel backend: asn.ko drives several boards ({}): choose one "
                                "with --device or backend.kernel.device",
                                found));
      }
      chosen = &boards.front();
    } else {
      for (const auto& board : boards) {
        if (board.pci == options.device) chosen = &board;
      }
    }
    if (!chosen) {
      throw Error(
          ErrorCode::kNotFound,
          fmt::format("kernel backend: no board at {}: asn.ko drives {}", options.device, found));
    }
    name_ = chosen->name;
    bdf_ = chosen->pci;
    kind_ = chosen->kind;
    serial_ = chosen->serial;
    binding_ = chosen->binding;
    own();
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
  std::lock_guard lock(name_mu_);
  return fmt::format("kernel board '{}' ({})", name_, bdf_);
}

BoardIdentity KernelBus::identity() const {
  std::lock_guard lock(name_mu_);
  return {"kernel", name_, "", bdf_};
}

std::vector<KernelBus::Board> KernelBus::list_boards() {
  family_ = genl_ctrl_resolve(sock_, ASN_GENL_NAME);
  if (family_ < 0) {
    throw Error(ErrorCode::kUnavailable,
                "kernel backend: no driver: the generic netlink family \"asn\" does not exist "
                "(asn.ko is not loaded, or was unloaded: modprobe asn)");
  }
  if (const uint32_t version = family_version(sock_); version < ASN_GENL_VERSION) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("kernel backend: asn.ko speaks version {} of the \"asn\" family, "
                            "asnd needs {}: the loaded module is older than asnd (reload it: "
                            "modprobe -r asn && modprobe asn, or reinstall asn-dkms)",
                            version, ASN_GENL_VERSION));
  }
  events_group_ = genl_ctrl_resolve_grp(sock_, ASN_GENL_NAME, ASN_GENL_MCGRP_EVENTS);
  Reply reply = transact(sock_, new_request(family_, ASN_CMD_DEV_GET, NLM_F_DUMP));
  if (reply.error < 0) {
    throw Error(ErrorCode::kUnavailable, fmt::format("kernel backend: listing boards failed: {} {}",
                                                     std::strerror(-reply.error), reply.message));
  }
  std::vector<Board> boards;
  for (const auto& dev : reply.devs) {
    boards.push_back(
        {dev.index, dev.name, dev.pci, dev.kind, dev.owner_pid, dev.serial, dev.binding});
  }
  return boards;
}

void KernelBus::own() {
  // The node's group and mode (udev: group asn) say who may drive the board; asn.ko takes an
  // fd of it opened for writing as the proof, and makes this socket the board's owner.
  const std::string node = "/dev/asn/" + bdf_;
  const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == EACCES || err == EPERM) {
      throw Error(ErrorCode::kPermissionDenied,
                  fmt::format("{}: no permission: driving the board needs {} open for writing "
                              "(its group is asn, set by 60-asn.rules: run asnd as a member of "
                              "group asn, as its unit does, or as root)",
                              describe(), node));
    }
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: cannot open {}: {} (asn.ko creates it when it binds the board)",
                            describe(), node, std::strerror(err)));
  }
  nl_msg* msg = new_request(family_, ASN_CMD_BOARD_OWN, 0);
  if (nla_put_string(msg, ASN_ATTR_PCI_ADDR, bdf_.c_str()) < 0 ||
      nla_put_u64(msg, ASN_ATTR_BINDING, binding_) < 0 ||
      nla_put_u32(msg, ASN_ATTR_DEV_FD, static_cast<uint32_t>(fd)) < 0) {
    nlmsg_free(msg);
    ::close(fd);
    throw Error(ErrorCode::kInternal, "kernel backend: cannot build ASN_CMD_BOARD_OWN");
  }
  Reply reply;
  try {
    reply = transact(sock_, msg);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (reply.error == -EBUSY) {
    uint32_t pid = 0;
    for (const auto& board : list_boards()) {
      if (board.pci == bdf_) pid = board.owner_pid;
    }
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("{}: the board is driven by another process (pid {}; another asnd?): "
                            "stop it first, or choose another board with --device",
                            describe(), pid));
  }
  if (reply.error < 0) {
    throw Error(
        board_gone(-reply.error) ? ErrorCode::kUnavailable : ErrorCode::kPermissionDenied,
        fmt::format("{}: asn.ko refused to make asnd the board's owner: {}{}{}", describe(),
                    std::strerror(-reply.error), reply.message.empty() ? "" : ": ", reply.message));
  }
}

void KernelBus::reconnect(const std::string& why) {
  lost_ = true;
  std::vector<Board> boards;
  try {
    boards = list_boards();
  } catch (const Error& e) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: {}; the driver went away: {} (asnd goes on by itself when "
                            "the board is back)",
                            describe(), why, e.what()));
  }
  const Board* found = nullptr;
  for (const auto& board : boards) {
    if (board.pci == bdf_) found = &board;
  }
  if (!found) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: {}; asn.ko no longer drives {} (unbound, removed, or refused "
                            "at probe: see dmesg); asnd goes on by itself when it is back",
                            describe(), why, bdf_));
  }
  if (found->kind != kind_ || found->serial != serial_) {
    // Another board at this address: writing it would program a switch nobody asked for.
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: {} now holds another board ({}; asnd started on {}): asnd "
                            "writes nothing to it and serves no call until that board is back "
                            "(or restart asnd to take this one)",
                            describe(), bdf_, board_words(found->kind, found->serial),
                            board_words(kind_, serial_)));
  }
  std::string before = describe();
  {
    std::lock_guard lock(name_mu_);
    name_ = found->name;
  }
  binding_ = found->binding;
  own();  // a new binding (or module) has no owner
  lost_ = false;
  if (handler_) {
    handler_(BusEvent{BusEvent::Kind::kReconnected, 0, 0,
                      fmt::format("{}: {}; found the same board again as {} ({}): "
                                  "checking it against the desired state",
                                  before, why, describe(), board_words(kind_, serial_))});
  }
}

int KernelBus::send(std::span<BusOp> ops, bool write, std::string& message) {
  std::vector<uint32_t> offsets, values;
  for (const auto& op : ops) {
    offsets.push_back(op.offset);
    values.push_back(op.value);
  }
  nl_msg* msg = new_request(family_, write ? ASN_CMD_REG_WRITE : ASN_CMD_REG_READ, 0);
  if (nla_put_string(msg, ASN_ATTR_PCI_ADDR, bdf_.c_str()) < 0 ||
      nla_put_u64(msg, ASN_ATTR_BINDING, binding_) < 0 ||
      nla_put(msg, ASN_ATTR_OFFSETS, static_cast<int>(offsets.size() * 4), offsets.data()) < 0 ||
      (write &&
       nla_put(msg, ASN_ATTR_VALUES, static_cast<int>(values.size() * 4), values.data()) < 0)) {
    nlmsg_free(msg);
    throw Error(ErrorCode::kInternal, "kernel backend: batch does not fit one message");
  }
  Reply reply = transact(sock_, msg);
  message = std::move(reply.message);
  if (reply.error < 0) return -reply.error;
  if (!write) {
    if (reply.values.size() != ops.size()) {
      throw Error(ErrorCode::kHardware, fmt::format("{}: read of {} returned {} values", describe(),
                                                    ops.size(), reply.values.size()));
    }
    for (size_t i = 0; i < ops.size(); ++i) ops[i].value = reply.values[i];
  }
  return 0;
}

void KernelBus::run(std::span<BusOp> ops, bool write) {
  if (family_changed_.exchange(false)) lost_ = true;
  if (lost_) reconnect("asn.ko was reloaded or the board was lost");
  std::string message;
  int err = send(ops, write, message);
  if (board_gone(err)) {
    // Refused before any access: look the board up again and send the batch once more.
    reconnect(fmt::format("asn.ko refused a request ({}{}{})", std::strerror(err),
                          message.empty() ? "" : ": ", message));
    err = send(ops, write, message);
  }
  if (err == 0) return;
  std::string what = fmt::format("{}: {} of {} register(s) from 0x{:x} refused: {}{}{}", describe(),
                                 write ? "write" : "read", ops.size(), ops.front().offset,
                                 std::strerror(err), message.empty() ? "" : ": ", message);
  if (err == EPERM) {
    throw Error(ErrorCode::kPermissionDenied,
                what + " (asnd no longer owns the board: restart it)");
  }
  if (board_gone(err)) {
    lost_ = true;
    throw Error(ErrorCode::kUnavailable, what + " (the board went away)");
  }
  throw Error(ErrorCode::kHardware, what);
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
  int group = -1;
  {
    std::lock_guard lock(mu_);
    handler_ = std::move(handler);
    if (!handler_) return;
    group = events_group_;
  }
  if (group < 0) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: asn.ko has no \"events\" group (an older driver?)", describe()));
  }
  events_sock_ = nl_socket_alloc();
  if (!events_sock_) throw Error(ErrorCode::kInternal, "libnl: out of memory");
  nl_socket_disable_seq_check(events_sock_);
  int err = genl_connect(events_sock_);
  // The controller's "notify" group says when asn.ko's family goes and comes back (a module
  // reload): its events group then has a new id, joined again by the events thread.
  int notify = err < 0 ? err : genl_ctrl_resolve_grp(events_sock_, "nlctrl", "notify");
  if (err >= 0) err = notify;
  if (err >= 0) err = nl_socket_add_memberships(events_sock_, group, notify, 0);
  if (err < 0 || pipe(stop_pipe_) != 0) {
    nl_socket_free(events_sock_);
    events_sock_ = nullptr;
    throw Error(ErrorCode::kUnavailable,
                fmt::format("{}: cannot join the events group: {}", describe(),
                            err < 0 ? nl_geterror(err) : std::strerror(errno)));
  }
  events_thread_ = std::thread([this, group] { event_loop(group); });
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

namespace {

// The id of asn.ko's events group as the controller reports it now; -1 if none.
int resolve_events_group() {
  nl_sock* sock = nl_socket_alloc();
  if (!sock) return -1;
  int group = genl_connect(sock) < 0
                  ? -1
                  : genl_ctrl_resolve_grp(sock, ASN_GENL_NAME, ASN_GENL_MCGRP_EVENTS);
  nl_socket_free(sock);
  return group < 0 ? -1 : group;
}

}  // namespace

void KernelBus::event_loop(int group) {
  // Every device's events arrive on the group; keep this board's (by its PCI address: the
  // driver's index names another board after a re-bind).
  struct Loop {
    KernelBus* bus;
    int group;
  } loop{this, group};
  nl_cb* cb = nl_cb_alloc(NL_CB_CUSTOM);
  if (!cb) return;
  // Notifications carry sequence number 0: no sequence check on this callback set (the
  // socket's own setting does not apply to a callback set of our own).
  nl_cb_set(
      cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, [](nl_msg*, void*) -> int { return NL_OK; }, nullptr);
  nl_cb_set(
      cb, NL_CB_VALID, NL_CB_CUSTOM,
      [](nl_msg* msg, void* arg) -> int {
        auto* l = static_cast<Loop*>(arg);
        nlmsghdr* hdr = nlmsg_hdr(msg);
        if (hdr->nlmsg_type == GENL_ID_CTRL) {
          nlattr* tb[CTRL_ATTR_MAX + 1] = {};
          if (genlmsg_parse(hdr, 0, tb, CTRL_ATTR_MAX, nullptr) < 0) return NL_SKIP;
          const uint8_t cmd = static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd;
          if ((cmd != CTRL_CMD_NEWFAMILY && cmd != CTRL_CMD_DELFAMILY) ||
              !tb[CTRL_ATTR_FAMILY_NAME] ||
              std::strcmp(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]), ASN_GENL_NAME) != 0) {
            return NL_SKIP;
          }
          // The next call looks the family and the board up again.
          l->bus->family_changed_ = true;
          if (cmd == CTRL_CMD_NEWFAMILY) {
            const int fresh = resolve_events_group();
            if (fresh >= 0 && fresh != l->group) {
              nl_socket_drop_membership(l->bus->events_sock_, l->group);
              if (nl_socket_add_membership(l->bus->events_sock_, fresh) >= 0) l->group = fresh;
            }
          }
          return NL_OK;
        }
        nlattr* tb[ASN_ATTR_MAX + 1] = {};
        if (genlmsg_parse(hdr, 0, tb, ASN_ATTR_MAX, nullptr) < 0) return NL_SKIP;
        if (!tb[ASN_ATTR_PCI_ADDR] || l->bus->bdf_ != nla_get_string(tb[ASN_ATTR_PCI_ADDR])) {
          return NL_SKIP;
        }
        return on_event(msg, &l->bus->handler_);
      },
      &loop);
  pollfd fds[2] = {{nl_socket_get_fd(events_sock_), POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    if (fds[0].revents && nl_recvmsgs(events_sock_, cb) < 0 && errno != EINTR) {
      // A lost notification (ENOBUFS) is not fatal: keep listening. It may have been the
      // controller's news of a reload: check the group, and look the board up again.
      if (fds[0].revents & (POLLERR | POLLHUP)) break;
      const int fresh = resolve_events_group();
      if (fresh >= 0 && fresh != loop.group) {
        family_changed_ = true;
        nl_socket_drop_membership(events_sock_, loop.group);
        if (nl_socket_add_membership(events_sock_, fresh) >= 0) loop.group = fresh;
      }
    }
  }
  nl_cb_put(cb);
}

}  // namespace asn
