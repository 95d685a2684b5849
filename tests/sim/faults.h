// Fault injection: which faults exist, which are legal now, and what they do.
//
// "Legal" means: a fault the protocol core of today is supposed to survive
// with every invariant intact, including liveness (I6); faults.cc says which
// those are and why. When the core learns a new recovery (migration,
// regeneration, surviving long partitions), its fault is added here as one
// more kind: a case in fault_legal(), fault_apply() and fault_propose(),
// plus the world hook that carries it out — nothing else in the simulator
// changes.
#pragma once

#include <cstdint>

#include "rng.h"

namespace sim {

class World;
struct Choice;

enum FaultKind : uint8_t {
	FK_CRASH_PROC = 1,  // a = process index: the replica dies (its daemon lives)
	FK_CRASH_HOST = 2,  // a = host, b = 1: its unsent TCP buffers die with it
	FK_CUT = 3,         // a, b = hosts: the link stops carrying frames (TCP holds them)
	FK_HEAL = 4,        // a, b = hosts: the link carries again, in order
	FK_MIGRATE = 6,     // a = process index, b = target host: move it (msgctl migrate)
	FK_LOSE = 5,        // a → b: the head frame vanishes. TCP never does this: it is
	                    // the simulator's own negative control for I6 (--lossy)
	FK_CORRUPT = 7,     // a = process index: its next non-empty message goes out with
	                    // one bit flipped (msgd's `corrupt` injection); b = 1: its state
	                    // is wrong from then on, so everything it sends differs
};

// What has been injected so far (budgets).
struct FaultLog {
	uint32_t proc_crashes = 0, host_crashes = 0, cuts = 0, losses = 0, migrations = 0,
		 corruptions = 0;
};

bool fault_legal(const World &w, const Choice &c);
void fault_apply(World &w, const Choice &c);
// A random legal fault within the run's budgets; false if none.
bool fault_propose(const World &w, Rng &g, Choice *out);
const char *fault_name(uint8_t kind);

} // namespace sim
