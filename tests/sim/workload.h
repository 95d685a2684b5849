// Synthetic deterministic processes: what each rank of the simulated job does.
//
// A Program is the application: it is asked for its next operation and is
// told the result of its last receive. Every replica of a group runs its own
// copy (clone) of the group's program, so replicas stay identical exactly as
// long as they receive identical messages — which is what the protocol must
// guarantee. Payload bytes are derived by the runner from the replica's
// receive history (world.cc), so a divergence also shows in what it sends.
//
// Every workload is deadlock-free by construction on any schedule
// (workload.cc explains why for each); a stuck run is therefore a protocol
// failure, not a bad script.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config.h"
#include "rng.h"

namespace sim {

struct RecvRes {
	uint32_t src;
	int32_t tag;
	uint64_t seq;
	uint64_t size;
	uint64_t digest;  // of the payload bytes
};

struct Op {
	enum Kind : uint8_t { SEND, RECV, END } kind = END;
	uint32_t dst = 0;     // SEND
	int32_t src = 0;      // RECV: rank or MSG_ANYSRC
	int32_t tag = 0;      // SEND: tag >= 0; RECV: tag or MSG_ANYTAG
	uint64_t size = 0;    // SEND: message size; RECV: buffer size
};

class Program {
public:
	virtual ~Program() = default;
	// The next operation. last is the result of the previous receive, NULL
	// after a send or at the start. (A receive answered with MSG_ETRUNC is
	// retried by the runner with a large enough buffer, as an application
	// would; the program only sees completed receives.)
	virtual Op next(const RecvRes *last) = 0;
	virtual std::unique_ptr<Program> clone() const = 0;
};

struct Job {
	std::vector<std::unique_ptr<Program>> prog;  // [n] prototypes
	std::vector<bool> uses_anysrc;               // [n] group posts MSG_ANYSRC receives
};

// The job for cfg, generated from the seed (same seed, same job).
Job make_job(const SimCfg &cfg);

} // namespace sim
