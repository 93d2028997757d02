#pragma once
// The few SVG elements the report's charts are made of, written as text with every attribute and
// text escaped. Only what both browsers and Qt's SVG renderer (SVG Tiny 1.2) draw the same is used:
// no CSS, no clip paths, no baseline tricks.
#include <string>
#include <string_view>
#include <vector>

namespace trainbench::profiler {

struct SvgPoint {
    double x = 0.0, y = 0.0;
};

enum class TextAnchor { Start, Middle, End };

struct TextStyle {
    double size = 11.0;
    TextAnchor anchor = TextAnchor::Start;
    const char* fill = "#222222";
    bool bold = false;
    bool italic = false;
    double rotate = 0.0;  // degrees around (x, y)
};

class SvgCanvas {
public:
    SvgCanvas(double width, double height, std::string_view title);

    void rect(double x, double y, double w, double h, const char* fill, const char* stroke = nullptr,
              double opacity = 1.0);
    void line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1.0,
              const char* dash = nullptr);
    void polyline(const std::vector<SvgPoint>& points, const char* stroke, double width, const char* dash = nullptr);
    void polygon(const std::vector<SvgPoint>& points, const char* fill, double opacity = 1.0);
    void circle(double x, double y, double r, const char* fill);
    // (x, y) is the baseline's start, middle or end.
    void text(double x, double y, std::string_view text, const TextStyle& style = {});

    std::string finish();

    // Estimated width of text in the charts' font (DejaVu Sans / Helvetica): there is no font
    // metrics in pure C++, and overestimating by a little only costs whitespace.
    static double textWidth(std::string_view text, double size);
    // Cuts text to about maxWidth, ending in "…".
    static std::string fitText(std::string_view text, double size, double maxWidth);

private:
    std::string out_;
};

// &, <, >, " and ' as entities: for SVG and HTML text and attribute values alike.
std::string xmlEscape(std::string_view text);

}  // namespace trainbench::profiler
