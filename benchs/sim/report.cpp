#include "report.h"

#include "common/run_info.h"

#include <cstdio>

namespace sim {

std::string Report::json(bool deterministic) const {
    bench::JsonWriter j;
    j.begin_object();
    j.field("benchmark", benchmark);
    j.field("title", title);
    j.key("run").begin_object();
    j.field("command", command);
    if (!deterministic) {
        j.field("date", bench::utc_now());
        j.field("git_commit", bench::git_commit());
        j.field("cores", int(std::thread::hardware_concurrency()));
        const double load = bench::loadavg();
        j.field("load_before", load);
        j.field("load_after", load);
        j.field("wall_s", wall_s);
    }
    j.field("model", std::string("simulated: no timing of this machine"));
    j.end_object();
    j.field("notes", notes);
    j.key("targets").begin_array();
    for (const Target& t : targets) {
        j.begin_object();
        j.field("target", t.target);
        j.field("measured", t.measured);
        j.field("met", t.met);
        j.field("why", t.why);
        j.field("next", t.next);
        j.end_object();
    }
    j.end_array();
    j.key("tables").begin_array();
    for (const Table& t : tables) {
        j.begin_object();
        j.field("title", t.title);
        j.field("text", t.text);
        j.field("columns", t.columns);
        j.key("rows").begin_array();
        for (const auto& row : t.rows) {
            j.begin_array();
            for (const Cell& c : row) {
                if (c.is_number) {
                    j.value(c.number);
                } else {
                    j.value(c.text);
                }
            }
            j.end_array();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.key("plots").begin_array();
    for (const Plot& p : plots) {
        j.begin_object();
        j.field("title", p.title);
        j.field("xlabel", p.xlabel);
        j.field("ylabel", p.ylabel);
        j.field("yscale", p.yscale);
        if (!p.file.empty()) {
            j.field("file", p.file);
        }
        j.key("series").begin_array();
        for (const Series& s : p.series) {
            j.begin_object();
            j.field("label", s.label);
            j.field("x", s.x);
            j.field("y", s.y);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.end_object();
    return j.str();
}

void Report::print() const {
    for (const Table& t : tables) {
        std::printf("\n== %s\n", t.title.c_str());
        for (const std::string& c : t.columns) {
            std::printf("%14s", c.c_str());
        }
        std::printf("\n");
        for (const auto& row : t.rows) {
            for (const Cell& c : row) {
                if (c.is_number) {
                    std::printf("%14.4g", c.number);
                } else {
                    std::printf("%14s", c.text.c_str());
                }
            }
            std::printf("\n");
        }
    }
    std::printf("\n");
    for (const Target& t : targets) {
        std::printf(
                "%s %s: %s\n",
                t.met ? "met   " : "MISSED",
                t.target.c_str(),
                t.measured.c_str());
    }
}

} // namespace sim
