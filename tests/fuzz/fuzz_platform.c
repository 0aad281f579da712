/* fuzz_platform -- libFuzzer harness of the platform-file validation that runs before SimGrid parses a
 * --platform-file (platforms/plat_file_xml.c, libxml2 under it).
 *
 * Owns: the properties of an accepted file whatever it held: nesting, elements and hosts within their
 * bounds, a memory estimate that is finite, positive and within the budget given; every quantity the
 * unit reader accepts, re-read, gives the same value. A refused file has one error, of one line.
 * Seeds: tests/fuzz/corpus/platform/.
 */
#include <math.h>
#include <string.h>

#include "common/lsim_input.h"
#include "fuzz_common.h"
#include "platforms/plat_file_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file("platform.xml", data, size);
  char *text = NULL;
  gsize len = 0;
  GError *err = NULL;
  if (!lsim_input_read(path, LSIM_INPUT_PLATFORM, &text, &len, &err)) {
    fuzz_check_result(FALSE, err);
    g_clear_error(&err);
    return 0;
  }
  plat_xml_census c;
  double budget = 1024.0 * 1024 * 1024;
  gboolean ok = plat_file_xml_validate(path, text, len, budget, &c, &err);
  fuzz_check_result(ok, err);
  if (!ok) fuzz_require(!strchr(err->message, '\n'), "a message of more than one line: %s", err->message);
  g_clear_error(&err);
  g_free(text);
  if (ok) {
    fuzz_require(c.depth <= PLAT_XML_MAX_DEPTH && c.elements <= PLAT_XML_MAX_ELEMENTS && c.hosts <= PLAT_XML_MAX_HOSTS,
                 "depth %ld, elements %ld, hosts %ld", (long)c.depth, (long)c.elements, (long)c.hosts);
    fuzz_require(isfinite(c.bytes) && c.bytes > 0 && c.bytes <= budget, "estimate %g", c.bytes);
  }
  /* the unit reader on the input's first line, as each kind */
  g_autofree char *q = g_strndup((const char *)data, MIN(size, 64));
  for (const char *k = "sbl"; *k; k++) {
    double a, b;
    if (plat_file_xml_quantity(q, *k, &a))
      fuzz_require(plat_file_xml_quantity(q, *k, &b) && (a == b || (isnan(a) && isnan(b))), "'%s' read twice differs", q);
  }
  return 0;
}
