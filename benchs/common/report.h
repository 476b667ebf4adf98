/**
 * report.h: what a C++ benchmark writes: one JSON file in the report schema
 * of contrib/report.py (faiss.contrib.ccd.report), which renders every
 * benchmark's markdown table and PNG plots, C++ or Python alike:
 *
 *     build/benchs/bench_pool --out benchs/results
 *     PYTHONPATH=build/python .venv/bin/python \
 *         -m faiss.contrib.ccd.report benchs/results/pool.json
 *
 * (PYTHONPATH=build/python for the module as built; scripts/report.sh
 * renders every JSON file of a directory.) The C++ side holds no markdown
 * and no plotting: a Report is tables, targets and plot series, and
 * write_report() only serializes it.
 */

#pragma once

#include "common/json_writer.h"
#include "common/run_info.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace bench {

/// Target: one of an issue's goals, judged on this run.
struct Target {
    std::string target;   ///< e.g. "pool-ccd tree >= 5x mutex-queue"
    std::string measured; ///< e.g. "3.1x (10000000-task tree)"
    bool met = false;
    std::string why;  ///< for a miss: what the numbers say about the cause
    std::string next; ///< for a miss: the next step
};

/// Cell: one table cell, a number (NaN: no value), a string or a boolean.
struct Cell {
    enum Kind { number, text, boolean } kind;
    double x = 0;
    std::string s;

    Cell(double v) : kind(number), x(v) {}
    Cell(int v) : kind(number), x(v) {}
    Cell(int64_t v) : kind(number), x(double(v)) {}
    Cell(uint64_t v) : kind(number), x(double(v)) {}
    Cell(const char* v) : kind(text), s(v) {}
    Cell(std::string v) : kind(text), s(std::move(v)) {}
    static Cell flag(bool v) {
        Cell c(v ? 1 : 0);
        c.kind = boolean;
        return c;
    }
};

struct Table {
    std::string title;
    std::string text; ///< a paragraph under the title
    std::vector<std::string> columns;
    std::vector<std::vector<Cell>> rows;
};

/// Series: one line of a plot; one group's bars when the plot's kind is
/// "bar", one row of cells when it is "heatmap" (then x indexes
/// `categories`).
struct Series {
    std::string label;
    std::vector<double> x, y;
};

struct Plot {
    std::string title, xlabel, ylabel;
    std::string xscale = "linear", yscale = "linear"; ///< or "log", "log2"
    std::string kind = "line";                        ///< or "bar", "heatmap"
    std::vector<std::string> categories; ///< bar, heatmap: the x labels
    bool reverse = false; ///< heatmap: green for low values (0.5-1.5)
    std::string file;     ///< "": the benchmark's main PNG; else its own PNG
    std::vector<Series> series;
};

struct Section {
    std::string title, text;
};

struct Report {
    std::string benchmark; ///< names the file: <benchmark>.json
    std::string title;
    RunInfo run;
    std::vector<std::string> notes; ///< bullets under the run's facts
    std::vector<Target> targets;
    std::vector<Table> tables;
    std::vector<Section> sections;
    std::vector<Plot> plots;
};

namespace report_detail {

inline void write_cell(JsonWriter& j, const Cell& c) {
    switch (c.kind) {
        case Cell::number:
            // Integers stay integers in the JSON (and in the markdown).
            if (std::isfinite(c.x) && c.x == std::floor(c.x) &&
                std::fabs(c.x) < 9e15) {
                j.value(int64_t(c.x));
            } else {
                j.value(c.x);
            }
            break;
        case Cell::text:
            j.value(c.s);
            break;
        case Cell::boolean:
            j.value(c.x != 0);
            break;
    }
}

inline void write_run(JsonWriter& j, const RunInfo& r, bool deterministic) {
    j.key("run").begin_object();
    j.field("command", r.command);
    if (!deterministic) {
        j.field("date", r.date_utc);
        j.field("git_commit", r.git_commit);
        j.field("cores", int(r.hardware_concurrency));
        j.field("load_before", r.loadavg_before);
        j.field("load_after", r.loadavg_after);
        j.field("wall_s", r.seconds);
    }
    if (!r.topology.empty()) {
        j.field("topology",
                r.topology +
                        (r.topology_note.empty()
                                 ? ""
                                 : " (" + r.topology_note + ")"));
    }
    if (!r.faiss_build.empty()) {
        j.field("FAISS", r.faiss_build);
    }
    if (r.quick) {
        j.field("quick", true);
    }
    j.end_object();
}

} // namespace report_detail

/// to_json: the report in contrib/report.py's schema. `deterministic`
/// leaves out the facts of the run that change between runs (date, commit,
/// cores, load, wall time): two runs of a simulation then compare equal.
inline std::string to_json(const Report& r, bool deterministic = false) {
    using namespace report_detail;
    JsonWriter j;
    j.begin_object();
    j.field("benchmark", r.benchmark);
    j.field("title", r.title);
    write_run(j, r.run, deterministic);
    j.field("notes", r.notes);
    j.key("targets").begin_array();
    for (const Target& t : r.targets) {
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
    for (const Table& t : r.tables) {
        j.begin_object();
        j.field("title", t.title);
        j.field("text", t.text);
        j.field("columns", t.columns);
        j.key("rows").begin_array();
        for (const std::vector<Cell>& row : t.rows) {
            j.begin_array();
            for (const Cell& c : row) {
                write_cell(j, c);
            }
            j.end_array();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.key("sections").begin_array();
    for (const Section& s : r.sections) {
        j.begin_object().field("title", s.title).field("text", s.text);
        j.end_object();
    }
    j.end_array();
    j.key("plots").begin_array();
    for (const Plot& p : r.plots) {
        j.begin_object();
        j.field("title", p.title).field("xlabel", p.xlabel);
        j.field("ylabel", p.ylabel).field("xscale", p.xscale);
        j.field("yscale", p.yscale).field("kind", p.kind);
        if (!p.categories.empty()) {
            j.field("categories", p.categories);
        }
        if (p.kind == "heatmap") {
            j.field("reverse", p.reverse);
        }
        if (!p.file.empty()) {
            j.field("file", p.file);
        }
        j.key("series").begin_array();
        for (const Series& s : p.series) {
            j.begin_object().field("label", s.label);
            j.field("x", s.x).field("y", s.y).end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.end_object();
    return j.str();
}

/// print_report: every target, met or MISSED, on the terminal (the
/// tables are the report module's to render, from the JSON).
inline void print_report(const Report& r) {
    printf("\n");
    for (const Target& t : r.targets) {
        printf("%s %s: %s\n",
               t.met ? "met   " : "MISSED",
               t.target.c_str(),
               t.measured.c_str());
    }
    fflush(stdout);
}

/// write_report: <out_dir>/<benchmark>.json (the directory made if
/// needed); false after saying why on stderr. Prints the command that
/// renders its markdown and plots.
inline bool write_report(
        const Report& r,
        const std::string& out_dir,
        bool deterministic = false) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    const std::filesystem::path path =
            std::filesystem::path(out_dir) / (r.benchmark + ".json");
    std::ofstream f(path);
    f << to_json(r, deterministic);
    f.close();
    if (ec || !f) {
        fprintf(stderr,
                "%s: cannot write %s\n",
                r.benchmark.c_str(),
                path.c_str());
        return false;
    }
    printf("wrote %s; its markdown and plots: scripts/report.sh %s\n",
           path.c_str(),
           path.c_str());
    return true;
}

} // namespace bench
