// app/quote: the one quoting of user strings for generated scripts and manifests, judged by the real
// consumers: a shell word goes through bash and must come back byte for byte (and run nothing); a
// YAML scalar goes through PyYAML and must come back byte for byte, as the only key of its document.
#include "app/quote/quote.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/app/programoutput.h"

namespace trainbench::app {
namespace {

using namespace std::string_literals;
using trainbench::testing::runProgram;

// What an attacker (or an unlucky user) may put in a name, a path or an override.
const std::vector<std::string>& hostileStrings() {
    static const std::vector<std::string> all = {
        "evil\nrm -rf ~\n", "it's", "'", "''", "'\\''", "\"double\"", "$(touch pwned)", "`touch pwned`", "$HOME",
        "${IFS}x", "$'\\n'", "*", "?[a-z]*", "~", "~root", "", " ", "a  b\tc", "\\", "\\\\n", "back\\", "-n", "--help",
        "; touch pwned;", "| touch pwned", "&& touch pwned", "> pwned", "!!", "!-1", "#not a comment", "\r\n", "\x01\x1b[31m\x7f",
        "%s%n%%", "key: value", "- item", "---", "...", "{a: b}", "[1, 2]", "&anchor *alias", "!!python/object:os.system",
        "null", "~", "true", "1e3", "0x10", "caf\xc3\xa9", "\xf0\x9f\x98\x80", "\xc2\x85" "nel", "ls\xe2\x80\xa8" "ps\xe2\x80\xa9",
        "\xef\xbb\xbf" "bom", "\xef\xbf\xbe", "\xc2\x9b" "c1", "a\tb", std::string(5000, 'x') + "'",
    };
    return all;
}

// The bytes bash prints for `printf %s WORD`, run in a fresh folder (where a "pwned" file would show
// any command the word had smuggled in).
std::string bashPrints(const std::string& word, const std::filesystem::path& cwd) {
    const auto r = runProgram({"bash", "-c", "cd " + shellWord(cwd.string(), "folder") + " && printf %s " + word});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r.out;
}

TEST(ShellWord, BashReadsBackExactlyTheString) {
    const auto cwd = std::filesystem::temp_directory_path() / ("trainbench-quote-" + std::to_string(::getpid()));
    std::filesystem::create_directories(cwd);
    for (const std::string& s : hostileStrings()) {
        if (s.size() > 100) continue;  // one long one is enough, below
        EXPECT_EQ(bashPrints(shellWord(s, "test"), cwd), s) << "word: " << shellWord(s, "test");
    }
    // All of them as the arguments of one command line, and the long one.
    std::string line = "printf '%s\\0'";
    std::string expected;
    for (const std::string& s : hostileStrings()) {
        line += ' ' + shellWord(s, "test");
        expected += s + '\0';
    }
    const auto all = runProgram({"bash", "-c", "cd " + shellWord(cwd.string(), "folder") + " && " + line});
    EXPECT_EQ(all.exitCode, 0) << all.err;
    EXPECT_EQ(all.out, expected);
    EXPECT_TRUE(std::filesystem::is_empty(cwd)) << "a quoted word ran a command";
    std::filesystem::remove_all(cwd);
}

TEST(ShellWord, IsOneWordEvenWhereWordsAreSplitAndGlobbed) {
    EXPECT_EQ(shellWord("", "x"), "''");
    EXPECT_EQ(shellWord("it's", "x"), "'it'\\''s'");
    EXPECT_EQ(shellWord("a b", "x"), "'a b'");
    // bash -n accepts a script made of nothing but quoted words and comments.
    std::string script = "set -eu\n";
    for (const std::string& s : hostileStrings()) script += "ARG=" + shellWord(s, "x") + "\n";
    const auto r = runProgram({"bash", "-n"}, script);
    EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST(ShellWord, ANulByteIsRefusedNamingTheKeyAndOffset) {
    try {
        shellWord("abc\0def"s, "--db");
        ADD_FAILURE() << "no error";
    } catch (const QuoteError& e) {
        EXPECT_STREQ(e.what(), "--db holds a NUL byte at byte 3, which a shell script cannot pass on (arguments end at NUL)");
    }
}

TEST(YamlString, PyYamlReadsBackExactlyTheString) {
    std::vector<std::string> values = hostileStrings();
    values.push_back("nul\0inside"s);
    std::string doc;
    for (size_t i = 0; i < values.size(); ++i) doc += "k" + std::to_string(i) + ": " + yamlString(values[i], "test") + "\n";
    const auto r = trainbench::testing::yamlDocumentsAsJson(doc);
    ASSERT_EQ(r.exitCode, 0) << "PyYAML refused the document (is python3-yaml installed? scripts/install-deps.sh "
                                "installs it):\n"
                             << r.err;
    const nlohmann::json docs = nlohmann::json::parse(r.out);
    ASSERT_EQ(docs.size(), 1u) << "one document, nothing split off";
    ASSERT_EQ(docs[0].size(), values.size()) << "no key smuggled in, none swallowed";
    for (size_t i = 0; i < values.size(); ++i)
        EXPECT_EQ(docs[0]["k" + std::to_string(i)].get<std::string>(), values[i]) << yamlString(values[i], "test");
}

TEST(YamlString, IsAlsoJsonAndHoldsNoLineBreak) {
    for (const std::string& s : hostileStrings()) {
        const std::string q = yamlString(s, "test");
        EXPECT_EQ(nlohmann::json::parse(q).get<std::string>(), s) << q;
        for (const char* lineBreak : {"\n", "\r", "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9"})
            EXPECT_EQ(q.find(lineBreak), std::string::npos) << q;
    }
    EXPECT_EQ(yamlString("evil\nrm -rf ~\n", "name"), "\"evil\\nrm -rf ~\\n\"");
    EXPECT_EQ(yamlString("", "name"), "\"\"");
}

TEST(YamlString, TextThatIsNotUtf8IsRefusedNamingTheKeyAndOffset) {
    const std::vector<std::pair<std::string, size_t>> bad = {
        {"ab\xff", 2}, {"\xc0\xaf", 0}, {"x\xed\xa0\x80", 1}, {"\xe2\x82", 0}, {"\xf4\x90\x80\x80", 0}, {"ok\x80", 2}};
    for (const auto& [s, offset] : bad) {
        try {
            yamlString(s, "--image");
            ADD_FAILURE() << "accepted invalid UTF-8 (bad at byte " << offset << ")";
        } catch (const QuoteError& e) {
            EXPECT_EQ(std::string(e.what()), "--image is not valid UTF-8 (at byte " + std::to_string(offset) +
                                                 "), which a YAML manifest cannot hold");
        }
    }
}

TEST(K8sName, OnlyLowerCaseLettersDigitsAndDashesGetThroughAsAnRfc1035Label) {
    EXPECT_EQ(k8sName("Fashion MNIST_v2"), "fashion-mnist-v2");
    EXPECT_EQ(k8sName("evil\nrm -rf ~\n"), "evil-rm--rf");
    EXPECT_EQ(k8sName("9lives"), "tb-9lives");
    EXPECT_EQ(k8sName(""), "tb");
    EXPECT_EQ(k8sName("---"), "tb");
    EXPECT_EQ(k8sName(std::string(80, 'a'), 40), std::string(40, 'a'));
    EXPECT_EQ(k8sName("\xc3\xa9t\xc3\xa9"), "tb---t");
}

}  // namespace
}  // namespace trainbench::app

