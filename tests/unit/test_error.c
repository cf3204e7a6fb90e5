/* Tests status codes: every code has a distinct name and text, unknown codes are
 * handled, and per-thread messages are kept. */
#include <string.h>

#include "internal.h"
#include "sl_test.h"

SL_TEST(codes_have_names_and_texts)
{
    int codes[] = {
#define X(name, val, text) SL_##name,
        SL_ERRNO_MAP(X)
#undef X
    };
    size_t n = sizeof codes / sizeof codes[0];
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        assert_true(codes[i] < 0);
        assert_string_not_equal(sl_err_name(codes[i]), "SL_E?");
        assert_string_not_equal(sl_strerror(codes[i]), "unknown error");
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(codes[i], codes[j]);
            assert_string_not_equal(sl_err_name(codes[i]), sl_err_name(codes[j]));
        }
    }
    assert_string_equal(sl_err_name(SL_EINVAL), "SL_EINVAL");
    assert_string_equal(sl_strerror(SL_ENOMEM), "out of memory");
    assert_string_equal(sl_err_name(SL_OK), "SL_OK");
}

SL_TEST(unknown_codes)
{
    assert_string_equal(sl_strerror(-9999), "unknown error");
    assert_string_equal(sl_err_name(12345), "SL_E?");
}

SL_TEST(flow_codes_are_not_errors)
{
    assert_true(SL_NEED_INPUT > 0 && SL_HAVE_OUTPUT > 0 && SL_DONE > 0 && SL_BLOCKED > 0);
}

SL_TEST(last_errmsg_is_per_call)
{
    enum sl_type t;
    assert_int_equal(sl_type_parse("int33", &t), SL_EINVAL);
    assert_non_null(strstr(sl_last_errmsg(), "int33"));
    SL_ASSERT_OK(sl_type_parse("float64", &t));
    assert_int_equal(t, SL_TYPE_FLOAT64);
}

SL_TEST(version)
{
    assert_int_equal(sl_version(), SL_VERSION_HEX);
    assert_string_equal(sl_version_string(), "0.3.0");
}
