/* energy -- what a simulated step costs in electricity (docs/energy.md): each
 * GPU draws the profile's power for what it does at each instant of its
 * timeline -- a compute kernel above the ridge point of the roofline (its
 * FLOPs take longer at peak than its bytes at HBM bandwidth) draws
 * power_compute_w, one below it power_memory_w, a collective or a pipeline
 * send or receive power_comm_w, and a gap power_idle_w -- and every node draws
 * node_power_w beside its GPUs for the whole step.
 *
 * Over the timeline, not SimGrid's host energy plugin: a mirrored rank has no
 * SimGrid host activity of its own (docs/model.md), and its timeline does.
 *
 * Owns: the power of an interval, the energy of a rank and of a step.
 * May not touch: SimGrid, the timing itself.
 */
#ifndef ENERGY_H
#define ENERGY_H

#include "platforms/profile.h"
#include "traces/timeline.h"

typedef enum { EN_COMPUTE, EN_MEMORY, EN_COMM, EN_IDLE, EN_N } energy_class;

/* What an event draws: EN_COMPUTE or EN_MEMORY for a compute event by the ridge point, else EN_COMM. */
energy_class energy_class_of(const graph_event *e, const gpu_profile *p);
double energy_power_w(const gpu_profile *p, energy_class c);
/* Seconds of `rank`'s step in each class into out, and in one pass over its intervals the seconds of
 * each timeline category into cat (as tl_rank_seconds gives them); idle: the step time minus the rest. */
void energy_rank_seconds(const timeline *tl, int rank, const gpu_profile *p, double cat[TL_N], double out[EN_N]);
/* The same, handing each interval of the pass to also(iv, data) too (NULL: nothing), so that a caller with another
 * walk of the same intervals does it in this pass (metrics: a stage's memory, where the main view is every event). */
void energy_rank_seconds_and(const timeline *tl, int rank, const gpu_profile *p, double cat[TL_N], double out[EN_N],
                             tl_visit_fn also, gpointer data);
/* Joules of seconds spent in each class. */
double energy_joules(const gpu_profile *p, const double seconds[EN_N]);
/* The nodes' share beside the GPUs: nodes * node_power_w * step time. */
double energy_node_joules(const gpu_profile *p, int world_size, double step_time_s);
/* kWh per million tokens of a step of energy_j joules over `tokens` tokens (tokens > 0). */
double energy_kwh_per_mtok(double energy_j, double tokens);

#endif
