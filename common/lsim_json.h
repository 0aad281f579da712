/* lsim_json -- the edge between cJSON and typed structs.
 *
 * Owns: reading a JSON file (a key repeated in an object is an error there:
 * cJSON would silently give the first), typed field getters that report a
 * missing or mistyped field by name, the check of an object's keys against
 * an allowed list, and locating shipped data files.
 * May not touch: any domain meaning of the fields.
 */
#ifndef LSIM_JSON_H
#define LSIM_JSON_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "lsim_input.h"

/* Parse a whole file, a regular file within the cap of its kind (lsim_input); NULL and err set on
 * failure (not such a file, not JSON, text after the value, a key given twice in one object).
 * Caller owns the tree. */
cJSON *lsim_json_read_file(const char *path, lsim_input_kind kind, GError **err);
/* The same, refusing (err) before parsing a file whose text and tree would take more than max_bytes
 * (lsim_json_parse_bytes; 0: no bound). */
cJSON *lsim_json_read_file_within(const char *path, lsim_input_kind kind, double max_bytes, GError **err);
/* What cJSON allocates to parse `text`: a node per value (sizeof(cJSON) and malloc's header) and a copy
 * of each string; counted, not parsed (an empty array or object counts as holding a value). */
double lsim_json_parse_bytes(const char *text, gsize len);
/* Write a tree to path through lsim_outfile (a regular file atomically: no partial file on error). */
gboolean lsim_json_write_file(const cJSON *j, const char *path, GError **err);

/* obj is an object whose every key is one of allowed[0..n-1]; else FALSE naming the first other
 * key and listing the allowed ones. */
gboolean lsim_json_known_keys(const cJSON *obj, const char *const *allowed, guint n, const char *where, GError **err);

/* "an object", "an array", "a string", "a number", "a boolean" or "null": what v is, for messages. */
const char *lsim_json_type_name(const cJSON *v);

gboolean lsim_json_string(const cJSON *obj, const char *key, const char **out, const char *where, GError **err);
/* Text that reaches outputs (SVG, JSON, traces, terminals) as it is: valid UTF-8 and printable (no
 * control or format character), 1 to max_bytes bytes (max_bytes 0: any length but 0). FALSE naming
 * where, what (a field) and the value (lsim_quote) otherwise. */
gboolean lsim_json_check_text(const char *s, gsize max_bytes, const char *where, const char *what, GError **err);
/* A string field that names something (a model, a profile), as lsim_json_check_text with max_bytes
 * out_size - 1; copied into out, never cut. */
gboolean lsim_json_name(const cJSON *obj, const char *key, char *out, gsize out_size, const char *where, GError **err);
gboolean lsim_json_positive_int(const cJSON *obj, const char *key, int *out, const char *where, GError **err);
gboolean lsim_json_number(const cJSON *obj, const char *key, double *out, const char *where, GError **err);
/* Like lsim_json_number but leaves *out untouched when the key is absent. */
gboolean lsim_json_number_opt(const cJSON *obj, const char *key, double *out, const char *where, GError **err);

/* Path of a shipped data file: $LAYOUTSIM_DATA/dir/file, else LSIM_DATADIR/dir/file. Caller frees. */
char *lsim_data_path(const char *dir, const char *file);

#endif
