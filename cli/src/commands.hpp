// The subcommands. Each one gets its request already parsed and checked (usage errors are
// found before asnd is contacted), makes its calls through the Connection, prints, and
// returns the exit code; a failed call throws RpcError.
#pragma once

#include "asn/v1/device.pb.h"
#include "connection.hpp"
#include "output.hpp"

namespace asnctl {

int run_status(Connection& connection, OutputFormat format);
int run_info(Connection& connection, OutputFormat format);
int run_regs_read(Connection& connection, OutputFormat format,
                  const asn::v1::ReadRegistersRequest& request);
int run_regs_write(Connection& connection, OutputFormat format,
                   const asn::v1::WriteRegistersRequest& request);
int run_regs_dump(Connection& connection, OutputFormat format,
                  const asn::v1::DumpRegistersRequest& request);
// `confirmed`: --yes was given; otherwise stdin is a terminal and the user is asked.
int run_board_reset(Connection& connection, OutputFormat format, bool confirmed);

}  // namespace asnctl
