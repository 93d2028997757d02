#pragma once
// The experiment as JSON text, editable: monospace, no wrapping, and the line of a syntax error
// highlighted. The page keeps it and the form in step.
#include <QPlainTextEdit>

namespace trainbench::ui {

class JsonView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit JsonView(QWidget* parent = nullptr);

    // Replaces the text as one undoable edit, keeping the scroll position (the form rewrote it).
    void replaceText(const QString& text);
    // Highlights a 1-based line (0: none) where the text stops being JSON.
    void setErrorLine(int line);
    int errorLine() const { return errorLine_; }
    // Puts the cursor at a 1-based line and column and shows it.
    void goTo(int line, int column);

private:
    int errorLine_ = 0;
};

}  // namespace trainbench::ui
