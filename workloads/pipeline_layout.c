/* pipeline_layout -- see pipeline_layout.h. A recursive-descent expansion of the string into letters (bounded,
 * so that "(t*1000)*1000" is refused, not built), then one walk that places the items. */
#include "pipeline_layout.h"

#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"

G_GNUC_PRINTF(2, 3) static gboolean fail(GError **err, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "pipeline_layout: %s", msg);
  return FALSE;
}

typedef struct {
  const char *s; /* the whole string */
  const char *p; /* where the parser is */
  size_t limit;  /* most letters the expansion may hold */
  int depth;
} parser;

static void skip(parser *x)
{
  while (*x->p == ' ' || *x->p == ',') x->p++;
}

static gboolean seq(parser *x, GString *out, GError **err);

/* '*' N after an atom: N in 1..limit; 1 when absent. */
static gboolean count(parser *x, long *n, GError **err)
{
  skip(x);
  *n = 1;
  if (*x->p != '*') return TRUE;
  x->p++;
  skip(x);
  if (*x->p < '0' || *x->p > '9')
    return fail(err, "'*' at offset %d of '%s' is not followed by a count (allowed: a whole number >= 1)",
                (int)(x->p - x->s), x->s);
  char *end;
  *n = strtol(x->p, &end, 10);
  if (*n < 1 || (size_t)*n > x->limit)
    return fail(err, "count %.*s at offset %d of '%s' is out of range (allowed: 1 to %zu)", (int)(end - x->p), x->p,
                (int)(x->p - x->s), x->s, x->limit);
  x->p = end;
  return TRUE;
}

static gboolean append(parser *x, GString *out, const char *what, size_t len, long n, GError **err)
{
  if (out->len + len * (size_t)n > x->limit)
    return fail(err, "'%s' expands to more than %zu letters, more than the model's items and stages need", x->s,
                x->limit);
  for (long i = 0; i < n; i++) g_string_append_len(out, what, (gssize)len);
  return TRUE;
}

static gboolean item(parser *x, GString *out, GError **err)
{
  char c = *x->p;
  if (c == '(') {
    if (++x->depth > 16) return fail(err, "'%s' nests parentheses deeper than 16", x->s);
    x->p++;
    g_autoptr(GString) inner = g_string_new(NULL);
    if (!seq(x, inner, err)) return FALSE;
    if (*x->p != ')') return fail(err, "'(' without its ')' in '%s'", x->s);
    x->p++;
    x->depth--;
    long n;
    return count(x, &n, err) && append(x, out, inner->str, inner->len, n, err);
  }
  if (c == 'E' || c == 't' || c == 'L' || c == '|' || c == 'm') {
    x->p++;
    long n;
    return count(x, &n, err) && append(x, out, &c, 1, n, err);
  }
  return fail(err, "'%c' at offset %d of '%s' is not a layout letter (allowed: E embedding, t layer, m MTP module, L "
              "loss, | stage boundary, (...)*N, X*N)", c, (int)(x->p - x->s), x->s);
}

static gboolean seq(parser *x, GString *out, GError **err)
{
  for (skip(x); *x->p && *x->p != ')'; skip(x))
    if (!item(x, out, err)) return FALSE;
  return TRUE;
}

gboolean pipeline_layout_bounds(const char *spec, int layers, int mtp, int vstages, int *first_item, GError **err)
{
  /* every item once, a boundary between stages, and slack for one misplaced letter to be named */
  parser x = {.s = spec, .p = spec, .limit = (size_t)layers + (size_t)mtp + 3 + (size_t)vstages + 1};
  g_autoptr(GString) letters = g_string_new(NULL);
  if (!seq(&x, letters, err)) return FALSE;
  if (*x.p == ')') return fail(err, "')' without its '(' at offset %d of '%s'", (int)(x.p - spec), spec);
  /* the MTP modules: exactly the model's, right before L; then taken out (they ride with the head item) */
  int ms = 0;
  for (size_t i = 0; i < letters->len; i++) {
    if (letters->str[i] != 'm') continue;
    ms++;
    size_t j = i;
    while (letters->str[j] == 'm') j++;
    if (letters->str[j] != 'L')
      return fail(err, "'m' of '%s' is not right before L in L's stage (allowed here: the model's MTP modules as "
                  "'m' just before L)", spec);
  }
  if (ms != mtp)
    return fail(err, "'%s' names %d MTP modules 'm', the model has %d (allowed: exactly %d m, right before L)", spec,
                ms, mtp, mtp);
  size_t w = 0;
  for (size_t i = 0; i < letters->len; i++)
    if (letters->str[i] != 'm') letters->str[w++] = letters->str[i];
  g_string_truncate(letters, w);
  int stages = 1;
  for (size_t i = 0; i < letters->len; i++) stages += letters->str[i] == '|';
  if (stages != vstages)
    return fail(err, "'%s' names %d stages, not pp*virtual_stages = %d (allowed: %d '|'-separated stages)", spec,
                stages, vstages, vstages);
  int it = 0, v = 0, in_stage = 0; /* it: the next item: 0 embedding, 1..layers the layers, layers+1 the loss */
  first_item[0] = 0;
  for (size_t i = 0; i < letters->len; i++) {
    char c = letters->str[i];
    if (c == '|') {
      if (in_stage == 0) return fail(err, "stage %d of '%s' is empty (allowed: at least one of E, t, L a stage)", v, spec);
      first_item[++v] = it;
      in_stage = 0;
      continue;
    }
    in_stage++;
    if (it == layers + 3) return fail(err, "'%s' has letters after L (allowed: L once, last)", spec);
    if (c == 'E' && it != 0) return fail(err, "'E' of '%s' is not the first letter (allowed: E once, first)", spec);
    if (c != 'E' && it == 0) return fail(err, "'%s' does not open with E (allowed: E once, first)", spec);
    if (c == 't' && it > layers)
      return fail(err, "'%s' has more than the model's %d layers (allowed: exactly %d t)", spec, layers, layers);
    if (c == 'L' && it != layers + 1)
      return fail(err, "'%s' places L after %d of the model's %d layers (allowed: L once, after exactly %d t)", spec,
                  it - 1, layers, layers);
    it = c == 'L' ? layers + 3 : it + 1;
  }
  if (in_stage == 0) return fail(err, "stage %d of '%s' is empty (allowed: at least one of E, t, L a stage)", v, spec);
  if (it != layers + 3)
    return fail(err, "'%s' does not close with L after the model's %d layers (allowed: exactly %d t, then L)", spec,
                layers, layers);
  first_item[vstages] = it;
  return TRUE;
}
