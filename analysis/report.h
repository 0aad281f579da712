/* report -- the summary of one simulated step for people (text) and for
 * programs (JSON: step_time_s, tokens_per_s, mfu, hfu, bubble_fraction,
 * breakdown, memory, layout, platform, trust).
 *
 * Owns: the summary formats. May not touch: the simulation itself.
 */
#ifndef REPORT_H
#define REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "simulate.h"
#include "trust.h"

/* rq may be NULL (replay of a graph file): layout and model come from the graph meta then. With a
 * request and a trust table (else NULL), the summary says how far to trust it (trust.h): the band
 * of the step time, the memory headroom, the flags and their warnings. */
/* kWh per million tokens of a step (< 0 without tokens). */
double report_kwh_per_mtok(const metrics *m);
cJSON *report_json(const sim_outcome *o, const sim_request *rq, const gpu_profile *prof, const trust_table *trust);
void report_text(FILE *f, const sim_outcome *o, const sim_request *rq, const gpu_profile *prof,
                 const trust_table *trust);

/* "parameters: N B, N B per GPU (...); vocab V (padded ...)": the model as simulated, in every text output. */
void report_params_line(FILE *f, const sim_request *rq);

#endif
