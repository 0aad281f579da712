/* report -- the summary of one simulated step for people (text) and for
 * programs (JSON: step_time_s, tokens_per_s, mfu, hfu, bubble_fraction,
 * breakdown, memory, layout, platform).
 *
 * Owns: the summary formats. May not touch: the simulation itself.
 */
#ifndef REPORT_H
#define REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "simulate.h"

/* rq may be NULL (replay of a graph file): layout and model come from the graph meta then. */
cJSON *report_json(const sim_outcome *o, const sim_request *rq, const gpu_profile *prof);
void report_text(FILE *f, const sim_outcome *o, const sim_request *rq, const gpu_profile *prof);

#endif
