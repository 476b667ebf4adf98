/**
 * JsonWriter: a small streaming JSON writer, enough for the benchmarks'
 * results (objects, arrays, strings, numbers, booleans). It tracks commas
 * and indentation; the caller keeps begin/end calls balanced.
 */

#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

class JsonWriter {
   public:
    std::string str() const {
        return out_ + "\n";
    }

    JsonWriter& begin_object() {
        return open('{');
    }
    JsonWriter& end_object() {
        return close('}');
    }
    JsonWriter& begin_array() {
        return open('[');
    }
    JsonWriter& end_array() {
        return close(']');
    }

    /// key: the next value's name; only inside an object.
    JsonWriter& key(const std::string& name) {
        separate();
        out_ += quote(name) + ": ";
        after_key_ = true;
        return *this;
    }

    JsonWriter& value(const std::string& s) {
        return raw(quote(s));
    }
    JsonWriter& value(const char* s) {
        return raw(quote(s));
    }
    JsonWriter& value(bool b) {
        return raw(b ? "true" : "false");
    }
    JsonWriter& value(int v) {
        return raw(std::to_string(v));
    }
    JsonWriter& value(int64_t v) {
        return raw(std::to_string(v));
    }
    JsonWriter& value(uint64_t v) {
        return raw(std::to_string(v));
    }
    /// value(double): NaN and infinities, which JSON lacks, become null.
    JsonWriter& value(double v) {
        if (!std::isfinite(v)) {
            return raw("null");
        }
        char buf[32];
        snprintf(buf, sizeof(buf), "%.6g", v);
        return raw(buf);
    }
    template <class T>
    JsonWriter& value(const std::vector<T>& values) {
        begin_array();
        for (const T& v : values) {
            value(v);
        }
        return end_array();
    }

    template <class T>
    JsonWriter& field(const std::string& name, const T& v) {
        key(name);
        return value(v);
    }

   private:
    JsonWriter& open(char bracket) {
        raw(std::string(1, bracket));
        first_.push_back(true);
        return *this;
    }
    JsonWriter& close(char bracket) {
        const bool empty = first_.back();
        first_.pop_back();
        if (!empty) {
            newline();
        }
        out_ += bracket;
        return *this;
    }
    /// raw: a value already in JSON form.
    JsonWriter& raw(const std::string& text) {
        if (!after_key_) {
            separate();
        }
        after_key_ = false;
        out_ += text;
        return *this;
    }
    void separate() {
        if (first_.empty()) {
            return; // the top-level value
        }
        if (!first_.back()) {
            out_ += ',';
        }
        first_.back() = false;
        newline();
    }
    void newline() {
        out_ += '\n';
        out_.append(2 * first_.size(), ' ');
    }
    static std::string quote(const std::string& s) {
        std::string q = "\"";
        for (char c : s) {
            switch (c) {
                case '"':
                    q += "\\\"";
                    break;
                case '\\':
                    q += "\\\\";
                    break;
                case '\n':
                    q += "\\n";
                    break;
                case '\t':
                    q += "\\t";
                    break;
                default:
                    if (static_cast<unsigned char>(c) < 0x20) {
                        char buf[8];
                        snprintf(buf, sizeof(buf), "\\u%04x", c);
                        q += buf;
                    } else {
                        q += c;
                    }
            }
        }
        return q + "\"";
    }

    std::string out_;
    std::vector<bool> first_; ///< per open container: nothing in it yet
    bool after_key_ = false;
};

} // namespace bench
