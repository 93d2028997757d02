#include "ui/charts/latencybars.h"

#include <QPainter>

#include <algorithm>

namespace trainbench::ui {

LatencyBars::LatencyBars(QWidget* parent) : QWidget(parent) { setMinimumHeight(150); }

void LatencyBars::setTitle(const QString& title) {
    title_ = title;
    update();
}

void LatencyBars::setParts(std::vector<std::pair<QString, std::optional<double>>> parts) {
    parts_.clear();
    QStringList tip;
    for (auto& [name, ms] : parts)
        if (ms) {
            parts_.emplace_back(name, *ms);
            tip << QStringLiteral("%1: %2 ms").arg(name).arg(*ms, 0, 'f', 3);
        }
    setToolTip(tip.join(QLatin1Char('\n')));
    update();
}

void LatencyBars::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    p.setPen(pal.color(QPalette::WindowText));
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    const int lineH = fontMetrics().height();
    p.drawText(QRect(8, 4, width() - 16, lineH), Qt::AlignLeft | Qt::AlignVCenter, title_);
    p.setFont(font());
    if (parts_.empty()) {
        p.drawText(rect().adjusted(8, lineH + 8, -8, -8), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   tr("The server sent no timing for these queries."));
        return;
    }
    double most = 0.0;
    for (const auto& [name, ms] : parts_) most = std::max(most, ms);
    const int labelW = 90, valueW = 90;
    const int top = lineH + 12;
    const int rowH = std::max(lineH + 6, (height() - top - 8) / static_cast<int>(parts_.size()));
    const int barMax = std::max(10, width() - labelW - valueW - 24);
    static const QColor colours[] = {QColor(0xe0, 0x8a, 0x2c), QColor(0x8e, 0x6b, 0xc8), QColor(0x2c, 0x7f, 0xb8),
                                     QColor(0x4d, 0xa0, 0x5a), QColor(0x9a, 0x9a, 0x9a)};
    for (size_t i = 0; i < parts_.size(); ++i) {
        const int y = top + static_cast<int>(i) * rowH;
        const auto& [name, ms] = parts_[i];
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRect(8, y, labelW, rowH), Qt::AlignLeft | Qt::AlignVCenter, name);
        const int w = most > 0 ? static_cast<int>(barMax * ms / most) : 0;
        p.fillRect(QRect(8 + labelW, y + rowH / 4, std::max(w, 1), rowH / 2), colours[i % 5]);
        p.drawText(QRect(8 + labelW + w + 6, y, valueW, rowH), Qt::AlignLeft | Qt::AlignVCenter,
                   QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 10 ? 2 : 1));
    }
}

}  // namespace trainbench::ui
