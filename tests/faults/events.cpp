#include "events.h"

#include <cstdlib>
#include <fstream>

namespace {

// Reads a JSON value starting at s[i] as text; advances i past it.
std::string Value(const std::string &s, size_t &i)
{
	std::string v;
	if (i < s.size() && s[i] == '"') {
		for (i++; i < s.size() && s[i] != '"'; i++) {
			if (s[i] == '\\' && i + 1 < s.size())
				i++;
			v += s[i];
		}
		i++;
		return v;
	}
	int depth = 0;
	bool str = false;
	for (; i < s.size(); i++) {
		char c = s[i];
		if (str) {
			if (c == '\\')
				v += s[i++];
			else if (c == '"')
				str = false;
		} else if (c == '"') {
			str = true;
		} else if (c == '[' || c == '{') {
			depth++;
		} else if (c == ']' || c == '}') {
			if (depth == 0)
				break;
			depth--;
		} else if (c == ',' && depth == 0) {
			break;
		}
		v += c;
	}
	return v;
}

bool Parse(const std::string &s, Event &e)
{
	size_t i = s.find('{');
	if (i == std::string::npos)
		return false;
	i++;
	while (i < s.size()) {
		while (i < s.size() && (s[i] == ' ' || s[i] == ','))
			i++;
		if (i >= s.size() || s[i] == '}')
			break;
		if (s[i] != '"')
			return false;
		size_t j = s.find('"', i + 1);
		if (j == std::string::npos)
			return false;
		std::string key = s.substr(i + 1, j - i - 1);
		i = j + 1;
		while (i < s.size() && (s[i] == ' ' || s[i] == ':'))
			i++;
		e.kv.emplace_back(key, Value(s, i));
	}
	e.line = s;
	return !e.kv.empty();
}

} // namespace

std::string Event::get(const std::string &key, size_t nth) const
{
	for (const auto &p : kv)
		if (p.first == key && nth-- == 0)
			return p.second;
	return "";
}

bool Event::has(const std::string &key) const
{
	for (const auto &p : kv)
		if (p.first == key)
			return true;
	return false;
}

long Event::num(const std::string &key, size_t nth) const
{
	for (const auto &p : kv)
		if (p.first == key && nth-- == 0)
			return std::strtol(p.second.c_str(), nullptr, 10);
	return -1;
}

double Event::t() const
{
	return std::strtod(get("t").c_str(), nullptr);
}

std::vector<Event> ReadEvents(const std::string &path)
{
	std::vector<Event> v;
	std::ifstream in(path);
	std::string line;
	while (std::getline(in, line)) {
		Event e;
		if (Parse(line, e))
			v.push_back(std::move(e));
	}
	return v;
}

std::vector<Event> Select(const std::vector<Event> &ev, const std::function<bool(const Event &)> &pred)
{
	std::vector<Event> v;
	for (const auto &e : ev)
		if (pred(e))
			v.push_back(e);
	return v;
}

std::vector<Event> About(const std::vector<Event> &ev, const std::string &kind, int g, int k)
{
	return Select(ev, [&](const Event &e) {
		return e.kind() == kind && e.num("group") == g && e.num("rep") == k;
	});
}

std::string Dump(const std::vector<Event> &ev)
{
	std::string s;
	for (const auto &e : ev)
		s += e.line + "\n";
	return s;
}

int SourceLine(const std::string &path, const std::string &text)
{
	std::ifstream in(path);
	std::string l;
	for (int n = 1; std::getline(in, l); n++)
		if (l.find(text) != std::string::npos)
			return n;
	return 0;
}
