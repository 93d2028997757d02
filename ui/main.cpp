// trainbench: the desktop application.
#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("trainbench");
    QApplication::setOrganizationName("trainbench");
    return 0;
}
