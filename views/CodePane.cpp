// Read-only code panes with link colours drawn as line-background markers.
#include "views/CodePane.h"

#include <Qsci/qscilexer.h>

namespace loom::views {

QColor CodePane::linkColor(int index, bool dark) {
  static const QColor light[kNumLinkColors] = {{0xff, 0xe0, 0x8a}, {0xb8, 0xe6, 0xb0}, {0xb0, 0xd4, 0xf5}, {0xf5, 0xc0, 0xd8},
                                               {0xd6, 0xc8, 0xf5}, {0xf8, 0xcc, 0xa8}, {0xb0, 0xec, 0xe6}, {0xe2, 0xe8, 0xa0}};
  static const QColor darkc[kNumLinkColors] = {{0x66, 0x55, 0x18}, {0x2c, 0x55, 0x2c}, {0x24, 0x44, 0x6a}, {0x66, 0x2c, 0x4a},
                                               {0x45, 0x38, 0x6a}, {0x6a, 0x42, 0x20}, {0x1f, 0x55, 0x52}, {0x50, 0x55, 0x1c}};
  int i = ((index % kNumLinkColors) + kNumLinkColors) % kNumLinkColors;
  return dark ? darkc[i] : light[i];
}

CodePane::CodePane(QWidget* parent) : QsciScintilla(parent) {
  setReadOnly(true);
  setUtf8(true);
  setMarginType(0, NumberMargin);
  setMarginWidth(0, "00000");
  setMarginLineNumbers(0, true);
  setCaretLineVisible(true);
  setWrapMode(WrapNone);
  setDark(false);
  connect(this, &QsciScintilla::cursorPositionChanged, this, [this](int line, int) {
    if (!m_settingText) emit lineClicked(line + 1);
  });
}

void CodePane::setDark(bool dark) {
  m_dark = dark;
  for (int i = 0; i < kNumLinkColors; ++i) {
    markerDefine(Background, i);
    setMarkerBackgroundColor(linkColor(i, dark), i);
  }
  setCaretLineBackgroundColor(dark ? QColor(0x2a, 0x2d, 0x33) : QColor(0xf2, 0xf4, 0xf8));
  setMarginsBackgroundColor(dark ? QColor(0x25, 0x26, 0x2a) : QColor(0xf0, 0xf0, 0xf0));
  setMarginsForegroundColor(dark ? QColor(0x90, 0x90, 0x90) : QColor(0x80, 0x80, 0x80));
  setCaretForegroundColor(dark ? Qt::white : Qt::black);
  setLineColors(m_colors);
}

void CodePane::setCode(const QString& code) {
  if (code == text()) return;
  int first = firstVisibleLine();
  m_settingText = true;
  setReadOnly(false);
  setText(code);
  setReadOnly(true);
  setFirstVisibleLine(first);
  m_settingText = false;
  m_colors.clear();
  markerDeleteAll();
}

void CodePane::setLineColors(const QHash<int, int>& colors) {
  m_colors = colors;
  markerDeleteAll();
  for (auto it = colors.begin(); it != colors.end(); ++it)
    if (it.key() >= 1 && it.key() <= lines()) markerAdd(it.key() - 1, ((it.value() % kNumLinkColors) + kNumLinkColors) % kNumLinkColors);
}

void CodePane::revealLine(int line) {
  if (line < 1) return;
  int visible = int(SendScintilla(SCI_LINESONSCREEN));
  if (line - 1 < firstVisibleLine() || line - 1 >= firstVisibleLine() + visible)
    setFirstVisibleLine(std::max(0, line - 1 - visible / 3));
}

}  // namespace loom::views
