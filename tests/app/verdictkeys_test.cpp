// The verdict's actions write experiment keys from a table of their own (the profiler may not use
// app's schema); this holds that table to the schema, so an action never proposes a value the
// validator rejects.
#include <gtest/gtest.h>

#include "app/experiment/experimentschema.h"
#include "profiler/verdict/experimentkeys.h"

namespace trainbench::app {
namespace {

using profiler::ActionKey;

const SchemaKey* schemaKey(const std::string& dotted) {
    const SchemaKey* key = &experimentSchema();
    size_t begin = 0;
    while (key) {
        const size_t dot = dotted.find('.', begin);
        key = key->find(dotted.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin));
        if (dot == std::string::npos) return key;
        begin = dot + 1;
    }
    return nullptr;
}

SchemaType schemaType(ActionKey::Type type) {
    switch (type) {
    case ActionKey::Type::Integer: return SchemaType::Integer;
    case ActionKey::Type::Number: return SchemaType::Number;
    case ActionKey::Type::Boolean: return SchemaType::Boolean;
    case ActionKey::Type::Enum: return SchemaType::Enum;
    case ActionKey::Type::Path: return SchemaType::Path;
    }
    return SchemaType::Object;
}

TEST(VerdictActionKeys, MatchTheExperimentSchema) {
    for (const ActionKey& k : profiler::actionKeys()) {
        SCOPED_TRACE(k.key);
        const SchemaKey* s = schemaKey(k.key);
        ASSERT_NE(s, nullptr) << "not an experiment key";
        EXPECT_EQ(s->type, schemaType(k.type));
        EXPECT_EQ(s->minimum, k.minimum);
        EXPECT_EQ(s->maximum, k.maximum);
        EXPECT_FALSE(s->exclusiveMinimum);
        EXPECT_FALSE(s->exclusiveMaximum);
        EXPECT_EQ(s->choices, k.choices);
        if (s->defaultValue.is_number() && k.default_value.is_number())
            EXPECT_DOUBLE_EQ(s->defaultValue.get<double>(), k.default_value.get<double>());
        else
            EXPECT_EQ(s->defaultValue, k.default_value);
    }
}

}  // namespace
}  // namespace trainbench::app
