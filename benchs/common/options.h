/**
 * options.h: the one command-line parser of the C++ benchmarks.
 *
 * Each benchmark declares its options on an Options, bound to the fields
 * they fill, then calls parse(). Every benchmark has --out DIR and --quick;
 * values are given as "--name VALUE" or "--name=VALUE"; lists as "1,8,32".
 * A bad argument is named on stderr with the usage, and parse() returns
 * false; so does --help (after the usage, on stdout), and the caller
 * exits with status 2 or 0 (help_asked()).
 *
 *     Options o("bench_pool", "the pool's microbenchmarks");
 *     o.add("reps", &reps, "N", "repetitions of every measurement");
 *     if (!o.parse(argc, argv)) return o.help_asked() ? 0 : 2;
 */

#pragma once

#include "common/run_info.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace bench {

class Options {
   public:
    std::string out = "benchs/out"; ///< --out: the results directory
    bool quick = false;             ///< --quick: the ctest smoke run

    Options(std::string program, std::string summary)
            : program_(std::move(program)), summary_(std::move(summary)) {
        add("out",
            &out,
            "DIR",
            "results directory (default benchs/out, ignored by git; "
            "benchs/results holds the committed ones)");
        flag("quick", &quick, "a small run, seconds (the ctest smoke test)");
    }

    /// flag: --name sets *dst.
    void flag(const std::string& name, bool* dst, const std::string& help) {
        specs_.push_back({name, "", help, [dst](const std::string&) {
                              *dst = true;
                              return true;
                          }});
    }

    /// add: --name VALUE parsed into *dst (integers, double, string, or a
    /// comma-separated list of those); a value that does not parse whole,
    /// or an integer out of range, is a bad argument.
    template <class T>
    void add(
            const std::string& name,
            T* dst,
            const std::string& metavar,
            const std::string& help) {
        specs_.push_back({name, metavar, help, [dst](const std::string& v) {
                              return parse_value(v, dst);
                          }});
    }

    /// parse: false on a bad argument or --help (see help_asked()).
    bool parse(int argc, char** argv) {
        command_ = command_line(argc, argv);
        for (int i = 1; i < argc; i++) {
            std::string a = argv[i];
            if (a == "--help" || a == "-h") {
                help_ = true;
                usage(stdout);
                return false;
            }
            std::string value;
            bool has_value = false;
            const size_t eq = a.find('=');
            if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
                value = a.substr(eq + 1);
                a = a.substr(0, eq);
                has_value = true;
            }
            const Spec* spec = find(a);
            if (spec == nullptr) {
                return bad("unknown option '" + a + "'");
            }
            if (spec->metavar.empty()) {
                if (has_value) {
                    return bad("--" + spec->name + " takes no value");
                }
            } else if (!has_value) {
                if (i + 1 >= argc) {
                    return bad("--" + spec->name + " wants " + spec->metavar);
                }
                value = argv[++i];
            }
            if (!spec->set(value)) {
                return bad(
                        "bad value '" + value + "' for --" + spec->name + " (" +
                        spec->metavar + ")");
            }
        }
        return true;
    }

    /// help_for: the help line of an option declared before: the built-in
    /// --out or --quick, where a program gives them another meaning.
    void help_for(const std::string& name, const std::string& help) {
        for (Spec& s : specs_) {
            if (s.name == name) {
                s.help = help;
            }
        }
    }

    bool help_asked() const {
        return help_;
    }
    /// command: argv, shell-quoted (what RunInfo records).
    const std::string& command() const {
        return command_;
    }

    void usage(FILE* f) const {
        fprintf(f,
                "usage: %s [options]\n%s: %s\n\n",
                program_.c_str(),
                program_.c_str(),
                summary_.c_str());
        for (const Spec& s : specs_) {
            const std::string left =
                    "--" + s.name + (s.metavar.empty() ? "" : " " + s.metavar);
            fprintf(f, "  %-22s %s\n", left.c_str(), s.help.c_str());
        }
    }

   private:
    struct Spec {
        std::string name, metavar, help;
        std::function<bool(const std::string&)> set;
    };

    const Spec* find(const std::string& arg) const {
        for (const Spec& s : specs_) {
            if (arg == "--" + s.name) {
                return &s;
            }
        }
        return nullptr;
    }

    bool bad(const std::string& why) const {
        fprintf(stderr, "%s: %s\n", program_.c_str(), why.c_str());
        usage(stderr);
        return false;
    }

    static bool parse_value(const std::string& v, std::string* dst) {
        *dst = v;
        return true;
    }
    static bool parse_value(const std::string& v, double* dst) {
        char* end = nullptr;
        errno = 0;
        *dst = strtod(v.c_str(), &end);
        return !v.empty() && *end == '\0' && errno == 0;
    }
    template <class T>
    static bool parse_integer(const std::string& v, T* dst, T lo) {
        char* end = nullptr;
        errno = 0;
        const long long x = strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || x < (long long)lo) {
            return false;
        }
        *dst = T(x);
        return (long long)*dst == x;
    }
    static bool parse_value(const std::string& v, int* dst) {
        return parse_integer(v, dst, int(-(1 << 30)));
    }
    static bool parse_value(const std::string& v, int64_t* dst) {
        return parse_integer(v, dst, int64_t(-(int64_t(1) << 62)));
    }
    static bool parse_value(const std::string& v, size_t* dst) {
        return parse_integer(v, dst, size_t(0));
    }
    template <class T>
    static bool parse_value(const std::string& v, std::vector<T>* dst) {
        dst->clear();
        size_t start = 0;
        while (start <= v.size()) {
            size_t comma = v.find(',', start);
            if (comma == std::string::npos) {
                comma = v.size();
            }
            T x;
            if (!parse_value(v.substr(start, comma - start), &x)) {
                return false;
            }
            dst->push_back(x);
            start = comma + 1;
        }
        return !dst->empty();
    }

    std::string program_, summary_, command_;
    std::vector<Spec> specs_;
    bool help_ = false;
};

} // namespace bench
