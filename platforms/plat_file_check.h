/* plat_file_check -- a user's SimGrid platform file (--platform-file) loaded by SimGrid in a child
 * process before a run, once plat_file_xml has passed it (SimGrid is never handed a file that has not
 * passed): it must hold the host of every rank and a route between every pair of ranks that talk.
 *
 * Owns: the checking child. May not touch: the file's syntax (plat_file_xml), the run.
 */
#ifndef PLAT_FILE_CHECK_H
#define PLAT_FILE_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Validated by plat_file_xml_validate first (its message then in msg), then loaded by SimGrid in a
 * child process (SimGrid ends the process on a file it cannot read): the file must hold the host of
 * every rank 0..world_size-1 under plat_host's names (n<node>_g<gpu>) and a route from pairs[2i] to
 * pairs[2i+1] for each of the n_pairs pairs. The reason (one line: the first host or route missing,
 * or SimGrid's first complaint) in msg otherwise: 1 when it holds them, 0 when not. */
int plat_file_check_routes(const char *path, int gpus_per_node, int world_size, const int *pairs, int n_pairs,
                           char *msg, int msg_size);
/* plat_file_check_routes without pairs: the hosts alone. */
int plat_file_check(const char *path, int gpus_per_node, int world_size, char *msg, int msg_size);

#ifdef __cplusplus
}
#endif

#endif
