/* straggler -- the expected wait for the slowest of N ranks at a synchronous collective.
 *
 * Same-SKU GPUs do not run at the same speed (manufacturing and power-management variability: Sinha et
 * al., "Not All GPUs Are Created Equal", SC'22, arXiv:2208.11035), and the variation is persistent: a slow
 * GPU is slow on every kernel. A blocking collective over N ranks ends when the slowest has arrived, so
 * the compute before it runs at the pace of the slowest of N draws. Per-GPU speeds ~ Normal(1, sigma)
 * (relative), the expected pace of the slowest is 1 + sigma * E[max of N standard normals], applied as a
 * deterministic slowdown of compute (no random draw: outputs stay byte-deterministic). A training step
 * joins every rank through its blocking collectives (tp, pp, dp), so N is the job's GPU count
 * (docs/trust.md, "Stragglers").
 *
 * Owns: the order statistic and the slowdown. May not touch: SimGrid, graphs, where it is applied.
 */
#ifndef STRAGGLER_H
#define STRAGGLER_H

/* E[max of n iid standard normal draws] (0 for n <= 1): the integral of x n phi(x) Phi(x)^(n-1),
 * numerically to better than 1e-9. */
double straggler_expected_max(int n);
/* The expected slowdown of compute waiting for the slowest of n ranks of relative speed spread sigma:
 * 1 + sigma * straggler_expected_max(n) (1 when sigma is 0 or n <= 1). */
double straggler_slowdown(double sigma, int n);

#endif
