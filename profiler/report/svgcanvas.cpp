#include "profiler/report/svgcanvas.h"

#include <algorithm>
#include <cstdio>

namespace trainbench::profiler {

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    std::string s = buf;
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    if (s == "-0") s = "0";
    return s;
}

std::string pointsText(const std::vector<SvgPoint>& points) {
    std::string s;
    s.reserve(points.size() * 12);
    for (const SvgPoint& p : points) {
        if (!s.empty()) s += ' ';
        s += num(p.x);
        s += ',';
        s += num(p.y);
    }
    return s;
}

// UTF-8 code points, not bytes: names may be in any script.
size_t codePoints(std::string_view text) {
    size_t n = 0;
    for (unsigned char c : text) n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace

std::string xmlEscape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

SvgCanvas::SvgCanvas(double width, double height, std::string_view title) {
    out_ = "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.2\" baseProfile=\"tiny\" width=\"" + num(width) +
           "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
           "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<title>" + xmlEscape(title) + "</title>\n";
}

void SvgCanvas::rect(double x, double y, double w, double h, const char* fill, const char* stroke, double opacity) {
    out_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
            "\" fill=\"" + fill + "\"";
    if (stroke) out_ += std::string(" stroke=\"") + stroke + "\" stroke-width=\"1\"";
    if (opacity < 1.0) out_ += " fill-opacity=\"" + std::to_string(opacity).substr(0, 4) + "\"";
    out_ += "/>\n";
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, const char* stroke, double width, const char* dash) {
    out_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
            "\" stroke=\"" + stroke + "\" stroke-width=\"" + num(width) + "\"";
    if (dash) out_ += std::string(" stroke-dasharray=\"") + dash + "\"";
    out_ += "/>\n";
}

void SvgCanvas::polyline(const std::vector<SvgPoint>& points, const char* stroke, double width, const char* dash) {
    if (points.empty()) return;
    out_ += "<polyline fill=\"none\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + num(width) +
            "\" stroke-linejoin=\"round\"";
    if (dash) out_ += std::string(" stroke-dasharray=\"") + dash + "\"";
    out_ += " points=\"" + pointsText(points) + "\"/>\n";
}

void SvgCanvas::polygon(const std::vector<SvgPoint>& points, const char* fill, double opacity) {
    if (points.size() < 3) return;
    out_ += "<polygon fill=\"" + std::string(fill) + "\" stroke=\"none\"";
    if (opacity < 1.0) out_ += " fill-opacity=\"" + std::to_string(opacity).substr(0, 4) + "\"";
    out_ += " points=\"" + pointsText(points) + "\"/>\n";
}

void SvgCanvas::circle(double x, double y, double r, const char* fill) {
    out_ += "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\" fill=\"" + fill + "\"/>\n";
}

void SvgCanvas::text(double x, double y, std::string_view text, const TextStyle& style) {
    static const char* anchors[] = {"start", "middle", "end"};
    out_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(style.size) + "\" fill=\"" +
            style.fill + "\" text-anchor=\"" + anchors[static_cast<int>(style.anchor)] + "\"";
    if (style.bold) out_ += " font-weight=\"bold\"";
    if (style.italic) out_ += " font-style=\"italic\"";
    if (style.rotate != 0.0) out_ += " transform=\"rotate(" + num(style.rotate) + " " + num(x) + " " + num(y) + ")\"";
    out_ += ">" + xmlEscape(text) + "</text>\n";
}

std::string SvgCanvas::finish() {
    out_ += "</svg>\n";
    return std::move(out_);
}

double SvgCanvas::textWidth(std::string_view text, double size) {
    return static_cast<double>(codePoints(text)) * size * 0.62;
}

std::string SvgCanvas::fitText(std::string_view text, double size, double maxWidth) {
    if (textWidth(text, size) <= maxWidth) return std::string(text);
    const size_t keep = static_cast<size_t>(std::max(1.0, maxWidth / (size * 0.62) - 1));
    std::string out;
    size_t n = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if ((c & 0xC0) != 0x80 && n++ == keep) break;
        out += text[i];
    }
    return out + "\xE2\x80\xA6";
}

}  // namespace trainbench::profiler
