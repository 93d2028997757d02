#include "ui/pages/experiment/fieldwidget.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QToolButton>

#include "ui/pages/experiment/boolfield.h"
#include "ui/pages/experiment/choicefield.h"
#include "ui/pages/experiment/numberfield.h"
#include "ui/pages/experiment/textfield.h"

namespace trainbench::ui {

using nlohmann::json;

namespace {
const QColor kIssueColor(0xc0, 0x39, 0x2b);

QString str(const json& schema, const char* key) {
    const auto it = schema.find(key);
    return it != schema.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString();
}
}  // namespace

QString keyTooltip(const QString& keyPath, const json& schema, const QString& issue) {
    QString tip;
    if (!issue.isEmpty())
        tip += QStringLiteral("<p style='color:%1'><b>%2</b></p>").arg(kIssueColor.name(), issue.toHtmlEscaped());
    tip += QStringLiteral("<p><b>%1</b> &middot; %2</p><p>%3</p>")
               .arg(keyPath.toHtmlEscaped(), str(schema, "type"), str(schema, "description").toHtmlEscaped());
    const QString range = str(schema, "range");
    if (!range.isEmpty()) tip += QObject::tr("<p>Range: %1</p>").arg(range.toHtmlEscaped());
    tip += QObject::tr("<p>Default: %1</p>").arg(str(schema, "default_text").toHtmlEscaped());
    return tip;
}

QString FieldWidget::defaultText(const json& schema) {
    const auto it = schema.find("default");
    if (it != schema.end() && it->is_string()) return QString::fromStdString(it->get<std::string>());
    return str(schema, "default_text");
}

FieldWidget::FieldWidget(QString keyPath, json schema, QWidget* parent)
    : QWidget(parent), keyPath_(std::move(keyPath)), schema_(std::move(schema)) {
    label_ = new QLabel(str(schema_, "key"));
    label_->setBuddy(this);
    resetButton_ = new QToolButton(this);
    resetButton_->setText(QStringLiteral("\u21BA"));  // ↺
    resetButton_->setAutoRaise(true);
    resetButton_->setToolTip(tr("Reset to the default (leave %1 out of the file)").arg(keyPath_));
    resetButton_->setAccessibleName(tr("Reset %1").arg(keyPath_));
    resetButton_->setFocusPolicy(Qt::NoFocus);
    QSizePolicy keep = resetButton_->sizePolicy();
    keep.setRetainSizeWhenHidden(true);  // set and unset fields stay aligned
    resetButton_->setSizePolicy(keep);
    connect(resetButton_, &QToolButton::clicked, this, [this] {
        reset();
        emit edited();
    });
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);  // room for the issue frame
    layout->setSpacing(2);
    layout->addWidget(resetButton_);
}

FieldWidget::~FieldWidget() {
    if (label_ && !label_->parent()) delete label_;
}

void FieldWidget::setResettable(bool on) {
    resettable_ = on;
    refresh();
}

void FieldWidget::setEditor(QWidget* editor) {
    editor_ = editor;
    setFocusProxy(editor);
    static_cast<QHBoxLayout*>(layout())->insertWidget(0, editor, 1);
    refresh();
}

bool FieldWidget::isSet() const { return foreign_.has_value() || hasInput(); }

json FieldWidget::value() const { return foreign_ ? *foreign_ : inputValue(); }

void FieldWidget::setValue(const json& value) {
    foreign_.reset();
    if (!showValue(value)) {
        clearInput();
        foreign_ = value;
    }
    refresh();
}

void FieldWidget::reset() {
    foreign_.reset();
    clearInput();
    refresh();
}

void FieldWidget::userEdited() {
    foreign_.reset();
    refresh();
    emit edited();
}

void FieldWidget::setIssue(const QString& message) {
    if (message == issue_) return;
    issue_ = message;
    refresh();
    update();
}

void FieldWidget::refresh() {
    resetButton_->setVisible(resettable_ && isSet());
    showPlaceholder(foreign_ ? tr("%1 (as in the file)").arg(QString::fromStdString(foreign_->dump()))
                             : defaultText(schema_));
    const QString tip = keyTooltip(keyPath_, schema_, issue_);
    label_->setToolTip(tip);
    if (editor_) editor_->setToolTip(tip);
    QPalette pal = label_->palette();
    pal.setColor(QPalette::WindowText, issue_.isEmpty() ? palette().color(QPalette::WindowText) : kIssueColor);
    label_->setPalette(pal);
}

void FieldWidget::paintEvent(QPaintEvent* event) {
    QWidget::paintEvent(event);
    if (issue_.isEmpty() || !editor_) return;
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(kIssueColor, 2));
    p.drawRoundedRect(QRectF(editor_->geometry()).adjusted(-1, -1, 1, 1), 3, 3);
}

FieldWidget* createFieldWidget(const QString& keyPath, const json& schema, QWidget* parent) {
    const std::string type = schema.value("type", "");
    if (type == "boolean") return new BoolField(keyPath, schema, parent);
    if (type == "integer" || type == "number") return new NumberField(keyPath, schema, parent);
    if (type == "enum") return new ChoiceField(keyPath, schema, parent);
    if (type == "string" || type == "path") return new TextField(keyPath, schema, parent);
    return nullptr;
}

}  // namespace trainbench::ui
