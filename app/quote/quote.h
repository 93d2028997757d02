#pragma once
// The one place where a string the user controls (an experiment's name, a file path, a --set
// override, a container image) is made safe for a script or manifest trainbench generates. Code
// that writes such a file passes every such string through one of these and pastes nothing raw;
// the tests (tests/app/quote_test.cpp) run the results through a real bash and a real YAML parser.
#include <stdexcept>
#include <string>
#include <string_view>

namespace trainbench::app {

// A string that cannot be represented, with where it came from: "--db holds a NUL byte at byte 3 ...".
class QuoteError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// One bash word that stands for exactly `value`, whatever it holds (newlines, quotes, $(...),
// backticks, $VAR, globs, an empty string): the value in single quotes, each ' written as '\''.
// Nothing is special inside single quotes, so the shell expands nothing. A NUL byte cannot be in a
// shell word (argv strings end at NUL): QuoteError naming `what` and the byte offset.
std::string shellWord(std::string_view value, std::string_view what);

// A YAML double-quoted scalar for exactly `value`, which is also a JSON string: '"' and '\' escaped,
// and every character YAML would read as a line break (LF, CR, NEL, U+2028, U+2029) or refuses as
// non-printable (C0 and C1 controls, DEL, U+FFFE, U+FFFF) written as an escape; the BOM too. The
// result holds no line break, so it is also how a string is shown in a comment of a generated file.
// YAML streams are Unicode: a value that is not valid UTF-8 is a QuoteError naming `what` and the
// byte offset.
std::string yamlString(std::string_view value, std::string_view what);

// A name Kubernetes accepts for an object (an RFC 1035 label, as the training operator asks for a
// TFJob): lower-case letters, digits and '-', starting with a letter and ending with a letter or
// digit, `maxLength` characters at most (leave room for suffixes the controllers add within 63).
// Nothing of `name` but [a-z0-9-] gets through: upper case is lowered, anything else becomes '-'.
std::string k8sName(std::string_view name, size_t maxLength = 50);

}  // namespace trainbench::app
