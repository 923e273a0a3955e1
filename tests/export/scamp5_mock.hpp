// A test-only stand-in for the SCAMP-5d host API, written for scamp's tests from the
// public API names only (no vendor code): every call is recorded as one line of a log,
// in scamp's program syntax, so that the test can parse the log with scamp's own
// parser and compare it with the proven program. Kernel statements are recorded as
// statements, `scamp5_kernel_begin();`/`scamp5_kernel_end();` as themselves, and host
// calls (displays, readouts, text) as `//` comments.
//
// Environment: SCAMP5_MOCK_LOG (the log file; default stdout), SCAMP5_MOCK_FRAMES
// (frames before the frame loop ends the process; default 1), SCAMP5_MOCK_GOLDEN (a
// folder of golden outputs: `scamp5_scan_events` reads its bits from
// `readout_REG.npy` there), SCAMP5_MOCK_SCAN (`reverse`: events come last row first,
// east to west, to show that the host's cap does not rely on the device's scan order).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace scamp5_mock {

inline std::FILE* log_file() {
    static std::FILE* f = [] {
        const char* path = std::getenv("SCAMP5_MOCK_LOG");
        std::FILE* opened = path ? std::fopen(path, "w") : nullptr;
        return opened ? opened : stdout;
    }();
    return f;
}

inline void line(const std::string& s) {
    std::fprintf(log_file(), "%s\n", s.c_str());
    std::fflush(log_file());
}

[[noreturn]] inline void fail(const std::string& why) {
    line("// mock error: " + why);
    std::fprintf(stderr, "scamp5_mock: %s\n", why.c_str());
    std::exit(3);
}

// A 256x256 uint8 plane from a `.npy` file (format version 1 or 2, C order).
inline std::vector<uint8_t> read_bits(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        fail("cannot open " + path);
    }
    unsigned char magic[8];
    if (std::fread(magic, 1, 8, f) != 8 || magic[0] != 0x93) {
        fail(path + ": not a .npy file");
    }
    unsigned char len[4] = {0, 0, 0, 0};
    size_t width = magic[6] == 1 ? 2 : 4;
    if (std::fread(len, 1, width, f) != width) {
        fail(path + ": truncated header");
    }
    size_t header = len[0] | (len[1] << 8) | (len[2] << 16) | ((size_t)len[3] << 24);
    std::string dict(header, ' ');
    if (std::fread(&dict[0], 1, header, f) != header || dict.find("|u1") == std::string::npos) {
        fail(path + ": expected a uint8 array");
    }
    std::vector<uint8_t> bits(256 * 256);
    if (std::fread(bits.data(), 1, bits.size(), f) != bits.size()) {
        fail(path + ": truncated data");
    }
    std::fclose(f);
    return bits;
}

inline int frames_left() {
    static int left = [] {
        const char* n = std::getenv("SCAMP5_MOCK_FRAMES");
        return n ? std::atoi(n) : 1;
    }();
    return left;
}

}  // namespace scamp5_mock

typedef int vs_handle;

namespace SCAMP5_PE {

struct AREG {
    const char* name;
};
struct DREG {
    const char* name;
};
struct DIRS {
    int bits;
};
inline DIRS operator|(DIRS a, DIRS b) { return DIRS{a.bits | b.bits}; }

inline const AREG A{"A"}, B{"B"}, C{"C"}, D{"D"}, E{"E"}, F{"F"}, NEWS{"NEWS"}, XN{"XN"},
    XE{"XE"}, XS{"XS"}, XW{"XW"}, PIX{"PIX"}, IN{"IN"};
inline const DREG R0{"R0"}, R1{"R1"}, R2{"R2"}, R3{"R3"}, R4{"R4"}, R5{"R5"}, R6{"R6"},
    R7{"R7"}, R8{"R8"}, R9{"R9"}, R10{"R10"}, R11{"R11"}, R12{"R12"}, FLAG{"FLAG"};
inline const DIRS north{1}, east{2}, south{4}, west{8};

inline std::string text(const AREG& r) { return r.name; }
inline std::string text(const DREG& r) { return r.name; }
inline std::string text(int v) { return std::to_string(v); }
inline std::string text(DIRS d) {
    static const char* names[4] = {"north", "east", "south", "west"};
    std::string s;
    for (int i = 0; i < 4; i++) {
        if (d.bits & (1 << i)) {
            s += (s.empty() ? "" : "|");
            s += names[i];
        }
    }
    return s;
}

template <class... T>
void record(const char* name, const T&... a) {
    std::vector<std::string> args{text(a)...};
    std::string s = std::string(name) + "(";
    for (size_t i = 0; i < args.size(); i++) {
        s += (i ? ", " : "") + args[i];
    }
    scamp5_mock::line(s + ");");
}

#define SCAMP5_MOCK_STATEMENT(name)           \
    template <class... T>                     \
    void name(const T&... a) {                \
        record(#name, a...);                  \
    }
SCAMP5_MOCK_STATEMENT(res)
SCAMP5_MOCK_STATEMENT(mov)
SCAMP5_MOCK_STATEMENT(add)
SCAMP5_MOCK_STATEMENT(sub)
SCAMP5_MOCK_STATEMENT(neg)
SCAMP5_MOCK_STATEMENT(abs)
SCAMP5_MOCK_STATEMENT(divq)
SCAMP5_MOCK_STATEMENT(div)
SCAMP5_MOCK_STATEMENT(diva)
SCAMP5_MOCK_STATEMENT(movx)
SCAMP5_MOCK_STATEMENT(mov2x)
SCAMP5_MOCK_STATEMENT(addx)
SCAMP5_MOCK_STATEMENT(add2x)
SCAMP5_MOCK_STATEMENT(subx)
SCAMP5_MOCK_STATEMENT(sub2x)
SCAMP5_MOCK_STATEMENT(get_image)
SCAMP5_MOCK_STATEMENT(where)
SCAMP5_MOCK_STATEMENT(all)
SCAMP5_MOCK_STATEMENT(rpix)
SCAMP5_MOCK_STATEMENT(nop)
SCAMP5_MOCK_STATEMENT(bus)
SCAMP5_MOCK_STATEMENT(bus2)
SCAMP5_MOCK_STATEMENT(bus3)
SCAMP5_MOCK_STATEMENT(SET)
SCAMP5_MOCK_STATEMENT(CLR)
SCAMP5_MOCK_STATEMENT(MOV)
SCAMP5_MOCK_STATEMENT(NOT)
SCAMP5_MOCK_STATEMENT(OR)
SCAMP5_MOCK_STATEMENT(NOR)
SCAMP5_MOCK_STATEMENT(AND)
SCAMP5_MOCK_STATEMENT(NAND)
SCAMP5_MOCK_STATEMENT(XOR)
SCAMP5_MOCK_STATEMENT(MUX)
SCAMP5_MOCK_STATEMENT(CLR_IF)
SCAMP5_MOCK_STATEMENT(WHERE)
SCAMP5_MOCK_STATEMENT(ALL)
SCAMP5_MOCK_STATEMENT(DNEWS)
#undef SCAMP5_MOCK_STATEMENT

}  // namespace SCAMP5_PE

inline void vs_init() { scamp5_mock::line("// host: vs_init"); }

inline vs_handle vs_gui_add_display(const char* name, int row, int col, int size = 1) {
    static vs_handle next = 0;
    scamp5_mock::line("// host: display " + std::string(name) + " at " + std::to_string(row) +
                      "," + std::to_string(col) + " size " + std::to_string(size));
    return next++;
}

// The device loops for ever; the mock ends the process after SCAMP5_MOCK_FRAMES frames.
inline void vs_frame_loop_control() {
    static int frame = 0;
    if (frame == scamp5_mock::frames_left()) {
        scamp5_mock::line("// host: end");
        std::exit(0);
    }
    scamp5_mock::line("// host: frame " + std::to_string(frame++));
}

inline void scamp5_kernel_begin() { scamp5_mock::line("scamp5_kernel_begin();"); }
inline void scamp5_kernel_end() { scamp5_mock::line("scamp5_kernel_end();"); }

inline void scamp5_in(const SCAMP5_PE::AREG& r, int v) { SCAMP5_PE::record("scamp5_in", r, v); }
inline void scamp5_load_in(const SCAMP5_PE::AREG& r, int v) {
    SCAMP5_PE::record("scamp5_load_in", r, v);
}

template <class R>
void scamp5_output_image(const R& r, vs_handle display) {
    scamp5_mock::line("// host: output " + std::string(r.name) + " to display " +
                      std::to_string(display));
}

// Events of the set bits of `map` in rows r0..r1, columns c0..c1 (steps rs, cs), as
// (column, row) pairs in row order (or reversed, see SCAMP5_MOCK_SCAN), from the
// golden readout plane; unused entries (0, 0).
inline void scamp5_scan_events(const SCAMP5_PE::DREG& map, uint8_t* buffer, uint16_t max_num,
                               uint8_t r0, uint8_t c0, uint8_t r1, uint8_t c1, uint8_t rs,
                               uint8_t cs) {
    const char* dir = std::getenv("SCAMP5_MOCK_GOLDEN");
    if (!dir) {
        scamp5_mock::fail("SCAMP5_MOCK_GOLDEN is not set");
    }
    std::vector<uint8_t> bits =
        scamp5_mock::read_bits(std::string(dir) + "/readout_" + map.name + ".npy");
    const char* order = std::getenv("SCAMP5_MOCK_SCAN");
    bool reverse = order && std::string(order) == "reverse";
    int rows = (r1 - r0) / rs + 1, cols = (c1 - c0) / cs + 1;
    int n = 0;
    for (int i = 0; i < rows * cols && n < max_num; i++) {
        int k = reverse ? rows * cols - 1 - i : i;
        int r = r0 + (k / cols) * rs, c = c0 + (k % cols) * cs;
        if (bits[r * 256 + c]) {
            buffer[2 * n] = (uint8_t)c;
            buffer[2 * n + 1] = (uint8_t)r;
            n++;
        }
    }
    for (int i = n; i < max_num; i++) {
        buffer[2 * i] = 0;
        buffer[2 * i + 1] = 0;
    }
    scamp5_mock::line("// host: events " + std::string(map.name) + " " + std::to_string(n));
}

inline void vs_post_text(const char* format, ...) {
    char buf[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    std::string s(buf);
    while (!s.empty() && s.back() == '\n') {
        s.pop_back();
    }
    scamp5_mock::line("// text: " + s);
}
