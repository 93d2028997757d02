#pragma once
// The verdict of a run as a card: what bounds it and how badly, the evidence (the numbers behind
// it), how it changed over the run, and the ranked actions, each with a "Try it" button that
// opens the changed experiment ready to run. Every term carries a tooltip saying what it means.
#include <QWidget>

#include <optional>
#include <string>

#include "profiler/verdict/servingverdict.h"
#include "profiler/verdict/verdict.h"

class QLabel;
class QPushButton;
class QVBoxLayout;

namespace trainbench::ui {

class VerdictCard : public QWidget {
    Q_OBJECT
public:
    explicit VerdictCard(QWidget* parent = nullptr);

    // nullopt: the run has no verdict yet (running, or recorded no steps); `why` says which.
    void setVerdict(const std::optional<profiler::Verdict>& verdict, const QString& why = {});
    // A load test's verdict (profiler/verdict/servingverdict.h): its actions are server or client
    // flag changes, applied with the command hint (`trainbench-cli apply RUN --action N --run`).
    void setServingVerdict(const profiler::ServingVerdict& verdict);

    // What a kind of bound means, for tooltips here and in tables.
    static QString explain(profiler::BoundKind kind);
    static QString explain(profiler::Severity severity);

    // Non-empty: the actions get no "Try it" button but this command line, its %1 replaced by the
    // action's rank (a prediction run's actions are applied with `trainbench-cli apply`).
    void setCommandHint(const QString& commandLine) { commandHint_ = commandLine; }

    // The title as shown ("queue-bound (moderate)", "No verdict yet"): tests.
    QString titleText() const;
    // The "Try it" buttons, in rank order (tests).
    QList<QPushButton*> tryButtons() const { return buttons_; }

signals:
    // 1-based rank of the action, as `trainbench-cli apply --action N` numbers it.
    void tryAction(int number);

private:
    void clearBody();
    // One ranked action as a framed box in the body (title, changes as given, expected, rationale as
    // tooltip); returns its layout for a button or a command line.
    QVBoxLayout* addActionFrame(int rank, const std::string& title, const QStringList& changes,
                                const std::string& expected, const std::string& rationale);
    // The command hint for action `rank`, selectable, under the action.
    void addCommand(QVBoxLayout* frame, int rank, const QString& tooltip);

    QLabel* title_ = nullptr;
    QLabel* summary_ = nullptr;
    QVBoxLayout* body_ = nullptr;
    QList<QPushButton*> buttons_;
    QString commandHint_;
};

}  // namespace trainbench::ui
