#include "ui/pages/experiment/jsonview.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTextBlock>

namespace trainbench::ui {

JsonView::JsonView(QWidget* parent) : QPlainTextEdit(parent) {
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTabStopDistance(fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 2);
    setToolTip(tr("The experiment file as JSON. Edits here update the form as soon as the text is JSON; "
                  "a syntax error is shown with its line and column and the form keeps its last state."));
}

void JsonView::replaceText(const QString& text) {
    if (text == toPlainText()) return;
    const int scroll = verticalScrollBar()->value();
    const int position = textCursor().position();
    QTextCursor cursor(document());
    cursor.beginEditBlock();
    cursor.select(QTextCursor::Document);
    cursor.insertText(text);
    cursor.endEditBlock();
    QTextCursor restored(document());
    restored.setPosition(std::min(position, static_cast<int>(text.size())));
    setTextCursor(restored);
    verticalScrollBar()->setValue(scroll);
}

void JsonView::setErrorLine(int line) {
    errorLine_ = line;
    QList<QTextEdit::ExtraSelection> selections;
    const QTextBlock block = document()->findBlockByNumber(line - 1);
    if (line > 0 && block.isValid()) {
        QTextEdit::ExtraSelection s;
        s.format.setBackground(QColor(0xf8, 0xd7, 0xd3));
        s.format.setProperty(QTextFormat::FullWidthSelection, true);
        s.cursor = QTextCursor(block);
        selections.append(s);
    }
    setExtraSelections(selections);
}

void JsonView::goTo(int line, int column) {
    const QTextBlock block = document()->findBlockByNumber(std::max(0, line - 1));
    if (!block.isValid()) return;
    QTextCursor cursor(block);
    cursor.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor, std::max(0, std::min(column - 1, block.length() - 1)));
    setTextCursor(cursor);
    ensureCursorVisible();
    setFocus(Qt::OtherFocusReason);
}

}  // namespace trainbench::ui
