/* Stand-in for icuuc.dll (the ICU common library), for Wine 8 only.
 *
 * Qt 6.11's Qt6Core.dll links the ICU that Windows 10 (1703 and later) and 11 ship in System32 as
 * icuuc.dll, for QStringConverter's legacy code pages. Wine 8 ships no icuuc.dll, so Qt6Core.dll
 * (and the tray) does not load at all. Pairwise converts no text through ICU (its files are UTF-8,
 * which Qt converts itself), so this stand-in answers as an ICU holding no converters: opening one
 * fails with U_FILE_ACCESS_ERROR and Qt falls back to its built-in codecs, exactly as it does for a
 * code page ICU lacks. Real Windows needs none of this: the system's icuuc.dll is there.
 *
 * Exports: the 20 functions Qt6Core.dll imports from icuuc.dll (objdump -p Qt6Core.dll).
 */
#include <stddef.h>
#include <stdint.h>

typedef int UErrorCode;
typedef uint16_t UChar;
typedef int8_t UBool;
typedef void UConverter;
typedef void (*Callback)(void);

#define U_ILLEGAL_ARGUMENT_ERROR 1
#define U_FILE_ACCESS_ERROR 4
#define EXPORT __declspec(dllexport)

static void fail(UErrorCode *err, UErrorCode code) { if (err && *err <= 0) *err = code; }

EXPORT UConverter *ucnv_open(const char *name, UErrorCode *err) { (void)name; fail(err, U_FILE_ACCESS_ERROR); return NULL; }
EXPORT void ucnv_close(UConverter *c) { (void)c; }
EXPORT void ucnv_reset(UConverter *c) { (void)c; }
EXPORT int8_t ucnv_getMaxCharSize(const UConverter *c) { (void)c; return 1; }
EXPORT const char *ucnv_getName(const UConverter *c, UErrorCode *err) { (void)c; fail(err, U_ILLEGAL_ARGUMENT_ERROR); return NULL; }
EXPORT int32_t ucnv_countAvailable(void) { return 0; }
EXPORT const char *ucnv_getAvailableName(int32_t n) { (void)n; return NULL; }
EXPORT const char *ucnv_getStandardName(const char *name, const char *standard, UErrorCode *err)
{ (void)name; (void)standard; fail(err, U_ILLEGAL_ARGUMENT_ERROR); return NULL; }
EXPORT int32_t ucnv_toUCountPending(const UConverter *c, UErrorCode *err) { (void)c; fail(err, U_ILLEGAL_ARGUMENT_ERROR); return 0; }
EXPORT int32_t ucnv_fromUCountPending(const UConverter *c, UErrorCode *err) { (void)c; fail(err, U_ILLEGAL_ARGUMENT_ERROR); return 0; }
EXPORT void ucnv_getToUCallBack(const UConverter *c, Callback *action, const void **context)
{ (void)c; if (action) *action = NULL; if (context) *context = NULL; }
EXPORT void ucnv_getFromUCallBack(const UConverter *c, Callback *action, const void **context)
{ (void)c; if (action) *action = NULL; if (context) *context = NULL; }
EXPORT void ucnv_setToUCallBack(UConverter *c, Callback action, const void *context, Callback *old_action,
                                const void **old_context, UErrorCode *err)
{ (void)c; (void)action; (void)context; (void)old_action; (void)old_context; fail(err, U_ILLEGAL_ARGUMENT_ERROR); }
EXPORT void ucnv_setFromUCallBack(UConverter *c, Callback action, const void *context, Callback *old_action,
                                  const void **old_context, UErrorCode *err)
{ (void)c; (void)action; (void)context; (void)old_action; (void)old_context; fail(err, U_ILLEGAL_ARGUMENT_ERROR); }
EXPORT void ucnv_toUnicode(UConverter *c, UChar **target, const UChar *target_limit, const char **source,
                           const char *source_limit, int32_t *offsets, UBool flush, UErrorCode *err)
{ (void)c; (void)target; (void)target_limit; (void)source; (void)source_limit; (void)offsets; (void)flush;
  fail(err, U_ILLEGAL_ARGUMENT_ERROR); }
EXPORT void ucnv_fromUnicode(UConverter *c, char **target, const char *target_limit, const UChar **source,
                             const UChar *source_limit, int32_t *offsets, UBool flush, UErrorCode *err)
{ (void)c; (void)target; (void)target_limit; (void)source; (void)source_limit; (void)offsets; (void)flush;
  fail(err, U_ILLEGAL_ARGUMENT_ERROR); }
EXPORT void ucnv_cbToUWriteUChars(void *args, const UChar *source, int32_t length, int32_t offset_index, UErrorCode *err)
{ (void)args; (void)source; (void)length; (void)offset_index; fail(err, U_ILLEGAL_ARGUMENT_ERROR); }
EXPORT void ucnv_cbFromUWriteUChars(void *args, const UChar **source, const UChar *source_limit, int32_t offset_index,
                                    UErrorCode *err)
{ (void)args; (void)source; (void)source_limit; (void)offset_index; fail(err, U_ILLEGAL_ARGUMENT_ERROR); }
/* The substitution callbacks are only ever installed on a converter, and none opens. */
EXPORT void UCNV_FROM_U_CALLBACK_SUBSTITUTE(void) {}
EXPORT void UCNV_TO_U_CALLBACK_SUBSTITUTE(void) {}
