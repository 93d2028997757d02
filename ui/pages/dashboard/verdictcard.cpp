#include "ui/pages/dashboard/verdictcard.h"

#include <QFrame>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/experiment/actionexperiment.h"

namespace trainbench::ui {

namespace {

QString html(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString colorOf(profiler::Severity s) {
    switch (s) {
        case profiler::Severity::High: return QStringLiteral("#d03030");
        case profiler::Severity::Moderate: return QStringLiteral("#d08000");
        case profiler::Severity::Low: return QStringLiteral("#2a8a3a");
    }
    return {};
}

QLabel* wrapped(const QString& text) {
    auto* l = new QLabel(text);
    l->setWordWrap(true);
    l->setTextFormat(Qt::RichText);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

QString heading(const QString& text) { return QStringLiteral("<b>%1</b>").arg(text); }

}  // namespace

QString VerdictCard::explain(profiler::BoundKind kind) {
    switch (kind) {
        case profiler::BoundKind::Input:
            return tr("Input-bound: the step waits for its batch. TensorFlow Profiler's rule: 5 % of step time or "
                      "more waiting for input is moderately, 20 % or more highly input-bound.");
        case profiler::BoundKind::Compute:
            return tr("Compute-bound: most op time is in ops right of the roofline's ridge point, near the "
                      "machine's peak FLOP/s. Faster or more cores, or a cheaper model, help.");
        case profiler::BoundKind::MemoryBandwidth:
            return tr("Memory-bound (bandwidth): most op time is in ops left of the ridge point, moving bytes "
                      "near the memory bandwidth roof rather than computing.");
        case profiler::BoundKind::MemoryCapacity:
            return tr("Memory-bound (capacity): the footprint is 90 % or more of the device's memory, or the run "
                      "swapped. A smaller batch or more memory per worker helps.");
        case profiler::BoundKind::Communication:
            return tr("Communication-bound: 20 % or more of step time goes to exchanging gradients or waiting "
                      "for peers. Bigger per-replica batches or fewer, faster links help.");
        case profiler::BoundKind::Balanced:
            return tr("Balanced: no single resource dominates by the rules above.");
    }
    return {};
}

QString VerdictCard::explain(profiler::Severity s) {
    switch (s) {
        case profiler::Severity::High: return tr("High: the bound costs a large share of step time; fix it first.");
        case profiler::Severity::Moderate: return tr("Moderate: a noticeable share of step time; worth a change.");
        case profiler::Severity::Low: return tr("Low: little to gain here.");
    }
    return {};
}

VerdictCard::VerdictCard(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    title_ = new QLabel;
    QFont f = title_->font();
    f.setPointSizeF(f.pointSizeF() * 1.3);
    f.setBold(true);
    title_->setFont(f);
    title_->setWordWrap(true);
    summary_ = wrapped(QString());
    layout->addWidget(title_);
    layout->addWidget(summary_);
    body_ = new QVBoxLayout;
    layout->addLayout(body_);
    layout->addStretch(1);
    setVerdict(std::nullopt);
}

void VerdictCard::clearBody() {
    buttons_.clear();
    while (QLayoutItem* item = body_->takeAt(0)) {
        // Hidden at once: deleteLater waits for the event loop, and until then the old card would
        // still be drawn under the new one.
        if (QWidget* w = item->widget()) {
            w->hide();
            w->deleteLater();
        }
        delete item;
    }
}

void VerdictCard::setVerdict(const std::optional<profiler::Verdict>& verdict, const QString& why) {
    clearBody();
    if (!verdict) {
        title_->setText(tr("No verdict yet"));
        title_->setToolTip({});
        title_->setStyleSheet({});
        summary_->setText(why.isEmpty() ? tr("The verdict is classified when the run ends.") : why.toHtmlEscaped());
        return;
    }
    const profiler::Finding& v = verdict->verdict;
    title_->setText(QString::fromStdString(profiler::verdictLabel(v.kind, v.severity)));
    title_->setStyleSheet(QStringLiteral("color: %1").arg(colorOf(v.severity)));
    title_->setToolTip(explain(v.kind) + QStringLiteral("\n\n") + explain(v.severity));
    summary_->setText(html(v.summary));

    if (!v.evidence.empty()) {
        QString list = heading(tr("Evidence")) + QStringLiteral("<ul style='margin-left:-20px'>");
        for (const auto& e : v.evidence) list += QStringLiteral("<li>%1</li>").arg(html(e.text));
        auto* l = wrapped(list + QStringLiteral("</ul>"));
        l->setToolTip(tr("The numbers the verdict rests on, measured over the whole run"));
        body_->addWidget(l);
    }
    for (const auto& f : verdict->findings) {
        if (f.kind == v.kind) continue;
        auto* l = wrapped(tr("Also: <i>%1</i> — %2")
                              .arg(QString::fromStdString(profiler::verdictLabel(f.kind, f.severity)), html(f.summary)));
        l->setToolTip(explain(f.kind));
        body_->addWidget(l);
    }
    if (verdict->windows.size() > 1) {
        QString t = heading(tr("Over the run")) + QStringLiteral("<br>");
        for (const auto& w : verdict->windows)
            t += tr("steps %1–%2: %3<br>")
                     .arg(w.first_step)
                     .arg(w.last_step)
                     .arg(QString::fromStdString(profiler::verdictLabel(w.kind, w.severity)).toHtmlEscaped());
        auto* l = wrapped(t);
        l->setToolTip(tr("The verdict of each window of steps: a run can change verdict, e.g. once the page cache "
                         "is warm"));
        body_->addWidget(l);
    }
    if (verdict->actions.empty()) return;
    body_->addWidget(wrapped(heading(tr("What to change"))));
    int rank = 0;
    for (const auto& a : verdict->actions) {
        ++rank;
        QStringList changes;
        for (const auto& c : a.changes)
            changes << html(app::changeText(c)).replace(QStringLiteral("-&gt;"), QStringLiteral("→"));
        QVBoxLayout* fl = addActionFrame(rank, a.title, changes, a.expected, a.rationale);
        if (!commandHint_.isEmpty()) {
            // An action with no key to change has nothing to apply.
            if (!a.changes.empty())
                addCommand(fl, rank, tr("Run this in a terminal: it starts the changed prediction"));
            continue;
        }
        auto* button = new QPushButton(tr("Try it"));
        button->setEnabled(!a.changes.empty());
        button->setToolTip(a.changes.empty()
                               ? tr("This action is about hardware or the model's design: no experiment key to change")
                               : tr("Open the experiment with these changes, ready to run"));
        connect(button, &QPushButton::clicked, this, [this, rank] { emit tryAction(rank); });
        fl->addWidget(button, 0, Qt::AlignLeft);
        buttons_.append(button);
    }
}

QString VerdictCard::titleText() const { return title_->text(); }

QVBoxLayout* VerdictCard::addActionFrame(int rank, const std::string& title, const QStringList& changes,
                                         const std::string& expected, const std::string& rationale) {
    auto* frame = new QFrame;
    frame->setFrameShape(QFrame::StyledPanel);
    auto* fl = new QVBoxLayout(frame);
    QString t = QStringLiteral("<b>%1. %2</b>").arg(rank).arg(html(title));
    for (const QString& c : changes) t += QStringLiteral("<br><code>%1</code>").arg(c);
    if (!expected.empty()) t += QStringLiteral("<br>") + tr("Expected: %1").arg(html(expected));
    auto* label = wrapped(t);
    if (!rationale.empty()) label->setToolTip(QString::fromStdString(rationale));
    fl->addWidget(label);
    body_->addWidget(frame);
    return fl;
}

void VerdictCard::addCommand(QVBoxLayout* frame, int rank, const QString& tooltip) {
    auto* command = wrapped(QStringLiteral("<code>%1</code>").arg(html(commandHint_.arg(rank).toStdString())));
    command->setTextInteractionFlags(Qt::TextSelectableByMouse);
    command->setToolTip(tooltip);
    frame->addWidget(command);
}

void VerdictCard::setServingVerdict(const profiler::ServingVerdict& v) {
    clearBody();
    title_->setText(QString::fromLatin1(profiler::servingBoundName(v.bound)) + QStringLiteral(" (") +
                    QString::fromLatin1(profiler::severityName(v.severity)) + QStringLiteral(")"));
    title_->setStyleSheet(QStringLiteral("color: %1").arg(colorOf(v.severity)));
    title_->setToolTip(tr("What bounds the served model at the point with the most queries per second answered "
                          "without errors: the load generator, the queue, too little batching, JSON, the weights "
                          "streamed per small batch, or the model's compute (docs/cli.md, loadtest)") +
                       QStringLiteral("\n\n") + explain(v.severity));
    summary_->setText(html(v.summary));
    if (!v.evidence.empty()) {
        QString list = heading(tr("Evidence")) + QStringLiteral("<ul style='margin-left:-20px'>");
        for (const auto& e : v.evidence) list += QStringLiteral("<li>%1</li>").arg(html(e.text));
        auto* l = wrapped(list + QStringLiteral("</ul>"));
        l->setToolTip(tr("A query's mean latency split by where it went (the server's own timing header and the client's clock)"));
        body_->addWidget(l);
    }
    if (v.actions.empty()) return;
    body_->addWidget(wrapped(heading(tr("What to change"))));
    int rank = 0;
    for (const auto& a : v.actions) {
        ++rank;
        QStringList changes;
        for (const auto& c : a.changes)
            changes << QStringLiteral("%1: %2 → %3").arg(html(c.flag), c.from.empty() ? tr("(default)") : html(c.from), html(c.to));
        QVBoxLayout* fl = addActionFrame(rank, a.title, changes, a.expected, a.rationale);
        if (!commandHint_.isEmpty())
            addCommand(fl, rank, tr("Run this in a terminal: it starts the load test again with this change, recorded "
                                    "as a new run"));
    }
}

}  // namespace trainbench::ui
