/**
 * report: bench_sim's results in the schema of contrib/report.py
 * (benchmark, title, run, notes, targets, tables, plots with series), so
 * that `python3 -m faiss.contrib.ccd.report FILE.json` renders the markdown
 * page and the PNG figures.
 */

#pragma once

#include "common/json_writer.h"

#include <string>
#include <vector>

namespace sim {

/// Cell: a table cell, a number or a text.
struct Cell {
    Cell(double v) : number(v), is_number(true) {}
    Cell(int v) : number(v), is_number(true) {}
    Cell(const char* s) : text(s) {}
    Cell(std::string s) : text(std::move(s)) {}
    double number = 0;
    std::string text;
    bool is_number = false;
};

struct Table {
    std::string title, text;
    std::vector<std::string> columns;
    std::vector<std::vector<Cell>> rows;
};

struct Series {
    std::string label;
    std::vector<double> x, y;
};

struct Plot {
    std::string title, xlabel, ylabel, file, yscale = "linear";
    std::vector<Series> series;
};

struct Target {
    std::string target, measured, why, next;
    bool met = false;
};

struct Report {
    std::string benchmark = "sim", title;
    std::string command;
    double wall_s = 0;
    std::vector<std::string> notes;
    std::vector<Target> targets;
    std::vector<Table> tables;
    std::vector<Plot> plots;

    /// json: the whole report; `deterministic` leaves out the date, commit,
    /// load and wall time (two runs of a seed then compare equal).
    std::string json(bool deterministic) const;
    /// print: tables and targets on stdout.
    void print() const;
};

} // namespace sim
