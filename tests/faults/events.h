// The --events log of a job (JSON lines) read back for the fault tests.
// Each line is one flat JSON object; values are kept as text (strings
// unquoted, numbers and arrays as written). A key may occur twice in one
// line (a fence event carries the emitting daemon's "host" and the fenced
// replica's "host"): all occurrences are kept, in order.
#ifndef MSG_TESTS_FAULTS_EVENTS_H
#define MSG_TESTS_FAULTS_EVENTS_H

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

struct Event {
	std::vector<std::pair<std::string, std::string>> kv;
	std::string line;

	// first value of key, or "" (has() tells them apart)
	std::string get(const std::string &key, size_t nth = 0) const;
	bool has(const std::string &key) const;
	long num(const std::string &key, size_t nth = 0) const; // -1 if absent
	double t() const;                                        // job-relative seconds
	std::string kind() const { return get("event"); }
};

std::vector<Event> ReadEvents(const std::string &path);
std::vector<Event> Select(const std::vector<Event> &ev,
			  const std::function<bool(const Event &)> &pred);
// Events of one kind about replica g.k ("group" and "rep" fields).
std::vector<Event> About(const std::vector<Event> &ev, const std::string &kind, int g, int k);
std::string Dump(const std::vector<Event> &ev);
// The 1-based number of the first line of a source file containing text, or
// 0: where a divergence report must point.
int SourceLine(const std::string &path, const std::string &text);

#endif
