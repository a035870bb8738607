// Internal: keeps a shrunk board memory file from killing the process. A store into a
// shared mapping past the end of its file raises SIGBUS; for a mapping registered here the
// handler maps anonymous pages over it instead (the access then completes on memory that
// no longer reaches the file) and marks it faulted, so the board is reported failed rather
// than asnd crashing. Faults anywhere else go to the previous handler or the default.
#pragma once

#include <cstddef>

namespace asn::model::detail {

// Returns a slot; throws std::runtime_error when every slot is taken.
int guard_mapping(void* base, size_t bytes);
void unguard_mapping(int slot);
bool mapping_faulted(int slot);

}  // namespace asn::model::detail
